"""The compiled meta-schema check agrees with `jsonschema` on every schema we can find."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import metacheck
from codegen.load import load_sources
from codegen.recursion import deep_recursion
from codegen.validate import _meta_validator
from conftest import CORPUS, FIXTURES, SCHEMAS

DRAFTS = ["draft-04", "draft-06", "draft-07", "2019-09", "2020-12"]


def jsonschema_says(draft: str, schema: Any) -> bool:
    with deep_recursion():
        return not any(True for _ in _meta_validator(draft).iter_errors(schema))


def real_schemas() -> list[Any]:
    tools = load_sources([str(CORPUS), str(SCHEMAS)], namespace=True).tools
    found: list[Any] = [t.input_schema for t in tools]
    found += [t.output_schema for t in tools if t.output_schema is not None]
    for path in sorted((FIXTURES / "invalid").glob("*.json")):
        try:
            found.extend(
                t.get("inputSchema")
                for t in json.loads(path.read_text())["tools"]
                if isinstance(t, dict)
            )
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            continue
    return found


@pytest.mark.parametrize("draft", DRAFTS)
def test_every_draft_compiles(draft: str) -> None:
    assert metacheck.compiled_check(draft) is not None


@pytest.mark.slow
@pytest.mark.parametrize("draft", DRAFTS)
def test_agrees_with_jsonschema_on_real_schemas(draft: str) -> None:
    for schema in real_schemas():
        assert metacheck.is_valid(draft, schema) == jsonschema_says(draft, schema), schema


BAD = [
    {"type": "strng"},
    {"properties": {"a": {"type": 5}}},
    {"required": "a"},
    {"minimum": "1"},
    {"items": [{"type": "string"}]},
    {"anyOf": []},
    {"$defs": {"a": 3}},
    {"$anchor": "1bad"},
    {"required": ["a", "a"]},
    {"enum": []},
    {"type": ["string", "string"]},
    {"minLength": -1},
    {"minLength": 1.0},
    {"minLength": 1.5},
    {"multipleOf": 0},
    {"exclusiveMinimum": True},
    {"exclusiveMaximum": 1},
    {"maximum": 1, "exclusiveMaximum": True},
    {"dependencies": {"a": 3}},
    {"dependentRequired": {"a": [1]}},
    {"uniqueItems": 1},
    {"properties": {"a": {"properties": {"b": {"enum": "x"}}}}},
    {"$ref": 3},
    {"not": 1},
    {"additionalProperties": {"type": []}},
    {"contains": {"minItems": -2}},
]


@pytest.mark.parametrize("draft", DRAFTS)
@pytest.mark.parametrize("schema", BAD, ids=[json.dumps(b) for b in BAD])
def test_agrees_on_known_problems(draft: str, schema: Any) -> None:
    assert metacheck.is_valid(draft, schema) == jsonschema_says(draft, schema)


keywords = st.sampled_from(
    [
        "type",
        "properties",
        "required",
        "items",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxItems",
        "uniqueItems",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "additionalProperties",
        "$ref",
        "$defs",
        "definitions",
        "format",
        "pattern",
        "description",
        "default",
        "$anchor",
        "dependentRequired",
        "dependencies",
        "prefixItems",
        "contains",
        "if",
        "then",
        "propertyNames",
        "multipleOf",
        "x-extra",
    ]
)
values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.floats(-2, 2, allow_nan=False),
        st.sampled_from(["string", "object", "integer", "a", "#", "^a$", "[", ""]),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(keywords | st.text(max_size=2), children, max_size=4),
    ),
    max_leaves=15,
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(DRAFTS), values)
def test_agrees_with_jsonschema_on_random_values(draft: str, schema: Any) -> None:
    assert metacheck.is_valid(draft, schema) == jsonschema_says(draft, schema)


def test_unknown_draft_has_no_fast_path(tmp_path: Path) -> None:
    assert metacheck.compiled_check("draft-03") is None
    assert metacheck.is_valid("draft-03", {}) is None
