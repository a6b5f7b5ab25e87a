"""Regression tests for robustness bugs found while fuzzing the generator (issue 9).

The property tests themselves (hostile catalogs, meta-schema examples, tripwire sizes, the
JSON-Schema-Test-Suite) live in `test_robustness_properties.py`, `test_tripwires.py` and
`test_json_schema_test_suite.py`. Each test here pins one bug that was fixed in the
generator, on the smallest input that showed it:

- a type name or key long enough that the first line of a split annotation overflowed:
  `black` then wraps the annotation (or the alias value) in parentheses, which the layout
  did not, so the SDK was not a `black` fixed point (`pyformat.layout`, `names.MAX_BASE`);
- a long acyclic `$ref` chain (each link a reference, an object field or a union arm)
  recursed once per link and raised `RecursionError` (`limits.DEPTH_LIMIT`);
- a node built once and reached again deeper through a `$ref` stacked its containers past
  `limits.INLINE_LIMIT`, so the Python annotation had too many nested brackets to parse;
- a default nested hundreds of levels deep made the Python note renderer recurse past the
  recursion limit (`python.py_literal` is iterative);
- `required` membership, union-arm naming and meta-schema `uniqueItems` were quadratic in
  the width of an object, a union or an enum.
"""

from __future__ import annotations

import ast
import time
from typing import Any

import black
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.engine import compile_value
from codegen.ir_build.limits import DEPTH_LIMIT, INLINE_LIMIT, LITERAL_LIMIT
from codegen.render.python import black_layout as fmt
from codegen.render.python.sdk import render_python_sdk
from codegen.render.typescript.sdk import render_typescript_sdk
from support.type_expressions import exprs

MODE = black.Mode()


def _render(tools: list[dict[str, Any]]) -> tuple[str, str, list[str]]:
    compiled = compile_value({"tools": tools})
    assert compiled.catalog is not None, compiled.errors
    python = render_python_sdk(compiled.catalog)
    ast.parse(python)
    return python, render_typescript_sdk(compiled.catalog), [w.message for w in compiled.warnings]


# --- long names and keys ----------------------------------------------------------------

SHAPES: dict[str, Any] = {
    "map alias": {"type": "object", "additionalProperties": {"type": "string"}},
    "list alias": {"type": "array", "items": {"type": "string"}},
    "literal alias": {"enum": ["a", "b"]},
    "union alias": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
    "recursive alias": {"type": "array", "items": {"$ref": "#"}},
    "class": {"type": "object", "properties": {"x": {"type": "string"}}},
    "functional": {"type": "object", "properties": {"a-b": {"type": "string"}}},
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize(
    "name", ["a" * 58, "a" * 61, "a" * 64, "a" * 67, "a" * 70, "a" * 90, "type: ignore" * 50]
)
def test_long_type_names_stay_black_fixed_points(shape: str, name: str) -> None:
    schema = SHAPES[shape]
    tool = {"name": name, "description": "d", "inputSchema": schema, "outputSchema": schema}
    python, _, _ = _render([tool])
    assert black.format_str(python, mode=MODE) == python


@pytest.mark.parametrize("length", [70, 72, 75, 78, 81, 84, 90, 130])
@pytest.mark.parametrize(
    "value",
    [{"type": "string"}, {"type": ["string", "null"]}, {"enum": ["aaaaaaa", "bbbbbbb"]}],
    ids=["str", "optional union", "literal"],
)
def test_long_keys_stay_black_fixed_points(length: int, value: dict[str, Any]) -> None:
    key = "k" * length
    properties = {key: value, key + "2": value}
    schema = {"type": "object", "properties": properties, "required": [key]}
    python, _, _ = _render([{"name": "t", "inputSchema": schema}])
    assert black.format_str(python, mode=MODE) == python


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    exprs,
    exprs,
    st.integers(1, 200),
    st.integers(40, 70),
    st.integers(60, 200),
    st.booleans(),
)
def test_layout_with_long_heads_is_a_black_fixed_point(
    field_expr: fmt.Expr, alias_expr: fmt.Expr, key: int, name: int, method: int, stub: bool
) -> None:
    """`test_black_layout`'s layout property with the long keys, alias names and method names
    that hostile schemas produce (type names are at most `MAX_BASE` plus a suffix)."""
    lines = fmt.class_header("C" * name, "TypedDict")
    lines += fmt.field("k" * key, field_expr)
    lines += fmt.field("k" * key + "2", fmt.Sub("NotRequired", (field_expr,)))
    lines += ["", ""]
    body = [f"{fmt.INDENT}{{", *fmt.dict_entry('"' + "e" * key + '"', field_expr, "        ")]
    lines += fmt.call_lines("F" * name, "TypedDict", [[f'    "{"F" * name}"'], [*body, "    }"]])
    lines += ["", ""]
    lines += fmt.assignment("A" * name + ": TypeAlias", alias_expr)
    lines += ["", "", "class Tools(Protocol):"]
    lines += fmt.method("m" * method, "A" * name, "R" * name, stub)
    if not stub:
        lines += ['        """Doc."""', "        ..."]
    source = "\n".join(lines) + "\n"
    assert black.format_str(source, mode=MODE) == source


# --- depth --------------------------------------------------------------------------------


def _chain(kind: str, length: int) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for index in range(length):
        link: dict[str, Any] = (
            {"$ref": f"#/$defs/d{index + 1}"} if index + 1 < length else {"type": "string"}
        )
        if kind == "object":
            link = {"type": "object", "properties": {"next": link}}
        elif kind == "union":
            link = {"anyOf": [link, {"type": "null"}]}
        defs[f"d{index}"] = link
    return {"type": "object", "properties": {"start": {"$ref": "#/$defs/d0"}}, "$defs": defs}


@pytest.mark.parametrize("kind", ["ref", "object", "union"])
def test_long_reference_chains_degrade_instead_of_recursing(kind: str) -> None:
    python, typescript, warnings = _render([{"name": "t", "inputSchema": _chain(kind, 3000)}])
    assert f"schema nested deeper than {DEPTH_LIMIT} levels; typed as any value" in warnings
    assert black.format_str(python, mode=MODE) == python
    assert typescript.count("\ninterface ") <= DEPTH_LIMIT + 3


def test_references_do_not_stack_containers_past_the_inline_limit() -> None:
    """Each `$defs` entry is an array 60 levels deep around a reference to the previous
    one: built alone each is within the limit, stacked they would be 240 levels deep."""

    def arrays(inner: dict[str, Any]) -> dict[str, Any]:
        for _ in range(60):
            inner = {"type": "array", "items": inner}
        return inner

    defs = {"d0": arrays({"type": "string"})}
    defs.update({f"d{i}": arrays({"$ref": f"#/$defs/d{i - 1}"}) for i in range(1, 4)})
    properties = {f"p{i}": {"$ref": f"#/$defs/d{i}"} for i in range(4)}
    schema = {"type": "object", "properties": properties, "$defs": defs}
    python, typescript, warnings = _render([{"name": "t", "inputSchema": schema}])
    message = f"containers nested deeper than {INLINE_LIMIT} levels through a reference"
    assert any(w.startswith(message) for w in warnings)
    assert max(line.count("[") for line in python.splitlines()) <= INLINE_LIMIT + 2
    assert "[]" * (INLINE_LIMIT + 1) not in typescript


def test_deeply_nested_default_renders() -> None:
    value: Any = 1
    for _ in range(505):
        value = [value]
    schema = {"type": "object", "properties": {"a": {"default": value, "examples": [value]}}}
    python, _, _ = _render([{"name": "t", "inputSchema": schema}])
    assert "# default: [[[[" in python


# --- width --------------------------------------------------------------------------------


def _timed(value: Any) -> tuple[float, list[str]]:
    """CPU seconds the compile took in this process (what a busy machine does not inflate),
    and its warnings."""
    start = time.process_time()
    compiled = compile_value(value)
    elapsed = time.process_time() - start
    assert compiled.catalog is not None, compiled.errors
    return elapsed, [w.message for w in compiled.warnings]


WIDTH = 40_000
"""Wide enough that a quadratic step takes minutes, while the linear build takes well under a
second: the 15 CPU seconds below leave a wide margin either way."""


def test_wide_required_list_is_linear() -> None:
    properties = {f"p{i}": {"type": "string"} for i in range(WIDTH)}
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    elapsed, _ = _timed({"tools": [{"name": "t", "inputSchema": schema}]})
    assert elapsed < 15


def test_union_arm_naming_is_linear() -> None:
    """Naming union arms looked for a discriminating key among every key of the first arm,
    scanning every arm for each: 40,000 keys times 4,000 arms."""
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(WIDTH)}}
    narrow = {"type": "object", "properties": {"q": {"type": "string"}}}
    union = {"anyOf": [wide] + [narrow] * 4000}
    schema = {"type": "object", "properties": {"u": union}}
    elapsed, _ = _timed({"tools": [{"name": "t", "inputSchema": schema}]})
    assert elapsed < 15


@pytest.mark.parametrize("values", ["strings", "mixed"])
def test_draft4_enum_uniqueness_is_linear(values: str) -> None:
    """Draft-04's meta-schema says `enum` items are unique; the compiled meta-schema
    compared every pair."""
    members: list[Any] = [
        f"v{i}" if values == "strings" else (i if i % 2 else [i]) for i in range(WIDTH)
    ]
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"e": {"enum": members}},
    }
    elapsed, warnings = _timed({"tools": [{"name": "t", "inputSchema": schema}]})
    assert elapsed < 15
    assert any(f"more than the limit of {LITERAL_LIMIT}" in w for w in warnings)
