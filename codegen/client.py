"""`codegen.client`, the import path the README promises: the SDK binding lives in
`codegen.mcp.client`."""

from .mcp.client import ToolCallError, UnknownToolError, bind

__all__ = ["ToolCallError", "UnknownToolError", "bind"]
