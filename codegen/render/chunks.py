"""Per-tool pieces of an SDK, and the hook that lets a cache reuse them.

Every renderer splits its output into one chunk per tool (that tool's declarations, its
method or map entries) plus catalog-level text around them. A tool's chunk depends on that
tool's IR alone, so a cache that hands back the same `ir.Tool` object for an unchanged
definition can hand back its chunk too, and a re-render only lays out the tools that
changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from .. import ir
from .._support import progress

T = TypeVar("T")


class ChunkMemo(Protocol):
    """Remembers a renderer's chunk for an `ir.Tool` object (by identity)."""

    def chunk(self, tool: ir.Tool, target: str, make: Callable[[ir.Tool], T]) -> T:
        """The chunk `make(tool)` made before for `target`, or a new one, remembered."""
        ...


def tool_chunks(
    catalog: ir.Catalog, target: str, make: Callable[[ir.Tool], T], memo: ChunkMemo | None
) -> list[T]:
    """One chunk per tool, in catalog order, through `memo` when there is one (each tool
    counted when a run's progress is reported)."""
    if progress.active():
        return _counted_chunks(catalog, target, make, memo)
    if memo is None:
        return [make(tool) for tool in catalog.tools]
    return [memo.chunk(tool, target, make) for tool in catalog.tools]


def _counted_chunks(
    catalog: ir.Catalog, target: str, make: Callable[[ir.Tool], T], memo: ChunkMemo | None
) -> list[T]:
    progress.begin(f"rendering {target}", len(catalog.tools))
    chunks = []
    for tool in catalog.tools:
        chunks.append(make(tool) if memo is None else memo.chunk(tool, target, make))
        progress.advance()
    return chunks
