"""The extension points of the executor: what listeners, guards, wrappers and services are.

Every hook may be a plain function or a coroutine function. Pre-execute listeners decide
`Allow`, `Deny` or `Ask`; an `Ask` goes to the approval service. Guards refuse with a reason.
Around-dispatch wrappers wrap the handler. Post-execute listeners `Accept` (optionally
replacing the content or the value) or `Block` with feedback. Observers see every final
result; their errors are logged and contained.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

if TYPE_CHECKING:
    from .execution import Execution
    from .results import ToolResult

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Allow:
    pass


@dataclass(frozen=True, slots=True)
class Deny:
    reason: str


@dataclass(frozen=True, slots=True)
class Ask:
    reason: str | None = None


Decision: TypeAlias = Allow | Deny | Ask

ApprovalOutcome = Literal[
    "allowed-once", "allowed-for-session", "rejected", "cancelled", "timed-out", "unavailable"
]
APPROVED: tuple[ApprovalOutcome, ...] = ("allowed-once", "allowed-for-session")


@dataclass(frozen=True, slots=True)
class Answer:
    """An approval service's answer with its own words: why it could not ask, or how the
    call was allowed (an earlier "for the rest of the session", say)."""

    outcome: ApprovalOutcome
    message: str | None = None


_UNSET: Any = object()


@dataclass(frozen=True, slots=True)
class Accept:
    """Keep the result, or replace its content or its value (never both)."""

    content: str | None = None
    value: Any = _UNSET

    def __post_init__(self) -> None:
        if self.content is not None and self.value is not _UNSET:
            raise ValueError("Accept replaces the content or the value, not both")

    @property
    def replaces_value(self) -> bool:
        return self.value is not _UNSET


@dataclass(frozen=True, slots=True)
class Block:
    """Turn the result into an error whose message is the feedback."""

    feedback: str


PostDecision: TypeAlias = Accept | Block

PreExecuteListener: TypeAlias = Callable[["Execution"], "Decision | Awaitable[Decision]"]
Guard: TypeAlias = Callable[["Execution"], "str | Awaitable[str | None] | None"]
Proceed: TypeAlias = Callable[[], Awaitable[Any]]
AroundDispatch: TypeAlias = Callable[["Execution", Proceed], Awaitable[Any]]
PostExecuteListener: TypeAlias = Callable[
    ["Execution", "ToolResult"], "PostDecision | Awaitable[PostDecision | None] | None"
]
Observer: TypeAlias = Callable[["Execution | None", "ToolResult"], Any]
"""The execution is None only when the arguments could not even be snapshotted."""


class ApprovalService:
    """Asks a human (or a policy engine) whether a call may run. `reason` is why it is
    asked (the policy's rule or default)."""

    async def request(self, execution: Execution, reason: str | None) -> ApprovalOutcome | Answer:
        raise NotImplementedError


async def maybe_await(value: T | Awaitable[T]) -> T:
    """The value of a hook that may be synchronous or a coroutine."""
    if inspect.isawaitable(value):
        return await value
    return value
