"""The registry in MCP's shapes: the tool list a client gets and the results it reads.

`tools/list` is the registry's wire view (`run_code` alone under `code`, the upstream tools
and `run_code` under `both`). The model-facing SDK section goes where `place` says:

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

from typing import Any

from ..codemode.languages import sdk_renderer
from ..codemode.registry import ToolRegistry
from ..codemode.results import ErrorCode, ToolResult
from ..codemode.run_code_definition import RUN_CODE, with_sdk


def wire_definitions(registry: ToolRegistry, place: str) -> list[dict[str, Any]]:
    """The tool definitions of `tools/list`, in the registry's order (`run_code` last)."""
    definitions = registry.wire_schemas()
    if place != "description":
        return definitions
    language = registry.require_runtime().language
    section = sdk_renderer(language)(registry.sdk_catalog())
    return [with_sdk(each, section) if each["name"] == RUN_CODE else each for each in definitions]


def instructions(registry: ToolRegistry, place: str) -> str | None:
    """The server's `instructions`: the Code Mode prompt when it is the SDK's place."""
    return registry.assemble_prompt() if place == "instructions" else None


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
