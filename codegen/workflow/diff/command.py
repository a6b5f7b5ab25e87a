"""`codegen diff`: two catalogs compiled, compared and reported; the exit status says whether
a change breaks callers."""

from __future__ import annotations

import argparse
import time

from ...errors import UsageError
from ..progress import Console
from ..strict import strict_failure
from .compare import diff_catalogs
from .report import RENDERERS, plural


def run_diff(args: argparse.Namespace) -> int:
    """The `diff` command: the command line over `[tool.codegen]` (`config.HONOURED_BY`)."""
    from ..._support.user_files import display_path
    from ...engine import compile_sources
    from ..config import Given, project_settings

    console = Console(quiet=args.quiet, verbose=args.verbose)
    settings = project_settings(
        "diff",
        Given(
            sources=tuple(args.sources) or None,
            namespace=args.namespace,
            input_format=args.input_format,
            strict=args.strict,
        ),
    )
    if settings.config is not None:
        console.detail(f"using [tool.codegen] from {display_path(settings.config.path)}")
        for warning in settings.config.warnings:
            console.note(warning)
    fmt, namespace = settings.input_format, settings.namespace
    roots = getattr(args, "ref_roots", ())
    if args.git is None:
        sources = list(args.sources)  # OLD and NEW are always named
        if len(sources) != 2:
            raise UsageError("diff: expected two sources, OLD and NEW (or --git REV [SOURCES...])")
    else:
        sources = list(settings.sources)
        if not sources:
            raise UsageError(
                "diff: --git needs SOURCES, or 'sources' in [tool.codegen] of pyproject.toml"
            )
    started = time.monotonic()
    if args.git is None:
        console.progress.phase(f"old ({sources[0]})")
        old = compile_sources([sources[0]], fmt, namespace, require_tools=False, ref_roots=roots)
        console.progress.phase(f"new ({sources[1]})")
        new = compile_sources([sources[1]], fmt, namespace, require_tools=False, ref_roots=roots)
    else:
        from ..gitrev import compile_at_revision

        console.progress.phase(f"old ({args.git})")
        old = compile_at_revision(args.git, sources, fmt, namespace, roots)
        console.progress.phase("new (working tree)")
        new = compile_sources(sources, fmt, namespace, require_tools=False, ref_roots=roots)
    console.progress.phase("")
    diagnostics = (*old.diagnostics, *new.diagnostics)
    console.diagnostics(diagnostics, warnings=settings.strict or None)
    if old.catalog is None or new.catalog is None:
        errors = len(old.errors) + len(new.errors)
        console.error(f"diff: {plural(errors, 'error')} in the sources; nothing compared")
        return 1
    failure = strict_failure("diff", diagnostics, settings.strict)
    if failure is not None:
        console.error(failure)
        return 1
    console.detail(
        f"compiled {len(old.catalog.tools)} old and {len(new.catalog.tools)} new tools "
        f"in {time.monotonic() - started:.2f} s"
    )

    result = diff_catalogs(old.catalog, new.catalog)
    console.progress.clear()
    text = RENDERERS[args.diff_format](result)
    if args.output:
        from ..._support.atomic_write import write_text

        write_text(args.output, text)
    else:
        import sys

        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()
    console.detail(
        f"{plural(len(result.tools), 'tool')} changed, "
        f"{plural(result.breaking_changes, 'breaking change')}"
    )
    if result.breaking and args.fail_on_breaking:
        console.error(f"diff: {plural(result.breaking_changes, 'breaking change')}")
        return 1
    return 0
