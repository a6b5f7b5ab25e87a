"""The types of plain JSON Schema documents, without tools: `codegen sdk person.schema.json`.

A plain schema (not a tool definition; see `load.formats.is_plain_schema`) compiles to a
catalog whose "tools" each hold one schema's named types, its root first named from its
`title` or file name (`pipeline.compile_schemas`). What is generated for it is the types
alone, as the SDKs declare them, and nothing about calling tools (no `Tools`, `ToolName`,
`ToolCallError` or `tools`):

- Python: a module of TypedDicts and `TypeAlias`es (the root always has a name: `Email:
  TypeAlias = str`), spelled as values read (`list`, `dict`), importing `typing` and
  `typing_extensions`' `TypedDict` (PEP 728's `closed=True` at runtime); a `black` fixed
  point that passes `mypy --strict`.
- TypeScript: a module of `export interface` and `export type` declarations (and
  `JsonValue`, which any-valued types use), valid as `.ts` and `.d.ts`, so any number of
  them are imported by name side by side.
"""

from __future__ import annotations

from .. import ir
from .targets import target
from .templates import render

TEMPLATES = {
    "python": "python/schema_types.py.jinja",
    "typescript": "typescript/schema_types.ts.jinja",
}
"""The module each language's types go in."""


def render_schema_types(catalog: ir.Catalog, language: str) -> str:
    """The module holding the types of every schema of `catalog`, in catalog order."""
    name = target(language).name  # an unknown language fails as everywhere
    if name == "python":
        from .python.sdk import declares_closed, type_declarations

        blocks = [block for tool in catalog.tools for block in type_declarations(tool.types)]
        return render(TEMPLATES[name], closed=declares_closed(blocks), body=_python_body(blocks))
    blocks = [_exported(named) for tool in catalog.tools for named in tool.types]
    return render(TEMPLATES[name], declarations=blocks)


def _python_body(blocks: list[str]) -> str:
    """The declarations after the imports, as `black` spaces them: one blank line after
    the imports unless a class comes first (two), two between declarations."""
    if not blocks:
        return ""
    code = next(line for line in blocks[0].split("\n") if not line.startswith("#"))
    return ("\n\n" if code.startswith("class ") else "\n") + "\n\n\n".join(blocks)


def _exported(named: ir.NamedType) -> str:
    """One TypeScript declaration, laid out as the declarations file lays it out, exported."""
    from .typescript.sdk import alias_declaration, declaration_text, object_declaration

    if isinstance(named, ir.ObjectType):
        declaration = object_declaration(named)
    else:
        declaration = alias_declaration(named)
    lines = declaration_text(declaration).split("\n")
    head = len(declaration.comment)  # the comment's lines, then the head
    if not lines[head].startswith("export "):
        lines[head] = "export " + lines[head]
    return "\n".join(lines)
