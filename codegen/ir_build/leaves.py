"""The builder's shortcut for plain primitive nodes, the most common nodes of real catalogs.

A string, number or boolean field with nothing beside its `type` but documentation, or a
short `anyOf`/`oneOf` of such nodes (what a nullable primitive normalizes to), has a type
that does not depend on where it sits. `plain_leaf_type` gives it without the walk's
bookkeeping (cycle tracking, names, memo tables); the result is exactly the walk's, which a
property test checks.
"""

from __future__ import annotations

from typing import Any

from .. import ir
from ..normalize import DOC_KEYWORDS, TYPE_KEYWORDS
from .unions import PRIMITIVES, union

LEAF_KEYWORDS = frozenset(
    {"type"} | DOC_KEYWORDS | TYPE_KEYWORDS["string"] | TYPE_KEYWORDS["number"]
) - {"contentSchema"}
"""Keywords a primitive node may carry without changing its type."""

_ANY_OF_KEYWORDS = frozenset({"anyOf"}) | DOC_KEYWORDS
_ONE_OF_KEYWORDS = frozenset({"oneOf"}) | DOC_KEYWORDS
LEAF_UNION_ARMS = 8
"""Most arms a union of plain leaves may have to take the shortcut."""

LeafUnions = dict[tuple[str, ...], ir.TypeNode]
"""Unions of primitives by their kinds in order, so one run shares one node per distinct
union (IR nodes are immutable). Owned by one build, never by the module."""


def plain_leaf_type(schema: Any, unions: LeafUnions) -> ir.TypeNode | None:
    """The type of a plain leaf, or of a short `anyOf`/`oneOf` of plain leaves with nothing
    else beside it but documentation; None for any other node. Asked for every field and
    every node the walk meets, so the common answers come first and each arm is read once."""
    if type(schema) is not dict:
        return None
    kind = schema.get("type")
    if kind is not None:
        if type(kind) is not str or not LEAF_KEYWORDS.issuperset(schema):
            return None
        return PRIMITIVES.get(kind)
    arms = schema.get("anyOf")
    allowed = _ANY_OF_KEYWORDS
    if arms is None:
        arms = schema.get("oneOf")
        allowed = _ONE_OF_KEYWORDS
        if arms is None:
            return None
    if type(arms) is not list or not 0 < len(arms) <= LEAF_UNION_ARMS:
        return None
    if not allowed.issuperset(schema):
        return None
    kinds = []
    for arm in arms:  # each one primitive and nothing else a type depends on
        if type(arm) is not dict:
            return None
        kind = arm.get("type")
        if type(kind) is not str or kind not in PRIMITIVES or not LEAF_KEYWORDS.issuperset(arm):
            return None
        kinds.append(kind)
    key = tuple(kinds)
    found = unions.get(key)
    if found is None:
        found = unions[key] = union([PRIMITIVES[kind] for kind in kinds])
    return found
