"""The TypeScript binding: `mcp-bind.ts`, which implements a generated declarations file's
`Tools` over an MCP client (`bind<Tools>(client)`), as `codegen.client.bind` does for the
Python SDK.

The declarations are types only, so the binding is one hand-written module, the same for
every tool set: a project with several generated files needs it once, and every failed call
rejects with its one `ToolCallError` class, whichever file typed the call. It ships in
`templates/` (in the wheel, the package's own `templates` folder); a user copies it into their sources:

    python -m codegen.render.typescript.runtime > src/mcp-bind.ts
"""

from __future__ import annotations

import sys

from ..templates import templates_dir

BIND_MODULE = "mcp-bind.ts"
"""The file's name, in `templates/typescript/` and as the README tells users to save it."""


def bind_module_text() -> str:
    """The text of `mcp-bind.ts` (ASCII, ends with one newline)."""
    return (templates_dir() / "typescript" / BIND_MODULE).read_text(encoding="utf-8")


def main() -> None:
    sys.stdout.write(bind_module_text())


if __name__ == "__main__":
    main()
