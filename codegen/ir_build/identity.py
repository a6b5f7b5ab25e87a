"""Tables keyed by the identity of a schema node, which hold the nodes they key.

The builder remembers per node (its name, its type, the node merged from it) by `id()`: schema
nodes are dicts, which cannot be hashed. A bare `id()` key outlives its node when the node is
freed, and the next object allocated at that address would find the dead node's entry. A
`NodeTable` keeps a reference to every node it holds a value for, so while the table lives
an id in it always names the node it was written for. `ShapeKeys` names what a merge takes
in the same way: document nodes by identity, held, and every other value by its content.
"""

from __future__ import annotations

from collections.abc import Container, Hashable
from typing import Any, NoReturn, TypeVar

V = TypeVar("V")
_CONTAINERS = (dict, list)


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


class ShapeKeys:
    """Small numbers that name the values a merge takes in, for the builder's memo of
    merges: a schema node of the document by its identity (two alike still sit at two
    places, with two pointers and names), any other value by its content, so the same
    keywords copied by two merges get one key. Each container is numbered once and held,
    so keying a copy costs its own length, not the depth of what it holds."""

    __slots__ = ("_known", "_next", "_nodes", "_numbers")

    def __init__(self, nodes: Container[int]) -> None:
        self._nodes = nodes  # ids of the document's schema nodes (`Normalized.origins`)
        self._numbers: dict[Hashable, int] = {}
        self._known: NodeTable[int] = NodeTable()
        self._next = 0

    def key(self, value: Any) -> Hashable:
        """The key of a JSON value: equal for two equal values with their keys in the same
        order (`1`, `1.0` and `True` differ, as their spellings do), and for a node of the
        document only for that node."""
        if not isinstance(value, _CONTAINERS):
            return (type(value), repr(value) if isinstance(value, float) else value)
        number = self._known.get(id(value))
        if number is None:
            if id(value) in self._nodes:
                number = self._fresh()
            else:
                content = self.items(value) if isinstance(value, dict) else self._list(value)
                number = self._numbers.get(content)
                if number is None:
                    number = self._numbers[content] = self._fresh()
            self._known.put(value, number)
        return number

    def items(self, mapping: dict[str, Any]) -> tuple[Hashable, ...]:
        """The key of a dict's entries in their order (which orders fields and notes)."""
        return ("{}", *((name, self.key(value)) for name, value in mapping.items()))

    def _list(self, values: list[Any]) -> tuple[Hashable, ...]:
        return ("[]", *(self.key(value) for value in values))

    def _fresh(self) -> int:
        self._next += 1
        return self._next
