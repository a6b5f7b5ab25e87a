"""Stage 1, load: files, directories and stdin to `ToolDefinition`s (`definitions`).

`sources` walks and reads the sources; `json_text` is the strict decoder (with `fast_json`,
its `jiter` fast path); `formats` detects each record's format (MCP, OpenAI, Anthropic,
BFCL, ToolUniverse) and `envelope` checks its fields; `namespaces` owns the `--namespace`
prefix rule. Nothing here knows of the later stages.
"""
