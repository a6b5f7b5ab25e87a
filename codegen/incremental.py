"""SDK text through the per-tool cache, without loading the IR of unchanged tools.

`render_cached` gives the same bytes and diagnostics as compiling and rendering without a
cache. Each SDK is assembled from the tools' cached chunks of text, in catalog order: only
new or changed tools are built and laid out, a tool whose names another tool takes first
is built again in place (`build_ir.assemble_catalog` decides, numbering it exactly as the
uncached build does), and a cached tool's IR is loaded only when it has no chunk for that
language yet. Definitions of which one is not plain data (no cache key) take the uncached
path.
This is what makes a warm `codegen sdk --cache` cheap in a fresh process, where loading
every tool's IR from the cache file would cost most of a cold render.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .build_ir import assemble_catalog
from .cache import ToolCache
from .errors import Diagnostic, has_errors, sort_diagnostics
from .model import ToolDefinition
from .pipeline import (
    assembled_warnings,
    cached_entries,
    compile_definitions,
    reusable_members,
)
from .recursion import deep_recursion
from .render.targets import target
from .runmemo import run_memos


@dataclass(frozen=True, slots=True)
class Rendered:
    """Each language's SDK text (None when the definitions have errors) and every
    diagnostic, sorted."""

    texts: dict[str, str] | None
    diagnostics: tuple[Diagnostic, ...]


def render_cached(
    definitions: Iterable[ToolDefinition],
    diagnostics: Iterable[Diagnostic],
    cache: ToolCache,
    languages: Sequence[str],
) -> Rendered:
    """The SDKs of `languages` ("python", "typescript") for the definitions."""
    definitions = tuple(definitions)
    diagnostics = tuple(diagnostics)
    renderers = {language: target(language) for language in languages}
    with deep_recursion(), run_memos():
        gathered = cached_entries(definitions, diagnostics, cache)
        if gathered is not None:
            entries, fresh, problems = gathered
            if has_errors(problems):
                return Rendered(None, sort_diagnostics(problems))
            assembled = assemble_catalog(reusable_members(definitions, entries, fresh))
            problems.extend(assembled_warnings(definitions, entries, assembled))
            texts = {}
            for language, renderer in renderers.items():
                chunks = [
                    renderer.chunk(tool)
                    if tool is not None
                    else cache.entry_chunk(entries[i], language, renderer.chunk)
                    for i, tool in zip(assembled.order, assembled.rebuilt, strict=True)
                ]
                texts[language] = renderer.assemble(chunks)
            return Rendered(texts, sort_diagnostics(problems))
    # A definition without a key (not plain data): nothing here can be cached.
    compiled = compile_definitions(definitions, diagnostics)
    if compiled.catalog is None:
        return Rendered(None, compiled.diagnostics)
    catalog = compiled.catalog
    texts = {language: renderer.render(catalog, None) for language, renderer in renderers.items()}
    return Rendered(texts, compiled.diagnostics)
