"""The Python SDK module: TypedDicts, a `Tools` protocol, `ToolName` and `tools` (the
model-facing SDK of the Code Mode section is `sections.python`).

Takes an IR catalog and returns the module text, byte-identical for the same catalog. The
first part (docstring, imports, `SequenceNotStr`, `ToolCallError`) depends on the tool set
only by where `TypedDict` comes from (`declares_closed`). Type names come from the IR and their spelling from `spelling` (a type a caller passes
reads its containers covariantly: `argument_type_expr`); this module lays out the
declarations (class or functional TypedDict, `closed=True` for the objects a checker tells
apart by their keys: `keyed_arms`) and escapes every string that came from a schema where it
lands (`strings`). The layout is `black`'s (see `black_layout`), so the output needs no
formatter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ... import ir
from ..._support.run_memos import run_memos
from ...identifiers import ANNOTATION_NAMES, is_class_field, is_method_name
from ..chunks import ChunkMemo, tool_chunks
from ..notes import has_notes, notes
from ..templates import render
from ..text import description_lines
from . import black_layout as fmt
from . import protocol
from .spelling import ANY_ATOM, ARGUMENT_NAMES, MAPPING, PRIMITIVE_ATOMS, Spelling, inner_nodes
from .spelling import argument_type_expr as argument_type_expr
from .spelling import argument_types as argument_types
from .spelling import literal_expr as literal_expr
from .spelling import type_expr as type_expr
from .strings import PRAGMAS as PRAGMAS
from .strings import comment_lines as comment_lines
from .strings import docstring as docstring
from .strings import json_to_py as json_to_py
from .strings import py_literal as py_literal
from .strings import py_str as py_str


def _names_in(expr: fmt.Expr) -> set[str]:
    if isinstance(expr, fmt.Atom):
        return {expr.text}
    children = expr.args if isinstance(expr, fmt.Sub) else expr.arms
    return set().union(*(_names_in(child) for child in children))


def _deferred(
    expr: fmt.Expr, declared: set[str], forward: frozenset[str], strings: set[str]
) -> fmt.Expr:
    """The expression with its forward references quoted (only recursion makes them): a
    name not declared yet is quoted where it stands, inside a subscript (`list["Node"]`) or
    as the whole annotation, so the module imports and the annotation evaluates at runtime
    to a real type wherever it can. A `|` cannot hold a string, so a union with such an
    arm, or with an arm naming an alias that is a string at runtime (`strings`: one whose
    whole value had to be quoted), is quoted whole. `forward` holds every name some
    declaration uses before (or in) its own."""
    if not forward:
        return expr
    late = forward - declared
    used = _names_in(expr)
    if used.isdisjoint(late) and used.isdisjoint(strings):
        return expr
    return _quoted(expr, late, strings)


def _quoted(expr: fmt.Expr, late: frozenset[str], strings: set[str]) -> fmt.Expr:
    if isinstance(expr, fmt.Atom):
        return fmt.Atom(py_str(expr.text)) if expr.text in late else expr
    if isinstance(expr, fmt.Sub):
        return fmt.Sub(expr.head, tuple(_quoted(arg, late, strings) for arg in expr.args))
    if any(
        isinstance(arm, fmt.Atom) and (arm.text in late or arm.text in strings) for arm in expr.arms
    ):
        return fmt.Atom(py_str(fmt.flat(expr)))
    return fmt.Union(tuple(_quoted(arm, late, strings) for arm in expr.arms))


def forward_names(types: Iterable[ir.NamedType]) -> frozenset[str]:
    """Names used before (or in) their own declaration: the targets of recursion. This
    walks every field of every tool, so it tests the most frequent node classes first."""
    declared: set[str] = set()
    forward: set[str] = set()
    for named_type in types:
        name = named_type.name
        declared.add(name)
        if isinstance(named_type, ir.ObjectType):
            nodes = [f.type for f in named_type.fields]
            if named_type.extra is not None:
                nodes.append(named_type.extra)
        else:
            nodes = [named_type.target]
        while nodes:
            node = nodes.pop()
            if isinstance(node, ir.Primitive):
                continue
            if isinstance(node, ir.RefType):
                if node.name not in declared or node.name == name:
                    forward.add(node.name)
            else:
                nodes.extend(inner_nodes(node))
    return frozenset(forward)


def keyed_arms(types: Sequence[ir.NamedType]) -> frozenset[str]:
    """The closed objects a checker tells apart by their keys: two or more objects under one
    union, as its arms or inside its arrays, tuples and maps (which an argument's spelling
    joins into one union). They are declared `closed=True` (PEP 728): without it, mypy
    matches `{"path": "x", "type": "t"}` against `{path} | {path, type}` by the smaller arm
    and reports "Extra key". Only they: a closed TypedDict makes pyright's report of a
    misspelled key name no key."""
    named = {t.name: t for t in types}
    found: set[str] = set()
    for named_type in types:
        nodes = _nodes_of(named_type)
        while nodes:
            node = nodes.pop()
            if isinstance(node, ir.UnionType):
                objects = _objects_under(node, named)
                if len(objects) > 1:
                    found.update(name for name, obj in objects.items() if obj.extra is None)
            elif not isinstance(node, ir.Primitive | ir.RefType):
                nodes.extend(inner_nodes(node))
    return frozenset(found)


def _nodes_of(named_type: ir.NamedType) -> list[ir.TypeNode]:
    if isinstance(named_type, ir.AliasType):
        return [named_type.target]
    nodes = [f.type for f in named_type.fields]
    if named_type.extra is not None:
        nodes.append(named_type.extra)
    return nodes


def _objects_under(union: ir.UnionType, named: dict[str, ir.NamedType]) -> dict[str, ir.ObjectType]:
    """The objects a union's value may be or hold inline: through aliases, never inside
    another object."""
    objects: dict[str, ir.ObjectType] = {}
    aliases: set[str] = set()
    nodes: list[ir.TypeNode] = [union]
    while nodes:
        node = nodes.pop()
        if isinstance(node, ir.RefType):
            target = named.get(node.name)
            if isinstance(target, ir.ObjectType):
                objects[node.name] = target
            elif target is not None and node.name not in aliases:
                aliases.add(node.name)
                nodes.append(target.target)
        else:
            nodes.extend(inner_nodes(node))
    return objects


# --- declarations -------------------------------------------------------------------------


class _FieldView(NamedTuple):
    key: str
    annotation: fmt.Expr
    comments: tuple[str, ...]


_OPTIONAL_PRIMITIVES = {
    kind: fmt.Sub("NotRequired", (atom,)) for kind, atom in PRIMITIVE_ATOMS.items()
}
"""`NotRequired[str]` and the like, shared: two fields in three are primitives."""


def _field_view(
    item: ir.Field, declared: set[str], forward: frozenset[str], strings: set[str], spell: Spelling
) -> _FieldView:
    """A field as a TypedDict declares it: its annotation (`NotRequired` when optional)
    and its comment lines."""
    node = item.type
    if type(node) is ir.Primitive:
        # The common case: a shared annotation, never quoted (a primitive's name is a
        # builtin, which no declared type may take), and often no docs.
        shared = PRIMITIVE_ATOMS if item.required else _OPTIONAL_PRIMITIVES
        docs = item.docs
        return _FieldView(
            item.key, shared[node.kind], () if docs is ir.EMPTY_DOCS else docs_lines(docs)
        )
    extra_notes: tuple[str, ...] = ()
    if isinstance(node, ir.LiteralType):
        expr, extra_notes = literal_expr(node)
    else:
        expr = spell(node)
    if forward:
        expr = _deferred(expr, declared, forward, strings)
    if not item.required:
        expr = fmt.Sub("NotRequired", (expr,))
    return _FieldView(item.key, expr, docs_lines(item.docs, extra_notes))


def _map_lines(
    named_type: ir.ObjectType,
    views: list[_FieldView],
    description: tuple[str, ...],
    spell: Spelling,
) -> list[str]:
    """An object with the empty key `""`, which no TypedDict may declare (pyright rejects
    it): a map of every value type it holds, its keys listed in comments. Looser than a
    TypedDict, but it accepts every value the schema does."""
    arms: list[fmt.Expr] = []
    notes = [*description, "Keys (a TypedDict cannot declare the empty key):"]
    for view in views:
        expr = view.annotation
        optional = isinstance(expr, fmt.Sub) and expr.head == "NotRequired"
        value = expr.args[0] if isinstance(expr, fmt.Sub) and optional else expr
        arms.extend(value.arms if isinstance(value, fmt.Union) else (value,))
        state = "optional" if optional else "required"
        notes.append(f"  {py_str(view.key)}: {fmt.flat(value)}, {state}")
        notes.extend(f"    {line}" for line in view.comments)
    if named_type.extra is not None:
        extra = spell(named_type.extra)
        arms.extend(extra.arms if isinstance(extra, fmt.Union) else (extra,))
        notes.append(f"  other keys: {fmt.flat(extra)}")
    unique = tuple(dict.fromkeys(arms))
    values = unique[0] if len(unique) == 1 else fmt.Union(unique)
    if ANY_ATOM in unique:
        values = ANY_ATOM
    head = "dict" if spell is type_expr else MAPPING
    map_type = fmt.Sub(head, (fmt.Atom("str"), values))
    return comment_lines(notes, "") + fmt.assignment(f"{named_type.name}: TypeAlias", map_type)


def docs_lines(docs: ir.Docs, extra_notes: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A node's description lines, then one line with its notes (default, constraints,
    format, ...) joined by `; `; defaults and examples in full, as the sections show them
    (one rule: a cut value is a lost one)."""
    if docs is ir.EMPTY_DOCS and not extra_notes:
        return ()
    described = description_lines(docs.description)
    if not extra_notes and not has_notes(docs):  # most docs are a description alone
        return described
    found = [
        f"default: {n.text}" if n.kind == "default" else n.text for n in notes(docs, json_to_py)
    ]
    found.extend(extra_notes)
    if not found:
        return tuple(described)
    return (*described, "; ".join(found))


CHECKER_NOTE = "; type checkers reject them."
"""How the module's open objects end their comment: mypy does not implement PEP 728's
`extra_items`, so an open object is a plain TypedDict, whose literals may hold no other key,
and the comment says so."""


def _open_comment(extra: ir.TypeNode | None, spell: Spelling) -> list[str]:
    if extra is None:
        return []
    end = CHECKER_NOTE
    if isinstance(extra, ir.AnyType):
        return ["Other keys are allowed" + end]
    return [f"Other keys map to {fmt.flat(spell(extra))}" + end]


def _class_syntax_fits(views: list[_FieldView], type_names: frozenset[str]) -> bool:
    """Class syntax needs keys that are plain identifiers and that do not shadow a name the
    class's own annotations use (`list: str` would break a later `list[...]`)."""
    for view in views:
        if view.key in ANNOTATION_NAMES or not is_class_field(view.key):
            return False
    keys = {v.key for v in views}
    if not ARGUMENT_NAMES.isdisjoint(keys):
        heads = set().union(*(_heads_in(v.annotation) for v in views))
        if not heads.isdisjoint(keys):
            return False
    if type_names.isdisjoint(keys):
        return True  # annotations only use builtins, typing names and type names
    used = set().union(*(_names_in(v.annotation) for v in views))
    return all(v.key not in used for v in views)


def _heads_in(expr: fmt.Expr) -> set[str]:
    """The names an expression subscripts (`SequenceNotStr`, `Mapping`, `list`, ...)."""
    if isinstance(expr, fmt.Atom):
        return set()
    if isinstance(expr, fmt.Sub):
        return {expr.head}.union(*(_heads_in(arg) for arg in expr.args))
    return set().union(*(_heads_in(arm) for arm in expr.arms))


def _object_lines(
    named_type: ir.ObjectType,
    declared: set[str],
    forward: frozenset[str],
    strings: set[str],
    type_names: frozenset[str],
    spell: Spelling,
    closed: bool,
) -> list[str]:
    """The object's lines in the module; `closed=True` when `closed` (see `keyed_arms`)."""
    views = [_field_view(item, declared, forward, strings, spell) for item in named_type.fields]
    description = docs_lines(named_type.docs)
    if any(item.key == "" for item in named_type.fields):
        return _map_lines(named_type, views, description, spell)
    layout = _class_lines if _class_syntax_fits(views, type_names) else _functional_lines
    open_comment = _open_comment(named_type.extra, spell)
    return layout(named_type, views, description, open_comment, closed)


def _class_lines(
    named_type: ir.ObjectType,
    views: list[_FieldView],
    description: tuple[str, ...],
    open_comment: list[str],
    closed: bool,
) -> list[str]:
    base = "TypedDict, closed=True" if closed else "TypedDict"
    lines = fmt.class_header(named_type.name, base)
    header = len(lines)  # one line, or three when a wide name splits it
    if description:
        lines += docstring(description, fmt.INDENT)
        if views or open_comment:
            lines.append("")
    for view in views:
        if view.comments:
            lines += comment_lines(view.comments, fmt.INDENT)
        lines += fmt.field(view.key, view.annotation)
    lines += comment_lines(open_comment, fmt.INDENT)
    if len(lines) == header:
        lines.append(f"{fmt.INDENT}pass")
    return lines


def _functional_lines(
    named_type: ir.ObjectType,
    views: list[_FieldView],
    description: tuple[str, ...],
    open_comment: list[str],
    closed: bool,
) -> list[str]:
    """`Name = TypedDict("Name", {...})`, for keys class syntax cannot hold."""
    name = named_type.name
    opening = comment_lines(description, "")
    entries = [
        (comment_lines(v.comments, "") if v.comments else [], py_str(v.key), v.annotation)
        for v in views
    ]
    closing = comment_lines(open_comment, "")
    if not closing and not any(c for c, _, _ in entries):  # one line, if it fits
        one_line = (
            f"{name} = TypedDict({py_str(name)}, {{"
            + ", ".join([f"{key}: {expr.text}" for _, key, expr in entries])
            + ("}, closed=True)" if closed else "})")
        )
        if fmt.fits(one_line):
            return [*opening, one_line]
    inner = fmt.INDENT * 2
    body = [f"{fmt.INDENT}{{"]
    lone = len(entries) == 1 and not closing
    for comments, key, expr in entries:
        body += [f"{inner}{c}" for c in comments]
        body += fmt.dict_entry(key, expr, inner, lone=lone and bool(comments))
    body += [f"{inner}{c}" for c in closing]
    body.append(f"{fmt.INDENT}}}")
    first = [f"{fmt.INDENT}{py_str(name)}"]
    options = [[f"{fmt.INDENT}closed=True"]] if closed else []
    return [*opening, *fmt.call_lines(name, "TypedDict", [first, body, *options])]


def _alias_lines(
    alias: ir.AliasType,
    declared: set[str],
    forward: frozenset[str],
    strings: set[str],
    spell: Spelling,
) -> list[str]:
    """`Name: TypeAlias = ...`, with forward references quoted as `_deferred` says. An
    alias whose whole value had to be quoted is a string at runtime: it joins `strings`."""
    spelled = spell(alias.target)
    value = _deferred(spelled, declared, forward, strings)
    if isinstance(value, fmt.Atom) and value is not spelled:
        strings.add(alias.name)
    lines = comment_lines(docs_lines(alias.docs), "")
    return lines + fmt.assignment(f"{alias.name}: TypeAlias", value)


def tool_declarations(tool: ir.Tool) -> tuple[str, ...]:
    """Each named type of one tool as one block of lines, in declaration order, the types
    its arguments reach spelled for a caller (`argument_type_expr`). A tool's types refer
    only to each other, so its blocks are the same alone or in any catalog."""
    return type_declarations(tool.types, argument_types(tool))


_CLOSED = re.compile(
    r"^(?:class \w+\(TypedDict, closed=True\):|\s*closed=True,|.*\}, closed=True\))$", re.M
)
"""A declaration's `closed=True`, in each of the three layouts `_object_lines` writes."""


def declares_closed(blocks: Sequence[str]) -> bool:
    """Whether a module's declarations hold a `closed=True` TypedDict: only then does it
    import `typing_extensions`' TypedDict (typing's takes no `closed` at run time before
    Python 3.15), so a module without one needs nothing beyond the standard library."""
    return any(_CLOSED.search(block) for block in blocks)


def type_declarations(
    types: Sequence[ir.NamedType], arguments: frozenset[str] = frozenset()
) -> tuple[str, ...]:
    """Each of `types` as one block of lines, in order; those named in `arguments` spelled
    for a caller (`argument_type_expr`), the others as results (`type_expr`)."""
    forward = forward_names(types)
    closed = keyed_arms(types)
    type_names = frozenset(t.name for t in types)
    declared: set[str] = set()
    strings: set[str] = set()  # aliases whose value is a string at runtime
    blocks = []
    for named_type in types:
        spell = argument_type_expr if named_type.name in arguments else type_expr
        if isinstance(named_type, ir.ObjectType):
            shut = named_type.name in closed
            lines = _object_lines(named_type, declared, forward, strings, type_names, spell, shut)
        else:
            lines = _alias_lines(named_type, declared, forward, strings, spell)
        declared.add(named_type.name)
        blocks.append("\n".join(lines))
    return tuple(blocks)


# --- the Tools protocol -------------------------------------------------------------------


def _signature_types(tool: ir.Tool) -> tuple[str, str]:
    """Argument and return types: names, or `Any` and primitives (the IR names the rest)."""
    returns = fmt.flat(type_expr(tool.output)) if tool.output is not None else "Any"
    return fmt.flat(type_expr(tool.args)), returns


class PythonChunk(NamedTuple):
    """Everything the Python SDKs hold for one tool, as finished text (a named tuple: a
    cache stores thousands and loads them back fast). The module and the model-facing SDK
    share one chunk: they differ only in a few lines."""

    declarations: tuple[str, ...]
    """The tool's named types in the module."""
    method: str
    """Its `async def` in `Tools`, or "" when the name cannot be a method."""
    overload: str
    """Its `__getitem__` signature in `Tools` (without `@overload`)."""
    key: str
    """The exact name as a string literal."""


def python_chunk(tool: ir.Tool) -> PythonChunk:
    args, returns = _signature_types(tool)
    description = description_lines(tool.description)
    key = py_str(tool.name)
    declared = tool_declarations(tool)
    if is_method_name(tool.name):
        method = "\n".join(protocol.method_lines(tool.name, args, returns, description))
        overload = protocol.overload_lines(key, args, returns, ())
    else:
        method = ""
        overload = protocol.overload_lines(key, args, returns, description)
    return PythonChunk(declared, method, "\n".join(overload), key)


def render_python_sdk(catalog: ir.Catalog, memo: ChunkMemo | None = None) -> str:
    """The Python SDK module for a catalog. `memo` reuses the text of tools rendered
    before (see `codegen.incremental.cache`)."""
    with run_memos():
        return python_sdk_from_chunks(tool_chunks(catalog, "python", python_chunk, memo))


def python_sdk_from_chunks(chunks: Sequence[PythonChunk]) -> str:
    """The module around the tools' chunks, in catalog order."""
    methods = [chunk.method for chunk in chunks if chunk.method]
    overloads = [chunk.overload for chunk in chunks]
    declarations = [block for chunk in chunks for block in chunk.declarations]
    return render(
        "python/sdk.py.jinja",
        closed=declares_closed(declarations),
        declarations=declarations,
        members=protocol.protocol_members(methods, overloads),
        tool_names=protocol.tool_name_alias([chunk.key for chunk in chunks]),
    )
