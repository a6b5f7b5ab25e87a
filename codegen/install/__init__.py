"""`codegen install CLIENT`: the entry that starts `codegen serve`, written into an MCP
client's own config file.

`clients.py` knows each client (where its file lives per scope and operating system, the
key its servers sit under, how it spells an environment variable), `program.py` which
command starts this codegen, `entries.py` the entry and whether an existing one is ours,
`documents.py` the file (read strictly, merged without touching anything else, laid out as
it was, diffed) and `command.py` the command.
"""
