"""Stage 1, load: files, directories and stdin to `ToolDefinition`s (`definitions`).

`sources` walks and reads the sources; `json_text` is the strict decoder (with `fast_json`,
its `jiter` fast path); `formats` detects each record's format (MCP, OpenAI, Anthropic,
BFCL, ToolUniverse) and `envelope` checks its fields; `namespaces` owns the `--namespace`
prefix rule. `bundle` copies what a `$ref` to another file names into the schema that holds
it (`ref_walk` finds and rewrites references, `ref_files` reads the files, confined and
bounded), and `relocate` shows the later stages' diagnostics about such a copy in its own
file. Nothing here knows of the later stages.
"""
