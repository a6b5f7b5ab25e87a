"""The compiled meta-schema check agrees with `jsonschema` on every schema we can find."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen._support.recursion_limit import deep_recursion
from codegen.load.sources import load_sources
from codegen.validate import meta_schema as metacheck
from codegen.validate.checks import _meta_validator
from conftest import CORPUS, FIXTURES, SCHEMAS

DRAFTS = ["draft-03", "draft-04", "draft-06", "draft-07", "2019-09", "2020-12"]


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


DRAFT_03 = [
    ({"type": "any"}, True),
    ({"type": ["string", {"type": "integer"}]}, True),  # a type list holding a schema
    ({"type": ["string", {"type": 5}]}, False),  # ... which must be a valid schema
    ({"type": [{"properties": {"a": {"minLength": -1}}}]}, False),
    ({"type": "strng"}, True),  # any name: draft-03 left types open
    ({"properties": {"a": {"required": True}}}, True),
    ({"properties": {"a": {"required": "yes"}}}, False),
    ({"exclusiveMinimum": True}, False),  # a string dependency: needs `minimum`
    ({"exclusiveMinimum": True, "minimum": 1}, True),
    ({"divisibleBy": 0}, False),  # minimum 0, exclusive
    ({"divisibleBy": 0.5}, True),
    ({"dependencies": {"a": "b"}}, True),
    ({"dependencies": {"a": 5}}, False),
    ({"dependencies": {"a": {"type": ["x", {"type": {}}]}}}, False),
    ({"disallow": ["string", {"type": "integer"}]}, True),
    ({"disallow": [{"type": 1}]}, False),
    ({"extends": [{"type": "string"}, {"minItems": -1}]}, False),
    ({"additionalProperties": {"type": "any"}, "additionalItems": False}, True),
    ({"minItems": 1.0}, False),  # 1.0 is not an integer before draft-06
]


@pytest.mark.parametrize(("schema", "valid"), DRAFT_03, ids=[json.dumps(c[0]) for c in DRAFT_03])
def test_draft03_type_unions_and_dependencies(schema: Any, valid: bool) -> None:
    assert jsonschema_says("draft-03", schema) is valid  # the authority agrees with the case
    assert metacheck.is_valid("draft-03", schema) is valid


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
    assert metacheck.compiled_check("draft-02") is None
    assert metacheck.is_valid("draft-02", {}) is None


# --- reading the meta-schemas without `pathlib` or `urllib` -------------------------------


def test_each_meta_schema_read_alone_is_the_one_the_full_scan_finds() -> None:
    every = metacheck.meta_documents()
    assert len(every) >= 20  # four old drafts, and 2019-09 and 2020-12 with vocabularies
    for uri, document in every.items():
        assert metacheck.meta_document(uri) == document, uri


def test_a_uri_outside_the_layout_falls_back_to_the_full_scan() -> None:
    with pytest.raises(KeyError):
        metacheck.meta_document("https://json-schema.org/draft/2020-12/meta/nothing")
    with pytest.raises(KeyError):
        metacheck.meta_document("https://example.com/schema")


_URL_PARTS = st.sampled_from(
    ["a", "meta", "core", "..", ".", "", "x.y", "-z", "_q", "?k=v", "#", "#/a/b", "#frag", ":"]
)


@settings(max_examples=2_000, deadline=None)
@given(
    st.sampled_from(
        [
            "https://json-schema.org/draft/2020-12/schema",
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2019-09/meta/core",
            "https://json-schema.org",
            "https://json-schema.org/",
            "http://host/a/b?q=1",
            "http://host/a#frag",
            "urn:example:x",
            "file:///tmp/x/y",
            "",
        ]
    ),
    st.lists(_URL_PARTS, max_size=5).map("/".join),
)
def test_references_join_exactly_as_urljoin_joins_them(base: str, ref: str) -> None:
    from urllib.parse import urljoin

    assert metacheck._joined(base, ref) == urljoin(base, ref)


@pytest.mark.parametrize("draft", ["draft-07", "2020-12"])
def test_compiling_a_meta_schema_imports_neither_pathlib_nor_urllib(draft: str) -> None:
    import subprocess
    import sys

    script = (
        "import sys; from codegen.validate import meta_schema; "
        f"assert meta_schema.compiled_check({draft!r}) is not None; "
        "print(sorted(m for m in ('pathlib', 'urllib.parse') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
