"""`codegen build`: every output of a project in one step, and `--check` for CI.

A project that commits its generated SDKs needs them to match the tool definitions at every
commit. `build` renders all of them from one compiled catalog (the SDKs, the Code Mode prompt
sections and the docs catalogs), writes each atomically and leaves unchanged files untouched
so timestamps and build caches stay valid. `--check` renders the same files and writes
nothing: it prints a unified diff for every file that would change and exits 1, which is
what a CI job or the pre-commit hook runs. Invalid sources write nothing at all, so a broken
definition can never leave half a set of outputs behind.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import os
import stat
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from .. import ir
from .._support.user_files import display_path
from ..errors import UsageError
from ..render.catalog import CATALOG_FORMATS
from ..render.targets import TARGET_NAMES, TARGETS
from .config import (
    DEFAULT_MODULE,
    Given,
    ProjectConfig,
    catalog_language,
    check_format,
    check_module,
    find_config,
    parse_catalogs,
    parse_languages,
    settings_for,
)
from .progress import Console
from .strict import strict_failure

if TYPE_CHECKING:
    from ..render.chunks import ChunkMemo

EXIT_OK, EXIT_FAILED = 0, 1


@dataclass(frozen=True, slots=True)
class BuildSettings:
    """What to build, after the command line has been merged over `[tool.codegen]`."""

    sources: tuple[str, ...]
    out: Path
    languages: tuple[str, ...] = TARGET_NAMES
    module: str = DEFAULT_MODULE
    namespace: bool = False
    input_format: str = "auto"
    cache: Path | None = None
    catalogs: tuple[str, ...] = CATALOG_FORMATS
    catalog_title: str | None = None
    """The catalogs' heading (`catalog_title` of the table); None: the default."""
    strict: bool = False
    """Warnings fail the build as errors do (`workflow.strict`)."""


@dataclass(frozen=True, slots=True)
class Output:
    """One file `build` owns: where it goes, how it is shown, and its full text."""

    path: Path
    display: str
    text: str


def resolve_settings(args: argparse.Namespace, config: ProjectConfig | None) -> BuildSettings:
    """Command-line values win; the table fills in what the command line leaves out
    (`config.settings_for`, the one merge every command goes through)."""
    given = Given(
        sources=tuple(args.sources) or None,
        out=display_path(Path(args.output)) if args.output else None,
        languages=(
            None
            if args.lang is None
            else parse_languages([name.strip() for name in args.lang.split(",")])
        ),
        module=None if args.module is None else check_module(args.module),
        namespace=args.namespace,
        input_format=None if args.input_format is None else check_format(args.input_format),
        catalogs=(
            None
            if args.catalogs is None
            else parse_catalogs([name.strip() for name in args.catalogs.split(",") if name.strip()])
        ),
        cache=args.cache,
        strict=args.strict,
    )
    settings = settings_for("build", given, config)
    if not settings.sources:
        raise UsageError(
            "build: no sources: name them on the command line or set 'sources' in "
            "[tool.codegen] of pyproject.toml"
        )
    if settings.out is None:
        raise UsageError(
            "build: no output directory: pass -o OUTDIR or set 'out' in [tool.codegen] "
            "of pyproject.toml"
        )
    return BuildSettings(
        settings.sources,
        Path(settings.out),
        settings.languages or TARGET_NAMES,
        settings.module,
        settings.namespace,
        settings.input_format,
        None if settings.cache is None else Path(settings.cache),
        CATALOG_FORMATS if settings.catalogs is None else settings.catalogs,
        settings.catalog_title,
        settings.strict,
    )


def output_plan(
    settings: BuildSettings, memo: ChunkMemo | None = None
) -> list[tuple[str, Callable[[ir.Catalog], str]]]:
    """(file name, renderer) for every output, in the order they are reported. Renderers
    are imported here, not at module import, so `codegen --help` stays fast. `memo` (a
    `ToolCache`) lets the SDKs and prompt sections reuse unchanged tools' text."""
    from ..render.catalog import render_catalog

    name = settings.module
    plan: list[tuple[str, Callable[[ir.Catalog], str]]] = []
    targets = [TARGETS[language] for language in settings.languages]
    for target in targets:
        plan.append((name + target.suffix, partial(_with_memo, target.render, memo)))
    for target in targets:
        plan.append((f"{name}.prompt.{target.name}.md", partial(_with_memo, target.section, memo)))
    # The catalogs spell types in TypeScript unless only the Python SDK is built.
    spelling = catalog_language(settings.languages)
    for fmt in settings.catalogs:
        plan.append(
            (
                f"{name}.catalog.{fmt}",
                partial(render_catalog, fmt=fmt, language=spelling, title=settings.catalog_title),
            )
        )
    return plan


def _with_memo(
    render: Callable[[ir.Catalog, ChunkMemo | None], str],
    memo: ChunkMemo | None,
    catalog: ir.Catalog,
) -> str:
    return render(catalog, memo)


def render_outputs(
    catalog: ir.Catalog,
    settings: BuildSettings,
    console: Console | None = None,
    memo: ChunkMemo | None = None,
) -> list[Output]:
    """The full text of every output."""
    plan = output_plan(settings, memo)
    outputs = []
    for index, (name, renderer) in enumerate(plan, start=1):
        path = settings.out / name
        if console is not None:
            console.progress.phase(f"{name} ({index}/{len(plan)})")
        outputs.append(Output(path, path.as_posix(), renderer(catalog)))
    if console is not None:
        console.progress.phase("")
    return outputs


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def read_current(path: Path) -> bytes | None:
    """The bytes on disk, or None when the file does not exist yet. Only a regular file is
    read, never through a symbolic link: `build` replaces a link by a file, and `--check`
    must not print the text of whatever file a repository's link points at in its diff (a
    CI log); a FIFO would block the run."""
    try:
        descriptor = os.open(path, _READ_FLAGS | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{path}: is a symbolic link, not an output file") from None
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with open(descriptor, "rb") as stream:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise UsageError(f"{path}: is a directory, not an output file")
        if not stat.S_ISREG(mode):
            raise UsageError(f"{path}: is not a regular file, not an output file (a pipe?)")
        try:
            return stream.read()
        except OSError as exc:
            raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None


def unified_diff(old: bytes | None, new: str, display: str) -> str:
    """A `diff -u` of the file on disk against what `build` would write, with git-style
    `a/` and `b/` headers so it reads (and applies) like any patch."""
    before = (old or b"").decode("utf-8", errors="replace")
    lines = list(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{display.lstrip('/')}",
            tofile=f"b/{display.lstrip('/')}",
        )
    )
    text = []
    for line in lines:
        if line.endswith("\n"):
            text.append(line)
        else:  # the last line of one side has no line break
            text.append(line + "\n\\ No newline at end of file\n")
    return "".join(text)


def check(outputs: Sequence[Output], console: Console) -> int:
    """Print a diff for every output that is missing or different; 1 when there is one."""
    stale = 0
    for output in outputs:
        current = read_current(output.path)
        if current == output.text.encode("utf-8"):
            console.detail(f"current {output.display}")
            continue
        stale += 1
        console.note(f"{'missing' if current is None else 'outdated'} {output.display}")
        console.progress.clear()
        sys.stdout.write(unified_diff(current, output.text, output.display))
    sys.stdout.flush()
    if stale:
        console.note(
            f"{stale} of {len(outputs)} generated file{'s' * (len(outputs) != 1)} "
            f"{'is' if stale == 1 else 'are'} out of date; run 'codegen build' to update"
        )
        return EXIT_FAILED
    console.note(f"all {len(outputs)} generated files are up to date")
    return EXIT_OK


def write(outputs: Sequence[Output], console: Console) -> int:
    """Write every output atomically; unchanged files are not touched."""
    from .._support.atomic_write import write_text

    for output in outputs:
        changed = write_text(output.path, output.text)
        console.note(f"{'wrote' if changed else 'unchanged'} {output.display}")
    return EXIT_OK


def run_build(args: argparse.Namespace) -> int:
    """The `build` command: merge settings, compile once, render everything, then write
    or check."""
    from ..engine import Engine
    from ..load.sources import load_sources

    console = Console(quiet=args.quiet, verbose=args.verbose)
    config = find_config()
    if config is not None:
        console.detail(f"using [tool.codegen] from {display_path(config.path)}")
        for warning in config.warnings:
            console.note(warning)
    settings = resolve_settings(args, config)
    started = time.monotonic()
    cache = None if settings.cache is None else str(settings.cache)
    engine = Engine.from_options(cache, quiet=args.quiet)
    loaded = load_sources(
        settings.sources,
        fmt=settings.input_format,
        namespace=settings.namespace,
        ref_roots=getattr(args, "ref_roots", ()),
    )
    compiled = engine.compile(loaded.tools, loaded.diagnostics)
    console.diagnostics(compiled.diagnostics, warnings=settings.strict or None)
    if compiled.catalog is None:
        console.error(
            f"build: {len(compiled.errors)} error{'s' * (len(compiled.errors) != 1)} "
            "in the sources; nothing written"
        )
        return EXIT_FAILED
    failure = strict_failure("build", compiled.diagnostics, settings.strict, not args.check)
    if failure is not None:
        console.error(failure)
        return EXIT_FAILED
    tools = len(compiled.catalog.tools)
    console.detail(
        f"compiled {tools} tool{'s' * (tools != 1)} in {time.monotonic() - started:.2f} s"
    )
    outputs = render_outputs(compiled.catalog, settings, console, engine.cache)
    console.progress.clear()
    if args.check:
        return check(outputs, console)
    status = write(outputs, console)
    engine.save()
    return status
