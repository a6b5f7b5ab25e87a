"""The build-time workflow: `codegen build`, `codegen harvest` and `codegen diff`.

These commands sit on top of the pipeline and the renderers and never feed back into them:
`config` reads the `[tool.codegen]` table, `build` renders and writes (or checks) every
output of a project, `harvest` captures the tools of a live MCP server, `diff` compares two
catalogs for a review, and `progress` is the one place that draws on a terminal. Nothing in
the pipeline imports this package, and the CLI imports each module only inside its command.
"""
