"""Union algebra on IR nodes: how arms combine into one type.

Used wherever the build joins types (union arms, nullable primitives, pattern and extra
values, widened literals). Pure functions of frozen IR nodes; the shared primitive nodes live
here so every union compares them by value and reuses one object per kind.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .. import ir

PRIMITIVES: dict[str, ir.TypeNode] = {
    kind: ir.Primitive(kind) for kind in ("string", "number", "integer", "boolean", "null")
}
"""One shared node per primitive (IR nodes are immutable): a catalog has many."""
NUMBER = PRIMITIVES["number"]
INTEGER = PRIMITIVES["integer"]

_LEAVES = (ir.Primitive, ir.RefType, ir.UnknownType)
"""Nodes that hold only strings, so they are their own key when arms are deduplicated."""


def union(arms: Sequence[ir.TypeNode]) -> ir.TypeNode:
    """A flattened union: nested unions spliced in, duplicates and never-arms dropped,
    literal arms folded into one `LiteralType` at the first literal's place."""
    flat: list[ir.TypeNode] = []
    stack = list(reversed(arms))
    while stack:
        arm = stack.pop()
        if isinstance(arm, ir.UnionType):
            stack.extend(reversed(arm.arms))
        elif isinstance(arm, ir.AnyType):
            return ir.AnyType()
        elif not isinstance(arm, ir.NeverType):
            flat.append(arm)
    literals = [v for arm in flat if isinstance(arm, ir.LiteralType) for v in arm.values]
    result: list[ir.TypeNode] = []
    seen: set[object] = set()
    folded = False
    for arm in flat:
        if isinstance(arm, ir.LiteralType):
            if not folded:
                folded = True
                result.append(ir.LiteralType(tuple(dedupe(literals))))
            continue
        # Leaves hold only strings, so they are their own key; a container may hold
        # literals, where `1 == True == 1.0` would merge different types: its repr is exact.
        key = arm if isinstance(arm, _LEAVES) else repr(arm)
        if key not in seen:
            seen.add(key)
            result.append(arm)
    if NUMBER in seen and INTEGER in seen:
        result.remove(INTEGER)  # every integer is a number: `int | float` says no more
    if not result:
        return ir.NeverType()
    return result[0] if len(result) == 1 else ir.UnionType(tuple(result))


def widened(values: Sequence[ir.Scalar]) -> ir.TypeNode:
    """The primitive types of literal values, in first-seen order (`integer` folds into
    `number` when both occur)."""
    kinds: dict[str, None] = {}
    for value in values:
        if value is None:
            kinds["null"] = None
        elif isinstance(value, bool):
            kinds["boolean"] = None
        elif isinstance(value, int):
            kinds["integer"] = None
        elif isinstance(value, float):
            kinds["number"] = None
        else:
            kinds["string"] = None
    if "number" in kinds:
        kinds.pop("integer", None)
    return union([PRIMITIVES[kind] for kind in kinds])


def dedupe(values: list[Any]) -> list[Any]:
    """Literal values without repeats, first occurrence kept; `1`, `1.0` and `True` are
    three values (the key is the type and the JSON text)."""
    seen: set[tuple[str, Any]] = set()
    result = []
    for value in values:
        key = (type(value).__name__, json.dumps(value))
        if key not in seen:
            seen.add(key)
            result.append(value)
    return result
