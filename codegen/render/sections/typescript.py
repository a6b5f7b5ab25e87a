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
  above otherwise; a tool's description is led by its annotation hints (`[read-only] ...`,
  `hints`). Indentation is one space per level; no blank lines.
- Named types come after `tools`, under the same short names as the Python section's
  (`short_names`). Object types are open in TypeScript, so only an object whose other
  keys have a type (or an empty open one) gets an index signature. A field's one-line
  comment that repeats the comment last written on a field of its name, in either form, is
  `// ditto` (`dittos`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ... import ir
from ..._support.run_memos import run_memos
from ..chunks import ChunkMemo, tool_chunks
from ..notes import notes, with_notes
from ..templates import render
from ..text import description_lines
from ..typescript.sdk import comment_safe, index_value, spell, ts_key
from .dittos import Dittos, dittoable, on_its_line
from .dittos import mark as ditto_mark
from .dittos import mark_above as ditto_mark_above
from .hints import hint_marks, marked
from .short_names import (
    Declaration,
    Placed,
    ToolText,
    candidates,
    marked_tool,
    place,
    substitute,
    typescript_reserved,
)

TEMPLATE = "typescript/section.d.ts.jinja"
INDENT = " "


def doc_lines(docs: ir.Docs) -> list[str]:
    """Description lines, then one line of notes joined by `; ` (defaults and examples in
    full, as JSON)."""
    found = [
        f"default: {n.text}" if n.kind == "default" else n.text
        for n in notes(docs, lambda text: text)
    ]
    return with_notes(description_lines(docs.description), found)


def comments(lines: Sequence[str], indent: str) -> list[str]:
    return [f"{indent}// {comment_safe(line)}".rstrip() for line in lines]


def attach(line: str, docs: Sequence[str], indent: str, key: str = "") -> list[str]:
    """`line` with its docs: one trailing comment, or comment lines above it. The comment
    of a field `key`, in either form, is marked for `dittos`."""
    if not docs:
        return [line]
    if on_its_line(docs, key):
        comment = comment_safe(docs[0]).rstrip()
        if key and dittoable(key):
            comment = ditto_mark(key, comment)
        return [f"{line} // {comment}".rstrip()]
    above = comments(docs, indent)
    if key and dittoable(key):
        texts = [text[len(indent) + 3 :] for text in above]
        above[0] = ditto_mark_above(key, texts) + above[0]
    return [*above, line]


ONE_LINE = 100
"""Widest object written on one line (`{ a: string; b?: number }`) when no member has docs,
measured with the names its types want (`candidates`): the names they get are decided later,
in catalog order (`place`), and may be numbered; measured so, the choice depends on the
tool alone, and a tool listed later never changes it."""


def _one_line(body: list[str], wanted: Mapping[str, str]) -> str | None:
    """The members on one line, `; `-separated, when none has a comment and they fit."""
    if any("//" in line for line in body):
        return None
    text = "{ " + "; ".join(line.strip() for line in body) + " }"
    return text if len(substitute(text, wanted)) <= ONE_LINE else None


def _members(obj: ir.ObjectType, indent: str) -> list[str]:
    """One line per member, without `;`: a line break separates members (TypeScript never
    reads a type on past a line break into `[` or `(`)."""
    lines = []
    for item in obj.fields:
        mark = "" if item.required else "?"
        text = f"{indent}{ts_key(item.key)}{mark}: {spell(item.type)}"
        lines += attach(text, doc_lines(item.docs), indent, item.key)
    if obj.extra is None or (isinstance(obj.extra, ir.AnyType) and obj.fields):
        return lines  # object types are open in TypeScript: only a typed rest is news
    extra = "unknown" if isinstance(obj.extra, ir.AnyType) else index_value(obj)
    lines.append(f"{indent}[key: string]: {extra}")
    return lines


def declaration_lines(named: ir.NamedType, wanted: Mapping[str, str]) -> list[str]:
    """A named type's declaration; `wanted`: the names the tool's types want (`_one_line`)."""
    docs = doc_lines(named.docs)
    if isinstance(named, ir.AliasType):
        return attach(f"type {named.name} = {spell(named.target)};", docs, "")
    body = _members(named, INDENT)
    if not body:
        return attach(f"type {named.name} = Record<string, never>;", docs, "")
    flat = _one_line(body, wanted)
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


def section_chunk(tool: ir.Tool) -> ToolText:
    args, output, types = marked_tool(tool)
    names = candidates(tool)
    wanted = dict(names)
    by_name = {t.name: t for t in types}
    inlined: set[str] = set()
    described = marked(description_lines(tool.description), hint_marks(tool.annotations))
    member_lines = comments(described, INDENT)
    arguments = by_name.get(args.name) if isinstance(args, ir.RefType) else None
    key = member_key(tool.name)
    body: list[str] = []
    if isinstance(arguments, ir.ObjectType) and not any(_uses(t, arguments.name) for t in types):
        inlined.add(arguments.name)
        args_docs = doc_lines(arguments.docs)
        if args_docs:  # written in place, the object has no other place for its docs
            member_lines += comments([f"args: {args_docs[0]}", *args_docs[1:]], INDENT)
        body = _members(arguments, INDENT * 2)
        flat = "Record<string, never>" if not body else _one_line(body, wanted)
        if flat is not None:
            body = []
        opening = f"{INDENT}{key}(args: {flat}" if flat is not None else f"{INDENT}{key}(args: {{"
    elif isinstance(arguments, ir.AliasType) and not any(_uses(t, arguments.name) for t in types):
        inlined.add(arguments.name)
        args_docs = doc_lines(arguments.docs)
        if args_docs:
            member_lines += comments([f"args: {args_docs[0]}", *args_docs[1:]], INDENT)
        opening = f"{INDENT}{key}(args: {spell(arguments.target)}"
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
    declarations = tuple(
        Declaration(own.name, "\n".join(declaration_lines(named, wanted)))
        for own, named in zip(tool.types, types, strict=True)
        if named.name not in inlined
    )
    return ToolText(
        "\n".join(member_lines),
        declarations,
        names,
        signature=_signature(args, arguments, returns),
    )


def _signature(args: ir.TypeNode, arguments: ir.NamedType | None, returns: str) -> str:
    """`({ path: string; ... }): Promise<string>`: the required members with their types,
    `...` when the tool takes more; the named argument type when it is not an object."""
    if not isinstance(arguments, ir.ObjectType):
        return f"(args: {spell(args)}): Promise<{returns}>"
    members = [
        f"{ts_key(item.key)}: {spell(item.type)}" for item in arguments.fields if item.required
    ]
    if any(not item.required for item in arguments.fields) or (
        arguments.extra is not None and not isinstance(arguments.extra, ir.AnyType)
    ):
        members.append("...")
    inner = "; ".join(members)
    return f"({{ {inner} }}): Promise<{returns}>" if inner else f"({{}}): Promise<{returns}>"


def render_typescript_section_sdk(catalog: ir.Catalog, memo: ChunkMemo | None = None) -> str:
    """The section's declarations for a catalog; the same catalog gives the same bytes."""
    with run_memos():
        return section_sdk_from_chunks(
            tool_chunks(catalog, "typescript-section", section_chunk, memo)
        )


def section_sdk_from_chunks(chunks: Sequence[ToolText], dittos: bool = True) -> str:
    """The section's declarations; without `dittos`, every field comment in full."""
    placed = place_chunks(chunks)
    resolve = Dittos(repeat=not dittos).resolve
    return render(
        TEMPLATE,
        members=[resolve(p.head) for p in placed],
        declarations=[resolve("\n".join(p.declarations)) for p in placed if p.declarations],
    )


def place_chunks(chunks: Sequence[ToolText]) -> list[Placed]:
    """Names decided tool by tool (`short_names.place`)."""
    return place(chunks, typescript_reserved())
