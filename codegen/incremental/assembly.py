"""A catalog, or its SDK text, put back together from per-tool entries (`entries`).

Each tool was compiled and built alone; `build.builder.assemble_catalog` decides, in
catalog order, which tools keep their result and which another tool's names force to be
built again in place (numbered exactly as the one-go build does). `assembled_catalog` then
gives the IR catalog, `assembled_texts` the SDK text of each language around the tools'
chunks. Both give the bytes and diagnostics of the one-go pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .. import ir
from .._support import progress
from ..errors import Diagnostic, has_errors, sort_diagnostics
from ..ir_build.builder import assemble_catalog
from ..load.definitions import ToolDefinition
from ..pipeline import Compiled, Rendered
from ..render.targets import Target
from .cache import Entry, ToolCache
from .entries import assembled_warnings, gathered_problems, reusable_members


def assembled_catalog(
    definitions: tuple[ToolDefinition, ...],
    diagnostics: Iterable[Diagnostic],
    entries: Sequence[Entry],
    cache: ToolCache,
) -> Compiled:
    """The IR catalog of the entries (a reused tool's IR loaded from the cache), or the
    problems that stop it."""
    progress.begin("assembling the catalog")
    problems = gathered_problems(definitions, diagnostics, entries)
    if has_errors(problems):
        return Compiled(None, definitions, sort_diagnostics(problems))
    assembled = assemble_catalog(reusable_members(definitions, entries))
    tools = []
    for index, tool in zip(assembled.order, assembled.rebuilt, strict=True):
        tools.append(cache.tool(entries[index]) if tool is None else tool)
    problems.extend(assembled_warnings(definitions, entries, assembled))
    return Compiled(ir.Catalog(tuple(tools)), definitions, sort_diagnostics(problems))


def assembled_texts(
    definitions: tuple[ToolDefinition, ...],
    diagnostics: Iterable[Diagnostic],
    entries: Sequence[Entry],
    renderers: Mapping[str, Target],
    entry_chunk: Callable[[Entry, str, Callable[[Any], Any]], Any],
) -> Rendered:
    """The SDK texts around the entries' chunks (`entry_chunk` gives a reused tool's chunk
    for a language), or the problems that stop them."""
    progress.begin("assembling the SDK")
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


def entry_text(entry: Entry, language: str, make: Callable[[Any], Any]) -> Any:
    """A chunk an entry made in shares already holds (it never needs `make`)."""
    return entry.chunks[language]
