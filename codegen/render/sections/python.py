"""The Python SDK as a model reads it: the body of the Code Mode prompt section.

A stub of the module a program calls, `tools`, spelled for a reader that pays per token,
and still valid: it parses, and `mypy --strict` and `pyright` strict accept it as a `.pyi`.

- Each tool is a module-level `async def` with keyword-only parameters, its call form
  exactly: `await tools.read_file(path="x")` (the worker also takes one dict). A default
  that type-checks is written in the signature, others in the comment; optional parameters
  without one read `= ...`. A tool whose arguments cannot all be keywords (a key that is a
  keyword or not an identifier, a root that is not an object) takes `(args: XArgs, /)`.
  Other keys an open argument object would take get no `**others: Any`: a call never needs
  them, and the stub stays a subset of what the tool accepts (a typed rest is shown).
- A name that cannot be a function here is `@tool("get-user")` over `async def _`: the call
  form is `await tools["get-user"](...)`. So is a name an earlier tool's type already holds.
- Docs are one trailing `# ` comment when they fit on one line (description, then on the
  same line the compact notes the module shows too: `Max. default: 10; 1..100`), comment
  lines above otherwise; tool descriptions are docstrings, led by the tool's annotation
  hints (`[read-only] ...`, `hints`). A field's one-line comment that repeats the comment
  last written on a field of its name, in either form, is `# ditto` (`dittos`).
  Indentation is one space and there are no blank lines.
- TypedDicts follow PEP 728: `closed=True` marks an object that takes no other keys, a
  plain one takes any; `total=False` with `Required[...]` where most keys are optional.
- Nested types are named after their field, and a shape an earlier tool declared is reused
  (`short_names`); the function comes first, then its types, top down (a stub may refer to
  names declared later).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ... import ir
from ..._support.run_memos import run_memos
from ...identifiers import ANNOTATION_NAMES, is_class_field, is_python_identifier
from ..chunks import ChunkMemo, tool_chunks
from ..notes import notes, with_notes
from ..python import black_layout as fmt
from ..python.sdk import literal_expr, type_expr
from ..python.strings import comment_lines, docstring, json_to_py, py_str
from ..templates import render
from ..text import description_lines
from .dittos import Dittos, dittoable, on_its_line
from .dittos import mark as ditto_mark
from .dittos import mark_above as ditto_mark_above
from .hints import hint_marks, marked
from .short_names import (
    PYTHON_RESERVED,
    TYPING_NAMES,
    Declaration,
    Placed,
    ToolText,
    candidates,
    marked_tool,
    place,
)

TEMPLATE = "python/section.pyi.jinja"
INDENT = " "
"""One space: o200k merges a single leading space into the next word."""

SECTION_NAMES = ANNOTATION_NAMES | TYPING_NAMES | {"ToolCallError", "tools", "None"}
"""Names a tool's function may not take: the section's annotations and header use them."""


def function_name(name: str) -> str:
    """The tool's name when `tools.<name>` reaches it and a stub can define it (not a
    keyword, not dunder-led, not a name the section's annotations use); else ""."""
    usable = is_python_identifier(name) and not name.startswith("__")
    return name if usable and name not in SECTION_NAMES else ""


# --- docs -----------------------------------------------------------------------------


def doc_lines(docs: ir.Docs, extra: Sequence[str] = (), skip_default: bool = False) -> list[str]:
    """Description lines, then one line of notes joined by `; ` (defaults and examples in
    full)."""
    found = [
        f"default: {n.text}" if n.kind == "default" else n.text
        for n in notes(docs, json_to_py)
        if not (skip_default and n.kind == "default")
    ]
    found.extend(extra)
    return with_notes(description_lines(docs.description), found)


def attach(line: str, docs: Sequence[str], indent: str, key: str = "") -> list[str]:
    """`line` with its docs: one trailing comment, or comment lines above it. The comment
    of a field or parameter `key`, in either form, is marked for `dittos`."""
    if not docs:
        return [line]
    if on_its_line(docs, key):
        comment = comment_lines(docs, "")[0]
        if key and dittoable(key):
            comment = "# " + ditto_mark(key, comment[2:])
        return [f"{line} {comment}"]
    above = comment_lines(docs, indent)
    if key and dittoable(key):
        texts = [text[len(indent) + 2 :] for text in above]
        above[0] = ditto_mark_above(key, texts) + above[0]
    return [*above, line]


# --- defaults -------------------------------------------------------------------------


def _fits(node: ir.TypeNode, value: Any) -> bool:
    """Whether a checker accepts `value` as a default of a parameter typed `node`."""
    if isinstance(node, ir.AnyType):
        return True
    if isinstance(node, ir.Primitive):
        kind = node.kind
        if isinstance(value, bool):
            return kind == "boolean"
        if kind == "string":
            return isinstance(value, str)
        if kind == "integer":
            return isinstance(value, int)
        if kind == "number":
            return isinstance(value, int | float)
        return kind == "null" and value is None
    if isinstance(node, ir.LiteralType):
        return any(type(v) is type(value) and v == value for v in node.values)
    if isinstance(node, ir.UnionType):
        return any(_fits(arm, value) for arm in node.arms)
    if isinstance(node, ir.ArrayType):
        return isinstance(value, list) and all(_fits(node.items, v) for v in value)
    if isinstance(node, ir.MapType):
        return isinstance(value, dict) and all(_fits(node.values, v) for v in value.values())
    return False


def _default(item: ir.Field) -> str | None:
    """The default as a literal for the signature, when it type-checks there."""
    if item.docs.default is None:
        return None
    value = json.loads(item.docs.default)
    if isinstance(value, float) and not (value == value and abs(value) != float("inf")):
        return None
    return json_to_py(item.docs.default) if _fits(item.type, value) else None


# --- declarations ---------------------------------------------------------------------


def _annotation(item: ir.Field) -> tuple[str, tuple[str, ...]]:
    if isinstance(item.type, ir.LiteralType):
        expr, extra = literal_expr(item.type)
        return fmt.flat(expr), extra
    return fmt.flat(type_expr(item.type)), ()


def _object_lines(named: ir.ObjectType) -> list[str]:
    extra_note = _extra_note(named)
    head_docs = doc_lines(named.docs, extra_note)
    optional = sum(not f.required for f in named.fields)
    total = optional > len(named.fields) - optional
    entries = []
    for item in named.fields:
        annotation, extra = _annotation(item)
        if total and item.required:
            annotation = f"Required[{annotation}]"
        elif not total and not item.required:
            annotation = f"NotRequired[{annotation}]"
        entries.append((item.key, annotation, doc_lines(item.docs, extra)))
    options = ("total=False, " if total else "") + ("closed=True" if named.extra is None else "")
    options = options.rstrip(", ")
    class_syntax = all(is_class_field(key) and key not in ANNOTATION_NAMES for key, _, _ in entries)
    if class_syntax:
        bases = "TypedDict" + (f", {options}" if options else "")
        head = f"class {named.name}({bases}):"
        if not entries:
            return attach(f"{head} ...", head_docs, "")
        lines = attach(head, head_docs, "")
        for key, annotation, docs in entries:
            lines += attach(f"{INDENT}{key}: {annotation}", docs, INDENT, key)
        return lines
    tail = f", {options})" if options else ")"
    head = f'{named.name} = TypedDict("{named.name}", {{'  # names are identifiers
    if not entries:
        return [*comment_lines(head_docs, ""), f"{head}}}{tail}"]
    lines = [*comment_lines(head_docs, ""), head]
    for key, annotation, docs in entries:
        lines += attach(f"{INDENT}{py_str(key)}: {annotation},", docs, INDENT, key)
    lines.append("}" + tail)
    return lines


def _extra_note(named: ir.ObjectType) -> tuple[str, ...]:
    """Other keys of an object open to a type: PEP 728's `extra_items`, which mypy does not
    accept yet, as a note."""
    if named.extra is None or isinstance(named.extra, ir.AnyType):
        return ()
    return (f"other keys: {fmt.flat(type_expr(named.extra))}",)


def _map_lines(named: ir.ObjectType) -> list[str]:
    """An object with the empty key, which no TypedDict may declare: a map of its value
    types, its keys in comments."""
    arms: list[str] = []
    keys = []
    for item in named.fields:
        annotation, extra = _annotation(item)
        arms.append(annotation)
        state = "required" if item.required else "optional"
        text = "; ".join(doc_lines(item.docs, extra))
        keys.append(f"{py_str(item.key)}: {annotation}, {state}" + (f"; {text}" if text else ""))
    if named.extra is not None:
        arms.append(fmt.flat(type_expr(named.extra)))
        keys.append(f"other keys: {arms[-1]}")
    values = "Any" if "Any" in arms else " | ".join(dict.fromkeys(arms))
    docs = [*doc_lines(named.docs), "keys (a TypedDict cannot declare the empty key):", *keys]
    return [*comment_lines(docs, ""), f"{named.name}: TypeAlias = dict[str, {values}]"]


def _alias_lines(alias: ir.AliasType) -> list[str]:
    line = f"{alias.name}: TypeAlias = {fmt.flat(type_expr(alias.target))}"
    return attach(line, doc_lines(alias.docs), "")


def declaration_lines(named: ir.NamedType) -> list[str]:
    if isinstance(named, ir.AliasType):
        return _alias_lines(named)
    if any(item.key == "" for item in named.fields):
        return _map_lines(named)
    return _object_lines(named)


# --- functions ------------------------------------------------------------------------


def _keyword_object(args: ir.TypeNode, types: Sequence[ir.NamedType]) -> ir.ObjectType | None:
    """The argument object when every key can be a keyword argument."""
    if not isinstance(args, ir.RefType):
        return None
    found = next((t for t in types if t.name == args.name), None)
    if isinstance(found, ir.AliasType) and isinstance(found.target, ir.MapType):
        return ir.ObjectType(found.name, (), found.target.values, found.docs)  # keys as keywords
    if not isinstance(found, ir.ObjectType):
        return None
    if not all(is_python_identifier(item.key) for item in found.fields):
        return None
    return found


def _rest_name(keys: set[str]) -> str:
    name = "others"
    while name in keys:
        name += "_"
    return name


def _parameters(arguments: ir.ObjectType) -> list[tuple[str, list[str], str]]:
    """`key: T = default` and its docs per parameter, `**others: T` for an open object."""
    params = []
    for item in arguments.fields:
        annotation, extra = _annotation(item)
        default = None if item.required else _default(item)
        text = f"{item.key}: {annotation}"
        if not item.required:
            text += f" = {default if default is not None else '...'}"
        docs = doc_lines(item.docs, extra, skip_default=default is not None)
        params.append((text, docs, item.key))
    if arguments.extra is not None and not isinstance(arguments.extra, ir.AnyType):
        rest = fmt.flat(type_expr(arguments.extra))
        params.append((f"**{_rest_name({f.key for f in arguments.fields})}: {rest}", [], ""))
    return params


def function_lines(
    tool: ir.Tool,
    args: ir.TypeNode,
    returns: tuple[str, list[str]],
    arguments: ir.ObjectType | None,
) -> list[str]:
    """The decorator (when the name needs one), the signature, the docs of the arguments
    and the result (comment lines: a stub body may start with them, and inside it they
    belong to this function, where after a one-line `: ...` a reader takes them for the
    next one's), then the docstring, or `...` for a body of comments alone."""
    name = function_name(tool.name)
    lines = [] if name else [f"@tool({py_str(tool.name)})"]
    description = marked(description_lines(tool.description), hint_marks(tool.annotations))
    annotation, returns_docs = returns
    end = ":" if description or returns_docs else ": ..."
    head = f"async def {name or '_'}("
    if arguments is None:
        lines.append(f"{head}args: {fmt.flat(type_expr(args))}, /) -> {annotation}{end}")
    else:
        params = _parameters(arguments)
        star = "*, " if params and not params[0][0].startswith("**") else ""
        if not any(docs for _, docs, _ in params):
            lines.append(f"{head}{star}{', '.join(p for p, _, _ in params)}) -> {annotation}{end}")
        else:
            lines.append(f"{head}{star.rstrip()}")
            for text, docs, key in params:
                lines += attach(f"{INDENT}{text},", docs, INDENT, key)
            lines.append(f") -> {annotation}{end}")
    lines += comment_lines(returns_docs, INDENT)
    if description:
        lines += docstring(description, INDENT)
    elif returns_docs:
        lines.append(f"{INDENT}...")
    return lines


def _returns(
    output: ir.TypeNode | None, types: Sequence[ir.NamedType]
) -> tuple[str, list[str], ir.NamedType | None]:
    """The return annotation, its docs, and the root alias it spells out: an output
    alias no other type uses is written in place, its docs as a `returns:` comment."""
    if output is None:
        return "Any", [], None
    if isinstance(output, ir.RefType):
        alias = next((t for t in types if t.name == output.name), None)
        if isinstance(alias, ir.AliasType) and not any(alias.name in _names_used(t) for t in types):
            docs = doc_lines(alias.docs)
            if docs:
                docs[0] = f"returns: {docs[0]}"
            return fmt.flat(type_expr(alias.target)), docs, alias
    return fmt.flat(type_expr(output)), [], None


def section_chunk(tool: ir.Tool) -> ToolText:
    """The tool's function, and its types in IR order, names marked. Keys of its
    class-syntax TypedDicts that look like type names (`URL`) are names its types may not
    take, or the class body would read the field where it means the type."""
    args, output, types = marked_tool(tool)
    arguments = _keyword_object(args, types)
    used_elsewhere = arguments is not None and any(arguments.name in _names_used(t) for t in types)
    keys = {
        item.key
        for t in types
        if isinstance(t, ir.ObjectType)
        for item in t.fields
        if not item.key[:1].islower() and item.key.isidentifier()
    }
    returns, returns_docs, inlined = _returns(output, types)
    args_docs = doc_lines(arguments.docs) if arguments is not None else []
    if args_docs:  # the object the parameters spell out has no other place for its docs
        args_docs[0] = f"args: {args_docs[0]}"
    lines = function_lines(tool, args, (returns, args_docs + returns_docs), arguments)
    declarations = tuple(
        Declaration(own.name, "\n".join(declaration_lines(named)))
        for own, named in zip(tool.types, types, strict=True)
        if not (
            (arguments is not None and named.name == arguments.name and not used_elsewhere)
            or named is inlined
        )
    )
    return ToolText(
        "\n".join(lines),
        declarations,
        candidates(tool),
        function_name(tool.name),
        tuple(sorted(keys)),
        _signature(args, arguments, returns),
    )


def _signature(args: ir.TypeNode, arguments: ir.ObjectType | None, returns: str) -> str:
    """`(path: str, ...) -> str`: the required keywords with their types, `...` when the
    tool takes more; the positional form when its arguments cannot all be keywords."""
    if arguments is None:
        return f"(args: {fmt.flat(type_expr(args))}, /) -> {returns}"
    params = [f"{item.key}: {_annotation(item)[0]}" for item in arguments.fields if item.required]
    if any(not item.required for item in arguments.fields) or (
        arguments.extra is not None and not isinstance(arguments.extra, ir.AnyType)
    ):
        params.append("...")
    return f"({', '.join(params)}) -> {returns}"


def _names_used(named: ir.NamedType) -> str:
    if isinstance(named, ir.AliasType):
        return fmt.flat(type_expr(named.target))
    return " ".join(fmt.flat(type_expr(item.type)) for item in named.fields)


# --- the SDK --------------------------------------------------------------------------


def render_python_section_sdk(catalog: ir.Catalog, memo: ChunkMemo | None = None) -> str:
    """The section's SDK for a catalog; the same catalog always gives the same bytes."""
    with run_memos():
        return section_sdk_from_chunks(tool_chunks(catalog, "python-section", section_chunk, memo))


def section_sdk_from_chunks(chunks: Sequence[ToolText], dittos: bool = True) -> str:
    """The section's SDK; without `dittos`, every field comment in full."""
    resolve = Dittos(repeat=not dittos).resolve
    return render(TEMPLATE, blocks=[resolve(tool_block(p)) for p in place_chunks(chunks)])


def place_chunks(chunks: Sequence[ToolText]) -> list[Placed]:
    """Names decided tool by tool (`short_names.place`); a tool whose function name an
    earlier type holds is shown under `@tool(...)` instead."""
    placed = place(chunks, PYTHON_RESERVED)
    return [
        p._replace(head=_decorated(p.head, c.function)) if p.function_taken else p
        for p, c in zip(placed, chunks, strict=True)
    ]


def _decorated(head: str, function: str) -> str:
    plain = f"async def {function}("
    assert head.startswith(plain)
    return f"@tool({py_str(function)})\nasync def _(" + head[len(plain) :]


def tool_block(placed: Placed) -> str:
    return "\n".join([placed.head, *placed.declarations])
