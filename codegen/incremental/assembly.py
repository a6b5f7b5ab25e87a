"""SDK text assembled from each tool's chunk of text: through the per-tool cache, or with
the tools worked in shares across processes.

Both give the same bytes and diagnostics as compiling and rendering the catalog in one go.
Each tool is compiled and built alone (`pipeline.tool_entries`) and laid out as its chunk
of text; `build.builder.assemble_catalog` then decides, in catalog order, which tools keep their
text and which another tool's names force to be built again in place (numbered exactly as
the one-go build does); the renderers assemble the SDK around the chunks.

- `render_cached`: only new or changed tools are built and laid out, and a cached tool's
  IR is loaded only when it has no chunk for that language yet. Definitions of which one
  is not plain data (no cache key) take the one-go path. This is what makes a warm
  `codegen sdk --cache` cheap in a fresh process, where loading every tool's IR from the
  cache file would cost most of a cold render.
- `render_in_shares`: every tool is worked by one of several forked processes
  (`shares`), which send back only text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._support.recursion_limit import deep_recursion
from .._support.run_memos import run_memos
from ..build.builder import assemble_catalog
from ..errors import Diagnostic, has_errors, sort_diagnostics
from ..load.definitions import ToolDefinition
from ..pipeline import (
    assembled_warnings,
    cached_entries,
    compile_definitions,
    gathered_problems,
    reusable_members,
    tool_entries,
)
from ..render.targets import target
from .cache import ToolCache

if TYPE_CHECKING:
    from ..render.targets import Target
    from .cache import Entry


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
    jobs: int | None = 1,
) -> Rendered:
    """The SDKs of `languages` ("python", "typescript") for the definitions; the tools the
    cache misses are worked in shares as `shares.share_count` takes `jobs`."""
    definitions = tuple(definitions)
    diagnostics = tuple(diagnostics)
    renderers = {language: target(language) for language in languages}
    with deep_recursion(), run_memos():
        entries = cached_entries(definitions, cache, languages, jobs)
        if entries is not None:
            return _assembled(definitions, diagnostics, entries, renderers, cache.entry_chunk)
    # A definition without a key (not plain data): nothing here can be cached.
    compiled = compile_definitions(definitions, diagnostics)
    if compiled.catalog is None:
        return Rendered(None, compiled.diagnostics)
    catalog = compiled.catalog
    texts = {language: renderer.render(catalog, None) for language, renderer in renderers.items()}
    return Rendered(texts, compiled.diagnostics)


def render_in_shares(
    definitions: Iterable[ToolDefinition],
    diagnostics: Iterable[Diagnostic],
    languages: Sequence[str],
    jobs: int | None = None,
) -> Rendered:
    """The SDKs of `languages` for the definitions, every tool worked by one of the
    processes `shares.share_count` allows for `jobs` (None: one per usable core)."""
    definitions = tuple(definitions)
    renderers = {language: target(language) for language in languages}
    with deep_recursion(), run_memos():
        entries = tool_entries(definitions, languages, False, jobs)
        return _assembled(definitions, diagnostics, entries, renderers, _entry_text)


def _entry_text(entry: Entry, language: str, make: Callable[[Any], Any]) -> Any:
    return entry.chunks[language]


def _assembled(
    definitions: tuple[ToolDefinition, ...],
    diagnostics: Iterable[Diagnostic],
    entries: Sequence[Entry],
    renderers: Mapping[str, Target],
    entry_chunk: Callable[[Entry, str, Callable[[Any], Any]], Any],
) -> Rendered:
    """The SDK texts around the entries' chunks, or the problems that stop them."""
    problems = gathered_problems(definitions, diagnostics, entries)
    if has_errors(problems):
        return Rendered(None, sort_diagnostics(problems))
    assembled = assemble_catalog(reusable_members(definitions, entries))
    problems.extend(assembled_warnings(definitions, entries, assembled))
    texts = {}
    for language, renderer in renderers.items():
        chunks = [
            renderer.chunk(tool)
            if tool is not None
            else entry_chunk(entries[i], language, renderer.chunk)
            for i, tool in zip(assembled.order, assembled.rebuilt, strict=True)
        ]
        texts[language] = renderer.assemble(chunks)
    return Rendered(texts, sort_diagnostics(problems))
