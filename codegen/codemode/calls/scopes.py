"""Scopes: the registry's root, agents, sessions. A scope inherits from its parent.

Each scope may register its own tools, restrict what it inherits (allow or deny lists), set
its own presentation mode (the nearest declaration wins), and add guards and listeners that
apply to calls in it and in its descendants (its prompt sections are kept by the registry's
`PromptAssembler`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .specs import ToolSpec

Mode = Literal["native", "code", "both"]
MODES: tuple[Mode, ...] = ("native", "code", "both")


@dataclass(eq=False)
class Scope:
    name: str
    parent: Scope | None = None
    mode: Mode | None = None
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    allow: frozenset[str] | None = None
    deny: frozenset[str] = frozenset()
    guards: list[Any] = field(default_factory=list)
    pre_execute: list[Any] = field(default_factory=list)
    post_execute: list[Any] = field(default_factory=list)

    def child(self, name: str) -> Scope:
        """A new scope that inherits from this one."""
        return Scope(name=name, parent=self)

    def chain(self) -> list[Scope]:
        """This scope and its ancestors, farthest (the root) first."""
        scopes = []
        scope: Scope | None = self
        while scope is not None:
            scopes.append(scope)
            scope = scope.parent
        return scopes[::-1]

    def admits(self, name: str) -> bool:
        """Whether this scope's restrictions let an inherited tool through."""
        if name in self.deny:
            return False
        return self.allow is None or name in self.allow

    def walk_up(self) -> Iterator[Scope]:
        scope: Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.parent

    def __repr__(self) -> str:
        return f"Scope({self.name!r})"
