"""What a call is while it runs: the request (`ToolCall`), the parent token that marks a
nested call, the frozen record every stage sees (`Execution`), and the context a handler
receives (`ToolContext`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .cancellation import AbortSignal

if TYPE_CHECKING:
    from .scopes import Scope

_MINT = object()


class ParentToken:
    """Marks a call as nested: made from inside a run_code program. Only the run_code bridge
    mints these (the constructor needs a private key), so a model-direct call can never
    claim to be nested."""

    __slots__ = ("call_id", "root_call_id", "scope")

    def __init__(self, key: object, call_id: str, root_call_id: str, scope: Scope | None) -> None:
        if key is not _MINT:
            raise TypeError("parent tokens are minted by the run_code bridge only")
        self.call_id = call_id
        self.root_call_id = root_call_id
        self.scope = scope

    def __repr__(self) -> str:
        return f"ParentToken({self.call_id!r})"


def mint_parent(call_id: str, root_call_id: str, scope: Scope | None) -> ParentToken:
    """For the run_code bridge only."""
    return ParentToken(_MINT, call_id, root_call_id, scope)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A request to run a tool, from a model (no parent) or from a program (parent set)."""

    name: str
    arguments: Any
    call_id: str
    scope: Scope | None = None
    signal: AbortSignal | None = None
    parent: ParentToken | None = None


@dataclass(slots=True)
class Decided:
    """What the policy made of one call, filled in as it goes (the audit log reads it):
    `decision` is `allowed`, `asked-accepted`, `asked-declined` or `denied`; `because` the
    rule or default behind it; `answer` how an ask was answered."""

    decision: str = "allowed"
    because: str | None = None
    answer: str | None = None
    started: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.started


@dataclass(frozen=True, slots=True)
class Execution:
    """The record policies and handlers see: the arguments are a frozen JSON snapshot."""

    call_id: str
    root_call_id: str
    name: str
    arguments: Any
    scope: Scope | None
    parent: ParentToken | None
    signal: AbortSignal | None
    decided: Decided = field(default_factory=Decided, compare=False)

    @property
    def nested(self) -> bool:
        return self.parent is not None


@dataclass(slots=True)
class ToolContext:
    """What a handler gets besides its arguments."""

    execution: Execution
    signal: AbortSignal
    registry: Any
    deferred: list[Any] = field(default_factory=list)

    @property
    def call_id(self) -> str:
        return self.execution.call_id
