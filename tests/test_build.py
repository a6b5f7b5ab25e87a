"""The IR: golden cases pinned as readable text, names, degradation and stability."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import ir
from codegen.build import build_type
from codegen.names import NameAllocator, camel_case, is_class_field, is_method_name, type_base
from codegen.pipeline import compile_sources, compile_value
from conftest import GOLDEN_CASES, ROOT, SCHEMAS


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_ir_snapshot(case: str, golden: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # sources named relative to the checkout, wherever it is
    compiled = compile_sources([f"schemas/{case}.json"])
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
    compiled = compile_value(
        {
            "tools": [
                {
                    "name": "json",
                    "inputSchema": {
                        "$defs": {
                            "value": {"type": "object", "properties": {"a": {"type": "string"}}}
                        },
                        "properties": {"v": {"$ref": "#/$defs/value"}},
                    },
                },
                {
                    "name": "tool",
                    "inputSchema": {
                        "$defs": {
                            "callError": {"type": "object", "properties": {"a": {"type": "string"}}}
                        },
                        "properties": {"v": {"$ref": "#/$defs/callError"}},
                    },
                },
                {
                    "name": "array",
                    "inputSchema": {
                        "$defs": {
                            "buffer": {"type": "object", "properties": {"a": {"type": "string"}}}
                        },
                        "properties": {"v": {"$ref": "#/$defs/buffer"}},
                    },
                },
            ]
        }
    )
    assert compiled.catalog is not None
    names = {t.name for t in compiled.catalog.types}
    assert {"JsonValue2", "ToolCallError2", "ArrayBuffer2"} <= names
    assert not names & {"JsonValue", "ToolCallError", "ArrayBuffer"}


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
    # "my-tool" < "my.tool" < "my_tool" in code-point order.
    assert args == {"my-tool": "MyToolArgs", "my.tool": "MyToolArgs2", "my_tool": "MyToolArgs3"}
    nested = {t.name: [n.name for n in t.types] for t in compiled.catalog.tools}
    assert nested["my.tool"] == ["MyToolArgs2X", "MyToolArgs2"]


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
    assert pointers == {
        f"{base}/not_empty/not",
        f"{base}/conditional/if",
        f"{base}/remote/$ref",
        f"{base}/dangling/$ref",
        f"{base}/dependent/dependentSchemas",
        f"{base}/conflict/allOf",
    }
    [args] = [t for t in compiled.catalog.tools[0].types if t.name == "ConditionalArgs"]
    assert isinstance(args, ir.ObjectType)
    types = {f.key: f.type for f in args.fields}
    assert types["fine"] == ir.Primitive("string")
    assert isinstance(types["not_empty"], ir.UnknownType)


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
    assert [t.name for t in mixed.catalog.types] == ["TArgs1", "TArgs2", "TArgs"]


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
