"""The `codegen` command line.

Exit codes: 0 success, 1 invalid input (diagnostics printed), 2 bad usage, an unreadable
source, or an internal error. The CLI never prints a traceback. Heavy modules are imported
inside the command that needs them, so start-up stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from .errors import CodegenError, Diagnostic, UsageError
from .render.targets import TARGET_NAMES

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

EPILOG = """exit status:
  0  success
  1  invalid input: the diagnostics say what and where
  2  bad usage, an unreadable source, or an internal error
"""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors share one exit path."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")

    def _get_formatter(self) -> argparse.HelpFormatter:
        """A formatter as wide as the terminal, measured the way `shutil` does without
        importing it: argparse makes one per `add_argument`, and `shutil` (with its
        archive modules) is a tenth of a cold run's imports."""
        factory: Any = self.formatter_class
        formatter: argparse.HelpFormatter = factory(prog=self.prog, width=_columns() - 2)
        return formatter

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """argparse's check of a choice (a command, `--lang`, `--format`, ...), naming the
        closest choice when there is one, as Python 3.14's `suggest_on_error` does."""
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as error:
            closest = _closest(str(value), [str(choice) for choice in action.choices or ()])
            if closest is None or "meant" in error.message:
                raise
            message = f"{error.message}; did you mean {closest!r}?"
            raise argparse.ArgumentError(action, message) from None


def _parse(parser: argparse.ArgumentParser, arguments: list[str]) -> argparse.Namespace:
    """`parser.parse_args`, except that a mistyped flag is reported with the closest flag
    of its command ("did you mean --check?"), also when argparse would first have said that
    a required flag is missing (the mistyped one, usually)."""
    try:
        args, unknown = parser.parse_known_args(arguments)
    except UsageError:
        _refuse_unknown_flag(parser, arguments)
        raise
    if unknown:
        _refuse_unknown_flag(parser, arguments)
        raise UsageError(f"{parser.prog}: unrecognized arguments: {' '.join(unknown)}")
    return args


def _refuse_unknown_flag(parser: argparse.ArgumentParser, arguments: list[str]) -> None:
    """Raise for the first argument before `--` that looks like a flag the command does not
    have (a long flag may be abbreviated, short flags combined, a value attached)."""
    command = _command_parser(parser, arguments)
    flags = sorted(flag for action in command._actions for flag in action.option_strings)
    for token in arguments:
        if token == "--":
            return
        if not token.startswith("-") or token == "-" or _is_number(token):
            continue
        if token.startswith("--"):
            flag = token.partition("=")[0]
            if any(known.startswith(flag) for known in flags):
                continue  # itself, or an abbreviation argparse resolves (or calls ambiguous)
        else:
            flag = token[:2]
            if flag in flags:
                continue
        closest = _closest(flag, [known for known in flags if known.startswith("--")])
        hint = f"; did you mean {closest}?" if closest else ""
        raise UsageError(f"{command.prog}: unrecognized argument: {flag}{hint}")


def _command_parser(
    parser: argparse.ArgumentParser, arguments: list[str]
) -> argparse.ArgumentParser:
    """The parser of the command the arguments name, else the top-level one."""
    for action in parser._actions:
        choices = action.choices
        if isinstance(choices, dict):  # the subcommands
            for token in arguments:
                if not token.startswith("-"):
                    command: argparse.ArgumentParser = choices.get(token, parser)
                    return command
    return parser


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _closest(word: str, choices: list[str]) -> str | None:
    """The choice closest to a mistyped `word`, if one is close enough."""
    import difflib

    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return found[0] if found else None


def _columns() -> int:
    """`shutil.get_terminal_size().columns`: `COLUMNS`, else the terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _command(commands: Any, name: str, summary: str, description: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def _add_sources(parser: argparse.ArgumentParser, output_format: bool = False) -> None:
    """SOURCES, `--input-format`, `--namespace` and `--quiet`. Where the command has no
    output format of its own, `--format` still names the input format, with a warning. What
    the command line leaves out comes from `[tool.codegen]` (`_settings`)."""
    parser.add_argument(
        "sources",
        nargs="*",
        metavar="SOURCE",
        help="tool definition file, directory, or - for stdin (default: 'sources' of "
        "[tool.codegen] in pyproject.toml)",
    )
    _add_input_format(parser, default=None, legacy_format=not output_format)
    _add_namespace(parser)
    _add_ref_roots(parser)
    parser.add_argument("--quiet", "-q", action="store_true", help="print errors only, no warnings")
    _add_strict(parser)
    _add_progress(parser)


def _add_strict(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strict",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="treat warnings as errors: exit 1 and write nothing (default: 'strict' of "
        "[tool.codegen], else off)",
    )


def _add_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show the progress of a long run on stderr (default: when stderr is a "
        "terminal and not --quiet)",
    )


def _add_ref_roots(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ref-root",
        dest="ref_roots",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder a $ref may read files from besides its source's own (repeatable)",
    )


def _add_namespace(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--namespace",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="prefix each tool name with its source's name and '__'",
    )


class _LegacyInputFormat(argparse.Action):
    """`--format NAME` where it used to name the input format: still works, with a warning
    on stderr, because `--format` names the output format (catalog, diff)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        sys.stderr.write(
            f"{parser.prog}: warning: --format for the input format is deprecated; "
            f"use --input-format {values}\n"
        )
        setattr(namespace, self.dest, values)


def _add_input_format(
    parser: argparse.ArgumentParser, default: str | None, legacy_format: bool
) -> None:
    """`--input-format auto|mcp|...`: the one spelling of the input format on every command
    that reads sources; `legacy_format` keeps the old `--format` spelling working."""
    from .load.formats import INPUT_FORMATS

    choices = ("auto", *INPUT_FORMATS)
    parser.add_argument(
        "--input-format",
        dest="input_format",
        default=default,
        choices=choices,
        help="input format (default: detect each record's format)",
    )
    if legacy_format:
        parser.add_argument(
            "--format",
            dest="input_format",
            choices=choices,
            action=_LegacyInputFormat,
            help=argparse.SUPPRESS,
        )


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE (atomically; an unchanged file is not touched) instead of stdout",
    )


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser. Given the arguments, it holds only the command they name (argparse's
    set-up with gettext lookups is a tenth of a cold one-tool run); any other arguments
    (none, `--help`, an unknown command) get every command, so help and errors list them."""
    parser = _Parser(
        prog="codegen",
        description="Typed SDKs from JSON-Schema tool definitions.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    named = argv[0] if argv else None
    for name, add in COMMANDS.items():
        if named not in COMMANDS or name == named:
            add(commands)
    return parser


def _add_validate_command(commands: Any) -> None:
    validate = _command(
        commands,
        "validate",
        "check tool definitions and report every problem",
        "Load, validate and normalize tool definitions; print one "
        "'source:pointer: level: message' line per problem.",
    )
    _add_sources(validate)
    validate.set_defaults(handler=_validate)


def _add_sdk_command(commands: Any) -> None:
    sdk = _command(
        commands,
        "sdk",
        "generate a typed SDK",
        "Generate the Python or TypeScript SDK for the tools in SOURCES. "
        "Diagnostics go to stderr; nothing is written when there are errors.",
    )
    _add_sources(sdk)
    sdk.add_argument("--lang", required=True, choices=TARGET_NAMES, help="target language")
    sdk.add_argument(
        "--cache",
        metavar="DIR",
        help="keep per-tool results in DIR, so a later run only renders the tools that changed",
    )
    sdk.add_argument(
        "--jobs",
        "-j",
        type=_job_count,
        metavar="N",
        help="processes to compile a large catalog in (default: one per usable core; "
        "the output is the same for any N)",
    )
    _add_output(sdk)
    sdk.set_defaults(handler=_sdk)


def _job_count(text: str) -> int:
    """`--jobs N`: a positive number of processes."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of processes, got {text!r}")
    return value


def _add_prompt_command(commands: Any) -> None:
    prompt = _command(
        commands,
        "prompt",
        "the model-facing SDK section for Code Mode",
        "Print the run_code instructions and the SDK in a fenced code block, as a "
        "model under Code Mode sees them.",
    )
    _add_sources(prompt)
    prompt.add_argument("--lang", required=True, help="program language: python or typescript")
    _add_output(prompt)
    prompt.set_defaults(handler=_prompt)


def _add_run_code_schema_command(commands: Any) -> None:
    schema = _command(
        commands,
        "run-code-schema",
        "the run_code tool definition as JSON",
        "Print the definition of the run_code tool for a program language.",
    )
    schema.add_argument("--lang", required=True, help="program language: python or typescript")
    schema.set_defaults(handler=_run_code_schema)


def _add_catalog_command(commands: Any) -> None:
    catalog = _command(
        commands,
        "catalog",
        "an offline docs catalog of the tools",
        "Write every tool with its types, a parameter table and its raw schemas "
        "as Markdown, JSON or one self-contained HTML file. Needs no code runtime "
        "and no network.",
    )
    _add_sources(catalog, output_format=True)
    catalog.add_argument(
        "--format",
        dest="catalog_format",
        default="md",
        choices=("md", "json", "html"),
        help="catalog format (default: md)",
    )
    catalog.add_argument(
        "--lang",
        choices=TARGET_NAMES,
        help="language the types are spelled in (default: typescript, or python when "
        "'languages' of [tool.codegen] has only python)",
    )
    catalog.add_argument(
        "--title",
        type=_catalog_title,
        help="heading of the Markdown and HTML catalog (default: 'catalog_title' of "
        "[tool.codegen], else 'Tool catalog')",
    )
    _add_output(catalog)
    catalog.set_defaults(handler=_catalog)


def _catalog_title(text: str) -> str:
    """`--title TEXT`: a title with something to show."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a non-empty title")
    return text


WORKFLOW_EPILOGS = {
    "build": "     or, with --check, an output is out of date (its diff is on stdout)\n",
    "harvest": "     or a server exited, broke the protocol, or did not answer in time\n"
    "     (--config: the servers that answered are still written)\n",
    "diff": "     or a breaking change was found and --fail-on-breaking was given\n",
    "serve": "     or no upstream server could be started\n",
}
"""What exit status 1 means for the workflow commands, added to the shared EPILOG."""


def _workflow_epilog(command: str) -> str:
    return EPILOG.replace("  2  bad usage", WORKFLOW_EPILOGS[command] + "  2  bad usage")


def _add_verbosity(parser: argparse.ArgumentParser) -> None:
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("--quiet", "-q", action="store_true", help="print errors only")
    loudness.add_argument("--verbose", "-v", action="store_true", help="print more detail")
    _add_progress(parser)


def _add_build_command(commands: Any) -> None:
    build = _command(
        commands,
        "build",
        "write (or --check) the SDKs, prompt sections and catalogs of a project",
        "Compile SOURCES once and write NAME.py, NAME.d.ts, NAME.prompt.<lang>.md, "
        "NAME.catalog.md, NAME.catalog.json and NAME.catalog.html into OUTDIR, atomically, "
        "touching only files that change. Settings missing from the command line come from "
        "the [tool.codegen] table of the nearest pyproject.toml (sources, out, languages, "
        "module, namespace, input_format, catalogs, cache; paths relative to that file). "
        "With --check nothing is written (a cache is read, not updated): a unified diff of "
        "every file that is out of date goes to stdout and the exit status is 1.",
    )
    build.add_argument(
        "sources", nargs="*", metavar="SOURCE", help="tool definition file or directory"
    )
    build.add_argument("-o", "--output", metavar="OUTDIR", help="output directory")
    build.add_argument(
        "--lang", metavar="LANGS", help="comma-separated: python,typescript (default: both)"
    )
    build.add_argument("--module", metavar="NAME", help="output file name stem (default: tools)")
    _add_input_format(build, default=None, legacy_format=True)
    _add_ref_roots(build)
    build.add_argument(
        "--namespace",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="prefix each tool name with its source's name and '__'",
    )
    build.add_argument(
        "--catalogs",
        metavar="FORMATS",
        help="comma-separated docs catalogs to write: md,json,html (default: all three; "
        "'' for none)",
    )
    build.add_argument(
        "--cache",
        metavar="DIR",
        help="keep per-tool results in DIR, so a later run only renders the tools that changed",
    )
    build.add_argument(
        "--check",
        action="store_true",
        help="write nothing; print a diff and exit 1 when an output is out of date",
    )
    _add_strict(build)
    _add_verbosity(build)
    build.epilog = _workflow_epilog("build")
    build.set_defaults(handler=_build)


def _add_harvest_command(commands: Any) -> None:
    harvest = _command(
        commands,
        "harvest",
        "capture the tool definitions of live MCP servers",
        "Start an MCP server over stdio (--mcp, the command after --), list its tools (every "
        "page, again if the list changes meanwhile) and write them as "
        '{"server": ..., "tools": [...]}, ready for `codegen build`. With --config FILE, '
        "do that for every enabled server of an MCP client config, the file `codegen serve "
        "--config` reads (stdio and streamable HTTP, ${VAR}, allow/deny), writing "
        "DIR/<prefix>.json per server: built with --namespace, the tools are named "
        "prefix__tool as serve names them. Servers and every process they started are "
        "stopped afterwards. Needs the MCP SDK: pip install 'tool-codegen[mcp]'. Exit 1 when a "
        "server fails (exits, writes something that is not MCP on stdout, or does not "
        "answer in time; under --config the others are still written).",
    )
    source = harvest.add_mutually_exclusive_group(required=True)
    source.add_argument("--mcp", action="store_true", help="the server speaks MCP over stdio")
    source.add_argument(
        "--config",
        metavar="FILE",
        help="every server of this MCP client config (JSON with mcpServers, or a "
        "pyproject.toml with [tool.codegen.serve]); needs -o DIR",
    )
    harvest.add_argument(
        "-o",
        "--output",
        metavar="FILE|DIR",
        help="write to FILE (atomically; an unchanged file is not touched) instead of stdout; "
        "with --config, the directory of one PREFIX.json per server",
    )
    harvest.add_argument(
        "--timeout",
        metavar="SECONDS",
        default="30",
        help="give up after this many seconds in all (default: 30)",
    )
    harvest.add_argument(
        "--server",
        metavar="NAME",
        help="with --mcp: the server's name in your serve config (its key in mcpServers), "
        "written as the file's server, so --namespace names the tools as serve does "
        "(default: the server's own serverInfo.name)",
    )
    harvest.add_argument(
        "server_command", nargs="*", metavar="COMMAND", help="-- COMMAND [ARGS...] (with --mcp)"
    )
    _add_verbosity(harvest)
    harvest.epilog = _workflow_epilog("harvest")
    harvest.set_defaults(handler=_harvest)


def _add_diff_command(commands: Any) -> None:
    diff = _command(
        commands,
        "diff",
        "review the changes between two tool catalogs",
        "Compare the tools of OLD and NEW (files or directories), or with --git REV the "
        "SOURCES at revision REV against the working tree, and list tools added and "
        "removed and every argument or output change, each marked breaking or not. "
        "Exit 1 for a breaking change only with --fail-on-breaking.",
    )
    diff.add_argument(
        "sources", nargs="*", metavar="SOURCE", help="OLD NEW, or with --git: SOURCES"
    )
    diff.add_argument("--git", metavar="REV", help="compare SOURCES at git revision REV")
    diff.add_argument(
        "--format",
        dest="diff_format",
        default="md",
        choices=("md", "json"),
        help="report format (default: md)",
    )
    diff.add_argument(
        "--fail-on-breaking", action="store_true", help="exit 1 when a change is breaking"
    )
    _add_input_format(diff, default=None, legacy_format=False)
    _add_namespace(diff)
    _add_ref_roots(diff)
    _add_output(diff)
    _add_strict(diff)
    _add_verbosity(diff)
    diff.epilog = _workflow_epilog("diff")
    diff.set_defaults(handler=_diff)


def _add_serve_command(commands: Any) -> None:
    """`serve`: Code Mode in front of MCP servers (codegen/serve/)."""
    serve = _command(
        commands,
        "serve",
        "run an MCP server that offers run_code over other MCP servers",
        'Start the MCP servers of an MCP client config ("mcpServers": stdio commands and '
        "streamable HTTP urls, with per-server allow/deny and concurrency_safe; settings in a "
        '"codegen" object beside it) and serve them as one MCP server in Code Mode: under '
        "--mode code the client sees only run_code, whose programs call every upstream tool "
        "through the generated SDK (names prefixed server__tool); under both, the tools too. "
        "The config is the --config FILE (JSON, or a pyproject.toml with "
        "[tool.codegen.serve]), else ~/.config/codegen/serve.json; nothing is read from the "
        "working folder. Serves over stdio (until stdin closes) or streamable HTTP with "
        "--http HOST:PORT (loopback only unless --http-allow-remote; every request needs the "
        "bearer token printed at start, or $CODEGEN_SERVE_TOKEN); Ctrl-C stops it and every "
        "server it started. Needs the MCP SDK: pip install 'tool-codegen[serve]'.",
    )
    serve.add_argument(
        "--config",
        metavar="FILE",
        help="MCP client config (JSON) or pyproject.toml (default: ~/.config/codegen/serve.json)",
    )
    serve.add_argument(
        "--mode", choices=("code", "both"), help="what tools/list offers (default: code)"
    )
    serve.add_argument(
        "--lang", metavar="LANG", help="program language: python or typescript (default: python)"
    )
    serve.add_argument(
        "--sdk",
        choices=("description", "instructions"),
        help="where the SDK section goes: run_code's description (default) or the server's "
        "instructions",
    )
    serve.add_argument(
        "--description-budget",
        metavar="UNITS",
        help="longest SDK text given up front, in UTF-16 code units (default: 2048, where "
        "Claude Code cuts descriptions); a larger SDK is found from programs with catalog.search",
    )
    serve.add_argument(
        "--result-tokens",
        metavar="N",
        help="the most o200k_base tokens a run's result may take before it is cut, with a note "
        "(default: 22000, a margin under the 25,000 Claude Code accepts; raise it with the "
        "client's own limit, e.g. MAX_MCP_OUTPUT_TOKENS)",
    )
    serve.add_argument(
        "--check-programs",
        choices=("refuse", "warn", "off"),
        help="check each program against the tools' declarations before it runs: refuse one "
        "with a definite mistake (the default), warn of it in the result, or off",
    )
    serve.add_argument(
        "--audit-log",
        metavar="FILE",
        help="append a JSON line per tool call to FILE: who, what, the policy's decision, the "
        "outcome, a digest of the arguments (default: the config's audit_log, else none)",
    )
    serve.add_argument(
        "--audit-arguments",
        action="store_true",
        help="record the arguments themselves in the audit log (they may carry secrets)",
    )
    serve.add_argument(
        "--sandbox",
        choices=("auto", "bubblewrap", "namespaces", "none"),
        help="how programs are contained (default: the config's, else auto); none runs them "
        "without isolation, with everything this process may reach",
    )
    serve.add_argument(
        "--typescript",
        metavar="DIR",
        help="the typescript package for Node older than 22.13 (default: Node's global one)",
    )
    serve.add_argument(
        "--http", metavar="HOST:PORT", help="serve streamable HTTP at http://HOST:PORT/mcp"
    )
    serve.add_argument(
        "--http-allow-remote",
        action="store_true",
        help="allow --http on an address other than loopback (the token is still required)",
    )
    serve.add_argument(
        "--http-allowed-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="a Host header clients may send besides the loopback names (repeatable)",
    )
    serve.add_argument(
        "--http-allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="an Origin browsers may send besides the server's own (repeatable)",
    )
    connections = serve.add_argument_group(
        "limits of HTTP connections (defaults: 10 s, 30 s, 30 s, 4MiB, 256 or a quarter of "
        "the open-file limit if less)"
    )
    connections.add_argument(
        "--http-header-timeout",
        metavar="SECONDS",
        help="to send a request head, from its first byte",
    )
    connections.add_argument(
        "--http-idle-timeout", metavar="SECONDS", help="to start the next request after a response"
    )
    connections.add_argument(
        "--http-body-timeout", metavar="SECONDS", help="to send a request body after its head"
    )
    connections.add_argument("--http-body", metavar="SIZE", help="a request body")
    connections.add_argument(
        "--http-connections",
        metavar="N",
        help="connections open at once; beyond it, the one waiting longest for a request is "
        "closed, or the newcomer when every one has a request in flight",
    )
    limits = serve.add_argument_group(
        "limits of each run (defaults: 60 s, 30 CPU s, 1GiB, 1MiB, 1MiB, 64, 8 runs, 16MiB)"
    )
    limits.add_argument("--timeout", metavar="SECONDS", help="wall clock of a run")
    limits.add_argument("--cpu-seconds", metavar="N", help="CPU time of a run's worker")
    limits.add_argument(
        "--memory",
        metavar="SIZE",
        help="memory of each process, and of the whole run where a memory cgroup can be made",
    )
    limits.add_argument("--output", metavar="SIZE", help="printed output plus the result")
    limits.add_argument("--arguments", metavar="SIZE", help="one tool call's arguments (JSON)")
    limits.add_argument("--processes", metavar="N", help="processes and threads of a run")
    limits.add_argument("--concurrent-runs", metavar="N", help="runs at the same time")
    limits.add_argument(
        "--upstream-message", metavar="SIZE", help="one message (a result) from an upstream"
    )
    serve.add_argument(
        "--print-config-example",
        action="store_true",
        help="print an example config and exit",
    )
    serve.epilog = _workflow_epilog("serve")
    serve.set_defaults(handler=_serve)


def _add_install_command(commands: Any) -> None:
    """`install`: the entry that starts `codegen serve`, written into a client's config
    (codegen/install/)."""
    from .install.command import add_arguments

    install = _command(
        commands,
        "install",
        "add codegen serve to the config of Claude Code, Claude Desktop, Cursor or VS Code",
        "Write, or update, the entry that makes an MCP client start `codegen serve` (absolute "
        "paths: clients start servers without your PATH or virtual environment) with the "
        "servers of --config, or reach a running `codegen serve --http` with its token in a "
        "header. Nothing else in the file changes; running it again changes nothing; "
        "--dry-run prints the diff. The file as it was is kept beside it "
        "(FILE.codegen-backup-TIME).",
    )
    add_arguments(install)
    install.set_defaults(handler=_install)


COMMANDS: dict[str, Callable[[Any], None]] = {
    "validate": _add_validate_command,
    "sdk": _add_sdk_command,
    "prompt": _add_prompt_command,
    "run-code-schema": _add_run_code_schema_command,
    "catalog": _add_catalog_command,
    "build": _add_build_command,
    "harvest": _add_harvest_command,
    "diff": _add_diff_command,
    "serve": _add_serve_command,
    "install": _add_install_command,
}
"""Every command and what adds its parser, in the order help lists them."""


def _print_diagnostics(
    diagnostics: Sequence[Diagnostic], stream: TextIO, errors_only: bool = False
) -> None:
    from ._support.progress import clear

    clear()  # the progress line, if the run has one
    for diagnostic in diagnostics:
        if diagnostic.is_error or not errors_only:
            stream.write(diagnostic.format() + "\n")


def _settings(args: argparse.Namespace) -> Any:
    """The command line over `[tool.codegen]`, merged where every command merges it
    (`workflow.config.settings_for`: which keys apply to which command); the table's
    warnings are printed unless `--quiet`."""
    from .workflow.config import Given, project_settings

    languages = getattr(args, "lang", None) if args.command == "catalog" else None
    given = Given(
        sources=tuple(args.sources) or None,
        namespace=args.namespace,
        input_format=args.input_format,
        cache=getattr(args, "cache", None),
        languages=None if languages is None else (languages,),
        catalog_title=getattr(args, "title", None),
        strict=args.strict,
    )
    settings = project_settings(args.command, given)
    if not settings.sources:
        raise UsageError(
            f"codegen {args.command}: the following arguments are required: SOURCE (or set "
            "'sources' in [tool.codegen] of pyproject.toml)"
        )
    if settings.config is not None and not args.quiet:
        for warning in settings.config.warnings:
            sys.stderr.write(warning + "\n")
    return settings


def _validate(args: argparse.Namespace) -> int:
    """`validate`: tool definitions, or plain JSON Schemas read alone (as `sdk` reads them)."""
    from .engine import compile_sources
    from .load.formats import PLAIN_SCHEMA

    settings = _settings(args)
    compiled = compile_sources(
        settings.sources,
        fmt=settings.input_format,
        namespace=settings.namespace,
        plain_schemas=True,
        ref_roots=args.ref_roots,
    )
    _print_diagnostics(
        compiled.diagnostics, sys.stdout, errors_only=args.quiet and not settings.strict
    )
    errors, warnings = len(compiled.errors), len(compiled.warnings)
    tools = len(compiled.definitions)
    plain = any(definition.format == PLAIN_SCHEMA for definition in compiled.definitions)
    noun = "schema" if plain else "tool"
    sys.stderr.write(
        f"{tools} {noun}{'s' * (tools != 1)}: {errors} error{'s' * (errors != 1)}, "
        f"{warnings} warning{'s' * (warnings != 1)}\n"
    )
    if _strict_failure(args, settings, compiled.diagnostics, writes=False):
        return EXIT_INVALID
    return EXIT_INVALID if errors else EXIT_OK


def _strict_failure(
    args: argparse.Namespace, settings: Any, diagnostics: Sequence[Diagnostic], writes: bool = True
) -> bool:
    """Whether `--strict` fails the run on its warnings (`workflow.strict`), said on stderr."""
    if not settings.strict:
        return False
    from .workflow.strict import strict_failure

    failure = strict_failure(args.command, diagnostics, settings.strict, writes)
    if failure is not None:
        sys.stderr.write(f"codegen {failure}\n")
    return failure is not None


def _compile(args: argparse.Namespace, settings: Any) -> Any:
    """The catalog of the sources, or None after printing the errors (on stderr)."""
    from .engine import compile_sources

    compiled = compile_sources(
        settings.sources,
        fmt=settings.input_format,
        namespace=settings.namespace,
        ref_roots=args.ref_roots,
    )
    _print_diagnostics(
        compiled.diagnostics, sys.stderr, errors_only=args.quiet and not settings.strict
    )
    if _strict_failure(args, settings, compiled.diagnostics):
        return None
    return compiled.catalog


def _emit(text: str, output: str | None) -> None:
    from ._support.progress import clear

    clear()  # the progress line, if the run has one
    if output:
        from ._support.atomic_write import write_text

        write_text(output, text)
    else:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()


def _sdk(args: argparse.Namespace) -> int:
    """`sdk`: through the engine `--cache` and `--jobs` ask for (a large catalog is worked
    in shares across processes, a small one in one go; the bytes are the same)."""
    from .engine import Engine
    from .load.sources import load_sources

    settings = _settings(args)
    loaded = load_sources(
        settings.sources,
        fmt=settings.input_format,
        namespace=settings.namespace,
        plain_schemas=True,  # a plain JSON Schema alone: its types (`render.schema_types`)
        ref_roots=args.ref_roots,
    )
    engine = Engine.from_options(settings.cache, args.jobs, quiet=args.quiet)
    rendered = engine.render(loaded.tools, loaded.diagnostics, [args.lang])
    _print_diagnostics(
        rendered.diagnostics, sys.stderr, errors_only=args.quiet and not settings.strict
    )
    if rendered.texts is None or _strict_failure(args, settings, rendered.diagnostics):
        return EXIT_INVALID
    _emit(rendered.texts[args.lang], args.output)
    engine.save()
    return EXIT_OK


def _prompt(args: argparse.Namespace) -> int:
    from .codemode.presentation.languages import sdk_renderer

    renderer = sdk_renderer(args.lang)  # an unknown language fails before any work
    catalog = _compile(args, _settings(args))
    if catalog is None:
        return EXIT_INVALID
    _emit(renderer(catalog), args.output)
    return EXIT_OK


def _run_code_schema(args: argparse.Namespace) -> int:
    import json

    from .codemode.run_code.definition import run_code_tool

    _emit(json.dumps(run_code_tool(args.lang), indent=2, ensure_ascii=False) + "\n", None)
    return EXIT_OK


def _catalog(args: argparse.Namespace) -> int:
    from .render.catalog import render_catalog
    from .workflow.config import catalog_language

    settings = _settings(args)
    catalog = _compile(args, settings)
    if catalog is None:
        return EXIT_INVALID
    _emit(
        render_catalog(
            catalog,
            args.catalog_format,
            catalog_language(settings.languages),
            title=settings.catalog_title,
        ),
        args.output,
    )
    return EXIT_OK


def _build(args: argparse.Namespace) -> int:
    from .workflow.build_command import run_build

    return run_build(args)


def _harvest(args: argparse.Namespace) -> int:
    from .workflow.harvest import run_harvest

    return run_harvest(args)


def _diff(args: argparse.Namespace) -> int:
    from .workflow.diff import run_diff

    return run_diff(args)


def _serve(args: argparse.Namespace) -> int:
    from .serve.command import run_serve

    return run_serve(args)


def _install(args: argparse.Namespace) -> int:
    from .install.command import run_install

    return run_install(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (the console script exits with it). The
    process-wide settings a run needs are made here, and only here: stack depth for the
    recursive walks (`recursion`), and for a batch command the cyclic collector paused and one
    set of memos for the whole command (`_run`)."""
    from ._support.recursion_limit import deep_recursion

    with deep_recursion():
        return _main(argv)


LONG_LIVED = frozenset({"serve"})
"""Commands that keep running: they keep the garbage collector and per-call memos."""


def _run(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """A batch command with the collector paused: reference counting frees what the
    pipeline drops, and the cyclic collector's passes over a loaded catalog would only cost
    time (see `gc_pause`); one memo scope, so every output of the command shares it."""
    if args.command in LONG_LIVED:
        return handler(args)
    from ._support.gc_pause import paused_gc
    from ._support.progress import reporting
    from ._support.run_memos import run_memos

    line = _progress_line(args)
    with paused_gc(), run_memos(), reporting(line):
        try:
            return handler(args)
        finally:
            if line is not None:
                line.clear()


def _progress_line(args: argparse.Namespace) -> Any:
    """The run's progress line on stderr (`workflow.progress.Progress`) for a command with
    `--progress`: on a terminal unless `--quiet`, or as `--progress` / `--no-progress` say.
    None otherwise, and then nothing of it is imported."""
    wanted = getattr(args, "progress", False)
    if wanted is None:
        isatty = getattr(sys.stderr, "isatty", None)
        wanted = not args.quiet and callable(isatty) and isatty()
    if not wanted:
        return None
    from .workflow.progress import Progress

    return Progress(sys.stderr, enabled=True)


def _main(argv: Sequence[str] | None) -> int:
    try:
        arguments = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(arguments)
        args = _parse(parser, arguments)
        if args.version:
            from ._support.distribution import DISTRIBUTION, clash, installed_version

            sys.stdout.write(f"codegen {installed_version()} ({DISTRIBUTION})\n")
            warning = clash()
            if warning:
                sys.stderr.write(f"codegen: warning: {warning}\n")
            return EXIT_OK
        handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return _run(handler, args)
    except CodegenError as error:
        return _reported(error)
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        return EXIT_OK
    except (Exception, BaseExceptionGroup) as error:  # the CLI must never show a traceback
        return _unhandled(error)


def _reported(error: CodegenError) -> int:
    message = str(error)
    sys.stderr.write(f"{message}\n" if message.startswith("codegen") else f"codegen: {message}\n")
    return error.exit_code


def _interrupted() -> int:
    sys.stderr.write("codegen: interrupted\n")
    return 130


_EXTRAS = {"mcp": "serve", "anyio": "serve", "wordllama": "search", "ty": "check"}
"""The extra that installs each optional dependency (pyproject.toml)."""


def _missing_package(module: str) -> str:
    """What to install when `module` is missing: an extra's dependency is named with its
    extra; anything else is a damaged install."""
    top = module.partition(".")[0]
    extra = _EXTRAS.get(top)
    if extra is not None:
        return (
            f"this needs the Python package {top!r}, which is not installed: "
            f"pip install 'tool-codegen[{extra}]'"
        )
    return (
        f"the Python package {top!r} is missing, though codegen depends on it: "
        "reinstall codegen (pip install --force-reinstall tool-codegen)"
    )


def _unhandled(error: BaseException) -> int:
    """An exception no command handled. Task groups wrap what they raise in exception
    groups, which name nothing ("unhandled errors in a TaskGroup"): a lone `CodegenError` or
    a Ctrl-C inside is reported as itself, anything else as an internal error naming every
    innermost exception with the notes added on its way out (which upstream, which step)."""
    from ._support.failures import failure_text, innermost

    failures = innermost(error)
    if len(failures) == 1 and isinstance(failures[0].error, CodegenError):
        return _reported(failures[0].error)
    if all(isinstance(failure.error, KeyboardInterrupt) for failure in failures):
        return _interrupted()
    missing = [f.error for f in failures if isinstance(f.error, ModuleNotFoundError)]
    if len(missing) == len(failures) and missing[0].name:
        sys.stderr.write(f"codegen: {_missing_package(missing[0].name)}\n")
        return EXIT_USAGE
    sys.stderr.write(
        f"codegen: internal error: {failure_text(error)}\n"
        "This is a bug in codegen; please report it with the input that caused it.\n"
    )
    return EXIT_USAGE
