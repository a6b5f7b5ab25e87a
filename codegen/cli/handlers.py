"""What each command does with its parsed arguments; the heavy modules are imported inside
the command that needs them, so start-up stays fast."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from ..errors import Diagnostic, UsageError

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def _print_diagnostics(
    diagnostics: Sequence[Diagnostic], stream: TextIO, errors_only: bool = False
) -> None:
    from .._support.progress import clear

    clear()  # the progress line, if the run has one
    for diagnostic in diagnostics:
        if diagnostic.is_error or not errors_only:
            stream.write(diagnostic.format() + "\n")


def _settings(args: argparse.Namespace) -> Any:
    """The command line over `[tool.codegen]`, merged where every command merges it
    (`workflow.config.settings_for`: which keys apply to which command); the table's
    warnings are printed unless `--quiet`."""
    from ..workflow.config import Given, project_settings

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
    from ..engine import compile_sources
    from ..load.formats import PLAIN_SCHEMA

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
    from ..workflow.strict import strict_failure

    failure = strict_failure(args.command, diagnostics, settings.strict, writes)
    if failure is not None:
        sys.stderr.write(f"codegen {failure}\n")
    return failure is not None


def _compile(args: argparse.Namespace, settings: Any) -> Any:
    """The catalog of the sources, or None after printing the errors (on stderr)."""
    from ..engine import compile_sources

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
    from .._support.progress import clear

    clear()  # the progress line, if the run has one
    if output:
        from .._support.atomic_write import write_text

        write_text(output, text)
    else:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()


def _sdk(args: argparse.Namespace) -> int:
    """`sdk`: through the engine `--cache` and `--jobs` ask for (a large catalog is worked
    in shares across processes, a small one in one go; the bytes are the same)."""
    from ..engine import Engine
    from ..load.sources import load_sources

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
    from ..codemode.presentation.languages import sdk_renderer

    renderer = sdk_renderer(args.lang)  # an unknown language fails before any work
    catalog = _compile(args, _settings(args))
    if catalog is None:
        return EXIT_INVALID
    _emit(renderer(catalog), args.output)
    return EXIT_OK


def _run_code_schema(args: argparse.Namespace) -> int:
    import json

    from ..codemode.run_code.definition import run_code_tool

    _emit(json.dumps(run_code_tool(args.lang), indent=2, ensure_ascii=False) + "\n", None)
    return EXIT_OK


def _catalog(args: argparse.Namespace) -> int:
    from ..render.catalog import render_catalog
    from ..workflow.config import catalog_language

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
    from ..workflow.build_command import run_build

    return run_build(args)


def _harvest(args: argparse.Namespace) -> int:
    from ..workflow.harvest import run_harvest

    return run_harvest(args)


def _diff(args: argparse.Namespace) -> int:
    from ..workflow.diff.command import run_diff

    return run_diff(args)


def _serve(args: argparse.Namespace) -> int:
    from ..serve.command import run_serve

    return run_serve(args)


def _install(args: argparse.Namespace) -> int:
    from ..install.command import run_install

    return run_install(args)
