"""SDK text through the per-tool cache, without loading the IR of unchanged tools.

`render_cached` gives the same bytes and diagnostics as compiling and rendering without a
cache. Each SDK is assembled from the tools' cached chunks of text, in catalog order: only
new or changed tools are built and laid out, a tool whose names another tool takes first
is built again in place (`build.assemble_catalog` decides, numbering it exactly as the
uncached build does), and a cached tool's IR is loaded only when it has no chunk for that
language yet. A definition that is not plain data (no cache key) takes the uncached path.
This is what makes a warm `codegen sdk --cache` cheap in a fresh process, where loading
every tool's IR from the cache file would cost most of a cold render.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .build import assemble_catalog
from .cache import ToolCache
from .errors import Diagnostic, has_errors, sort_diagnostics
from .gcpause import paused_gc
from .model import ToolDefinition
from .pipeline import cached_entries, compile_definitions, reusable_members
from .validate import deep_recursion


@dataclass(frozen=True, slots=True)
class Rendered:
    """Each language's SDK text (None when the definitions have errors) and every
    diagnostic, sorted."""

    texts: dict[str, str] | None
    diagnostics: tuple[Diagnostic, ...]


def _languages() -> dict[
    str, tuple[Callable[[Any], Any], Callable[[Any], str], Callable[..., str]]
]:
    """Language -> (chunk of one tool, SDK from chunks, SDK from a catalog)."""
    from .render.python import python_chunk, python_sdk_from_chunks, render_python_sdk
    from .render.typescript import (
        render_typescript_sdk,
        typescript_chunk,
        typescript_sdk_from_chunks,
    )

    return {
        "python": (python_chunk, python_sdk_from_chunks, render_python_sdk),
        "typescript": (typescript_chunk, typescript_sdk_from_chunks, render_typescript_sdk),
    }


def render_cached(
    definitions: Iterable[ToolDefinition],
    diagnostics: Iterable[Diagnostic],
    cache: ToolCache,
    languages: Sequence[str],
) -> Rendered:
    """The SDKs of `languages` ("python", "typescript") for the definitions."""
    definitions = tuple(definitions)
    diagnostics = tuple(diagnostics)
    renderers = _languages()
    with deep_recursion(), paused_gc():
        gathered = cached_entries(definitions, diagnostics, cache)
        if gathered is not None:
            entries, fresh, problems = gathered
            if has_errors(problems):
                return Rendered(None, sort_diagnostics(problems))
            assembled = assemble_catalog(reusable_members(definitions, entries, fresh))
            for index, (definition, entry) in enumerate(zip(definitions, entries, strict=True)):
                if index in assembled.warnings:
                    problems.extend(assembled.warnings[index])
                else:
                    problems.extend(entry.located_warnings(definition))
            texts = {}
            for language in languages:
                make, assemble, _ = renderers[language]
                chunks = [
                    make(tool)
                    if tool is not None
                    else cache.entry_chunk(entries[i], language, make)
                    for i, tool in zip(assembled.order, assembled.rebuilt, strict=True)
                ]
                texts[language] = assemble(chunks)
            return Rendered(texts, sort_diagnostics(problems))
    compiled = compile_definitions(definitions, diagnostics, cache)
    if compiled.catalog is None:
        return Rendered(None, compiled.diagnostics)
    catalog = compiled.catalog
    texts = {language: renderers[language][2](catalog, cache) for language in languages}
    return Rendered(texts, compiled.diagnostics)
