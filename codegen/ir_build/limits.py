"""Size limits of the build: how large and deep a type may grow before it degrades.

Every limit keeps the generated code inside what Python's parser, `pyright` and `black` can
read in reasonable time. The builder asks these functions and degrades a node, with a
warning, when one says no; nothing here knows about schemas or diagnostics.
"""

from __future__ import annotations

from .. import ir
from ..ir import ARMS_LIMIT as ARMS_LIMIT
from ..ir import EXPRESSION_LIMIT as EXPRESSION_LIMIT

INLINE_LIMIT = 64
"""Deepest chain of inline containers (lists, tuples, maps) one annotation may hold; deeper
nodes degrade, which keeps every annotation far inside Python's parser limits."""
UNION_LIMIT = 4096
"""Most arms one `anyOf` / `oneOf` may list; larger ones degrade before any arm is built."""
LITERAL_LIMIT = 4096
"""Most values one literal type may list; a larger enum is typed by its values' types
(`str`, `int`, ...), with a warning. Beyond a few thousand members a `Literal[...]` is
useless in a prompt and `black`'s time on it grows faster than linearly."""
DEPTH_LIMIT = 512
"""Deepest chain of schema nodes one build walks (through fields, union arms and `$ref`s);
deeper nodes degrade. A document already nests at most `json_text.MAX_NESTING` levels, so
this only stops long acyclic `$ref` chains, which would otherwise exhaust the stack."""
MERGE_LIMIT = 10_000
"""Most schema merges (`allOf` nodes, union arms merged with the keywords beside their union)
the build of one schema document may make, however large the document; a smaller one may
make `MERGES_PER_NODE` per schema node (`merge_budget`). Past its budget, a node that needs
one more merge degrades, with a warning. Each distinct merge is made once, so real tools
make far fewer than one per node; only keywords that pile up differently along every path
through a fan of `$ref`s (a type per path, exponentially many) come near it."""
MERGES_PER_NODE = 16
"""Merges per schema node a document's build may make: the build walks what merges make, so
this keeps its work, and its output, linear in the document's size (a merge costs about as
much as building one or two nodes)."""
MERGE_ENTRIES = 32
"""Entries of a merged node (its keywords and the members of its maps and lists) that count
as one merge: walking a wide merged node costs as much as walking several narrow ones."""


def merge_budget(nodes: int) -> int:
    """How many merges the build of a document of `nodes` schema nodes may make."""
    return min(MERGE_LIMIT, MERGES_PER_NODE * nodes)


def merge_weight(schema: dict[str, object]) -> int:
    """How many merges one that made `schema` counts as against the budget."""
    entries = len(schema) + sum(len(v) for v in schema.values() if isinstance(v, dict | list))
    return 1 + entries // MERGE_ENTRIES


def inline_depth(node: ir.TypeNode) -> int:
    """How many inline containers (arrays, tuples, maps) nest in `node`'s spelling; bounded
    by `INLINE_LIMIT`, so the recursion is too."""
    if isinstance(node, ir.ArrayType):
        return 1 + inline_depth(node.items)
    if isinstance(node, ir.MapType):
        return 1 + inline_depth(node.values)
    if isinstance(node, ir.TupleType):
        rest = (node.rest,) if node.rest is not None else ()
        return 1 + max((inline_depth(item) for item in (*node.items, *rest)), default=0)
    if isinstance(node, ir.UnionType):
        return max(inline_depth(arm) for arm in node.arms)
    return 0


def spelled(node: ir.TypeNode) -> tuple[int, int, int]:
    """An upper bound on the Python spelling of `node`: (depth of its arms, arms, widest
    union inside). The whole expression is `depth + arms - 1` levels deep, because a chain
    of `|` nests one level per arm. Recursion follows inline containers only (bounded by
    `INLINE_LIMIT`); union arms are a loop."""
    if isinstance(node, ir.LiteralType):
        return 3, 4, 4  # `Literal[...]`, and `int`, `float`, `None` arms at most
    if isinstance(node, (ir.ArrayType, ir.MapType)):
        depth, arms, widest = spelled(node.items if isinstance(node, ir.ArrayType) else node.values)
        return 2 + depth + arms - 1, 1, max(widest, arms)
    if isinstance(node, ir.TupleType):
        # Exact tuples are one `tuple[...]`; optional items make a union of lengths (or one
        # list of every item type), counted here as one arm per item.
        arms = 1 if len(node.items) == node.min_items else len(node.items) + 1
        if arms > ARMS_LIMIT:
            return 1, arms, arms
        parts = [spelled(item) for item in node.items]
        if node.rest is not None:
            depth, rest_arms, widest = spelled(node.rest)
            parts.append((3 + depth, rest_arms, widest))  # `*tuple[rest, ...]`
        depth = 2 + max((d + a - 1 for d, a, _ in parts), default=1)
        return depth, arms, max([arms, *(max(w, a) for _, a, w in parts)])
    if isinstance(node, ir.UnionType):
        if len(node.arms) > ARMS_LIMIT:
            return 1, len(node.arms), len(node.arms)
        parts = [spelled(arm) for arm in node.arms]
        arms = sum(a for _, a, _ in parts)
        return max(d for d, _, _ in parts), arms, max(arms, *(w for _, _, w in parts))
    return 1, 1, 1


_FLAT = (ir.Primitive, ir.RefType, ir.AnyType, ir.NeverType, ir.UnknownType, ir.LiteralType)
"""Nodes whose spelling nests no other type: `spelled` gives at most (3, 4, 4) for them."""
_SHALLOW_ARMS = 8
"""Most flat arms a union may have for `unspellable` to pass it without measuring: at most
32 arms and 34 levels, far inside `ARMS_LIMIT` and `EXPRESSION_LIMIT`."""


def _shallow(node: ir.TypeNode) -> bool:
    """Whether `node` is an array or map of a flat node, or a short union of flat arms
    (`list[str]`, `str | None`: most of what the build asks about), which no limit can
    refuse."""
    if isinstance(node, ir.ArrayType):
        return isinstance(node.items, _FLAT)
    if isinstance(node, ir.MapType):
        return isinstance(node.values, _FLAT)
    if isinstance(node, ir.UnionType) and len(node.arms) <= _SHALLOW_ARMS:
        return all(isinstance(arm, _FLAT) for arm in node.arms)
    return False


def unspellable(node: ir.TypeNode) -> str | None:
    """Why `node`'s Python spelling would be refused (a union wider than `ARMS_LIMIT`, an
    expression deeper than `EXPRESSION_LIMIT`), or None when it is fine."""
    if _shallow(node):
        return None
    depth, arms, widest = spelled(node)
    if widest > ARMS_LIMIT:
        return f"a union of {widest} arms is wider than the limit of {ARMS_LIMIT}"
    if depth + arms - 1 > EXPRESSION_LIMIT:
        return f"a type expression nested deeper than {EXPRESSION_LIMIT} levels"
    return None


def oversized_literal(node: ir.TypeNode) -> ir.LiteralType | None:
    """The literal arm of `node` that lists more than `LITERAL_LIMIT` values, if any."""
    arms = node.arms if isinstance(node, ir.UnionType) else (node,)
    literal = next((arm for arm in arms if isinstance(arm, ir.LiteralType)), None)
    return literal if literal is not None and len(literal.values) > LITERAL_LIMIT else None
