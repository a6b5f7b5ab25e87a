"""What a schema says reaches the types or their notes: nothing narrowing erases a type, no
condition is dropped unnoted, documentation holds at every depth, and a contradiction is
reported where it is written."""

from __future__ import annotations

from typing import Any

import pytest

from codegen import ir
from codegen.engine import compile_value
from codegen.render.python.sdk import render_python_sdk
from codegen.render.typescript.sdk import render_typescript_sdk


def _compiled(schema: dict[str, Any]) -> tuple[ir.Tool, list[str]]:
    """The one tool whose arguments are `schema`, and its warnings (pointer: message)."""
    compiled = compile_value({"name": "t", "inputSchema": schema})
    assert compiled.catalog is not None, compiled.errors
    warnings = [f"{d.pointer}: {d.message}" for d in compiled.warnings]
    return compiled.catalog.tools[0], warnings


def _types(tool: ir.Tool) -> dict[str, ir.NamedType]:
    return {t.name: t for t in tool.types}


def _fields(schema: dict[str, Any], name: str = "TArgs") -> dict[str, ir.Field]:
    """The fields of the object type `name` of a tool whose arguments are `schema`."""
    tool, _ = _compiled(schema)
    found = _types(tool)[name]
    assert isinstance(found, ir.ObjectType), found
    return {f.key: f for f in found.fields}


def _all_notes(named: ir.NamedType) -> list[str]:
    """Every note of a named type: its own and, for an object, its fields'."""
    notes = list(named.docs.notes)
    if isinstance(named, ir.ObjectType):
        notes += [n for f in named.fields for n in f.docs.notes]
    return notes


def _prop(schema: dict[str, Any], **more: Any) -> ir.Field:
    """The field `p` of arguments declaring `schema` for it."""
    return _fields({"type": "object", "properties": {"p": schema}, **more})["p"]


# --- D1: narrowing keywords narrow, never erase --------------------------------------------


def test_two_allof_arms_with_conditions_keep_the_tool_typed_and_note_both() -> None:
    schema = {
        "type": "object",
        "properties": {"k": {"type": "string"}},
        "allOf": [
            {"if": {"required": ["k"]}, "then": {"required": ["x"]}},
            {"if": {"required": ["x"]}, "then": {"required": ["k"]}},
        ],
    }
    tool, warnings = _compiled(schema)
    assert tool.args == ir.RefType("TArgs") and not warnings
    args = _types(tool)["TArgs"]
    assert isinstance(args, ir.ObjectType)
    assert [f.key for f in args.fields] == ["k"]
    assert args.docs.notes == (
        'if {"required": ["k"]} then {"required": ["x"]}',
        'if {"required": ["x"]} then {"required": ["k"]}',
    )


def test_unknown_annotations_in_allof_arms_keep_the_type() -> None:
    field = _prop(
        {
            "allOf": [
                {"type": "integer", "markdownDescription": "a"},
                {"minimum": 1, "markdownDescription": "b"},
            ]
        }
    )
    assert field.type == ir.Primitive("integer")
    assert field.docs.constraints == (("minimum", "1"),)


def test_allof_of_two_nots_keeps_the_type_and_notes_both() -> None:
    field = _prop({"allOf": [{"type": "string", "not": {"const": "a"}}, {"not": {"const": "b"}}]})
    assert field.type == ir.Primitive("string")
    assert field.docs.notes == ('not {"const": "a"}', 'not {"const": "b"}')


def test_conditions_noted_from_allof_do_not_depend_on_arm_order() -> None:
    arms = [{"type": "string", "not": {"const": "a"}}, {"not": {"const": "b"}}, {"not": {}}]
    arms[2] = {"if": {"minLength": 2}, "then": {"maxLength": 3}}
    forward = _prop({"allOf": arms})
    backward = _prop({"allOf": arms[::-1]})
    assert forward == backward


# --- D6: contradictions point at their place and admit nothing ---------------------------


def test_an_allof_conflict_on_a_property_points_at_the_property_and_forbids_it() -> None:
    schema = {
        "type": "object",
        "allOf": [
            {"properties": {"u": {"type": "string"}}},
            {"properties": {"u": {"type": "integer"}}},
        ],
    }
    tool, warnings = _compiled(schema)
    assert [w.partition(":")[0] for w in warnings] == ["/inputSchema/allOf/1/properties/u"]
    assert "typed as never" in warnings[0]
    args = _types(tool)["TArgs"]
    assert isinstance(args, ir.ObjectType)
    assert args.fields[0].type == ir.NeverType()


def test_a_key_the_schema_forbids_is_never_any() -> None:
    schema = {
        "type": "object",
        "properties": {"u": {"type": "string"}, "v": False},
        "allOf": [{"properties": {"u": False}}, {"properties": {"v": {"type": "string"}}}],
    }
    fields = _fields(schema)
    assert fields["u"].type == ir.NeverType()
    assert fields["v"].type == ir.NeverType()


# --- D2: every condition a type cannot spell is a note, in both languages -----------------


def _rendered(schema: dict[str, Any]) -> tuple[str, str]:
    """The Python SDK and the TypeScript declarations of a tool whose arguments are `schema`."""
    compiled = compile_value({"name": "t", "inputSchema": schema})
    assert compiled.catalog is not None, compiled.errors
    return render_python_sdk(compiled.catalog), render_typescript_sdk(compiled.catalog)


_OBJECT_B = {"type": "object", "properties": {"b": {"type": "integer"}}}


@pytest.mark.parametrize(
    "schema, note",
    [
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "p": {
                        "type": "array",
                        "items": {
                            **_OBJECT_B,
                            "if": {"required": ["b"]},
                            "then": {"required": ["c"]},
                        },
                    }
                },
            },
            'items: if {"required": ["b"]} then {"required": ["c"]}',
            id="if-then-of-item-objects",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "p": {
                        "anyOf": [
                            {"type": "integer"},
                            {**_OBJECT_B, "not": {"required": ["a"]}},
                        ]
                    }
                },
            },
            'object: not {"required": ["a"]}',
            id="not-on-a-union-arm",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "allOf": [{"if": {"required": ["a"]}, "then": {"required": ["b"]}}],
            },
            'if {"required": ["a"]} then {"required": ["b"]}',
            id="if-in-one-allof-arm",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "p": {
                        "type": "array",
                        "items": {
                            "allOf": [
                                {"type": "string"},
                                {"if": {"minLength": 1}, "then": {"maxLength": 3}},
                            ]
                        },
                    }
                },
            },
            'items: if {"minLength": 1} then {"maxLength": 3}',
            id="if-in-an-allof-arm-of-items",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "dependentRequired": {"a": ["b"]},
            },
            'if "a" is present: "b" is required',
            id="dependentRequired",
        ),
        pytest.param(
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "dependencies": {"a": ["b"]},
            },
            'if "a" is present: "b" is required',
            id="draft-07-dependencies",
        ),
        pytest.param(
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "dependencies": {"a": {"required": ["b"]}},
            },
            'if "a" is present: {"required": ["b"]}',
            id="draft-07-schema-dependencies",
        ),
    ],
)
def test_conditions_are_noted_in_both_languages(schema: dict[str, Any], note: str) -> None:
    tool, warnings = _compiled(schema)
    assert not warnings
    notes = [n for t in tool.types for n in _all_notes(t)]
    assert note in notes
    for text in _rendered(schema):
        assert note in text


# --- D3, D4: documentation at every depth ---------------------------------------------------


@pytest.mark.parametrize(
    "schema, notes",
    [
        pytest.param(
            {
                "type": "array",
                "prefixItems": [{"type": "number", "description": "lng", "minimum": -180}],
            },
            ["item 1: lng", "item 1: >= -180"],
            id="tuple-positions",
        ),
        pytest.param(
            {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"type": "string", "maxLength": 5},
                        {"type": "integer", "minimum": 3},
                    ]
                },
            },
            ["items: >= 3; length <= 5"],
            id="bounds-of-union-arms-in-items",
        ),
        pytest.param(
            {
                "type": "array",
                "items": {"type": "string", "default": "a", "examples": ["b"], "deprecated": True},
            },
            ['items: default: "a"', 'items: example: "b"', "items: deprecated"],
            id="item-default-examples-deprecated",
        ),
        pytest.param(
            {"type": "array", "contains": {"const": "z", "description": "The main one."}},
            ['contains {"const": "z", "description": "The main one."}'],
            id="contains",
        ),
        pytest.param(
            {
                "type": "array",
                "items": {**_OBJECT_B, "minProperties": 1, "default": {"b": 1}},
            },
            ["items: keys >= 1", 'items: default: {"b": 1}'],
            id="item-object-bounds-and-default",
        ),
        pytest.param(
            {"anyOf": [{"const": {"a": 1}}, {"type": "string"}]},
            ['arm 1: always {"a": 1}'],
            id="object-const-in-a-union-arm",
        ),
        pytest.param(
            {
                "allOf": [
                    {"type": "string", "description": "A"},
                    {"description": "B", "minLength": 1},
                ]
            },
            ["B"],
            id="second-allof-description",
        ),
    ],
)
def test_parts_spelled_inline_keep_their_documentation(
    schema: dict[str, Any], notes: list[str]
) -> None:
    field = _prop(schema)
    for note in notes:
        assert note in field.docs.notes, field.docs


def test_a_description_beside_allof_reaches_the_merged_type_from_items() -> None:
    schema = {
        "type": "object",
        "properties": {"rows": {"type": "array", "items": {"$ref": "#/$defs/Y"}}},
        "$defs": {
            "X": {"type": "object", "description": "XDOC", "properties": {"a": {}}},
            "Y": {
                "description": "YDOC",
                "allOf": [{"$ref": "#/$defs/X"}, {"properties": {"b": {"type": "integer"}}}],
            },
        },
    }
    tool, _ = _compiled(schema)
    merged = _types(tool)["T_Y"]
    assert merged.docs.description == "YDOC"
    assert merged.docs.notes == ("XDOC",)  # the merged target is declared nowhere else


def test_a_root_description_beside_allof_is_the_root_types() -> None:
    schema = {
        "type": "object",
        "description": "ROOT",
        "allOf": [{"properties": {"a": {"type": "string"}}}],
    }
    tool, _ = _compiled(schema)
    assert _types(tool)["TArgs"].docs.description == "ROOT"


# --- D5: notes about keys say what the schema allows --------------------------------------


@pytest.mark.parametrize("additional", [True, {"type": "boolean"}, None])
def test_pattern_keys_beside_other_allowed_keys_are_not_the_only_keys(additional: Any) -> None:
    schema: dict[str, Any] = {"type": "object", "patternProperties": {"^x-": {"type": "string"}}}
    if additional is not None:
        schema["additionalProperties"] = additional
    field = _prop(schema)
    assert not any(note.startswith("other keys match") for note in field.docs.notes)
    assert 'values of keys matching "^x-": {"type": "string"}' in field.docs.notes


def test_pattern_keys_of_a_closed_map_are_the_only_keys() -> None:
    field = _prop(
        {
            "type": "object",
            "patternProperties": {"^x-": {"type": "string"}},
            "additionalProperties": False,
        }
    )
    assert field.docs.notes == ('other keys match "^x-"',)
