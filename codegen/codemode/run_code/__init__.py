"""The `run_code` tool: its definition (`definition`), the bridge that runs a program and
dispatches its calls as nested calls (`bridge`), the seam to a code runtime
(`code_runtime`) and what one run may use (`run_limits`). The runtimes themselves are
`codemode.runtimes`."""
