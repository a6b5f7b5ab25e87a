"""`codegen serve`: Code Mode in front of MCP servers, as one MCP server.

An MCP client configured with `codegen serve` instead of its servers sees `run_code` (and,
under `both`, the servers' tools themselves); programs call every upstream tool through the
generated SDK. Modules, each with one job:

- `config`: the upstream list (the `mcpServers` format MCP clients use, or
  `[tool.codegen.serve]`) and the settings, checked with a file and JSON pointer per problem;
- `upstream`: one live connection to an upstream server (stdio or streamable HTTP): its
  paginated tool list, calls, change notices, and noticing when it ends;
- `tools`: an upstream's tools as registry `ToolSpec`s (prefix, allow/deny,
  concurrency-safety);
- `wire`: registry results and definitions in MCP's shapes, the SDK section placed where
  the client shows it to the model;
- `host`: the MCP server itself (tools/list, tools/call, change notifications);
- `command`: the command line: start everything, serve, shut everything down.

Nothing in the pipeline imports this package; it imports `mcp` (the `serve` extra).
"""
