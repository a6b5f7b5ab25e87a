"""The one compile engine: how a catalog is worked, decided in one place.

A catalog can be compiled in one go (`pipeline.compile_catalog`), tool by tool through a
per-tool cache (in memory, or on disk in a directory), or tool by tool in shares across
forked processes; an SDK can be rendered from the IR or assembled from each tool's chunk of
text. `Engine` holds the choice (its `cache` and `jobs`) and every caller goes through it:
`codegen sdk`, `build`, `prompt`, `catalog`, `validate`, `diff`, the library's `compile_*`
functions and Code Mode. Whatever the choice, the result is the same: the same catalog, the
same SDK bytes, the same diagnostics (`tests/test_engine.py` checks that property of this
one object).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from . import ir
from ._support.recursion_limit import deep_recursion
from ._support.run_memos import run_memos
from .errors import Diagnostic
from .load.definitions import ToolDefinition
from .load.sources import load_sources, load_value
from .pipeline import (
    Compiled,
    Rendered,
    compile_catalog,
    compile_schemas,
    is_plain,
    placed,
    placed_texts,
    require_catalog,
)

if TYPE_CHECKING:
    from .incremental.cache import ToolCache


@dataclass(frozen=True, slots=True)
class Engine:
    """How to work a catalog: with a per-tool `cache` or none, and in how many processes.

    `jobs`: processes the per-tool work may spread over (`None`: one per usable core, as
    `incremental.shares.share_count` bounds it); a catalog too small to split is worked
    here. Only work done tool by tool spreads: the SDK of a large catalog and a cache's
    misses."""

    cache: ToolCache | None = None
    jobs: int | None = 1

    @classmethod
    def from_options(
        cls, cache_dir: str | None = None, jobs: int | None = 1, quiet: bool = False
    ) -> Engine:
        """The engine a command's `--cache DIR`, `--jobs N` and `--quiet` ask for (`quiet`
        leaves out the note about a cache folder written under another key)."""
        if cache_dir is None:
            return cls(None, jobs)
        from .incremental.cache import ToolCache

        return cls(ToolCache(cache_dir, quiet=quiet), jobs)

    def compile(
        self, definitions: Iterable[ToolDefinition], diagnostics: Iterable[Diagnostic] = ()
    ) -> Compiled:
        """The IR catalog of the definitions (None with errors) and every diagnostic. With
        a cache, only the tools it has not seen are compiled; definitions that are not
        plain data (no cache key) are compiled in one go, and so are plain JSON Schemas
        (`pipeline.compile_schemas`)."""
        definitions = tuple(definitions)
        if is_plain(definitions):
            return compile_schemas(definitions, diagnostics)
        if self.cache is not None:
            from .incremental.assembly import assembled_catalog
            from .incremental.entries import cached_entries

            with deep_recursion(), run_memos():
                entries = cached_entries(definitions, self.cache, (), self.jobs)
                if entries is not None:
                    return placed(assembled_catalog(definitions, diagnostics, entries, self.cache))
        return compile_catalog(definitions, diagnostics)

    def render(
        self,
        definitions: Iterable[ToolDefinition],
        diagnostics: Iterable[Diagnostic],
        languages: Sequence[str],
    ) -> Rendered:
        """The SDK of each of `languages` ("python", "typescript") and every diagnostic.
        Through the cache, or in shares when the catalog is large enough to split, the SDK
        is assembled from each tool's chunk (an unchanged tool's IR never loaded); else the
        catalog is compiled and rendered in one go. Plain JSON Schemas give their types
        alone (`render.schema_types`)."""
        from .render.targets import target

        definitions = tuple(definitions)
        diagnostics = tuple(diagnostics)
        renderers = {language: target(language) for language in languages}
        if is_plain(definitions):
            return _schema_types(definitions, diagnostics, languages)
        if self.cache is not None or self._shares(len(definitions)) > 1:
            from .incremental.assembly import assembled_texts, entry_text
            from .incremental.entries import cached_entries, tool_entries

            with deep_recursion(), run_memos():
                if self.cache is None:
                    entries = tool_entries(definitions, languages, False, self.jobs)
                    made = assembled_texts(definitions, diagnostics, entries, renderers, entry_text)
                    return placed_texts(definitions, made)
                cached = cached_entries(definitions, self.cache, languages, self.jobs)
                if cached is not None:
                    made = assembled_texts(
                        definitions, diagnostics, cached, renderers, self.cache.entry_chunk
                    )
                    return placed_texts(definitions, made)
        compiled = compile_catalog(definitions, diagnostics)
        if compiled.catalog is None:
            return Rendered(None, compiled.diagnostics)
        catalog = compiled.catalog
        texts = {
            language: renderer.render(catalog, None) for language, renderer in renderers.items()
        }
        return Rendered(texts, compiled.diagnostics)

    def save(self) -> None:
        """Write the cache's directory, if it has one; a failure is a warning."""
        if self.cache is not None and self.cache.directory is not None:
            self.cache.save_or_warn()

    def _shares(self, items: int) -> int:
        if self.jobs == 1:
            return 1  # the library's default never loads the share machinery
        from .incremental.shares import share_count

        return share_count(items, self.jobs)


def _schema_types(
    definitions: Sequence[ToolDefinition],
    diagnostics: Sequence[Diagnostic],
    languages: Sequence[str],
) -> Rendered:
    """Plain JSON Schemas: their types alone in each language (`render.schema_types`),
    compiled in one go (a few documents; no cache, no shares)."""
    from .render.schema_types import render_schema_types

    compiled = compile_schemas(definitions, diagnostics)
    if compiled.catalog is None:
        return Rendered(None, compiled.diagnostics)
    catalog = compiled.catalog
    texts = {language: render_schema_types(catalog, language) for language in languages}
    return Rendered(texts, compiled.diagnostics)


def compile_sources(
    sources: Sequence[str],
    fmt: str = "auto",
    namespace: bool = False,
    stdin: BinaryIO | None = None,
    cache: ToolCache | None = None,
    require_tools: bool = True,
    plain_schemas: bool = False,
    ref_roots: Sequence[str] = (),
) -> Compiled:
    """Files, directories or `-` to the IR. Raises `UsageError` only for unreadable sources;
    sources without a tool are an error unless `require_tools` is false. `plain_schemas`:
    plain JSON Schema documents are read too, and compiled as types alone. `ref_roots`:
    folders a `$ref` may read files from besides its source's own (`load.ref_files`)."""
    loaded = load_sources(
        sources,
        fmt=fmt,
        namespace=namespace,
        stdin=stdin,
        require_tools=require_tools,
        plain_schemas=plain_schemas,
        ref_roots=ref_roots,
    )
    return Engine(cache).compile(loaded.tools, loaded.diagnostics)


def compile_value(value: Any, source: str = "<memory>", fmt: str = "auto") -> Compiled:
    """An already-decoded value (a tool, a list, `{"tools": [...]}`) to the IR."""
    loaded = load_value(value, source, fmt)
    return Engine().compile(loaded.tools, loaded.diagnostics)


def compile_definitions(
    definitions: Iterable[ToolDefinition],
    diagnostics: Iterable[Diagnostic] = (),
    cache: ToolCache | None = None,
) -> Compiled:
    """Validate, normalize and build loaded definitions. With a `cache`, tools whose
    definitions it has seen are not compiled again; the result is the same."""
    return Engine(cache).compile(definitions, diagnostics)


def as_catalog(value: Any) -> ir.Catalog:
    """Accept an IR catalog, `ToolDefinition`s, or tool data in any loadable format."""
    if isinstance(value, ir.Catalog):
        return value
    if isinstance(value, Sequence) and value and all(isinstance(v, ToolDefinition) for v in value):
        return require_catalog(compile_definitions(value))
    return require_catalog(compile_value(value))
