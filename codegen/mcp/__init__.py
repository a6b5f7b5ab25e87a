"""Talking to MCP servers as a client: the typed binding of a generated SDK (`client`), the
one way a server's tool list is read page by page (`listing`), and what `serve` and
`harvest` share to reach the servers of an MCP client config: the config's reader
(`config`), the capped stdio and HTTP transports (`transports`) and the connection to one
upstream (`connect`). Nothing here imports the `mcp` package until a session needs it.
"""
