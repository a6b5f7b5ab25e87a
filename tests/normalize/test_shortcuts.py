"""The fast paths agree with the general ones: the builder's plain-leaf shortcut with the walk,
and normalization's canonical-node check (`_canonical`, `_TRIGGERS`) with the full chain of
node rules, and the walk that copies only what no rule made anew."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from codegen import ir
from codegen.identifiers import NameAllocator
from codegen.ir_build.builder import SchemaInput, ToolBuilder
from codegen.ir_build.leaves import LEAF_KEYWORDS, LEAF_UNION_ARMS, plain_leaf_type
from codegen.normalize import DOC_KEYWORDS, normalize_node, normalize_schema
from codegen.normalize import rules as normalize_rules
from codegen.normalize import walk as normalize_walk
from support.robustness_strategies import tool_schemas

PRIMITIVE_KINDS = ["string", "number", "integer", "boolean", "null"]

# --- the plain-leaf shortcut ---------------------------------------------------------------


class _WalkOnly(ToolBuilder):
    """The builder with the shortcut switched off: every node takes the walk."""

    def _leaf(self, schema: Any) -> ir.TypeNode | None:
        return None


def _keyword_values() -> dict[str, st.SearchStrategy[Any]]:
    small = st.one_of(st.integers(-3, 3), st.floats(-2, 2), st.text(max_size=3), st.booleans())
    return {
        "description": st.text(max_size=5),
        "title": st.text(max_size=5),
        "default": small,
        "examples": st.lists(small, max_size=2),
        "format": st.sampled_from(["date", "email", "uri"]),
        "pattern": st.just("^a+$"),
        "minLength": st.integers(0, 3),
        "maximum": st.integers(0, 9),
        "multipleOf": st.integers(1, 4),
        "deprecated": st.booleans(),
        "contentMediaType": st.just("text/plain"),
        "contentSchema": st.just({"type": "string"}),
        "x-extra": small,
        # keywords that change the type: a node holding one must not take the shortcut
        "enum": st.lists(small, min_size=1, max_size=3),
        "const": small,
        "items": st.just({"type": "string"}),
        "properties": st.just({"a": {"type": "string"}}),
        "not": st.just({"type": "string"}),
        "$ref": st.just("#/$defs/d"),
        "allOf": st.just([{"type": "string"}]),
        "unknownKeyword": small,
    }


VALUES = _keyword_values()


@st.composite
def leaf_candidates(draw: st.DrawFn) -> dict[str, Any]:
    """A primitive node with documentation, often plain, sometimes with one keyword that
    changes its type."""
    node: dict[str, Any] = {
        "type": draw(st.sampled_from([*PRIMITIVE_KINDS, *PRIMITIVE_KINDS, "object", "array"]))
    }
    for key in draw(st.lists(st.sampled_from(sorted(VALUES)), max_size=3, unique=True)):
        node[key] = draw(VALUES[key])
    return node


@st.composite
def union_candidates(draw: st.DrawFn) -> dict[str, Any]:
    keyword = draw(st.sampled_from(["anyOf", "oneOf"]))
    arms = draw(st.lists(leaf_candidates(), min_size=0, max_size=LEAF_UNION_ARMS + 1))
    node: dict[str, Any] = {keyword: arms}
    for key in draw(st.lists(st.sampled_from(sorted(VALUES)), max_size=2, unique=True)):
        node[key] = draw(VALUES[key])
    return node


def _built(builder_class: type[ToolBuilder], schema: dict[str, Any]) -> tuple[Any, Any]:
    normalized = normalize_schema(schema)
    tool = SchemaInput("t", None, None, "<t>", normalized, "/inputSchema", None, "")
    diagnostics: list[Any] = []
    built = builder_class(tool, NameAllocator(), diagnostics, {}).build("T", "TArgs", "")
    return built, diagnostics


def _field_schema(candidate: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "field": candidate,
            "list": {"type": "array", "items": candidate},
            "map": {"type": "object", "additionalProperties": candidate},
        },
        "$defs": {"d": {"type": "string"}},
    }


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(leaf_candidates(), union_candidates()))
def test_the_leaf_shortcut_gives_what_the_walk_gives(candidate: dict[str, Any]) -> None:
    schema = _field_schema(candidate)
    assert _built(ToolBuilder, schema) == _built(_WalkOnly, schema)
    normalized = normalize_schema(candidate).schema
    shortcut = plain_leaf_type(normalized, {})
    if shortcut is not None:
        walked, _ = _built(_WalkOnly, {"type": "object", "properties": {"f": candidate}})
        (field,) = walked.types[0].fields
        assert field.type == shortcut


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool_schemas(st.text(max_size=4)))
@example(  # the keywords beside a union merged into `a = a` again and again, without end
    {
        "anyOf": [{"$ref": "#/$defs/a"}],
        "minLength": 1,
        "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}},
    }
)
def test_whole_tools_build_alike_with_and_without_the_shortcut(schema: Any) -> None:
    assert _built(ToolBuilder, schema) == _built(_WalkOnly, schema)


@pytest.mark.parametrize(
    "node",
    [
        {"type": "string", "description": "d", "maxLength": 3},
        {"type": "integer", "minimum": 0, "format": "int32"},
        {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "nullable"},
        {"oneOf": [{"type": "number"}, {"type": "integer"}]},
    ],
)
def test_the_shortcut_takes_plain_leaves(node: dict[str, Any]) -> None:
    """The property above compares something: these common nodes do take the shortcut."""
    assert plain_leaf_type(node, {}) is not None


@pytest.mark.parametrize(
    "node",
    [
        {"type": "string", "enum": ["a"]},
        {"type": "string", "contentSchema": {"type": "string"}},
        {"type": ["string", "null"]},
        {"anyOf": [{"type": "string"}] * (LEAF_UNION_ARMS + 1)},
        {"anyOf": [{"type": "string"}, {"type": "null"}], "minLength": 1},
        {"anyOf": [{"type": "string", "const": "a"}]},
    ],
)
def test_the_shortcut_leaves_other_nodes_to_the_walk(node: dict[str, Any]) -> None:
    assert plain_leaf_type(node, {}) is None


def test_leaf_keywords_change_no_primitive_type() -> None:
    """Every keyword the shortcut lets beside `type` is documentation or a constraint the
    IR only notes."""
    assert {"enum", "const", "items", "properties", "anyOf", "$ref"}.isdisjoint(LEAF_KEYWORDS)
    assert DOC_KEYWORDS <= LEAF_KEYWORDS


# --- the canonical-node check of normalization ---------------------------------------------


def _rule_values() -> dict[str, st.SearchStrategy[Any]]:
    small = st.one_of(st.integers(-3, 3), st.text(max_size=2), st.booleans(), st.none())
    kinds = st.sampled_from([*PRIMITIVE_KINDS, "object", "array"])
    return {
        "type": st.one_of(kinds, st.lists(kinds, max_size=3), st.integers()),
        "nullable": st.one_of(st.booleans(), small),
        "definitions": st.one_of(st.just({"a": {"type": "string"}}), small),
        "$defs": st.just({"b": {"type": "integer"}}),
        "additionalItems": st.one_of(st.booleans(), st.just({"type": "string"})),
        "exclusiveMinimum": st.one_of(st.booleans(), st.integers(0, 5)),
        "exclusiveMaximum": st.one_of(st.booleans(), st.integers(0, 5)),
        "minimum": st.integers(0, 5),
        "maximum": st.integers(0, 5),
        "$ref": st.just("#/$defs/b"),
        "items": st.one_of(st.just({"type": "string"}), st.just([{"type": "string"}]), small),
        "enum": st.lists(small, max_size=3),
        "const": small,
        "anyOf": st.just([{"type": "string"}]),
        "properties": st.just({"p": {"type": "string"}}),
        "required": st.one_of(st.just(["p"]), st.booleans()),
        "description": st.text(max_size=3),
        "default": small,
        "format": st.just("date"),
    }


RULE_VALUES = _rule_values()
DRAFTS = ["draft-04", "draft-06", "draft-07", "2019-09", "2020-12"]


@st.composite
def rule_nodes(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(sorted(RULE_VALUES)), max_size=5, unique=True))
    return {key: draw(RULE_VALUES[key]) for key in keys}


@contextmanager
def _no_canonical_check() -> Iterator[None]:
    """Every node takes the full chain of rules."""
    fast = normalize_walk._canonical
    normalize_walk._canonical = lambda node: False
    try:
        yield
    finally:
        normalize_walk._canonical = fast


def _general(node: dict[str, Any], draft: str) -> Any:
    with _no_canonical_check():
        return normalize_node(node, draft)


@settings(max_examples=500, deadline=None)
@given(node=rule_nodes(), draft=st.sampled_from(DRAFTS))
def test_a_node_judged_canonical_is_one_no_rule_changes(node: dict[str, Any], draft: str) -> None:
    if normalize_walk._canonical(node):
        assert _general(node, draft) == (node, [])
    else:  # the shortcut is not taken: the fast path is the general path
        assert normalize_node(node, draft) == _general(node, draft)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=tool_schemas(st.text(max_size=4)), draft=st.sampled_from(DRAFTS))
def test_whole_schemas_normalize_alike_with_and_without_the_check(schema: Any, draft: str) -> None:
    fast = normalize_schema(schema, draft)
    with _no_canonical_check():
        general = normalize_schema(schema, draft)
    assert fast.schema == general.schema
    assert sorted(fast.origins.values()) == sorted(general.origins.values())


def test_every_trigger_can_make_a_rule_fire() -> None:
    """No key in `_TRIGGERS` is dead weight: for each, a node with it that a rule changes."""
    firing = {
        "nullable": {"type": "string", "nullable": True},
        "definitions": {"definitions": {"a": {}}},
        "dependencies": {"dependencies": {"a": ["b"]}},
        "additionalItems": {"items": {}, "additionalItems": False},
        "exclusiveMinimum": {"minimum": 1, "exclusiveMinimum": True},
        "exclusiveMaximum": {"maximum": 1, "exclusiveMaximum": True},
        "$ref": {"$ref": "#/$defs/a", "type": "string"},
    }
    assert firing.keys() == normalize_rules.TRIGGERS
    for key, node in firing.items():
        assert _general(node, "2020-12") != (node, []), key


def _dicts(value: Any) -> Iterator[dict[str, Any]]:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=tool_schemas(st.text(max_size=4)), draft=st.sampled_from(DRAFTS))
def test_every_schema_node_normalization_returns_is_new(schema: Any, draft: str) -> None:
    """The walk copies only the nodes no rule made anew, and leaves a rule's final arms (a
    nullable's `{"type": "null"}`) in place: either way no schema node of the result (a
    node with an origin) is one of the input's dicts, and the input is unchanged."""
    before = copy.deepcopy(schema)
    normalized = normalize_schema(schema, draft)
    assert schema == before
    inputs = {id(node) for node in _dicts(schema)}
    located = [node for node in _dicts(normalized.schema) if id(node) in normalized.origins]
    assert all(id(node) not in inputs for node in located)
    assert located or not isinstance(schema, dict | bool)
