"""The TypeScript declarations as a model reads them: the body of the Code Mode prompt
section.

Valid TypeScript (`tsc --noEmit --strict` accepts it as a declarations file), spelled for a
reader that pays per token:

- `declare const tools: {...}` lists every tool once as a method, `name(args: {...}):
  Promise<R>`, quoted when the name is not an identifier, so the call form is exactly
  `await tools.name(args)` or `await tools["name"](args)`. An argument object no other type
  uses is written in place; the result alias of a tool is spelled out the same way.
- Docs are `//` comments: one trailing comment when they fit on one line (description,
  then the compact notes the SDK modules show too: `default: 10; 1..100`), comment lines
  above otherwise. Indentation is one space per level; no blank lines.
- Named types come after `tools`, under the same short names as the Python section's
  (`sectionnames`). An object open to other keys has an index signature; one without
  takes no other keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .. import ir
from ..runmemo import run_memos
from .chunks import ChunkMemo, tool_chunks
from .env import render
from .notes import notes
from .sectionnames import allocate, candidates, marked_tool, substitute, typescript_reserved
from .text import description_lines
from .typescript import comment_safe, index_value, spell, ts_key

TEMPLATE = "typescript/section.d.ts.jinja"
INDENT = " "


class SectionChunk(NamedTuple):
    """One tool: its member of `tools` and its named types, type names marked."""

    member: str
    declarations: str
    names: tuple[tuple[str, str, bool], ...]


def doc_lines(docs: ir.Docs) -> list[str]:
    """Description lines, then one line of notes joined by `; ` (defaults and examples in
    full, as JSON)."""
    lines = list(description_lines(docs.description))
    found = [
        f"default: {n.text}" if n.kind == "default" else n.text
        for n in notes(docs, lambda text: text, limit=None)
    ]
    if found:
        lines.append("; ".join(found))
    return lines


def comments(lines: Sequence[str], indent: str) -> list[str]:
    return [f"{indent}// {comment_safe(line)}".rstrip() for line in lines]


def attach(line: str, docs: Sequence[str], indent: str) -> list[str]:
    """`line` with its docs: one trailing comment, or comment lines above it."""
    if not docs:
        return [line]
    if len(docs) == 1:
        return [f"{line} // {comment_safe(docs[0])}".rstrip()]
    return [*comments(docs, indent), line]


ONE_LINE = 100
"""Widest object written on one line (`{ a: string; b?: number }`) when no member has docs."""


def _one_line(body: list[str]) -> str | None:
    """The members on one line, `; `-separated, when none has a comment and they fit."""
    if any("//" in line for line in body):
        return None
    text = "{ " + "; ".join(line.strip() for line in body) + " }"
    return text if len(text) <= ONE_LINE else None


def _members(obj: ir.ObjectType, indent: str) -> list[str]:
    """One line per member, without `;`: a line break separates members (TypeScript never
    reads a type on past a line break into `[` or `(`)."""
    lines = []
    for item in obj.fields:
        mark = "" if item.required else "?"
        text = f"{indent}{ts_key(item.key)}{mark}: {spell(item.type)}"
        lines += attach(text, doc_lines(item.docs), indent)
    if obj.extra is not None:
        extra = "unknown" if isinstance(obj.extra, ir.AnyType) else index_value(obj)
        lines.append(f"{indent}[key: string]: {extra}")
    return lines


def declaration_lines(named: ir.NamedType) -> list[str]:
    docs = doc_lines(named.docs)
    if isinstance(named, ir.AliasType):
        return attach(f"type {named.name} = {spell(named.target)};", docs, "")
    body = _members(named, INDENT)
    if not body:
        return attach(f"type {named.name} = Record<string, never>;", docs, "")
    flat = _one_line(body)
    if flat is not None:
        return attach(f"interface {named.name} {flat}", docs, "")
    return [*attach(f"interface {named.name} {{", docs, ""), *body, "}"]


def _uses(named: ir.NamedType, name: str) -> bool:
    if isinstance(named, ir.AliasType):
        return name in spell(named.target)
    return any(name in spell(item.type) for item in named.fields) or (
        named.extra is not None and name in spell(named.extra)
    )


def member_key(name: str) -> str:
    """The tool's key in `tools`: `new(...)` would declare a construct signature."""
    return ts_key(name) if name not in ("new", "constructor") else f'"{name}"'


def section_chunk(tool: ir.Tool) -> SectionChunk:
    args, output, types = marked_tool(tool)
    by_name = {t.name: t for t in types}
    inlined: set[str] = set()
    member_lines = comments(description_lines(tool.description), INDENT)
    arguments = by_name.get(args.name) if isinstance(args, ir.RefType) else None
    key = member_key(tool.name)
    body: list[str] = []
    if isinstance(arguments, ir.ObjectType) and not any(_uses(t, arguments.name) for t in types):
        inlined.add(arguments.name)
        args_docs = doc_lines(arguments.docs)
        if args_docs:  # written in place, the object has no other place for its docs
            member_lines += comments([f"args: {args_docs[0]}", *args_docs[1:]], INDENT)
        body = _members(arguments, INDENT * 2)
        flat = "Record<string, never>" if not body else _one_line(body)
        if flat is not None:
            body = []
        opening = f"{INDENT}{key}(args: {flat}" if flat is not None else f"{INDENT}{key}(args: {{"
    else:
        opening = f"{INDENT}{key}(args: {spell(args)}"
    returns = "JsonValue" if output is None else spell(output)
    returns_docs: list[str] = []
    result = by_name.get(output.name) if isinstance(output, ir.RefType) else None
    if isinstance(result, ir.AliasType) and not any(_uses(t, result.name) for t in types):
        inlined.add(result.name)
        returns = spell(result.target)
        returns_docs = doc_lines(result.docs)
        if returns_docs:
            returns_docs[0] = f"returns: {returns_docs[0]}"
    if body:
        member_lines += [opening, *body, f"{INDENT}}}): Promise<{returns}>"]
    else:
        member_lines.append(f"{opening}): Promise<{returns}>")
    if returns_docs:
        last = member_lines.pop()
        member_lines += attach(last, returns_docs, INDENT)
    declarations = [
        line
        for named in reversed(types)
        if named.name not in inlined
        for line in declaration_lines(named)
    ]
    return SectionChunk("\n".join(member_lines), "\n".join(declarations), candidates(tool))


def render_typescript_section_sdk(catalog: ir.Catalog, memo: ChunkMemo | None = None) -> str:
    """The section's declarations for a catalog; the same catalog gives the same bytes."""
    with run_memos():
        return section_sdk_from_chunks(
            tool_chunks(catalog, "typescript-section", section_chunk, memo)
        )


def section_sdk_from_chunks(chunks: Sequence[SectionChunk]) -> str:
    names = allocate([c.names for c in chunks], typescript_reserved())
    return render(
        TEMPLATE,
        members=[substitute(c.member, names) for c in chunks],
        declarations=[substitute(c.declarations, names) for c in chunks if c.declarations],
    )
