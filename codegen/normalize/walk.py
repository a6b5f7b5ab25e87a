"""The tree walk: `normalize_schema` applies the rules to every node of a schema without
recursion and remembers, for every node it creates, the pointer of the node it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .keywords import LIST_KEYWORDS, MAP_KEYWORDS, SINGLE_KEYWORDS
from .refs import decoded, rewrite_definitions_ref, target_under_data
from .rules import LIST, RULES, SHAPES, SHARED, TRIGGERS, Schema, boolean_schema


@dataclass(frozen=True, slots=True)
class Normalized:
    """A normalized schema and, for each of its dict nodes, the pointer it came from."""

    schema: dict[str, Any]
    origins: dict[int, str]

    def origin(self, node: Any, fallback: str = "") -> str:
        return self.origins.get(id(node), fallback)


def _canonical(node: dict[str, Any]) -> bool:
    if not TRIGGERS.isdisjoint(node):
        return False
    for key, shape in SHAPES:
        value = node.get(key)
        if isinstance(value, list) and (shape == LIST or len(value) == 1):
            return False
    return True


def _final(node: dict[str, Any]) -> bool:
    """A canonical node none of whose members holds a subschema or a reference: no rule
    and no part of the walk would change it."""
    return _CHILD_KEYS.isdisjoint(node) and _canonical(node)


def normalize_node(
    node: Schema, draft: str, dialect: str = "json-schema"
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """All node rules in order; returns the new node and the arms the rules created. A rule
    that changes a node returns a new dict of its own; an unchanged node is returned as is."""
    if type(node) is not dict:  # a dict is the common case: the check costs it nothing
        node = boolean_schema(node)
        if not isinstance(node, dict):
            return node, []
    if dialect == "bfcl" or draft == "draft-03":
        for rule in _BY_SCOPE["bfcl" if dialect == "bfcl" else "draft-03"]:
            node, _ = rule.apply(node, draft)
    if _canonical(node):  # whatever the dialect made of it, no shared rule would fire
        return node, []
    return _rewritten(node, draft)


_BY_SCOPE = {
    scope: tuple(rule for rule in RULES if rule.scope == scope) for scope in ("bfcl", "draft-03")
}


def _rewritten(node: dict[str, Any], draft: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The rules every dialect and draft share, in order, on a dict node."""
    created: list[dict[str, Any]] = []
    for rule in SHARED:  # called directly: this runs on every node that is not canonical
        result = rule.function(node, draft) if rule.takes_draft else rule.function(node)
        if rule.makes_arms:
            node, arms = result
            created += arms
        else:
            node = result
    return node, created


_MAP, _LIST, _SINGLE, _REF = 1, 2, 4, 8
_CHILDREN = {
    key: (_MAP if key in MAP_KEYWORDS else 0)
    | (_LIST if key in LIST_KEYWORDS else 0)
    | (_SINGLE if key in SINGLE_KEYWORDS else 0)
    for key in MAP_KEYWORDS | LIST_KEYWORDS | SINGLE_KEYWORDS
}
_CHILDREN["$ref"] = _REF
"""What a keyword's value may hold, as bits: a map of subschemas, a list of them, one
subschema (`items` is a list or one), or a reference."""
_CHILD_KEYS = frozenset(_CHILDREN)


_RENAMED = {"$defs": "definitions", "dependentSchemas": "dependencies"}
"""Map keywords a rule may have filled from an older keyword's entries."""


def _extended(node: Any) -> dict[int, str]:
    """Where the `allOf` arms made from a draft-03 `extends` came from, by node identity."""
    extends = node.get("extends") if isinstance(node, dict) else None
    if isinstance(extends, dict):
        return {id(extends): "/extends"}
    if isinstance(extends, list):
        return {id(parent): f"/extends/{index}" for index, parent in enumerate(extends)}
    return {}


def _child(pointer: str, token: str | int) -> str:
    text = str(token)
    if "/" in text or "~" in text:
        text = text.replace("~", "~0").replace("/", "~1")
    return f"{pointer}/{text}"


def normalize_schema(
    schema: Schema, draft: str = "2020-12", dialect: str = "json-schema", pointer: str = ""
) -> Normalized:
    """Apply every node rule to every schema node of `schema`; never mutates it. Every dict
    of the result is new; the walk uses an explicit stack, so depth costs no recursion."""
    origins: dict[int, str] = {}
    holder: list[Any] = [None]
    # (node, its pointer, where to store the result: container and key)
    stack: list[tuple[Any, str, Any, Any]] = [(schema, pointer, holder, 0)]
    refs: list[tuple[str, str]] = []  # (local reference as written, as rewritten)
    plain = dialect != "bfcl" and draft != "draft-03"  # `_canonical` says all for a node
    while True:
        if not stack:
            # Targets of references kept under keys no keyword defines
            # (`#/definitions/group/inner`) are schemas the walk did not reach.
            while refs and not stack:
                written, rewritten = refs.pop()
                found = target_under_data(holder[0], rewritten)
                if found is not None and id(found[0][found[1]]) not in origins:
                    where = pointer + decoded(written[1:])
                    stack.append((found[0][found[1]], where, *found))
            if not stack:
                break
        node, where, container, slot = stack.pop()
        if plain and type(node) is dict:
            # `normalize_node` for this dialect and draft, asking `_canonical` once
            new, created = (node, []) if _canonical(node) else _rewritten(node, draft)
        else:
            new, created = normalize_node(node, draft, dialect)
            if not isinstance(new, dict):
                container[slot] = new
                continue
        if new is node:  # a node a rule changed is a new dict already, no one else's
            new = dict(new)
        container[slot] = new
        origins[id(new)] = where
        if _CHILD_KEYS.isdisjoint(new):
            continue  # a leaf: no member holds a subschema or a reference
        created_ids = {id(arm) for arm in created} if created else ()
        for key, value in new.items():
            kind = _CHILDREN.get(key)  # one lookup: most keys hold no subschema
            if kind is None:
                continue
            if kind & _MAP and isinstance(value, dict):
                copy = dict(value)
                new[key] = copy
                base = _child(where, key)
                # Entries moved from `definitions` or `dependencies` keep the pointer they
                # came from.
                renamed = _RENAMED.get(key)
                legacy = node.get(renamed) if renamed is not None else None
                for name, child in value.items():
                    moved = isinstance(legacy, dict) and legacy.get(name) is child
                    home = _child(where, renamed) if moved and renamed else base
                    stack.append((child, _child(home, name), copy, name))
            elif kind & _LIST and isinstance(value, list):
                items = list(value)
                new[key] = items
                moved = key == "prefixItems" and node.get("items") is value  # a legacy tuple
                base = _child(where, "items" if moved else key)
                parents = _extended(node) if key == "allOf" else {}
                for index, child in enumerate(value):
                    if id(child) in created_ids:
                        if plain and _final(child):
                            # A rule's own arm (a nullable's `{"type": "null"}`): a new
                            # dict already, which the walk would only copy.
                            origins[id(child)] = where
                            continue
                        origin = where
                    else:
                        origin = f"{base}/{index}"
                    if id(child) in parents:
                        origin = where + parents[id(child)]
                    stack.append((child, origin, items, index))
            elif kind & _SINGLE and isinstance(value, (dict, bool)):
                stack.append((value, _child(where, key), new, key))
            elif kind & _REF and isinstance(value, str) and value.startswith("#/"):
                if "definitions" in value:
                    new[key] = rewrite_definitions_ref(value, schema)
                refs.append((value, new[key]))
    root = holder[0]
    return Normalized(root if isinstance(root, dict) else {}, origins)
