"""`ToolDefinition`: the one shape every input format is loaded into.

Schemas stay plain JSON data (dicts, lists, scalars) exactly as loaded; later stages copy,
never mutate them. The source and pointers are kept so every diagnostic can point back into
the file the user wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Dialect = Literal["json-schema", "bfcl"]


@dataclass(frozen=True, slots=True)
class Bundled:
    """A definition the loader copied into a tool's schema from another file (`bundle`):
    it sits at `local` in the tool's source (`/tools/0/inputSchema/$defs/Address`) and
    came from `pointer` in `source` (`common.schema.json`, `/$defs/Address`), where
    diagnostics about it are shown (`relocate`)."""

    local: str
    source: str
    pointer: str


JsonValue = Any
"""A value made of dict, list, str, int, float, bool and None only."""


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """One tool: name, description, input and output schema, where it came from."""

    name: str
    description: str | None
    input_schema: JsonValue
    output_schema: JsonValue | None = None
    title: str | None = None
    annotations: JsonValue | None = None
    source: str = "<memory>"
    pointer: str = ""
    input_pointer: str = "/inputSchema"
    output_pointer: str = "/outputSchema"
    format: str = "mcp"
    dialect: Dialect = "json-schema"
    namespace: str | None = None
    decoded: bool = field(default=False, compare=False)
    """The schemas came from `json_text`, which refuses documents nested deeper than
    `MAX_NESTING`, so the pipeline need not measure their depth again."""
    extra: dict[str, JsonValue] = field(default_factory=dict, compare=False, hash=False)
    bundled: tuple[Bundled, ...] = field(default=(), compare=False)
    """The definitions copied in from other files; their content is in the schemas."""
