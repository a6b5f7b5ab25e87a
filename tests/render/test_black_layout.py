"""The black-compatible layout: random type expressions in every statement shape the SDK
emits must come out as a fixed point of `black`, and hostile text must never change the
module's structure."""

from __future__ import annotations

import ast
from typing import Any

import black
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.engine import compile_value
from codegen.render.python import black_layout as fmt
from codegen.render.python.sdk import py_str, render_python_sdk
from support.sdk_checks import HEADER_STATEMENTS, header_statements
from support.type_expressions import exprs

MODE = black.Mode()


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    exprs,
    exprs,
    exprs,
    st.sampled_from([1, 10, 40]),
    st.sampled_from([1, 50, 80]),
    st.sampled_from([1, 30, 60]),
    st.sampled_from([3, 30, 70, 90]),
    st.booleans(),
)
def test_layout_is_a_black_fixed_point(
    field_expr: fmt.Expr,
    entry_expr: fmt.Expr,
    alias_expr: fmt.Expr,
    key: int,
    cls: int,
    method: int,
    name: int,
    stub: bool,
) -> None:
    lines = fmt.class_header("C" + "x" * cls, "TypedDict")
    lines += fmt.field("k" * key, field_expr)
    lines += fmt.field("k" * key + "2", fmt.Sub("NotRequired", (entry_expr,)))
    lines += ["", ""]
    body = [
        f"{fmt.INDENT}{{",
        *fmt.dict_entry('"key-1"', entry_expr, fmt.INDENT * 2),
        *fmt.dict_entry('"key-2"', field_expr, fmt.INDENT * 2),
        f"{fmt.INDENT}}}",
    ]
    lines += fmt.call_lines("F", "TypedDict", [[f'{fmt.INDENT}"F"'], body])
    lines += ["", ""]
    lines += fmt.assignment("A" * key + ": TypeAlias", alias_expr)
    lines += ["", "", "class Tools(Protocol):"]
    lines += fmt.method("m" * method, "A" * name, "R" * name, stub)
    if not stub:
        lines += ['        """Doc."""', "        ..."]
    source = "\n".join(lines) + "\n"
    assert black.format_str(source, mode=MODE) == source


hostile_text = st.lists(
    st.sampled_from(
        [
            '"',
            "'",
            "\\",
            "\n",
            "\r",
            "\u2028",
            "\u2029",
            "\x00",
            "\x0c",
            "\x85",
            "*/",
            "#",
            "`",
            "\ud800",
            "\u202e",
            "\t",
            " ",
            "a",
            "é",
            "\U0001f600",
            "type: ignore",
            "fmt: off",
            "@ts-ignore",
            '"""',
            "x = 1",
            "{",
            "}",
            "]",
        ]
    ),
    max_size=20,
).map("".join)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_text, hostile_text, hostile_text, hostile_text, hostile_text)
def test_hostile_text_never_changes_the_module(
    description: str, key: str, value: str, title: str, tool: str
) -> None:
    tools: list[dict[str, Any]] = [
        {
            "name": "t",
            "description": description,
            "inputSchema": {
                "type": "object",
                "description": title,
                "properties": {
                    key or "k": {
                        "type": "string",
                        "description": description,
                        "enum": [value, description],
                        "default": value,
                        "pattern": title,
                        "title": title,
                    }
                },
                "additionalProperties": False,
            },
        }
    ]
    if tool.strip() and tool != "t":
        tools.append(
            {
                "name": tool,
                "description": description,
                "inputSchema": {"type": "object", "properties": {}},
            }
        )
    compiled = compile_value({"tools": tools})
    assert compiled.catalog is not None, compiled.errors
    text = render_python_sdk(compiled.catalog)
    module = ast.parse(text)
    assert black.format_str(text, mode=MODE) == text
    kinds = [type(node).__name__ for node in module.body]
    header = header_statements(module)
    assert kinds[:header] == [
        "Expr",
        *["ImportFrom"] * (2 + header - HEADER_STATEMENTS),
        "If",
        "ClassDef",
        "ClassDef",
        "Assign",
    ]
    assert kinds[-3:] == ["AnnAssign", "ClassDef", "AnnAssign"]
    assert len(kinds) == header + 3 + len(compiled.catalog.types)
    tools_class = module.body[-2]
    assert isinstance(tools_class, ast.ClassDef)
    for node in tools_class.body:
        assert isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef)
        if len(node.body) == 2:
            doc = node.body[0]
            assert isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
            assert isinstance(doc.value.value, str)


@given(st.text(max_size=30))
def test_py_str_round_trips(value: str) -> None:
    literal = py_str(value)
    assert "\n" not in literal and "\r" not in literal
    assert ast.literal_eval(literal) == value
    literal.encode("utf-8")


def test_width_table_matches_black() -> None:
    """`scripts/generate_widths.py` keeps the table in step with the pinned black."""
    from black.strings import str_width

    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        assert fmt.width(char) == str_width(char), hex(code)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    key=st.text(alphabet="ab-_.", min_size=1, max_size=140),
    args=st.integers(min_value=1, max_value=100),
    returns=st.one_of(st.just("Any"), st.integers(min_value=1, max_value=110)),
    described=st.booleans(),
)
def test_getitem_overloads_are_black_fixed_points(
    key: str, args: int, returns: Any, described: bool
) -> None:
    """`black` splits a long `def` at its parameters, and on its second pass at the return
    type's bracket when the first exploded it: the overload layout must match either way."""
    from codegen.render.python.protocol import overload_lines

    result = returns if isinstance(returns, str) else "R" * returns
    lines = overload_lines(py_str(key), "A" * args, result, ("Doc.",) if described else ())
    text = "class Tools(Protocol):\n    @overload\n" + "\n".join(lines) + "\n"
    assert black.format_str(text, mode=MODE) == text
