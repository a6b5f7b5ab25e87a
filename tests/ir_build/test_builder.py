"""The IR: golden cases pinned as readable text, names, degradation and stability."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import ir
from codegen.engine import compile_sources, compile_value
from codegen.identifiers import (
    NameAllocator,
    camel_case,
    is_class_field,
    is_method_name,
    reserved_type_names,
    type_base,
)
from codegen.ir_build import combining, limits
from codegen.ir_build.builder import build_type
from codegen.ir_build.merge import merge_schemas
from codegen.normalize import normalize_schema
from conftest import GOLDEN_CASES, ROOT, SCHEMAS


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_ir_snapshot(case: str, golden: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # sources named relative to the checkout, wherever it is
    compiled = compile_sources([f"schemas/{case}.json"], require_tools=False)
    assert compiled.catalog is not None, compiled.errors
    warnings = "".join(f"# {d.format()}\n" for d in compiled.warnings)
    assert warnings + ir.describe(compiled.catalog) == golden("ir", "txt")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("read_file", "ReadFile"),
        ("my-mcp.tool", "MyMcpTool"),
        ("HTTPGet", "HTTPGet"),
        ("get__user", "GetUser"),
        ("__meta__", "Meta"),
        ("搜索", "搜索"),
        ("café-lookup", "CaféLookup"),
        ("ﬁeld", "Field"),
        ("a b\tc", "ABC"),
        ("---", ""),
    ],
)
def test_camel_case(text: str, expected: str) -> None:
    assert camel_case(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1st-tool", "Tool1stTool"),
        ("", "Tool"),
        ("---", "Tool"),
        ("x", "X"),
    ],
)
def test_type_base_always_starts_a_name(text: str, expected: str) -> None:
    assert type_base(text) == expected
    assert type_base(text).isidentifier()


def test_identifier_rules() -> None:
    assert is_class_field("match") and is_class_field("_x") and is_class_field("__meta__")
    for key in ("from", "class", "Content-Type", "2fa", "__token", "__debug__", "ﬁeld", ""):
        assert not is_class_field(key), key
    assert is_method_name("read_file") and is_method_name("搜索")
    for name in ("get-user", "class", "_debug", "__meta__", "list", "str", "Any", "ﬁnd"):
        assert not is_method_name(name), name


def test_allocator_suffixes_skip_taken_names() -> None:
    names = NameAllocator(frozenset({"Reserved"}))
    assert [names.claim(b) for b in ["A", "A", "A2", "A", "Reserved"]] == [
        "A",
        "A2",
        "A22",
        "A3",
        "Reserved2",
    ]


def test_reserved_names_are_never_used() -> None:
    # A root name can meet a reserved name (TypeScript's `MIDIOutput`) and is numbered, as a
    # nested name would be; either way the number depends on the tool alone.
    def tool(name: str) -> dict[str, Any]:
        nested = {"type": "object", "properties": {"a": {"type": "string"}}}
        return {
            "name": name,
            "inputSchema": {
                "$defs": {"value": nested},
                "properties": {"v": {"$ref": "#/$defs/value"}},
            },
            "outputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
        }

    compiled = compile_value({"tools": [tool("MIDI"), tool("credential_properties"), tool("json")]})
    assert compiled.catalog is not None
    names = {t.name for t in compiled.catalog.types}
    assert {"MIDIOutput2", "CredentialPropertiesOutput2", "Json_Value"} <= names
    assert not names & reserved_type_names()


def test_colliding_tool_names_tie_break_in_code_point_order() -> None:
    tools = [
        {
            "name": n,
            "inputSchema": {
                "type": "object",
                "properties": {"x": {"type": "object", "properties": {"y": {"type": "string"}}}},
            },
        }
        for n in ("my.tool", "my-tool", "my_tool")
    ]
    compiled = compile_value({"tools": tools})
    assert compiled.catalog is not None
    args = {t.name: ir.type_text(t.args) for t in compiled.catalog.tools}
    # `my_tool` is the canonical spelling of the stem `MyTool` and keeps it; the others get
    # a tag made from their own name, whatever else the catalog holds.
    assert args == {
        "my-tool": "MyTool__bv6tArgs",
        "my.tool": "MyTool__xsrmArgs",
        "my_tool": "MyToolArgs",
    }
    nested = {t.name: [n.name for n in t.types] for t in compiled.catalog.tools}
    assert nested["my.tool"] == ["MyTool__xsrm_ArgsX", "MyTool__xsrmArgs"]
    alone = compile_value({"tools": [tools[0]]})
    assert alone.catalog is not None
    assert [n.name for n in alone.catalog.tools[0].types] == ["MyTool_ArgsX", "MyToolArgs"]


def _tool(name: str, depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for level in range(depth):
        schema = {"type": "object", "properties": {f"f{level}": schema, "s": {"type": "integer"}}}
    return {
        "name": name,
        "inputSchema": schema,
        "outputSchema": {
            "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "string"}}}},
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        },
    }


def _names(value: Any) -> dict[str, list[str]]:
    compiled = compile_value(value)
    assert compiled.catalog is not None
    return {t.name: [n.name for n in t.types] for t in compiled.catalog.tools}


tool_names = st.text(alphabet="abcxyz_-.", min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(tool_names, st.integers(0, 3)), min_size=1, max_size=6, unique_by=lambda t: t[0]
    ),
    st.data(),
)
def test_adding_or_removing_a_tool_renames_nothing_else(
    tools: list[tuple[str, int]], data: st.DataObject
) -> None:
    everything = _names([_tool(n, d) for n, d in tools])
    keep = data.draw(st.lists(st.sampled_from([n for n, _ in tools]), unique=True))
    subset = _names([_tool(n, d) for n, d in tools if n in keep])
    colliding = {
        n for n in everything for m in everything if n != m and type_base(n) == type_base(m)
    }
    for name, names in subset.items():
        if name not in colliding:
            assert everything[name] == names


def test_input_order_does_not_change_the_ir() -> None:
    value = json.loads((SCHEMAS / "tool_names.json").read_text())
    first = compile_value(value).catalog
    for seed in range(5):
        shuffled = list(value["tools"])
        random.Random(seed).shuffle(shuffled)
        assert compile_value({"tools": shuffled}).catalog == first


def test_degraded_nodes_warn_with_pointers_and_spare_siblings() -> None:
    compiled = compile_sources([str(SCHEMAS / "degraded.json")])
    assert compiled.catalog is not None
    pointers = {d.pointer for d in compiled.warnings}
    base = "/tools/0/inputSchema/properties"
    # A contradiction is reported at the arm that brings it, and admits no value.
    assert pointers == {f"{base}/remote/$ref", f"{base}/dangling/$ref", f"{base}/conflict/allOf/1"}
    [args] = [t for t in compiled.catalog.tools[0].types if t.name == "ConditionalArgs"]
    assert isinstance(args, ir.ObjectType)
    types = {f.key: f.type for f in args.fields}
    assert types["fine"] == ir.Primitive("string")
    assert isinstance(types["remote"], ir.UnknownType)
    assert types["conflict"] == ir.NeverType()


def test_narrowing_keywords_keep_the_type_and_note_the_condition() -> None:
    """`not`, `if`/`then`/`else` and `dependentSchemas` only narrow what the other keywords
    allow: the node keeps its type (a superset, so no valid value is refused), with no
    warning, and the condition is a note in full, at the root too."""
    compiled = compile_sources([str(SCHEMAS / "narrowing_keywords.json")])
    assert compiled.catalog is not None and not compiled.warnings
    [args] = [t for t in compiled.catalog.tools[0].types if t.name == "PickArgs"]
    assert isinstance(args, ir.ObjectType)
    fields = {f.key: f for f in args.fields}
    assert fields["name"].type == ir.Primitive("string") and fields["name"].required
    assert fields["name"].docs.notes == ('not {"const": ""}',)
    assert fields["mode"].required and not fields["target"].required
    assert args.docs.notes == (
        'if {"properties": {"mode": {"const": "b"}}} then {"required": ["target"]}',
    )
    assert fields["extra"].docs.notes == ('if "a" is present: {"required": ["b"]}',)


def test_an_allof_diamond_merges_and_only_true_recursion_degrades() -> None:
    compiled = compile_sources([str(SCHEMAS / "allof_diamond.json")])
    assert compiled.catalog is not None
    assert [d.pointer for d in compiled.warnings] == ["/tools/0/inputSchema/$defs/Y/allOf"]
    [item] = [t for t in compiled.catalog.tools[0].types if t.name == "Diamond_Item"]
    assert isinstance(item, ir.ObjectType)
    assert {f.key: (f.type, f.required) for f in item.fields} == {
        "left": (ir.Primitive("string"), False),
        "right": (ir.Primitive("boolean"), False),
        "value": (ir.Primitive("integer"), True),
    }


SELF_UNION = {"anyOf": [{"$ref": "#/$defs/a"}]}
"""`a = a`: a union whose one arm refers back to it, which admits no value."""


@pytest.mark.parametrize(
    ("schema", "expected", "pointer"),
    [
        (  # the keywords beside a union merged into an arm whose target refers to itself
            {"anyOf": [{"$ref": "#/$defs/a"}], "minLength": 1, "$defs": {"a": SELF_UNION}},
            ir.NeverType(),
            "/inputSchema/$defs/a/$ref",
        ),
        (  # the same recursion reached through an `allOf` arm inside the merged target
            {
                "allOf": [{"$ref": "#/$defs/a"}],
                "$defs": {"a": {"anyOf": [{"allOf": [{"$ref": "#/$defs/a"}]}], "minLength": 1}},
            },
            ir.UnknownType("allOf through a recursive $ref cannot be merged"),
            "/inputSchema/$defs/a/anyOf/0/allOf",
        ),
    ],
)
def test_a_target_merged_into_a_node_being_built_is_not_merged_again(
    schema: dict[str, Any], expected: ir.TypeNode, pointer: str
) -> None:
    """A `$ref` target whose keywords a merge took in counts as being built: a reference
    back to it is the recursion it is, with a warning, not a new merge each time round."""
    compiled = compile_value({"name": "t", "inputSchema": schema})
    assert compiled.catalog is not None
    assert compiled.catalog.tools[0].args == expected
    assert [d.pointer for d in compiled.warnings] == [pointer]


def test_a_merged_target_reached_again_through_the_document_is_a_named_recursion() -> None:
    """A recursion that passes a node of the document (`parent`, an `allOf` of one `$ref`)
    meets that node again: the merge below it is made once more and names the cycle."""
    node = {"allOf": [{"$ref": "#/$defs/Node"}]}
    schema = {
        "type": "object",
        "properties": {"tree": node},
        "$defs": {"Node": {"type": "object", "properties": {"parent": node}}},
    }
    compiled = compile_value({"name": "t", "inputSchema": schema})
    assert compiled.catalog is not None and not compiled.warnings
    objects = [t for t in compiled.catalog.tools[0].types if isinstance(t, ir.ObjectType)]
    parents = [f.type for t in objects for f in t.fields if f.key == "parent"]
    assert parents and all(isinstance(parent, ir.RefType) for parent in parents)


def test_unknown_keywords_warn_but_extensions_do_not() -> None:
    compiled = compile_value(
        {
            "name": "t",
            "inputSchema": {"type": "object", "x-vendor": 1, "requried": ["a"], "properties": {}},
        }
    )
    [warning] = compiled.warnings
    assert warning.pointer == "/inputSchema/requried"


def test_context_free_type_uses_maps_for_objects() -> None:
    node = build_type({"type": "object", "properties": {"a": {"type": "string"}}})
    assert node == ir.MapType(ir.AnyType())
    assert build_type({"type": ["string", "null"]}) == ir.UnionType(
        (ir.Primitive("string"), ir.Primitive("null"))
    )
    recursive = build_type(
        {"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"}
    )
    assert recursive == ir.ArrayType(ir.AnyType())


def test_deep_inline_arrays_degrade_instead_of_nesting_without_end() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(300):
        schema = {"type": "array", "items": schema}
    compiled = compile_value(
        {"name": "t", "inputSchema": {"type": "object", "properties": {"deep": schema}}}
    )
    assert compiled.catalog is not None
    assert any("nested deeper" in d.message for d in compiled.warnings)
    text = ir.describe(compiled.catalog)
    assert text.count("array<") == 64


def test_integer_folds_into_number_in_a_union() -> None:
    assert build_type({"type": ["integer", "number"]}) == ir.Primitive("number")
    assert build_type({"type": ["integer", "null", "number"]}) == ir.UnionType(
        (ir.Primitive("null"), ir.Primitive("number"))
    )
    assert build_type({"anyOf": [{"type": "integer"}, {"type": "string"}]}) == ir.UnionType(
        (ir.Primitive("integer"), ir.Primitive("string"))
    )


def test_required_only_arms_fold_into_one_object_with_a_note() -> None:
    base = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    one = compile_value(
        {"name": "t", "inputSchema": {**base, "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}}
    )
    assert one.catalog is not None
    [args] = one.catalog.types
    assert isinstance(args, ir.ObjectType) and args.name == "TArgs"
    assert [f.required for f in args.fields] == [False, False]
    assert args.docs.notes == ('exactly one of "a", "b" is required',)
    some = compile_value(
        {
            "name": "t",
            "inputSchema": {**base, "anyOf": [{"required": ["a", "b"]}, {"required": ["b"]}]},
        }
    )
    assert some.catalog is not None
    assert some.catalog.types[0].docs.notes == (
        'at least one of these key sets is required: "a" and "b"; "b"',
    )
    # An arm that says more than `required` keeps the union of variants.
    mixed = compile_value(
        {
            "name": "t",
            "inputSchema": {
                **base,
                "oneOf": [{"required": ["a"]}, {"required": ["b"], "maxProperties": 1}],
            },
        }
    )
    assert mixed.catalog is not None
    assert [t.name for t in mixed.catalog.types] == ["T_Args1", "T_Args2", "TArgs"]


def test_replay_claims_all_or_nothing() -> None:
    alone = NameAllocator(frozenset())
    recorded = [alone.claim(base) for base in ("A", "A", "B")]
    assert recorded == ["A", "A2", "B"]
    claims = list(zip(("A", "A", "B"), recorded, strict=True))
    free = NameAllocator(frozenset())
    assert free.replay(claims) and "A2" in free and free.claim("A") == "A3"
    busy = NameAllocator(frozenset())
    busy.claim("B")
    assert not busy.replay(claims)
    assert "A" not in busy and "A2" not in busy and busy.claims == [("B", "B")]
    assert busy.claim("A") == "A" and busy.claim("A") == "A2"  # counters as before


def _field(schema: dict[str, Any], key: str = "f") -> ir.Field:
    """The field `key` of a one-tool catalog whose arguments declare `schema` for it."""
    compiled = compile_value(
        {"name": "t", "inputSchema": {"type": "object", "properties": {key: schema}}}
    )
    assert compiled.catalog is not None and not compiled.warnings, compiled.warnings
    (args,) = [t for t in compiled.catalog.tools[0].types if t.name == "TArgs"]
    assert isinstance(args, ir.ObjectType)
    return args.fields[0]


@pytest.mark.parametrize(
    "kind, constraints",
    [
        ("integer", {"minimum": 2, "maximum": 200}),
        ("number", {"exclusiveMinimum": 0, "multipleOf": 0.5}),
        ("string", {"pattern": "^a", "maxLength": 5, "format": "email"}),
        ("string", {"minLength": 1, "contentEncoding": "base64"}),
        ("array", {"minItems": 1, "uniqueItems": True}),
    ],
)
def test_nullable_fields_keep_their_constraint_notes(
    kind: str, constraints: dict[str, Any]
) -> None:
    plain = _field({"type": kind, **constraints})
    for nullable in (
        {"type": [kind, "null"], **constraints},
        {"type": ["null", kind], **constraints},
        {"type": kind, "nullable": True, **constraints},
        {"anyOf": [{"type": kind, **constraints}, {"type": "null"}]},
    ):
        field = _field(nullable)
        assert field.docs == plain.docs, nullable
        assert isinstance(field.type, ir.UnionType)
        assert set(field.type.arms) == {plain.type, ir.Primitive("null")}


def test_union_arm_keywords_and_the_unions_both_show() -> None:
    dated = _field(
        {
            "format": "date",
            "anyOf": [{"type": "string", "format": "date-time"}, {"type": "integer"}],
        }
    )
    assert dated.type == ir.UnionType((ir.Primitive("string"), ir.Primitive("integer")))
    assert dated.docs.format == "date"
    assert dated.docs.notes == ("string: format: date-time",)
    patterned = _field(
        {"pattern": "^a", "anyOf": [{"type": "string", "pattern": "b$"}, {"type": "null"}]}
    )
    assert patterned.type == ir.UnionType((ir.Primitive("string"), ir.Primitive("null")))
    assert (patterned.docs.pattern, patterned.docs.notes) == ("^a", ("pattern: b$",))
    # Arm keywords that apply to only some of the arms of their type stay notes of that arm.
    split = _field({"anyOf": [{"type": "string", "format": "date"}, {"type": "string"}]})
    assert split.docs.format is None and split.docs.notes == ("arm 1: format: date",)


@pytest.mark.parametrize(
    "base, arm",
    [
        ({"format": "date"}, {"type": "string", "format": "date-time"}),
        ({"pattern": "^a"}, {"type": "string", "pattern": "b$"}),
        ({"x-ui": "text"}, {"type": "string", "x-ui": "area"}),
        ({"multipleOf": 0.5}, {"type": "number", "multipleOf": 0.3}),
        (
            {"prefixItems": [{"type": "string"}]},
            {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
        ),
        (
            {"discriminator": {"propertyName": "kind"}},
            {
                "discriminator": {"propertyName": "sub"},
                "oneOf": [{"type": "string"}, {"type": "boolean"}],
            },
        ),
    ],
)
def test_union_arms_are_never_dropped_for_note_level_keywords(
    base: dict[str, Any], arm: dict[str, Any]
) -> None:
    for keyword in ("anyOf", "oneOf"):
        field = _field({**base, keyword: [arm, {"type": "null"}]})
        assert isinstance(field.type, ir.UnionType), field
        assert field.type.arms[-1] == ir.Primitive("null")
        assert ir.Primitive("null") not in field.type.arms[:-1]


def test_contradicting_union_arms_are_still_dropped() -> None:
    field = _field({"type": "string", "anyOf": [{"type": "integer"}, {"minLength": 1}]})
    assert field.type == ir.Primitive("string")


@pytest.mark.parametrize(
    "arms, kind, docs",
    [
        (
            [{"type": "string", "pattern": "^a"}, {"pattern": "b$"}],
            "string",
            ir.Docs(pattern="^a", notes=("pattern: b$",)),
        ),
        (
            [{"type": "integer", "multipleOf": 2}, {"multipleOf": 3}],
            "integer",
            ir.Docs(constraints=(("multipleOf", "6"),)),
        ),
        (
            [{"type": "number", "multipleOf": 0.5}, {"multipleOf": 0.3}],
            "number",
            ir.Docs(constraints=(("multipleOf", "0.5"),), notes=("multiple of 0.3",)),
        ),
        (
            [{"type": "string", "x-a": 1}, {"x-a": 2}],
            "string",
            ir.Docs(notes=("x-a: 1", "x-a: 2")),
        ),
    ],
)
def test_all_of_arms_differing_on_notes_keep_the_merged_type(
    arms: list[Any], kind: str, docs: ir.Docs
) -> None:
    field = _field({"allOf": arms})
    assert field.type == ir.Primitive(kind)  # type: ignore[arg-type]
    assert field.docs == docs


def test_properties_beside_ref_arms_belong_in_every_arm() -> None:
    compiled = compile_value(
        {
            "name": "t",
            "inputSchema": {
                "type": "object",
                "properties": {"workspace_id": {"type": "string"}},
                "required": ["workspace_id"],
                "anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}],
                "$defs": {
                    "A": {"type": "object", "properties": {"a": {"type": "string"}}},
                    "B": {"type": "object", "properties": {"b": {"type": "integer"}}},
                },
            },
        }
    )
    assert compiled.catalog is not None and not compiled.warnings
    objects = {t.name: t for t in compiled.catalog.tools[0].types if isinstance(t, ir.ObjectType)}
    assert [(f.key, f.required) for f in objects["T_ArgsA"].fields] == [
        ("workspace_id", True),
        ("a", False),
    ]
    assert [(f.key, f.required) for f in objects["T_ArgsB"].fields] == [
        ("workspace_id", True),
        ("b", False),
    ]


DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def _legacy_or_modern(legacy: bool) -> dict[str, Any]:
    """One schema, spelled with draft-07 `definitions` and tuple `items` or with 2020-12
    `$defs` and `prefixItems`; a reference into a non-keyword container (`group/inner`),
    one from inside it, and references into the tuple's items."""
    defs, tuple_key = ("definitions", "items") if legacy else ("$defs", "prefixItems")
    pair: dict[str, Any] = {"type": "array", tuple_key: [{"type": "string"}, {"type": "number"}]}
    schema: dict[str, Any] = {
        "type": "object",
        defs: {
            "group": {"inner": {"type": "array", "items": {"$ref": f"#/{defs}/leaf"}}},
            "leaf": {"type": "integer"},
        },
        "properties": {
            "pair": pair,
            "grouped": {"$ref": f"#/{defs}/group/inner"},
            "second": {"$ref": f"#/properties/pair/{tuple_key}/1"},
        },
        "required": ["grouped", "second"],
    }
    return {"$schema": DRAFT_07, **schema} if legacy else schema


def test_refs_survive_the_legacy_renames() -> None:
    """`definitions` becomes `$defs` and array `items` becomes `prefixItems`; references
    into a non-keyword container, from inside one, or into `items/N` follow the rename."""
    fields = []
    for legacy in (True, False):
        compiled = compile_value({"name": "t", "inputSchema": _legacy_or_modern(legacy)})
        assert compiled.catalog is not None and not compiled.diagnostics, compiled.diagnostics
        [args] = [t for t in compiled.catalog.tools[0].types if t.name == "TArgs"]
        assert isinstance(args, ir.ObjectType)
        fields.append({f.key: f.type for f in args.fields})
    assert fields[0] == fields[1]
    assert fields[0]["grouped"] == ir.ArrayType(ir.Primitive("integer"))
    assert fields[0]["second"] == ir.Primitive("number")


def test_unresolved_refs_are_reported_where_the_source_has_them() -> None:
    """A broken reference inside a renamed container is reported at the pointer the source
    spells (`definitions`, `items`), not at the renamed one."""
    compiled = compile_value(
        {
            "name": "t",
            "inputSchema": {
                "$schema": DRAFT_07,
                "type": "object",
                "definitions": {"A": {"$ref": "#/definitions/nope"}},
                "properties": {
                    "a": {"$ref": "#/definitions/A"},
                    "p": {"type": "array", "items": [{"$ref": "#/nope"}]},
                },
            },
        }
    )
    assert sorted(d.pointer for d in compiled.warnings) == [
        "/inputSchema/definitions/A/$ref",
        "/inputSchema/properties/p/items/0/$ref",
    ]


def test_a_2020_12_ref_into_items_is_not_taken_for_a_tuple() -> None:
    """Only drafts that spelled tuples as array `items` read `items/N` as `prefixItems/N`."""
    compiled = compile_value(
        {
            "name": "t",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "p": {"type": "array", "prefixItems": [{"type": "string"}]},
                    "q": {"$ref": "#/properties/p/items/0"},
                },
            },
        }
    )
    assert [d.pointer for d in compiled.warnings] == ["/inputSchema/properties/q/$ref"]


def test_merged_tuples_hold_both_tuples_at_every_position() -> None:
    first = {"prefixItems": [{"type": "integer"}], "items": {"type": "boolean"}}
    second = {"prefixItems": [{"minimum": 0}, {"type": "string"}]}
    assert merge_schemas([first, second]) == {
        "prefixItems": [
            {"allOf": [{"type": "integer"}, {"minimum": 0}]},
            {"allOf": [{"type": "string"}, {"type": "boolean"}]},
        ],
        "items": {"type": "boolean"},
    }
    closed = {"prefixItems": [{"type": "integer"}], "items": False}
    assert merge_schemas([second, closed])["prefixItems"] == [
        {"allOf": [{"minimum": 0}, {"type": "integer"}]}
    ]


def test_union_arms_that_cannot_take_the_base_are_kept_alone_with_a_warning() -> None:
    compiled = compile_value(
        {
            "name": "t",
            "inputSchema": {
                "type": "object",
                "unevaluatedProperties": False,
                "oneOf": [
                    {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"required": ["b"], "unevaluatedProperties": True},
                ],
            },
        }
    )
    assert compiled.catalog is not None
    assert [d.pointer for d in compiled.warnings] == ["/inputSchema/oneOf/1"]
    alias = compiled.catalog.tools[0].types[-1]
    assert isinstance(alias, ir.AliasType) and isinstance(alias.target, ir.UnionType)
    assert len(alias.target.arms) == 2


def test_merge_notes_do_not_depend_on_keyword_order() -> None:
    """Two `allOf` arms with two patterns and two formats: every order of their keywords
    gives the same notes (the merged notes are sorted)."""
    import itertools

    from codegen.render.python.sdk import render_python_sdk

    first = {"type": "string", "pattern": "^a", "format": "date", "minLength": 1}
    second = {"type": "string", "pattern": "b$", "format": "email", "maxLength": 5}
    texts = set()
    for a in itertools.permutations(first):
        for b in itertools.permutations(second):
            arms = [{k: first[k] for k in a}, {k: second[k] for k in b}]
            schema = {"type": "object", "properties": {"p": {"allOf": arms}}}
            compiled = compile_value({"tools": [{"name": "t", "inputSchema": schema}]})
            assert compiled.catalog is not None
            texts.add(render_python_sdk(compiled.catalog))
    assert len(texts) == 1
    assert "pattern: b$" in texts.pop()


def _args_fields(compiled: Any) -> dict[str, ir.Field]:
    assert compiled.catalog is not None, compiled.errors
    tool = compiled.catalog.tools[0]
    args = next(t for t in tool.types if isinstance(t, ir.ObjectType) and t.name == tool.args.name)
    return {f.key: f for f in args.fields}


def test_mutually_recursive_unions_keep_every_arm() -> None:
    """`A = string | B`, `B = number | A`: both admit string and number, whichever is
    reached first, and the cycle is flattened rather than spelled as an alias of itself."""
    defs = {
        "A": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/B"}]},
        "B": {"anyOf": [{"type": "number"}, {"$ref": "#/$defs/A"}]},
    }
    both = ir.UnionType((ir.Primitive("string"), ir.Primitive("number")))
    for order in (["a", "b"], ["b", "a"]):
        target = {"a": "#/$defs/A", "b": "#/$defs/B"}
        properties = {key: {"$ref": target[key]} for key in order}
        schema = {"type": "object", "$defs": defs, "properties": properties}
        fields = _args_fields(compile_value({"name": "t", "inputSchema": schema}))
        for key in order:
            arms = fields[key].type
            assert isinstance(arms, ir.UnionType) and set(arms.arms) == set(both.arms), order


def test_union_cycles_through_arrays_name_each_member_with_every_arm() -> None:
    """`A = string | B | list[A]`, `B = number | A | list[B]`: each member that recursion
    names is an alias of every arm of the cycle, never of itself alone."""
    defs = {
        "A": {
            "anyOf": [
                {"type": "string"},
                {"$ref": "#/$defs/B"},
                {"type": "array", "items": {"$ref": "#/$defs/A"}},
            ]
        },
        "B": {
            "anyOf": [
                {"type": "number"},
                {"$ref": "#/$defs/A"},
                {"type": "array", "items": {"$ref": "#/$defs/B"}},
            ]
        },
    }
    schema = {
        "type": "object",
        "$defs": defs,
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/B"}},
    }
    compiled = compile_value({"name": "t", "inputSchema": schema})
    assert compiled.catalog is not None
    aliases = {
        t.name: t.target for t in compiled.catalog.tools[0].types if isinstance(t, ir.AliasType)
    }
    assert set(aliases) == {"T_A", "T_B"}
    for name, target in aliases.items():
        assert isinstance(target, ir.UnionType)
        assert ir.RefType(name) not in target.arms
        assert {ir.Primitive("string"), ir.Primitive("number")} <= set(target.arms)
        assert {ir.ArrayType(ir.RefType("T_A")), ir.ArrayType(ir.RefType("T_B"))} <= set(
            target.arms
        )


def test_a_clique_of_unions_builds_in_linear_time() -> None:
    """Every union refers to every other: each node is built once, not once per path."""
    size = 40
    defs = {
        f"N{i}": {"anyOf": [{"const": i}, *({"$ref": f"#/$defs/N{j}"} for j in range(size))]}
        for i in range(size)
    }
    properties = {f"p{i}": {"$ref": f"#/$defs/N{i}"} for i in range(size)}
    schema = {"type": "object", "$defs": defs, "properties": properties}
    fields = _args_fields(compile_value({"name": "t", "inputSchema": schema}))
    for field in fields.values():
        assert field.type == ir.LiteralType(tuple(range(size)))


class _TooManyMerges(AssertionError):
    """The build merged more schemas than a test allows (raised at once, so a build whose
    merges grow exponentially fails in a moment instead of running for minutes)."""


@contextmanager
def _merges_at_most(limit: int) -> Iterator[list[int]]:
    """Count the build's calls to `merge_schemas` (the count in the list yielded); fail as
    soon as there are more than `limit`. A count, never a clock: a busy machine cannot fail
    the test."""
    count = [0]

    def counted(schemas: list[dict[str, Any]], notes: list[str] | None = None) -> Any:
        count[0] += 1
        if count[0] > limit:
            raise _TooManyMerges(f"more than {limit} merges")
        return merge_schemas(schemas, notes)

    with mock.patch.object(combining, "merge_schemas", counted):
        yield count


STRING = {"type": "string"}


def _ref_fan(depth: int, leaf: dict[str, Any], wrapped: bool = False) -> dict[str, Any]:
    """`L{k}a` and `L{k}b` each a union of both `L{k+1}`s, with `minLength` beside the
    root's union: 2**depth paths to each leaf, every one through merged unions."""

    def arm(name: str) -> dict[str, Any]:
        ref = {"$ref": f"#/$defs/{name}"}
        return {"allOf": [ref]} if wrapped else ref

    defs = {
        f"L{k}{side}": {"anyOf": [arm(f"L{k + 1}a"), arm(f"L{k + 1}b")]}
        if k < depth - 1
        else {**leaf, "title": side}
        for k in range(depth)
        for side in "ab"
    }
    return {"anyOf": [arm("L0a")], "minLength": 1, "$defs": defs}


@pytest.mark.parametrize("wrapped", [False, True], ids=["ref-arms", "allof-arms"])
def test_merged_unions_over_a_fan_of_refs_merge_each_arm_once(wrapped: bool) -> None:
    """The keywords beside a union merged into `$ref` arms that fan out: each (arm, keywords)
    pair is merged once and its type reused, not merged again once per path (2**17 paths
    here; the build took seconds)."""
    depth = 17
    with _merges_at_most(8 * 2 * depth):
        compiled = compile_value({"name": "t", "inputSchema": _ref_fan(depth, STRING, wrapped)})
    assert compiled.catalog is not None and not compiled.warnings
    assert compiled.catalog.tools[0].args == ir.Primitive("string")


def test_a_merge_reached_by_many_paths_is_one_named_type() -> None:
    """A merged object is named where it is first reached and every other path refers to
    that name: one type per distinct merge, each name decided once."""
    leaf = {"type": "object", "properties": {"x": STRING}}
    schema = {**_ref_fan(17, leaf), "required": ["x"]}
    del schema["minLength"]
    with _merges_at_most(8 * 2 * 17):
        compiled = compile_value({"name": "t", "inputSchema": schema})
    assert compiled.catalog is not None and not compiled.warnings
    objects = [t for t in compiled.catalog.tools[0].types if isinstance(t, ir.ObjectType)]
    assert len(objects) == 2  # the two leaves, each merged with `required` once
    assert all(o.fields[0].required for o in objects)


def _union_clique(size: int) -> dict[str, Any]:
    """`size` unions that each refer to every one of them, with `minimum` beside the root's."""
    defs = {
        f"N{i}": {"anyOf": [{"const": i}, *({"$ref": f"#/$defs/N{j}"} for j in range(size))]}
        for i in range(size)
    }
    return {"anyOf": [{"$ref": "#/$defs/N0"}], "minimum": 0, "$defs": defs}


def test_merged_unions_over_a_clique_of_refs_merge_a_polynomial_number_of_times() -> None:
    """Every union refers to every other and keywords stand beside the root's: the merges
    are one per (arm, keywords) pair, not one per ordering of the clique (8! of them; the
    build took seconds)."""
    size = 8
    with _merges_at_most(2 * size * size):
        compiled = compile_value({"name": "t", "inputSchema": _union_clique(size)})
    assert compiled.catalog is not None
    (alias,) = compiled.catalog.tools[0].types
    assert isinstance(alias, ir.AliasType)
    assert alias.target == ir.LiteralType(tuple(range(size)))


def _crosswise(depth: int) -> dict[str, Any]:
    """`P{k}` and `Q{k}`, objects whose `x` and `y` refer to `P{k+1}` and `Q{k+1}` in
    opposite orders, merged by the root's `allOf`: each merge makes new `allOf`s for the
    properties both declare, and those merge the next level's pair again."""
    defs = {}
    for k in range(depth):

        def ref(name: str, k: int = k) -> dict[str, Any]:
            return {"$ref": f"#/$defs/{name}{k + 1}"} if k < depth - 1 else STRING

        defs[f"P{k}"] = {"type": "object", "properties": {"x": ref("P"), "y": ref("Q")}}
        defs[f"Q{k}"] = {"type": "object", "properties": {"x": ref("Q"), "y": ref("P")}}
    return {"allOf": [{"$ref": "#/$defs/P0"}, {"$ref": "#/$defs/Q0"}], "$defs": defs}


def test_allofs_a_merge_makes_are_merged_once_per_content() -> None:
    """The `allOf` a merge makes for a property both arms declare is merged once for all
    the made nodes alike, not once per path (2**30 of them here)."""
    depth = 30
    with _merges_at_most(8 * depth):
        compiled = compile_value({"name": "t", "inputSchema": _crosswise(depth)})
    assert compiled.catalog is not None and not compiled.warnings
    objects = [t for t in compiled.catalog.tools[0].types if isinstance(t, ir.ObjectType)]
    assert len(objects) <= 8 * depth
    assert len({o.name for o in objects}) == len(objects)


def _piled_up(depth: int) -> dict[str, Any]:
    """A fan of refs whose every def adds a property of its own: the keywords merged into
    each arm differ along every path, so there is a distinct object per path (2**depth)."""
    defs = {}
    for k in range(depth):
        arms = [{"$ref": f"#/$defs/L{k + 1}a"}, {"$ref": f"#/$defs/L{k + 1}b"}]
        for side in "ab":
            defs[f"L{k}{side}"] = {
                "properties": {f"{side}{k}": STRING},
                "anyOf": arms if k < depth - 1 else [{"type": "object"}],
            }
    return {"anyOf": [{"$ref": "#/$defs/L0a"}], "minProperties": 1, "$defs": defs}


def _merge_limit_warnings(compiled: Any, budget: int) -> list[str]:
    """The pointers of the warnings that merges past `budget` degraded a node."""
    assert compiled.catalog is not None
    limited = [w for w in compiled.warnings if f"more than {budget} schema merges" in w.message]
    assert all(w.message.endswith("the limit for its size; typed as any value") for w in limited)
    return [w.pointer for w in limited]


def test_merges_past_a_schemas_budget_degrade_with_one_warning_per_place() -> None:
    """What no memo can share (a type per path) stops at `MERGES_PER_NODE` merges per node
    of the schema: the nodes that need more are any value, each place warned of once."""
    schema = _piled_up(40)
    budget = limits.MERGES_PER_NODE * len(normalize_schema(schema).origins)
    assert budget < limits.MERGE_LIMIT
    with _merges_at_most(budget):
        compiled = compile_value({"name": "t", "inputSchema": schema})
    pointers = _merge_limit_warnings(compiled, budget)
    assert pointers and len(set(pointers)) == len(pointers)
    assert all(p.startswith("/inputSchema/$defs/L") for p in pointers)


def test_no_schema_makes_more_merges_than_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """However large a schema, its merges stop at `MERGE_LIMIT`."""
    monkeypatch.setattr(limits, "MERGE_LIMIT", 300)
    with _merges_at_most(300):
        compiled = compile_value({"name": "t", "inputSchema": _piled_up(40)})
    assert _merge_limit_warnings(compiled, 300)


MIN_LENGTH = {"minLength": 1}


@st.composite
def _ref_fanouts(draw: st.DrawFn) -> dict[str, Any]:
    """Unions over `$ref`s to one another (cycles, cliques, diamonds), with one keyword
    beside the root's union and beside some of the others."""
    size = draw(st.integers(2, 6))
    names = [f"d{i}" for i in range(size)]
    refs = st.sampled_from(names).map(lambda name: {"$ref": f"#/$defs/{name}"})
    arms = st.lists(st.one_of(refs, refs, refs, st.just(STRING)), min_size=1, max_size=size)
    beside = st.sampled_from([{}, MIN_LENGTH])
    defs = {name: {**draw(beside), "anyOf": draw(arms)} for name in names}
    root = draw(st.lists(refs, min_size=1, max_size=3))
    return {"anyOf": root, **MIN_LENGTH, "$defs": defs}


def _arms(schema: dict[str, Any]) -> int:
    return len(schema["anyOf"]) + sum(len(d["anyOf"]) for d in schema["$defs"].values())


@settings(max_examples=100, deadline=None)
@given(_ref_fanouts())
def test_merges_stay_linear_in_the_size_of_a_ref_fanout(schema: dict[str, Any]) -> None:
    """However the unions refer to one another, each (arm, keywords) pair is merged once:
    with one set of keywords beside the unions, at most one merge per `$ref` target (the
    `allOf` that merges it) and one per arm."""
    with _merges_at_most(_arms(schema) + len(schema["$defs"])):
        compiled = compile_value({"name": "t", "inputSchema": schema})
    assert compiled.catalog is not None
    assert not any("schema merges" in w.message for w in compiled.warnings)


def test_draft03_required_flag_makes_the_key_required() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-03/schema#",
        "type": "object",
        "properties": {
            "name": {"type": "string", "required": True},
            "age": {"type": "integer", "required": False},
            "note": {"type": "string"},
        },
    }
    compiled = compile_value({"name": "t", "inputSchema": schema})
    fields = _args_fields(compiled)
    assert [(k, f.required) for k, f in fields.items()] == [
        ("name", True),
        ("age", False),
        ("note", False),
    ]
    assert not compiled.warnings


def test_maps_of_union_values_are_typed_whichever_keyword_holds_them() -> None:
    """`patternProperties` with a union value: typed by it when every key matches the
    pattern, or beside `additionalProperties`; alone with a narrower pattern, other keys
    may hold anything, so the map is of any value and a note gives the matching keys'
    values in full."""
    compiled = compile_sources([str(SCHEMAS / "inline_docs.json")])
    assert compiled.catalog is not None
    tool = next(t for t in compiled.catalog.tools if t.name == "maps")
    [args] = [t for t in tool.types if t.name == "MapsArgs"]
    assert isinstance(args, ir.ObjectType)
    fields = {f.key: f for f in args.fields}
    typed = ir.MapType(ir.UnionType((ir.Primitive("string"), ir.RefType("Maps_Inc"))))
    for key in ("catch_all", "additional_only", "both"):
        assert fields[key].type == typed, key
    assert isinstance(fields["pattern_only"].type, ir.MapType)
    assert isinstance(fields["pattern_only"].type.values, ir.AnyType)
    assert any(
        note.startswith('values of keys matching "^x": {"anyOf"')
        for note in fields["pattern_only"].docs.notes
    )
