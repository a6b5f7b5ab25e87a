"""`ToolSpec`: one registered tool, its model-visible definition and its host callbacks.

The bottom of the registry's layer: scopes hold specs, the executor runs them, the registry
registers them; this module imports none of those.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Handler = Callable[[Any, Any], Awaitable[Any]]


class CodeModeError(Exception):
    """A misconfiguration the host must fix (not a tool failure a model can react to)."""


@dataclass(frozen=True)
class ToolSpec:
    """A registered tool: its definition plus the host-side callbacks."""

    name: str
    description: str = ""
    input_schema: Any = field(default_factory=lambda: {"type": "object"})
    output_schema: Any = None
    handler: Handler | None = None
    is_concurrency_safe: Callable[[Any], bool] | None = None
    finalize_content: Callable[[str], str] | None = None
    title: str | None = None
    annotations: dict[str, Any] | None = None
    present: Callable[[Any], str] | None = None
    """How a successful value reads to the model (default: strings as they are, anything
    else as indented JSON)."""

    def definition(self) -> dict[str, Any]:
        """The model-visible definition (MCP key names), a deep copy; callbacks never show."""
        return copy.deepcopy(self.read_definition())

    def read_definition(self) -> dict[str, Any]:
        """`definition` with the spec's own schemas in it, not copies: for readers that never
        change what they read (the compile pipeline, the search index), to whom the deep
        copies are a fifth of the work at 3,000 tools."""
        result: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            result["title"] = self.title
        result["description"] = self.description
        result["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            result["outputSchema"] = self.output_schema
        if self.annotations is not None:
            result["annotations"] = self.annotations
        return result
