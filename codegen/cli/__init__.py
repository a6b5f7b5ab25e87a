"""The `codegen` command line.

Exit codes: 0 success, 1 invalid input (diagnostics printed), 2 bad usage, an unreadable
source, or an internal error. The CLI never prints a traceback. `arguments` is the parser's
machinery, `commands` each command's arguments and the parser, `handlers` what each command
does; here, the run itself: one exit path for every error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import CodegenError
from .arguments import _parse
from .commands import COMMANDS, build_parser
from .handlers import EXIT_OK, EXIT_USAGE

__all__ = ["COMMANDS", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (the console script exits with it). The
    process-wide settings a run needs are made here, and only here: stack depth for the
    recursive walks (`recursion`), and for a batch command the cyclic collector paused and one
    set of memos for the whole command (`_run`)."""
    from .._support.recursion_limit import deep_recursion

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
    from .._support.gc_pause import paused_gc
    from .._support.progress import reporting
    from .._support.run_memos import run_memos

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
    from ..workflow.progress import Progress

    return Progress(sys.stderr, enabled=True)


def _main(argv: Sequence[str] | None) -> int:
    try:
        arguments = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(arguments)
        args = _parse(parser, arguments)
        if args.version:
            from .._support.distribution import DISTRIBUTION, clash, installed_version

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
    from .._support.failures import failure_text, innermost

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
