"""The registry in MCP's shapes: the tool list a client gets and the results it reads.

`tools/list` is the registry's wire view (`run_code` alone under `code`, the upstream tools
and `run_code` under `both`). The model-facing SDK section goes where `place` says, whole
when it fits the registry's budget (2,048 UTF-16 units by default: clients cut longer
descriptions), else the discovery text stands in for it (`codemode.tiers`):

- `description` (the default): appended to `run_code`'s description. Every MCP client
  passes tool descriptions to the model, and a client re-reads them after
  `notifications/tools/list_changed`, so a regenerated SDK reaches the model.
- `instructions`: the assembled Code Mode prompt (the code-only note and the SDK section)
  as the server's `instructions`. Clients may add it to the system prompt, and some do, but
  others ignore it or need an opt-in, and it is sent once per connection: a client keeps the
  text it got at the handshake when the tools change.

A result keeps the executor's text as its content; a successful object value is also its
`structuredContent` (required when the tool declares an `outputSchema`, as `run_code`
does). A call the wire does not offer (`UNKNOWN_TOOL`: an upstream tool called directly under
`code`, or no such tool) is a JSON-RPC invalid-params error, as MCP specifies for unknown
tools, with the executor's message, which says how to reach the tool from a program.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..codemode.calls.results import ErrorCode, ToolResult
from ..codemode.presentation.prompt import CODE_ONLY
from ..codemode.presentation.tiers import Tiered, utf16_units
from ..codemode.registry import ToolRegistry
from ..codemode.run_code.definition import RUN_CODE, with_sdk


@dataclass(frozen=True, slots=True)
class WireView:
    """What clients are offered: the tool definitions, the server's instructions, and the
    tier the SDK text was given in (`codemode.tiers`), with its size."""

    definitions: list[dict[str, Any]]
    instructions: str | None
    tier: Tiered | None


def wire_view(registry: ToolRegistry, place: str) -> WireView:
    """The tool definitions of `tools/list`, in the registry's order (`run_code` last), and
    the instructions; the SDK text in `place`, within the registry's budget."""
    definitions = registry.wire_schemas()
    if registry.mode_for(None) == "native":
        return WireView(definitions, None, None)
    if place == "instructions":
        tier = _instructions(registry)
        return WireView(definitions, tier.text, tier)
    tier = run_code_description(registry)
    return WireView(
        [
            {**each, "description": tier.text} if each["name"] == RUN_CODE else each
            for each in definitions
        ],
        None,
        tier,
    )


def run_code_description(registry: ToolRegistry) -> Tiered:
    """`run_code`'s description carrying the SDK when that fits the budget, else the
    discovery text."""
    definition = registry.run_code_spec().definition()
    return registry.sdk_tier(frame=lambda section: with_sdk(definition, section)["description"])


def _instructions(registry: ToolRegistry) -> Tiered:
    """The Code Mode prompt as instructions: the code-only note and the SDK section (or the
    discovery text), the whole within the budget."""
    budget = registry.budget
    note = CODE_ONLY if registry.mode_for(None) == "code" else ""
    room = None if budget is None else max(1, budget - utf16_units(note) - 2)
    tier = registry.sdk_tier(budget=room)
    text = "\n\n".join(part for part in (note, tier.text) if part)
    if budget is not None and utf16_units(text) > budget:  # not even the note fits
        text = tier.text
    return Tiered(text, tier.tier, tier.index)


def tool_list(definitions: list[dict[str, Any]]) -> Any:
    from mcp import types

    return types.ListToolsResult(tools=[types.Tool.model_validate(d) for d in definitions])


def call_result(result: ToolResult) -> Any:
    """A `CallToolResult`, or the `MCPError` to raise for a tool the wire does not offer."""
    from mcp import types
    from mcp.shared.exceptions import MCPError

    if result.error is not None and result.error.code == ErrorCode.UNKNOWN_TOOL:
        return MCPError(code=types.INVALID_PARAMS, message=result.error.message)
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=result.content)]
    if result.error is not None:
        return types.CallToolResult(content=content, is_error=True)
    structured = result.value if isinstance(result.value, dict) else None
    return types.CallToolResult(content=content, structured_content=structured)
