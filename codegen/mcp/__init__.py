"""Talking to MCP servers as a client: the typed binding of a generated SDK (`client`) and
the one way a server's tool list is read page by page (`listing`), which `harvest` and
`serve` share. Nothing here imports the `mcp` package until a session needs it.
"""
