"""Each command's arguments, and the parser of the command line (`build_parser`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from ..render.targets import TARGET_NAMES
from . import handlers
from .arguments import (
    EPILOG,
    _add_input_format,
    _add_namespace,
    _add_output,
    _add_ref_roots,
    _add_sources,
    _add_strict,
    _add_verbosity,
    _catalog_title,
    _command,
    _job_count,
    _Parser,
    _workflow_epilog,
)


def _add_validate_command(commands: Any) -> None:
    validate = _command(
        commands,
        "validate",
        "check tool definitions and report every problem",
        "Load, validate and normalize tool definitions; print one "
        "'source:pointer: level: message' line per problem.",
    )
    _add_sources(validate)
    validate.set_defaults(handler=handlers._validate)


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
    sdk.set_defaults(handler=handlers._sdk)


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
    prompt.set_defaults(handler=handlers._prompt)


def _add_run_code_schema_command(commands: Any) -> None:
    schema = _command(
        commands,
        "run-code-schema",
        "the run_code tool definition as JSON",
        "Print the definition of the run_code tool for a program language.",
    )
    schema.add_argument("--lang", required=True, help="program language: python or typescript")
    schema.set_defaults(handler=handlers._run_code_schema)


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
    catalog.set_defaults(handler=handlers._catalog)


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
    build.set_defaults(handler=handlers._build)


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
    harvest.set_defaults(handler=handlers._harvest)


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
    diff.set_defaults(handler=handlers._diff)


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
    serve.add_argument(
        "--print-config-schema",
        action="store_true",
        help='print the JSON Schema of the config (for an editor\'s "$schema") and exit',
    )
    serve.epilog = _workflow_epilog("serve")
    serve.set_defaults(handler=handlers._serve)


def _add_install_command(commands: Any) -> None:
    """`install`: the entry that starts `codegen serve`, written into a client's config
    (codegen/install/)."""
    from ..install.command import add_arguments

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
    install.set_defaults(handler=handlers._install)


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
