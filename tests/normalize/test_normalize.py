"""Normalization rules: one fixture file per rule, the tree walk, and purity."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import normalize
from codegen.normalize import rules as normalize_rules
from codegen.normalize import walk as normalize_walk
from conftest import FIXTURES

RULE_FIXTURES = sorted((FIXTURES / "normalize").glob("*.json"))


@pytest.mark.parametrize("path", RULE_FIXTURES, ids=[p.stem for p in RULE_FIXTURES])
def test_rule_fixture(path: Any) -> None:
    rule = getattr(normalize_rules, path.stem)
    for case in json.loads(path.read_text())["cases"]:
        before = copy.deepcopy(case["input"])
        result = rule(case["input"], case["draft"]) if "draft" in case else rule(case["input"])
        if isinstance(result, tuple):
            result = result[0]
        assert result == case["output"], case
        assert case["input"] == before, "rules must not mutate their input"


def test_every_rule_has_a_fixture() -> None:
    """The registry is the one list of rules: each has its fixture, and nothing else does."""
    assert {p.stem for p in RULE_FIXTURES} == {rule.name for rule in normalize.RULES}
    assert len({rule.name for rule in normalize.RULES}) == len(normalize.RULES)


def test_the_triggers_come_from_the_rules() -> None:
    """A node that holds none of a shared rule's keys or shapes skips the shared rules;
    each key or shape alone makes the node non-canonical."""
    assert normalize_walk._canonical({"type": "string", "enum": ["a", "b"], "items": {}})
    for rule in normalize.RULES:
        for key in rule.keys:
            assert not normalize_walk._canonical({key: 1}), (rule.name, key)
    assert not normalize_walk._canonical({"type": ["string", "null"]})
    assert not normalize_walk._canonical({"items": [{}]})
    assert not normalize_walk._canonical({"enum": ["only"]})


def test_tree_walk_applies_rules_at_every_depth() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"type": "array", "items": {"enum": ["x"]}},
            "c": {"anyOf": [True, False]},
        },
        "additionalProperties": {"type": "integer", "nullable": True},
    }
    result = normalize.normalize_schema(schema).schema
    assert result["properties"]["a"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert result["properties"]["b"]["items"] == {"const": "x"}
    assert result["properties"]["c"]["anyOf"] == [{}, {"not": {}}]
    assert result["additionalProperties"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}


def test_tree_walk_rewrites_definitions_refs() -> None:
    schema = {
        "definitions": {
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/definitions/Node"}}}
        },
        "properties": {
            "definitions": {"type": "string"},
            "head": {"$ref": "#/definitions/Node"},
            "prop": {"$ref": "#/properties/definitions"},
        },
    }
    result = normalize.normalize_schema(schema, "draft-07").schema
    assert "definitions" not in result and "Node" in result["$defs"]
    assert result["properties"]["head"] == {"$ref": "#/$defs/Node"}
    assert result["$defs"]["Node"]["properties"]["next"] == {"$ref": "#/$defs/Node"}
    assert result["properties"]["prop"] == {"$ref": "#/properties/definitions"}


def test_origins_point_into_the_original_document() -> None:
    schema = {"properties": {"a": {"type": ["array", "null"], "items": {"type": "string"}}}}
    normalized = normalize.normalize_schema(schema, pointer="/tools/0/inputSchema")
    arm = normalized.schema["properties"]["a"]["anyOf"][0]
    assert normalized.origin(arm) == "/tools/0/inputSchema/properties/a"
    assert normalized.origin(arm["items"]) == "/tools/0/inputSchema/properties/a/items"


@pytest.mark.slow
def test_tree_walk_is_iterative() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(20_000):
        schema = {"type": ["array", "null"], "items": schema}
    result = normalize.normalize_schema(schema).schema
    assert result["anyOf"][0]["type"] == "array"


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))
schemas = st.recursive(
    st.one_of(
        st.booleans(),
        st.fixed_dictionaries(
            {},
            optional={
                "type": st.one_of(
                    st.sampled_from(["string", "null", "integer", "dict", "float"]),
                    st.lists(st.sampled_from(["string", "null", "array"]), max_size=3),
                ),
                "enum": st.lists(json_scalars, max_size=3),
                "nullable": st.booleans(),
                "minimum": st.integers(),
                "exclusiveMinimum": st.booleans(),
                "description": st.text(max_size=5),
            },
        ),
    ),
    lambda children: st.fixed_dictionaries(
        {},
        optional={
            "properties": st.dictionaries(st.text(max_size=3), children, max_size=3),
            "items": st.one_of(children, st.lists(children, max_size=2)),
            "anyOf": st.lists(children, max_size=3),
            "additionalProperties": children,
            "$ref": st.sampled_from(["#", "#/definitions/a", "#/$defs/a"]),
            "definitions": st.dictionaries(st.just("a"), children, max_size=1),
            "type": st.sampled_from(["object", "array"]),
        },
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    schemas,
    st.sampled_from(["draft-03", "draft-04", "draft-07", "2020-12"]),
    st.sampled_from(["json-schema", "bfcl"]),
)
def test_normalization_never_mutates_and_is_idempotent(
    schema: Any, draft: str, dialect: str
) -> None:
    before = copy.deepcopy(schema)
    once = normalize.normalize_schema(schema, draft, dialect).schema
    assert schema == before
    assert normalize.normalize_schema(once, draft, dialect).schema == once
    assert not isinstance(once.get("type"), list)
    assert "nullable" not in once


def test_draft03_required_flags_reach_every_level() -> None:
    """Draft-03 `required: true` on properties at any depth becomes each parent's list; the
    flag on a nested object itself is read by its own parent, then removed."""
    schema = {
        "$schema": "http://json-schema.org/draft-03/schema#",
        "type": "object",
        "properties": {
            "user": {
                "type": "object",
                "required": True,
                "properties": {"id": {"type": "integer", "required": True}, "nick": {}},
            },
            "tags": {"type": "array", "items": {"type": "string", "required": True}},
        },
    }
    before = copy.deepcopy(schema)
    result = normalize.normalize_schema(schema, "draft-03").schema
    assert schema == before
    assert result["required"] == ["user"]
    user = result["properties"]["user"]
    assert user["required"] == ["id"] and "required" not in user["properties"]["id"]
    assert "required" not in result["properties"]["tags"]
    assert result["properties"]["tags"]["items"] == {"type": "string"}


def test_targets_kept_under_non_keyword_keys_are_normalized() -> None:
    """A `$ref` into a schema kept under a key no keyword defines reaches a node the keyword
    walk never visits: it is normalized too (a type array there once lost its `null`), with
    its pointer, and the input is left as it was."""
    schema = {
        "definitions": {
            "group": {
                "inner": {"type": ["string", "null"]},
                "pair": {"items": [{"$ref": "#/definitions/group/more/x"}]},
                "more": {"x": {"enum": ["only"]}},
            }
        },
        "properties": {
            "p": {"$ref": "#/definitions/group/inner"},
            "q": {"$ref": "#/definitions/group/pair"},
        },
    }
    before = copy.deepcopy(schema)
    result = normalize.normalize_schema(schema, "draft-07", pointer="/inputSchema")
    assert schema == before
    group = result.schema["$defs"]["group"]
    assert group["inner"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert group["pair"] == {"prefixItems": [{"$ref": "#/$defs/group/more/x"}]}
    assert group["more"]["x"] == {"const": "only"}
    assert result.origin(group["inner"]) == "/inputSchema/definitions/group/inner"
    assert result.origin(group["more"]["x"]) == "/inputSchema/definitions/group/more/x"
