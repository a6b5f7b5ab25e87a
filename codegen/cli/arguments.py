"""The parser's machinery: argparse raising instead of exiting, "did you mean" for a mistyped
flag or choice, help as wide as the terminal, and the flags several commands share."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..errors import UsageError

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
    from ..load.formats import INPUT_FORMATS

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


def _job_count(text: str) -> int:
    """`--jobs N`: a positive number of processes."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of processes, got {text!r}")
    return value


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
