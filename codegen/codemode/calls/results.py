"""Tool results and the error codes a failed call carries.

Whatever happens inside the executor, the model sees one text per call: the rendered value on
success, `Error: <message>` on failure. The structured `ToolError` (code, message, details)
is for the host and its observers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INVALID_ARGS = "INVALID_ARGS"
    INVALID_TOOL_OUTPUT = "INVALID_TOOL_OUTPUT"
    ABORTED = "ABORTED"
    ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH"
    CODE_RUN_FAILED = "CODE_RUN_FAILED"
    DENIED = "DENIED"
    TOOL_FAILED = "TOOL_FAILED"


@dataclass(frozen=True, slots=True)
class ToolError:
    code: ErrorCode
    message: str
    details: tuple[str, ...] = ()
    kind: str | None = None
    """For `CODE_RUN_FAILED`: exception, timeout, abort, worker-exit, invalid-output,
    output-limit, check (refused before it ran: `checks/verdict.py`)."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    call_id: str
    name: str
    content: str
    value: Any = None
    error: ToolError | None = None
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @property
    def code(self) -> ErrorCode | None:
        return self.error.code if self.error else None


def render_value(value: Any) -> str:
    """The text a model sees for a successful value: strings as they are, anything else as
    indented JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def success(call_id: str, name: str, value: Any) -> ToolResult:
    return ToolResult(call_id, name, render_value(value), value)


def failure(
    call_id: str,
    name: str,
    code: ErrorCode,
    message: str,
    details: tuple[str, ...] = (),
    kind: str | None = None,
) -> ToolResult:
    return ToolResult(
        call_id, name, f"Error: {message}", None, ToolError(code, message, details, kind)
    )


ROUTE_HINT = (
    "only run_code can be called directly in this session; call {name} from inside a "
    'run_code program instead (await tools.{name}(...) or await tools["{name}"](...))'
)


def unknown_tool(call_id: str, name: str, collapsed: bool, message: str = "") -> ToolResult:
    """`message` replaces the plain "unknown tool" text (a program's call gets the closest
    tools by search)."""
    if not message:
        message = f"unknown tool {json.dumps(name, ensure_ascii=False)}"
        if collapsed:
            message += ": " + ROUTE_HINT.format(name=name)
    return failure(call_id, name, ErrorCode.UNKNOWN_TOOL, message)


def aborted_before_dispatch(call_id: str, name: str) -> ToolResult:
    return failure(
        call_id, name, ErrorCode.ABORTED_BEFORE_DISPATCH, "tool call aborted before it started"
    )


def aborted(call_id: str, name: str) -> ToolResult:
    return failure(call_id, name, ErrorCode.ABORTED, "tool call aborted")
