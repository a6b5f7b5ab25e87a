"""The `codegen` command line.

Exit codes: 0 success, 1 invalid input (diagnostics printed), 2 bad usage, an unreadable
source, or an internal error. The CLI never prints a traceback. Heavy modules are imported
inside the command that needs them, so start-up stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from .errors import CodegenError, Diagnostic, UsageError

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

EPILOG = """exit status:
  0  success
  1  invalid input: the diagnostics say what and where
  2  bad usage, an unreadable source, or an internal error
"""

SDK_TARGETS = {
    "python": ("codegen.render.python", "render_python_sdk"),
    "typescript": ("codegen.render.typescript", "render_typescript_sdk"),
}
"""Language -> (module, function) of the SDK renderers, imported only when used."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors share one exit path."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def _command(commands: Any, name: str, summary: str, description: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=description,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def _add_sources(parser: argparse.ArgumentParser, format_flag: str = "--format") -> None:
    from .formats import FORMATS

    parser.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="tool definition file, directory, or - for stdin",
    )
    parser.add_argument(
        format_flag,
        dest="input_format",
        default="auto",
        choices=("auto", *FORMATS),
        help="input format (default: detect each record's format)",
    )
    parser.add_argument(
        "--namespace",
        action="store_true",
        help="prefix each tool name with its source's name and '__'",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="print errors only, no warnings")


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE (atomically; an unchanged file is not touched) instead of stdout",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="codegen",
        description="Typed SDKs from JSON-Schema tool definitions.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    validate = _command(
        commands,
        "validate",
        "check tool definitions and report every problem",
        "Load, validate and normalize tool definitions; print one "
        "'source:pointer: level: message' line per problem.",
    )
    _add_sources(validate)
    validate.set_defaults(handler=_validate)

    sdk = _command(
        commands,
        "sdk",
        "generate a typed SDK",
        "Generate the Python or TypeScript SDK for the tools in SOURCES. "
        "Diagnostics go to stderr; nothing is written when there are errors.",
    )
    _add_sources(sdk)
    sdk.add_argument("--lang", required=True, choices=sorted(SDK_TARGETS), help="target language")
    _add_output(sdk)
    sdk.set_defaults(handler=_sdk)

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

    schema = _command(
        commands,
        "run-code-schema",
        "the run_code tool definition as JSON",
        "Print the definition of the run_code tool for a program language.",
    )
    schema.add_argument("--lang", required=True, help="program language: python or typescript")
    schema.set_defaults(handler=_run_code_schema)

    catalog = _command(
        commands,
        "catalog",
        "an offline docs catalog of the tools",
        "Write every tool with its types, a parameter table and its raw schemas "
        "as Markdown, JSON or one self-contained HTML file. Needs no code runtime "
        "and no network.",
    )
    _add_sources(catalog, format_flag="--input-format")
    catalog.add_argument(
        "--format",
        dest="catalog_format",
        default="md",
        choices=("md", "json", "html"),
        help="catalog format (default: md)",
    )
    catalog.add_argument(
        "--lang",
        default="typescript",
        choices=("typescript", "python"),
        help="language the types are spelled in (default: typescript)",
    )
    _add_output(catalog)
    catalog.set_defaults(handler=_catalog)
    return parser


def _print_diagnostics(
    diagnostics: Sequence[Diagnostic], stream: TextIO, errors_only: bool = False
) -> None:
    for diagnostic in diagnostics:
        if diagnostic.is_error or not errors_only:
            stream.write(diagnostic.format() + "\n")


def _validate(args: argparse.Namespace) -> int:
    from .pipeline import compile_sources

    compiled = compile_sources(args.sources, fmt=args.input_format, namespace=args.namespace)
    _print_diagnostics(compiled.diagnostics, sys.stdout, errors_only=args.quiet)
    errors, warnings = len(compiled.errors), len(compiled.warnings)
    tools = len(compiled.definitions)
    sys.stderr.write(
        f"{tools} tool{'s' * (tools != 1)}: {errors} error{'s' * (errors != 1)}, "
        f"{warnings} warning{'s' * (warnings != 1)}\n"
    )
    return EXIT_INVALID if errors else EXIT_OK


def _compile(args: argparse.Namespace) -> Any:
    """The catalog of the sources, or None after printing the errors (on stderr)."""
    from .pipeline import compile_sources

    compiled = compile_sources(args.sources, fmt=args.input_format, namespace=args.namespace)
    _print_diagnostics(compiled.diagnostics, sys.stderr, errors_only=args.quiet)
    return compiled.catalog


def _emit(text: str, output: str | None) -> None:
    if output:
        from .write import write_text

        write_text(output, text)
    else:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()


def _sdk(args: argparse.Namespace) -> int:
    from importlib import import_module

    catalog = _compile(args)
    if catalog is None:
        return EXIT_INVALID
    module, function = SDK_TARGETS[args.lang]
    _emit(getattr(import_module(module), function)(catalog), args.output)
    return EXIT_OK


def _prompt(args: argparse.Namespace) -> int:
    from .codemode.languages import sdk_renderer

    renderer = sdk_renderer(args.lang)  # an unknown language fails before any work
    catalog = _compile(args)
    if catalog is None:
        return EXIT_INVALID
    _emit(renderer(catalog), args.output)
    return EXIT_OK


def _run_code_schema(args: argparse.Namespace) -> int:
    import json

    from .codemode.transport import run_code_tool

    _emit(json.dumps(run_code_tool(args.lang), indent=2, ensure_ascii=False) + "\n", None)
    return EXIT_OK


def _catalog(args: argparse.Namespace) -> int:
    from .render.catalog import render_catalog

    catalog = _compile(args)
    if catalog is None:
        return EXIT_INVALID
    _emit(render_catalog(catalog, args.catalog_format, args.lang), args.output)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (the console script exits with it)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.version:
            from importlib.metadata import version

            sys.stdout.write(f"codegen {version('codegen')}\n")
            return EXIT_OK
        handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return handler(args)
    except CodegenError as error:
        message = str(error)
        sys.stderr.write(
            f"{message}\n" if message.startswith("codegen") else f"codegen: {message}\n"
        )
        return error.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("codegen: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as error:  # the CLI must never show a traceback
        sys.stderr.write(
            f"codegen: internal error: {type(error).__name__}: {error}\n"
            "This is a bug in codegen; please report it with the input that "
            "caused it.\n"
        )
        return EXIT_USAGE
