"""The seam between the run_code bridge and a code runtime.

A runtime runs one program with the tool bindings and returns what it printed and what it
returned. It reports failure by raising `CodeRunFailed` with a kind (`exception`, `timeout`,
`abort`, `worker-exit`, `invalid-output`, `output-limit`), a message and the logs captured so
far. The bridge never depends on a concrete runtime; it dispatches on `language`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..calls.cancellation import AbortSignal

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
"""`RunOutput.result` when the program returned nothing."""

KINDS = (
    "exception",
    "timeout",
    "abort",
    "worker-exit",
    "invalid-output",
    "output-limit",
    "check",
)
"""`check`: the check before the run found a definite mistake, and the program never
started (`checks/verdict.py`)."""


class CodeRunFailed(Exception):
    """The program did not complete."""

    code = "CODE_RUN_FAILED"

    def __init__(self, kind: str, message: str, logs: list[str] | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown failure kind {kind!r}")
        self.kind = kind
        self.message = message
        self.logs = list(logs or [])
        text = f"code run failed ({kind}): {message}"
        if self.logs:
            text += "\nCaptured output:\n" + "\n".join(self.logs)
        super().__init__(text)


class ToolCallFailed(Exception):
    """A tool call from a program failed; programs see it as `ToolCallError`."""

    def __init__(self, tool_name: str, message: str) -> None:
        self.tool_name = tool_name
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class Bindings:
    """What a program can call: the visible tools (never run_code) by name, and the
    catalog's questions (`discover(op, args)`: `catalog.search` and the others; None where
    the host answers none)."""

    names: tuple[str, ...]
    call: Callable[[str, Any], Awaitable[Any]]
    discover: Callable[[str, Any], Awaitable[Any]] | None = None


@dataclass(frozen=True)
class RunOutput:
    logs: list[str] = field(default_factory=list)
    result: Any = MISSING


class CodeRuntime(Protocol):
    language: str

    async def run(self, program: str, bindings: Bindings, signal: AbortSignal) -> RunOutput: ...
