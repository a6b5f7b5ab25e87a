"""Render: the IR catalog to one TypeScript declarations file (`sdk.d.ts`).

Takes a frozen `ir.Catalog` and returns the text of a module of types, every declaration
exported and none a value (a `.d.ts` needs no `.js` beside it, and any number of them live
in one project, each imported by name): a fixed header and `JsonValue` alias, one
`interface` per `ObjectType` and one `type` per `AliasType` under exactly the names the IR
decided (so the TypeScript and Python SDKs are name-identical), then `ToolArgsMap`,
`ToolOutputMap`, `ToolName`, `Tools` (the map `bind<Tools>(client)` of `mcp-bind.ts`
returns, see `runtime.py`) and the `ToolCallError` interface. A type a caller passes (one a
tool's arguments reach) has `readonly` arrays and tuples (`spell_argument`). Guarantees:
the same catalog gives the same bytes; the output passes `tsc --noEmit --strict`; no text
from a schema can end a comment or a string, or switch off type checking (`@ts-ignore`).
All decisions are made here, in small view models; the template `typescript/sdk.d.ts.jinja`
only lays out finished lines. The docs catalog shows the same declarations without
`export` (`tool_declarations`'s default).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from ... import ir
from ..._support.run_memos import per_run, run_memos
from ...identifiers import is_ts_identifier
from ..chunks import ChunkMemo, tool_chunks
from ..notes import has_notes, notes
from ..python.sdk import argument_types
from ..templates import render
from ..text import description_lines

TEMPLATE = "typescript/sdk.d.ts.jinja"

INDEX_KEY = "[key: string]"
"""The index signature of an object that accepts undeclared keys."""

_PRIMITIVES = {
    "string": "string",
    "number": "number",
    "integer": "number",
    "boolean": "boolean",
    "null": "null",
}

_UNSAFE_IN_STRING = re.compile(
    "[\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\ud800-\udfff]"
)
"""Characters `json.dumps(ensure_ascii=False)` leaves raw but a string literal must not
hold raw: DEL and C1 controls, invisible and bidirectional formatting characters, the line
and paragraph separators (a line break to editors) and lone surrogates (not UTF-8). The same
set `text.escape_hidden` shows in comments; C0 controls are already escaped by `json`."""

_DIRECTIVE = re.compile(r"@(?=ts-|jsx)", re.IGNORECASE)
"""`@ts-ignore`, `@ts-expect-error`, `@ts-nocheck` and the `@jsx*` pragmas: TypeScript reads
them inside comments, so a description must never spell one."""


# --- strings, keys and comments ---------------------------------------------------------


def _unicode_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


@per_run
def ts_string(text: str) -> str:
    """A JSON string literal that is also a safe TypeScript string: valid UTF-8, on one
    line, every hidden character shown as `\\uXXXX`. Memoized per run: keys and tool names
    repeat."""
    quoted = json.dumps(text, ensure_ascii=False)
    if "```" in quoted:  # never three backticks in a row: the SDK may sit in a Markdown fence
        quoted = quoted.replace("`", "\\u0060")
    if quoted.isascii() and "\x7f" not in quoted:  # DEL is ASCII but not printable
        return quoted
    return _UNSAFE_IN_STRING.sub(_unicode_escape, quoted)


def ts_key(key: str) -> str:
    """A property key as written: bare when it is a plain ASCII identifier, else quoted.
    Not memoized: the identifier test is one regex match, cheaper than a memo lookup, and
    `ts_string` remembers the quoted keys."""
    return key if is_ts_identifier(key) else ts_string(key)


def comment_safe(line: str) -> str:
    """One comment line that cannot close the comment or act as a compiler directive.
    Plain membership checks first: most lines hold neither `*/` nor `@`."""
    if "*/" in line:
        line = line.replace("*/", "*\\/")
    if "@" in line:
        line = _DIRECTIVE.sub("\\\\@", line)
    return line


def jsdoc(lines: Iterable[str]) -> tuple[str, ...]:
    """A JSDoc block for finished text lines: `/** text */` for one line, the multi-line
    form for several, nothing for none. Blank lines inside stay (` *`) as paragraph
    breaks."""
    safe = [comment_safe(line) for line in lines]
    if not safe:
        return ()
    if len(safe) == 1:
        return (f"/** {safe[0]} */",)
    return ("/**", *(f" * {line}" if line else " *" for line in safe), " */")


def _literal(json_value: str) -> str:
    """JSON text is already TypeScript literal text; `jsdoc` escapes it for the comment."""
    return json_value


def docs_lines(docs: ir.Docs) -> list[str]:
    """Description lines, then the constraint notes: plain notes first, then the JSDoc tags
    (`@default`, `@deprecated`), because a tag's text runs on until the next tag and would
    swallow any plain line after it. Defaults and examples in full, as everywhere."""
    if docs is ir.EMPTY_DOCS:
        return []
    lines = list(description_lines(docs.description))
    if not has_notes(docs):
        return lines
    tags = []
    for note in notes(docs, literal=_literal):
        if note.kind == "default":
            tags.append(f"@default {note.text}")
        elif note.kind == "deprecated":
            tags.append("@deprecated")
        else:
            lines.append(note.text)
    return lines + tags


def tool_doc_lines(tool: ir.Tool) -> list[str]:
    """The title (if any), a blank line, then the description."""
    title = description_lines(tool.title)
    description = description_lines(tool.description)
    if title and description:
        return [*title, "", *description]
    return list(title or description)


# --- type spelling ----------------------------------------------------------------------


def _literal_value(value: ir.Scalar) -> str:
    """A scalar as a literal type; integers keep every digit, floats their JSON text. NaN
    and the infinities have no literal type (strict JSON never holds them, but
    `json_schema_to_ts` takes any Python value), so they widen to `number`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return ts_string(value)
    if isinstance(value, int):
        return str(value)
    return json.dumps(value) if math.isfinite(value) else "number"


def is_union(node: ir.TypeNode) -> bool:
    """Whether the spelling of `node` has a top-level `|` and so needs parentheses before
    a postfix (`[]`, `?`)."""
    if isinstance(node, ir.UnionType):
        return len(node.arms) > 1
    return isinstance(node, ir.LiteralType) and len(node.values) > 1


def _postfix_operand(node: ir.TypeNode) -> str:
    text = spell(node)
    return f"({text})" if is_union(node) else text


def _tuple(
    node: ir.TupleType,
    spell_item: Callable[[ir.TypeNode], str],
    operand: Callable[[ir.TypeNode], str],
) -> str:
    parts = []
    for index, item in enumerate(node.items):
        parts.append(operand(item) + "?" if index >= node.min_items else spell_item(item))
    if node.rest is not None:
        parts.append(f"...{operand(node.rest)}[]")
    return "[" + ", ".join(parts) + "]"


def spell(node: ir.TypeNode) -> str:
    """The TypeScript type expression of one IR node. Recurses only into containers
    (arrays, tuples, maps: at most `limits.INLINE_LIMIT` deep); union arms are a flat loop,
    whatever their number. The most frequent nodes are tested first."""
    if isinstance(node, ir.RefType):
        return node.name
    if isinstance(node, ir.Primitive):
        return _PRIMITIVES[node.kind]
    if isinstance(node, ir.ArrayType):
        return _postfix_operand(node.items) + "[]"
    if isinstance(node, ir.UnionType):
        return " | ".join([spell(arm) for arm in node.arms])
    if isinstance(node, ir.LiteralType):
        return " | ".join([_literal_value(v) for v in node.values]) if node.values else "never"
    if isinstance(node, ir.MapType):
        return f"{{ {INDEX_KEY}: {spell(node.values)} }}"
    if isinstance(node, ir.TupleType):
        return _tuple(node, spell, _postfix_operand)
    if isinstance(node, ir.AnyType):
        return "JsonValue"
    if isinstance(node, ir.NeverType):
        return "never"
    return "unknown"


def spell_argument(node: ir.TypeNode) -> str:
    """The type of a value the caller passes (a type a tool's arguments reach): arrays and
    tuples are `readonly`, so a `readonly` array or an `as const` literal passes as well as
    a mutable one (TypeScript refuses a readonly array where a mutable one is expected;
    a mutable one passes where a readonly one is), and a tool only reads its arguments.
    `number` already takes integers, and an array literal written in the call is typed
    as the tuple it stands for, so tuples keep their positions (a `number[]` variable is
    refused where `[number, number]` is expected, as TypeScript refuses it anywhere)."""
    if isinstance(node, ir.ArrayType):
        return f"readonly {_argument_operand(node.items)}[]"
    if isinstance(node, ir.UnionType):
        return " | ".join([spell_argument(arm) for arm in node.arms])
    if isinstance(node, ir.TupleType):
        return "readonly " + _tuple(node, spell_argument, _argument_operand)
    if isinstance(node, ir.MapType):
        return f"{{ {INDEX_KEY}: {spell_argument(node.values)} }}"
    return spell(node)


def _argument_operand(node: ir.TypeNode) -> str:
    """`spell_argument` before a postfix: a union or a readonly array in parentheses
    (`readonly number[][]` would make only the outer array readonly)."""
    text = spell_argument(node)
    return f"({text})" if is_union(node) or text.startswith("readonly ") else text


# --- index signatures -------------------------------------------------------------------


def _fits_json_value(node: ir.TypeNode, readonly: bool = False) -> bool:
    """Whether every value of `node` is assignable to `JsonValue` as TypeScript sees it.
    Named types are not: an interface has no implicit index signature. Nor is a tuple with
    optional elements (its elements include `undefined`), nor an array spelled `readonly`
    (`readonly`: the argument spelling)."""
    if isinstance(node, ir.Primitive | ir.LiteralType | ir.AnyType | ir.NeverType):
        return True
    if isinstance(node, ir.ArrayType):
        return not readonly and _fits_json_value(node.items)
    if isinstance(node, ir.MapType):
        return _fits_json_value(node.values, readonly)
    if isinstance(node, ir.UnionType):
        return all(_fits_json_value(arm, readonly) for arm in node.arms)
    if isinstance(node, ir.TupleType):
        return (
            not readonly
            and node.min_items >= len(node.items)
            and all(_fits_json_value(item) for item in node.items)
            and (node.rest is None or _fits_json_value(node.rest))
        )
    return False


def index_value(
    obj: ir.ObjectType, spelled: Sequence[str] | None = None, readonly: bool = False
) -> str:
    """The value type of an open object's index signature. TypeScript requires every named
    member to be assignable to it (TS2411), so it is the union of the extra type, each
    member type it does not already cover, and `undefined` when a member is optional
    (under `--strict` an optional member's type includes `undefined`). `spelled` holds the
    fields' types already spelled, in field order, when the caller has them; `readonly`
    says they are spelled for a caller (`spell_argument`), whose readonly arrays
    `JsonValue` does not cover: then a union member adds only its arms it does not cover."""
    assert obj.extra is not None
    spell_type = spell_argument if readonly else spell
    parts: list[str] = []
    if not isinstance(obj.extra, ir.NeverType):
        parts.append(spell_type(obj.extra))
    extra_is_any = isinstance(obj.extra, ir.AnyType)
    optional = False
    for index, item in enumerate(obj.fields):
        optional = optional or not item.required
        if extra_is_any and _fits_json_value(item.type, readonly):
            continue
        if extra_is_any and readonly and isinstance(item.type, ir.UnionType):
            arms = item.type.arms
            parts.extend(spell_argument(a) for a in arms if not _fits_json_value(a, readonly))
        elif not isinstance(item.type, ir.NeverType):
            parts.append(spell_type(item.type) if spelled is None else spelled[index])
    if optional:
        parts.append("undefined")
    unique = list(dict.fromkeys(parts))
    if "unknown" in unique:
        return "unknown"
    return " | ".join(unique) if unique else "never"


# --- view models ------------------------------------------------------------------------


class Member(NamedTuple):
    """One line inside a declaration's braces, with the JSDoc lines above it (a named
    tuple: one per field of every type, so it must be cheap to build)."""

    comment: tuple[str, ...]
    text: str


class Declaration(NamedTuple):
    """One top-level declaration: JSDoc lines, the opening line, and members when `block`
    (then the template closes the brace)."""

    comment: tuple[str, ...]
    head: str
    members: tuple[Member, ...] = ()
    block: bool = False


def _interface(name: str, comment: tuple[str, ...], members: list[Member]) -> Declaration:
    if not members:
        return Declaration(comment, f"interface {name} {{}}")
    return Declaration(comment, f"interface {name} {{", tuple(members), block=True)


def object_declaration(obj: ir.ObjectType, argument: bool = False) -> Declaration:
    """`interface Name { ... }`. A closed object with no fields is
    `type Name = Record<string, never>;` rather than an empty interface: an empty interface
    is TypeScript's `{}`, which accepts any value but `null`/`undefined` (even `5`), while
    `Record<string, never>` accepts exactly an object without keys, which is what the schema
    says (and takes one line in a prompt). `argument`: a type a caller passes, spelled by
    `spell_argument`."""
    comment = jsdoc(docs_lines(obj.docs))
    if not obj.fields and obj.extra is None:
        return Declaration(comment, f"type {obj.name} = Record<string, never>;")
    spell_type = spell_argument if argument else spell
    spelled = [spell_type(item.type) for item in obj.fields]  # the index signature reuses them
    members = [
        Member(
            () if item.docs is ir.EMPTY_DOCS else jsdoc(docs_lines(item.docs)),
            f"{ts_key(item.key)}{'' if item.required else '?'}: {text};",
        )
        for item, text in zip(obj.fields, spelled, strict=True)
    ]
    if obj.extra is not None:
        members.append(Member((), f"{INDEX_KEY}: {index_value(obj, spelled, argument)};"))
    return _interface(obj.name, comment, members)


def alias_declaration(alias: ir.AliasType, argument: bool = False) -> Declaration:
    """`type Name = ...;`. An alias only refers to itself through an array, tuple or map
    (the build turns a reference cycle through nothing but unions into `never`), which
    TypeScript accepts, `readonly` ones too. `argument`: as for `object_declaration`."""
    target = spell_argument(alias.target) if argument else spell(alias.target)
    return Declaration(jsdoc(docs_lines(alias.docs)), f"type {alias.name} = {target};")


def declaration_text(declaration: Declaration, export: bool = False) -> str:
    """One declaration laid out: its comment, its head (after `export ` when `export`),
    then its members two spaces in and the closing brace when it is a block."""
    head = f"export {declaration.head}" if export else declaration.head
    lines = [*declaration.comment, head]
    if declaration.block:
        for member in declaration.members:
            if member.comment:  # most members have none
                lines.extend([f"  {line}" for line in member.comment])
            lines.append(f"  {member.text}")
        lines.append("}")
    return "\n".join(lines)


def tool_declarations(tool: ir.Tool, export: bool = False) -> tuple[str, ...]:
    """The declarations of one tool's named types, in IR order, laid out; the types its
    arguments reach are spelled for a caller (`spell_argument`). `export`: as the SDK
    module declares them (the docs catalog shows them without)."""
    arguments = argument_types(tool)
    return tuple(
        declaration_text(
            (
                object_declaration(named, named.name in arguments)
                if isinstance(named, ir.ObjectType)
                else alias_declaration(named, named.name in arguments)
            ),
            export,
        )
        for named in tool.types
    )


class TypeScriptChunk(NamedTuple):
    """Everything the declarations file holds for one tool: its types and its entries in
    `ToolArgsMap` (with its title and description) and `ToolOutputMap`."""

    declarations: tuple[str, ...]
    args_entry: Member
    output_entry: Member


def typescript_chunk(tool: ir.Tool) -> TypeScriptChunk:
    key = ts_key(tool.name)
    output = "JsonValue" if tool.output is None else spell(tool.output)
    return TypeScriptChunk(
        tool_declarations(tool, export=True),
        Member(jsdoc(tool_doc_lines(tool)), f"{key}: {spell(tool.args)};"),
        Member((), f"{key}: {output};"),
    )


def tool_maps(chunks: Sequence[TypeScriptChunk]) -> tuple[Declaration, Declaration]:
    """`ToolArgsMap` and `ToolOutputMap` (a tool without an output schema returns any JSON
    value)."""
    return (
        _interface("ToolArgsMap", (), [chunk.args_entry for chunk in chunks]),
        _interface("ToolOutputMap", (), [chunk.output_entry for chunk in chunks]),
    )


def declarations(catalog: ir.Catalog, memo: ChunkMemo | None = None) -> list[str]:
    """Every declaration that depends on the tool set, laid out, in output order: each
    tool's named types (tools in code-point order), then the two maps."""
    return declarations_from_chunks(tool_chunks(catalog, "typescript", typescript_chunk, memo))


def declarations_from_chunks(chunks: Sequence[TypeScriptChunk]) -> list[str]:
    blocks = [block for chunk in chunks for block in chunk.declarations]
    blocks.extend(declaration_text(d, export=True) for d in tool_maps(chunks))
    return blocks


def render_typescript_sdk(catalog: ir.Catalog, memo: ChunkMemo | None = None) -> str:
    """The declarations file for a catalog; the same catalog always gives the same bytes.
    `memo` reuses the text of tools rendered before (see `codegen.incremental.cache`)."""
    with run_memos():
        return render(TEMPLATE, declarations=declarations(catalog, memo))


def typescript_sdk_from_chunks(chunks: Sequence[TypeScriptChunk]) -> str:
    """The declarations file around the tools' chunks, in catalog order."""
    return render(TEMPLATE, declarations=declarations_from_chunks(chunks))
