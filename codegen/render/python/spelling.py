"""How IR types are spelled in Python: `type_expr` for a value a tool returns (its lists,
tuples and dicts as they are), `argument_type_expr` for one a caller passes (containers read
covariantly). Shared by the SDK module (`sdk`) and the model-facing section."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ... import ir
from . import black_layout as fmt
from .strings import py_literal

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


PRIMITIVE_ATOMS = {kind: fmt.Atom(text) for kind, text in _PRIMITIVES.items()}
"""One shared atom per primitive (atoms are immutable); most annotations are one."""
ANY_ATOM = fmt.Atom("Any")
_STR_ATOM = PRIMITIVE_ATOMS["string"]
_NEVER_ATOM = fmt.Atom("Never")
_NONE_ATOM = PRIMITIVE_ATOMS["null"]


def type_expr(node: ir.TypeNode) -> fmt.Expr:
    """The Python annotation of an IR type node; the most frequent nodes are tested
    first."""
    if isinstance(node, ir.Primitive):
        return PRIMITIVE_ATOMS[node.kind]
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
    return ANY_ATOM  # `AnyType`, `UnknownType`


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
            return PRIMITIVE_ATOMS[node.kind]
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
