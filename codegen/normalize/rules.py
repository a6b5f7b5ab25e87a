"""The node rules: each a pure function from one schema node to a new node (the input is never
mutated), and `RULES`, the table that says when each fires (order, scope, trigger keys and
shapes)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..load.formats import BFCL_TYPES, JSON_TYPES
from .keywords import BFCL_ANY, DOC_KEYWORDS, MODERN_DRAFTS, TYPE_KEYWORDS, TYPED_KEYWORDS, UNSHARED

Schema = Any


def boolean_schema(node: Schema) -> Schema:
    """`true` accepts anything (`{}`), `false` accepts nothing (`{"not": {}}`)."""
    if node is True:
        return {}
    if node is False:
        return {"not": {}}
    return node


def bfcl_dialect(node: dict[str, Any]) -> dict[str, Any]:
    """BFCL/Java type names to JSON Schema, and the non-standard `optional` flag of a
    property to the parent's `required` list. A node that has neither (a property spelled
    in JSON Schema already) is returned as is."""
    kind = node.get("type")
    erased = isinstance(kind, str) and kind in BFCL_ANY
    spelled = BFCL_TYPES.get(kind) if isinstance(kind, str) else None
    properties = node.get("properties")
    flagged = isinstance(properties, dict) and any(
        isinstance(v, dict) and "optional" in v for v in properties.values()
    )
    if not erased and spelled in (None, kind) and not flagged:
        return node
    result = dict(node)
    if erased:
        del result["type"]
    elif spelled is not None:
        result["type"] = spelled
    if flagged:
        assert isinstance(properties, dict)
        optional = {
            k for k, v in properties.items() if isinstance(v, dict) and v.get("optional") is True
        }
        required = result.get("required")
        if optional and isinstance(required, list):
            result["required"] = [k for k in required if k not in optional]
        result["properties"] = {
            k: (
                {key: val for key, val in v.items() if key != "optional"}
                if isinstance(v, dict) and "optional" in v
                else v
            )
            for k, v in properties.items()
        }
    return result


def type_array_to_union(node: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`{"type": ["string", "null"], ...}` to an `anyOf` with one arm per type, each arm
    keeping the keywords that apply to its type. Returns the node and the new arms."""
    kinds = node.get("type")
    if not isinstance(kinds, list):
        return node, []
    for kind in kinds:
        if not isinstance(kind, str):
            return node, []  # malformed; validation reports it
    unique = list(dict.fromkeys(kinds))
    if len(unique) == 1:
        result = dict(node)
        result["type"] = unique[0]
        return result, []
    if not unique:
        result = {k: v for k, v in node.items() if k != "type"}
        return {**result, "not": {}}, []
    shared = {k: v for k, v in node.items() if k not in UNSHARED}
    if TYPED_KEYWORDS.isdisjoint(node) and "const" not in node and "enum" not in node:
        arms = [{"type": kind} for kind in unique]  # the common case: a nullable
        return _with_union(shared, arms), arms
    typed_here = [(k, v) for k, v in node.items() if k in TYPED_KEYWORDS]
    arms = []
    for kind in unique:
        arm: dict[str, Any] = {"type": kind}
        if typed_here:
            own = TYPE_KEYWORDS.get(kind, ())
            arm.update((k, v) for k, v in typed_here if k in own)
        if "const" in node:
            if not _matches_type(node["const"], kind):
                continue
            arm["const"] = node["const"]
        if isinstance(node.get("enum"), list):
            values = [v for v in node["enum"] if _matches_type(v, kind)]
            if not values:
                continue
            arm["enum"] = values
        arms.append(arm)
    return _with_union(shared, arms), arms


def nullable(node: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """OpenAPI `nullable: true` to `anyOf: [<the node>, {"type": "null"}]`."""
    if "nullable" not in node or not isinstance(node["nullable"], bool):
        return node, []
    rest = {k: v for k, v in node.items() if k != "nullable"}
    if node["nullable"] is False:
        return rest, []
    docs = {k: v for k, v in rest.items() if k in DOC_KEYWORDS}
    body = {k: v for k, v in rest.items() if k not in DOC_KEYWORDS}
    if isinstance(body.get("enum"), list):
        values = body["enum"] if None in body["enum"] else [*body["enum"], None]
        rest = {k: v for k, v in body.items() if k not in ("type", "enum")}
        return {**docs, **rest, "enum": values}, []
    null_arm: dict[str, Any] = {"type": "null"}
    return _with_union(docs, [body, null_arm]), [body, null_arm]


def _with_union(base: dict[str, Any], arms: list[dict[str, Any]]) -> dict[str, Any]:
    if "anyOf" in base:
        rest = {k: v for k, v in base.items() if k != "anyOf"}
        return {**rest, "allOf": [{"anyOf": base["anyOf"]}, {"anyOf": arms}]}
    return {**base, "anyOf": arms}


def single_enum_to_const(node: dict[str, Any]) -> dict[str, Any]:
    """A one-value `enum` is a `const`; `const` wins when both are present."""
    values = node.get("enum")
    if isinstance(values, list) and len(values) == 1 and "const" not in node:
        result = {k: v for k, v in node.items() if k != "enum"}
        result["const"] = values[0]
        return result
    return node


def legacy_tuple_items(node: dict[str, Any]) -> dict[str, Any]:
    """Draft 2019-09 and earlier tuples (`items: [...]`, `additionalItems`) to `prefixItems`
    and `items`; `additionalItems` is meaningless without array `items` and is dropped."""
    if isinstance(node.get("items"), list):
        result = {k: v for k, v in node.items() if k not in ("items", "additionalItems")}
        result["prefixItems"] = node["items"]
        if "additionalItems" in node:
            result["items"] = node["additionalItems"]
        return result
    if "additionalItems" in node:
        return {k: v for k, v in node.items() if k != "additionalItems"}
    return node


def exclusive_bounds(node: dict[str, Any]) -> dict[str, Any]:
    """Draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum` to the numeric form."""
    if "exclusiveMinimum" not in node and "exclusiveMaximum" not in node:
        return node
    result = node
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = result.get(exclusive)
        if isinstance(flag, bool):
            result = {k: v for k, v in result.items() if k != exclusive}
            if flag and bound in result:
                result[exclusive] = result.pop(bound)
    return result


def definitions_to_defs(node: dict[str, Any]) -> dict[str, Any]:
    """`definitions` (draft-07 and earlier) is `$defs`; a name in both keeps `$defs`'s."""
    if not isinstance(node.get("definitions"), dict):
        return node
    defs: dict[str, Any] = node["$defs"] if isinstance(node.get("$defs"), dict) else {}
    if any(k in defs for k in node["definitions"]):
        return node
    result = {k: v for k, v in node.items() if k != "definitions"}
    result["$defs"] = {**node["definitions"], **defs}
    return result


def split_dependencies(node: dict[str, Any]) -> dict[str, Any]:
    """`dependencies` (draft-07 and earlier; a string in draft-03) is the later
    `dependentRequired` for its key lists and `dependentSchemas` for its schemas, joined
    with any the node has already (a key in both holds both)."""
    dependencies = node.get("dependencies")
    if not isinstance(dependencies, dict):
        return node
    keys: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for name, value in dependencies.items():
        if isinstance(value, str):
            keys[name] = [value]
        elif isinstance(value, list):
            keys[name] = value
        else:
            schemas[name] = value
    result = {k: v for k, v in node.items() if k != "dependencies"}
    if keys:
        known = result.get("dependentRequired")
        joined = dict(known) if isinstance(known, dict) else {}
        for name, value in keys.items():
            before = joined.get(name)
            joined[name] = (
                list(dict.fromkeys([*before, *value])) if isinstance(before, list) else value
            )
        result["dependentRequired"] = joined
    if schemas:
        known = result.get("dependentSchemas")
        joined = dict(known) if isinstance(known, dict) else {}
        for name, value in schemas.items():
            joined[name] = {"allOf": [joined[name], value]} if name in joined else value
        result["dependentSchemas"] = joined
    return result


def draft03_required(node: dict[str, Any], draft: str) -> dict[str, Any]:
    """Draft-03 marks a property required with a boolean in the property itself
    (`"properties": {"a": {"required": true}}`): those keys join the parent's `required`
    list, and every boolean `required` is removed (the parent's rule has already read the
    node's own, so it ends its life here). Other drafts are left alone."""
    if draft != "draft-03":
        return node
    properties = node.get("properties")
    flagged = isinstance(properties, dict) and any(
        isinstance(v, dict) and isinstance(v.get("required"), bool) for v in properties.values()
    )
    if not flagged and not isinstance(node.get("required"), bool):
        return node
    result = {k: v for k, v in node.items() if not (k == "required" and isinstance(v, bool))}
    if flagged:
        assert isinstance(properties, dict)
        required = node.get("required")
        keys = list(required) if isinstance(required, list) else []
        keys += [
            k for k, v in properties.items() if isinstance(v, dict) and v.get("required") is True
        ]
        if keys:
            result["required"] = list(dict.fromkeys(keys))
        result["properties"] = {
            k: (
                {key: val for key, val in v.items() if key != "required"}
                if isinstance(v, dict) and isinstance(v.get("required"), bool)
                else v
            )
            for k, v in properties.items()
        }
    return result


_DRAFT03_KEYWORDS = frozenset({"extends", "divisibleBy", "disallow", "type"})


def draft03_keywords(node: dict[str, Any]) -> dict[str, Any]:
    """Draft-03 keywords later drafts renamed or dropped, in their later spelling: `extends`
    is `allOf`, `divisibleBy` is `multipleOf`, the type `any` is no `type`, a schema in a
    `type` list is an `anyOf` arm, and the type names in `disallow` leave `type` (schemas in
    `disallow` stay, reported as an unknown keyword: no target spells "not this shape")."""
    if _DRAFT03_KEYWORDS.isdisjoint(node):
        return node
    result = dict(node)
    extends = result.pop("extends", None)
    if isinstance(extends, dict | list):
        parents = extends if isinstance(extends, list) else [extends]
        existing = result.get("allOf")
        result["allOf"] = [*(existing if isinstance(existing, list) else []), *parents]
    elif extends is not None:
        result["extends"] = extends  # malformed; validation reports it
    if "divisibleBy" in result and "multipleOf" not in result:
        result["multipleOf"] = result.pop("divisibleBy")
    kinds = result.get("type")
    listed = kinds if isinstance(kinds, list) else [kinds] if isinstance(kinds, str) else None
    if listed is not None:
        if "any" in listed:
            del result["type"]
            listed = None
        elif any(isinstance(kind, dict) for kind in listed):
            del result["type"]
            arms = [kind if isinstance(kind, dict) else {"type": kind} for kind in listed]
            result["anyOf"] = arms
            listed = None
    disallow = result.get("disallow")
    if isinstance(disallow, str | list):
        entries = disallow if isinstance(disallow, list) else [disallow]
        banned = {e for e in entries if isinstance(e, str)}
        shapes = [e for e in entries if not isinstance(e, str)]
        if shapes:
            result["disallow"] = shapes
        else:
            del result["disallow"]
        if banned:
            allowed = [
                kind
                for kind in (listed if listed is not None else JSON_TYPES)
                if isinstance(kind, str)
                and kind not in banned
                and "any" not in banned
                and not (kind == "integer" and "number" in banned)
            ]
            if listed is None and "integer" in allowed and "number" in allowed:
                allowed.remove("integer")  # `number` holds every integer already
            result["type"] = allowed
    return result


def ref_siblings(node: dict[str, Any], draft: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`$ref` beside type-changing keywords: `allOf` of both in 2019-09 and later; in older
    drafts the siblings are ignored by the specification, so they are dropped."""
    if "$ref" not in node:
        return node, []
    siblings = {
        k: v
        for k, v in node.items()
        if k not in DOC_KEYWORDS and k not in ("$ref", "$defs", "definitions")
    }
    if not siblings:
        return node, []
    kept = {k: v for k, v in node.items() if k not in siblings}
    if draft not in MODERN_DRAFTS:
        return kept, []
    ref_arm = {"$ref": kept.pop("$ref")}
    return {**kept, "allOf": [ref_arm, siblings]}, [ref_arm, siblings]


def _matches_type(value: Any, kind: str) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    return isinstance(value, dict)


@dataclass(frozen=True, slots=True)
class Rule:
    """One node rule: its function, where it applies, and what may make it fire.

    `function` takes the node (and the draft, with `takes_draft`) and returns the new node
    (and the union arms it created, with `makes_arms`). `scope` is "shared" (every dialect
    and draft, in `RULES` order, after the dialect's own), "bfcl", "draft-03" or "boolean"
    (a `true`/`false` schema). A shared rule fires only on a node holding one of its
    `keys`, or one of its `shapes` (a key whose value passes the test): every other node is
    canonical already and skips every shared rule."""

    name: str
    function: Callable[..., Any]
    scope: str = "shared"
    keys: frozenset[str] = frozenset()
    shapes: tuple[tuple[str, int], ...] = ()
    """(key, `LIST` or `ONE_VALUE`): the key's value is a list, or a list of one value."""
    takes_draft: bool = False
    makes_arms: bool = False

    def apply(self, node: Any, draft: str) -> tuple[Any, list[dict[str, Any]]]:
        """The new node and the arms created."""
        result = self.function(node, draft) if self.takes_draft else self.function(node)
        return result if self.makes_arms else (result, [])


LIST, ONE_VALUE = 0, 1
"""The shapes a shared rule may be triggered by (data, so the check per node calls
nothing)."""


RULES: tuple[Rule, ...] = (
    Rule("boolean_schema", boolean_schema, scope="boolean"),
    Rule("bfcl_dialect", bfcl_dialect, scope="bfcl"),
    Rule("draft03_required", draft03_required, scope="draft-03", takes_draft=True),
    Rule("draft03_keywords", draft03_keywords, scope="draft-03"),
    Rule("definitions_to_defs", definitions_to_defs, keys=frozenset({"definitions"})),
    Rule("split_dependencies", split_dependencies, keys=frozenset({"dependencies"})),
    Rule(
        "legacy_tuple_items",
        legacy_tuple_items,
        keys=frozenset({"additionalItems"}),
        shapes=(("items", LIST),),
    ),
    Rule(
        "exclusive_bounds",
        exclusive_bounds,
        keys=frozenset({"exclusiveMinimum", "exclusiveMaximum"}),
    ),
    Rule(
        "ref_siblings",
        ref_siblings,
        keys=frozenset({"$ref"}),
        takes_draft=True,
        makes_arms=True,
    ),
    Rule("nullable", nullable, keys=frozenset({"nullable"}), makes_arms=True),
    Rule("type_array_to_union", type_array_to_union, shapes=(("type", LIST),), makes_arms=True),
    Rule("single_enum_to_const", single_enum_to_const, shapes=(("enum", ONE_VALUE),)),
)
"""Every node rule, each once: the order they run in, what triggers them, and (in the
tests) the fixture each must have under `tests/fixtures/normalize/<name>.json`."""

SHARED = tuple(rule for rule in RULES if rule.scope == "shared")
TRIGGERS = frozenset().union(*(rule.keys for rule in SHARED))
"""Keys whose presence may make a shared rule fire."""
SHAPES = tuple(shape for rule in SHARED for shape in rule.shapes)
"""(key, shape) pairs: a value of that shape may make a shared rule fire."""
