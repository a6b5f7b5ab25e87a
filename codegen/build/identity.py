"""Tables keyed by the identity of a schema node, which hold the nodes they key.

The builder remembers per node (its name, its type, the node merged from it) by `id()`: schema
nodes are dicts, which cannot be hashed. A bare `id()` key outlives its node when the node is
freed, and the next object allocated at that address would find the dead node's entry. A
`NodeTable` keeps a reference to every node it holds a value for, so while the table lives
an id in it always names the node it was written for.
"""

from __future__ import annotations

from typing import Any, NoReturn, TypeVar

V = TypeVar("V")


class NodeTable(dict[int, V]):
    """A dict from `id(node)` to a value; written only through `put`, which keeps `node`
    alive as long as the table. Reads are the dict's own (`table.get(id(node))`, `in`)."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        # No `dict.__init__`: a new dict is empty already (a builder makes eight per tool).
        self._held: list[Any] = []

    def put(self, node: Any, value: V) -> None:
        key = id(node)
        if key not in self:
            self._held.append(node)
        dict.__setitem__(self, key, value)

    def holds(self, node: Any) -> bool:
        """Whether `node` itself (not only its id) is held; for tests of the invariant."""
        return any(held is node for held in self._held)

    def clear(self) -> None:
        super().clear()
        self._held.clear()

    def __setitem__(self, key: int, value: V) -> NoReturn:
        raise TypeError("NodeTable is written with put(node, value), which keeps the node alive")

    def setdefault(self, key: int, default: Any = None) -> NoReturn:
        raise TypeError("NodeTable is written with put(node, value), which keeps the node alive")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("NodeTable is written with put(node, value), which keeps the node alive")
