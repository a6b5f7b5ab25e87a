"""The Python SDK module: TypedDicts, a `Tools` protocol, `ToolName` and `tools` (the
model-facing SDK of the Code Mode section is `sections.python`).

Takes an IR catalog and returns the module text, byte-identical for the same catalog. The
first part (docstring, imports, `SequenceNotStr`, `ToolCallError`) never depends on the tool
set. Type names come from the IR; this module decides only how they are spelled in Python
(a type a caller passes reads its containers covariantly: `argument_type_expr`) and escapes
every string that came from a schema where it lands (`strings`). The layout is `black`'s
(see `black_layout`), so the output needs no formatter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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
from .strings import PRAGMAS as PRAGMAS
from .strings import comment_lines as comment_lines
from .strings import docstring as docstring
from .strings import json_to_py as json_to_py
from .strings import py_literal as py_literal
from .strings import py_str as py_str

# --- types --------------------------------------------------------------------------------

_PRIMITIVES = {
    "string": "str",
    "number": "float",
    "integer": "int",
    "boolean": "bool",
    "null": "None",
}


TUPLE_VARIANTS_LIMIT = 8
"""Most lengths spelled as a union of tuples when trailing tuple items are optional."""


INT64_MAX = 2**63 - 1
"""mypy accepts integer literal types only within 64 bits."""


def _in_literal(value: ir.Scalar) -> bool:
    if value is None or isinstance(value, float):
        return False
    return isinstance(value, bool | str) or abs(value) <= INT64_MAX


def literal_expr(node: ir.LiteralType) -> tuple[fmt.Expr, tuple[str, ...]]:
    """`Literal[...]` holds strings, booleans and 64-bit integers; `None` becomes its own arm,
    and floats and larger integers (which type checkers reject in `Literal`) become `float`
    / `int` with a note listing every allowed value exactly."""
    members: list[fmt.Expr] = []
    wide_int = wide_float = False
    for value in node.values:
        if _in_literal(value):
            members.append(fmt.Atom(py_literal(value)))
        elif isinstance(value, int):
            wide_int = True
        elif isinstance(value, float):
            wide_float = True
    arms: list[fmt.Expr] = [fmt.Sub("Literal", tuple(members))] if members else []
    if wide_int:
        arms.append(fmt.Atom("int"))
    if wide_float:
        arms.append(fmt.Atom("float"))
    if None in node.values:
        arms.append(_NONE_ATOM)
    wide = wide_int or wide_float
    note = ("one of " + ", ".join(py_literal(v) for v in node.values),) if wide else ()
    return (arms[0] if len(arms) == 1 else fmt.Union(tuple(arms))), note


_PRIMITIVE_ATOMS = {kind: fmt.Atom(text) for kind, text in _PRIMITIVES.items()}
"""One shared atom per primitive (atoms are immutable); most annotations are one."""
_ANY_ATOM = fmt.Atom("Any")
_STR_ATOM = _PRIMITIVE_ATOMS["string"]
_NEVER_ATOM = fmt.Atom("Never")
_NONE_ATOM = _PRIMITIVE_ATOMS["null"]


def type_expr(node: ir.TypeNode) -> fmt.Expr:
    """The Python annotation of an IR type node; the most frequent nodes are tested
    first."""
    if isinstance(node, ir.Primitive):
        return _PRIMITIVE_ATOMS[node.kind]
    if isinstance(node, ir.RefType):
        return fmt.Atom(node.name)
    if isinstance(node, ir.UnionType):
        return _union_expr(node)
    if isinstance(node, ir.ArrayType):
        return fmt.Sub("list", (type_expr(node.items),))
    if isinstance(node, ir.LiteralType):
        return literal_expr(node)[0]
    if isinstance(node, ir.MapType):
        return fmt.Sub("dict", (_STR_ATOM, type_expr(node.values)))
    if isinstance(node, ir.TupleType):
        return _tuple_expr(node)
    if isinstance(node, ir.NeverType):
        return _NEVER_ATOM
    return _ANY_ATOM  # `AnyType`, `UnknownType`


def _union_expr(node: ir.UnionType) -> fmt.Expr:
    """The arms' spellings, a nested union's arms spliced in, repeats dropped."""
    arms: list[fmt.Expr] = []
    for arm in node.arms:
        spelled = type_expr(arm)
        arms.extend(spelled.arms if isinstance(spelled, fmt.Union) else (spelled,))
    return fmt.Union(tuple(dict.fromkeys(arms)))


Spelling = Callable[[ir.TypeNode], fmt.Expr]
"""`type_expr` for a type only results reach, `argument_type_expr` for one a caller passes."""


def _tuple_expr(node: ir.TupleType) -> fmt.Expr:
    variants = _tuple_variants(node, type_expr)
    if variants is None:
        arms = tuple(dict.fromkeys(type_expr(item) for item in items_of(node)))
        return fmt.Sub("list", (arms[0] if len(arms) == 1 else fmt.Union(arms),))
    return variants[0] if len(variants) == 1 else fmt.Union(tuple(variants))


def items_of(node: ir.TupleType) -> tuple[ir.TypeNode, ...]:
    """Every item type a tuple may hold: its positions', then its further items'."""
    return node.items if node.rest is None else (*node.items, node.rest)


def inner_nodes(node: ir.TypeNode) -> tuple[ir.TypeNode, ...]:
    """The type nodes directly inside a union, array, map or tuple; none in any other."""
    if isinstance(node, ir.UnionType):
        return node.arms
    if isinstance(node, ir.ArrayType):
        return (node.items,)
    if isinstance(node, ir.MapType):
        return (node.values,)
    if isinstance(node, ir.TupleType):
        return items_of(node)
    return ()


def _tuple_variants(node: ir.TupleType, spell: Spelling) -> list[fmt.Expr] | None:
    """`tuple[...]` for each length the tuple may have (its items spelled by `spell`), or
    None when trailing optional items would make more than `TUPLE_VARIANTS_LIMIT` of them
    (then the caller spells one array of every item type)."""
    if not node.items:
        return [fmt.Sub("tuple", (fmt.Atom("()"),))]
    if len(node.items) - node.min_items > TUPLE_VARIANTS_LIMIT:
        return None
    items = [spell(item) for item in node.items]
    variants: list[fmt.Expr] = []
    for length in range(node.min_items, len(items) + 1):
        args: list[fmt.Expr] = list(items[:length]) or [fmt.Atom("()")]
        if length == len(items) and node.rest is not None:
            args.append(fmt.Sub("*tuple", (spell(node.rest), fmt.Atom("..."))))
        variants.append(fmt.Sub("tuple", tuple(args)))
    return variants


# --- argument types -----------------------------------------------------------------------

SEQUENCE = "SequenceNotStr"
"""An argument's array: the module's protocol (see `templates/python/sdk.py.jinja`) that a
list or a tuple of the items satisfies covariantly (a `list[int]` where numbers are
expected) and a `str` or `bytes` does not, as `Sequence[str]` would take `"abc"`."""
MAPPING = "Mapping"
"""An argument's map: `collections.abc.Mapping`, covariant in its values."""
ARGUMENT_NAMES = frozenset({SEQUENCE, MAPPING})
"""Names only argument annotations use: a class-syntax TypedDict whose annotations use one
may not have a key spelled the same (the key would shadow it)."""


def argument_type_expr(node: ir.TypeNode) -> fmt.Expr:
    """The annotation of a value the caller passes (a type reachable from a tool's
    arguments). JSON has one number type and no tuples, and a tool only reads its
    arguments, so a caller's natural values must pass where the output's `list[float]`
    (invariant) or `tuple[float, float]` would reject them:

    - an array is `SequenceNotStr[T]`: a list or tuple of `T`, covariant, so `list[int]`
      passes for numbers, never a `str` or `bytes`;
    - a tuple also takes a list of its item types: `tuple[float, float] |
      SequenceNotStr[float]` (a list cannot carry positions; the tuple arm shows them);
    - a map is `Mapping[str, T]`;
    - the arrays and tuples of one union make one `SequenceNotStr` arm of every item
      type, its maps one `Mapping` arm: mypy infers a literal against a union of two
      generic containers as if it had no context, so `[[1, 2.5]]` or `[{"id": "a"}]`
      would fail against `SequenceNotStr[float] | SequenceNotStr[SequenceNotStr[float]]`
      or `SequenceNotStr[str] | SequenceNotStr[Ref]` (python/mypy#6079). The cost: a
      checker accepts an array mixing the arms' items, which the schema rejects.

    When the joined arms or the added arms would pass the build's size limits (a union of
    hundreds of arms), the spelling is the output's with `SequenceNotStr` and `Mapping` for
    `list` and `dict`, the same shape, so always within them."""
    spelling = _ArgumentSpelling()
    spelled = spelling.spell(node)
    if spelling.grew and _too_big(spelled):
        return _covariant(type_expr(node))
    return spelled


class _ArgumentSpelling:
    """One `argument_type_expr`; `grew` says whether the spelling joined or added arms
    (only then can it be larger than the output's)."""

    __slots__ = ("grew",)

    def __init__(self) -> None:
        self.grew = False

    def spell(self, node: ir.TypeNode) -> fmt.Expr:
        if isinstance(node, ir.Primitive):
            return _PRIMITIVE_ATOMS[node.kind]
        if isinstance(node, ir.RefType):
            return fmt.Atom(node.name)
        if isinstance(node, ir.ArrayType):
            return fmt.Sub(SEQUENCE, (self.spell(node.items),))
        if isinstance(node, ir.UnionType | ir.TupleType):
            return self._union((node,))
        if isinstance(node, ir.MapType):
            return fmt.Sub(MAPPING, (_STR_ATOM, self.spell(node.values)))
        return type_expr(node)  # literals, `Any`, `Never`: the same on both sides

    def _union(self, nodes: Iterable[ir.TypeNode]) -> fmt.Expr:
        """The union of `nodes` (nested unions spliced in): each arm spelled, except that
        its arrays and tuples make one `SequenceNotStr` arm where the first of them stands
        (after a tuple's own `tuple[...]` arms), and its maps one `Mapping` arm."""
        arms: list[fmt.Expr | None] = []
        items: list[ir.TypeNode] = []
        values: list[ir.TypeNode] = []
        sequence_at = mapping_at = -1
        containers = 0
        pending = list(nodes)
        pending.reverse()
        while pending:
            node = pending.pop()
            if isinstance(node, ir.UnionType):
                pending.extend(reversed(node.arms))
            elif isinstance(node, ir.ArrayType | ir.TupleType):
                containers += 1
                if isinstance(node, ir.ArrayType):
                    items.append(node.items)
                else:
                    exact = _tuple_variants(node, self.spell)
                    if exact is not None:
                        self.grew = True
                        arms.extend(exact)
                    items.extend(items_of(node))
                if sequence_at < 0:
                    sequence_at = len(arms)
                    arms.append(None)
            elif isinstance(node, ir.MapType):
                containers += 1
                values.append(node.values)
                if mapping_at < 0:
                    mapping_at = len(arms)
                    arms.append(None)
            else:
                spelled = self.spell(node)
                arms.extend(spelled.arms if isinstance(spelled, fmt.Union) else (spelled,))
        if containers > 1:
            self.grew = True
        if sequence_at >= 0:
            arms[sequence_at] = fmt.Sub(SEQUENCE, (self._joined(items),))
        if mapping_at >= 0:
            arms[mapping_at] = fmt.Sub(MAPPING, (_STR_ATOM, self._joined(values)))
        unique = tuple(dict.fromkeys(arm for arm in arms if arm is not None))
        return unique[0] if len(unique) == 1 else fmt.Union(unique)

    def _joined(self, nodes: list[ir.TypeNode]) -> fmt.Expr:
        """The item type of a joined array: every node's type, or `Never` for none (an
        array that must be empty)."""
        unique = list(dict.fromkeys(nodes))
        if not unique:
            return _NEVER_ATOM
        return self.spell(unique[0]) if len(unique) == 1 else self._union(unique)


def _covariant(expr: fmt.Expr) -> fmt.Expr:
    """The output's spelling with `SequenceNotStr` for `list` and `Mapping` for `dict`."""
    if isinstance(expr, fmt.Atom):
        return expr
    if isinstance(expr, fmt.Union):
        return fmt.Union(tuple(_covariant(arm) for arm in expr.arms))
    head = {"list": SEQUENCE, "dict": MAPPING}.get(expr.head, expr.head)
    return fmt.Sub(head, tuple(_covariant(arg) for arg in expr.args))


def _too_big(expr: fmt.Expr) -> bool:
    depth, widest = _size(expr)
    return depth > ir.EXPRESSION_LIMIT or widest > ir.ARMS_LIMIT


def _size(expr: fmt.Expr) -> tuple[int, int]:
    """(syntax depth, widest union) of an expression, measured as `build.limits.spelled`
    bounds them: a subscript adds two levels, a union one per arm after the first.
    Recursion follows inline containers, at most `INLINE_LIMIT` deep."""
    if isinstance(expr, fmt.Atom):
        return 1, 1
    if isinstance(expr, fmt.Sub):
        sizes = [_size(arg) for arg in expr.args]
        return 2 + max(d for d, _ in sizes), max(w for _, w in sizes)
    sizes = [_size(arm) for arm in expr.arms]
    depth = max(d for d, _ in sizes) + len(expr.arms) - 1
    return depth, max(len(expr.arms), *(w for _, w in sizes))


def argument_types(tool: ir.Tool) -> frozenset[str]:
    """The names of the tool's types a caller passes: those its arguments reach. The
    input and output schemas are separate documents, so the build never gives both sides
    one type; a type both reached would be spelled for arguments, its one declaration
    read through `SequenceNotStr` in the result too (element types as exact, no slicing or
    mutation), so that a result's value can be passed back."""
    named = {t.name: t for t in tool.types}
    found: set[str] = set()
    nodes = [tool.args]
    while nodes:
        node = nodes.pop()
        if isinstance(node, ir.RefType):
            target = named.get(node.name)
            if target is None or node.name in found:
                continue
            found.add(node.name)
            if isinstance(target, ir.AliasType):
                nodes.append(target.target)
            else:
                nodes.extend(item.type for item in target.fields)
                if target.extra is not None:
                    nodes.append(target.extra)
        else:
            nodes.extend(inner_nodes(node))
    return frozenset(found)


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


# --- declarations -------------------------------------------------------------------------


class _FieldView(NamedTuple):
    key: str
    annotation: fmt.Expr
    comments: tuple[str, ...]


_OPTIONAL_PRIMITIVES = {
    kind: fmt.Sub("NotRequired", (atom,)) for kind, atom in _PRIMITIVE_ATOMS.items()
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
        shared = _PRIMITIVE_ATOMS if item.required else _OPTIONAL_PRIMITIVES
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
    if _ANY_ATOM in unique:
        values = _ANY_ATOM
    head = "dict" if spell is type_expr else MAPPING
    map_type = fmt.Sub(head, (fmt.Atom("str"), values))
    return comment_lines(notes, "") + fmt.assignment(f"{named_type.name}: TypeAlias", map_type)


def docs_lines(docs: ir.Docs, extra_notes: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A node's description lines, then one line with its notes (default, constraints,
    format, ...) joined by `; `."""
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
"""How the module's open objects end their comment: mypy does not implement PEP 728
(`extra_items`), so a TypedDict stays closed for checkers whatever the schema allows, and
the comment says so."""


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
) -> list[str]:
    """The object's lines in the module."""
    views = [_field_view(item, declared, forward, strings, spell) for item in named_type.fields]
    description = docs_lines(named_type.docs)
    if any(item.key == "" for item in named_type.fields):
        return _map_lines(named_type, views, description, spell)
    layout = _class_lines if _class_syntax_fits(views, type_names) else _functional_lines
    return layout(named_type, views, description, _open_comment(named_type.extra, spell))


def _class_lines(
    named_type: ir.ObjectType,
    views: list[_FieldView],
    description: tuple[str, ...],
    open_comment: list[str],
) -> list[str]:
    lines = fmt.class_header(named_type.name, "TypedDict")
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
            + "})"
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
    return [*opening, *fmt.call_lines(name, "TypedDict", [first, body])]


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


def type_declarations(
    types: Sequence[ir.NamedType], arguments: frozenset[str] = frozenset()
) -> tuple[str, ...]:
    """Each of `types` as one block of lines, in order; those named in `arguments` spelled
    for a caller (`argument_type_expr`), the others as results (`type_expr`)."""
    forward = forward_names(types)
    type_names = frozenset(t.name for t in types)
    declared: set[str] = set()
    strings: set[str] = set()  # aliases whose value is a string at runtime
    blocks = []
    for named_type in types:
        spell = argument_type_expr if named_type.name in arguments else type_expr
        if isinstance(named_type, ir.ObjectType):
            lines = _object_lines(named_type, declared, forward, strings, type_names, spell)
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
    return render(
        "python/sdk.py.jinja",
        declarations=[block for chunk in chunks for block in chunk.declarations],
        members=protocol.protocol_members(methods, overloads),
        tool_names=protocol.tool_name_alias([chunk.key for chunk in chunks]),
    )
