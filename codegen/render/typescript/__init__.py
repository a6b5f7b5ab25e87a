"""The build-time TypeScript declarations (`sdk`) and the module that binds them to an MCP
client (`runtime`: `mcp-bind.ts`)."""
