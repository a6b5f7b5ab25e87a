"""The model-facing sections are prefix-stable: a tool's text depends only on the tools
that sort before it.

Names (short names, numbered ones, shapes declared once and reused), `@tool(...)` for a
function name an earlier type holds, and `ditto` comments are all decided in reading order,
so adding tools never changes the text before the first of them: a provider's prefix cache
keeps everything up to there. The catalogs below are built to make those decisions meet:
field names that are also tool names (`Address`, `address`), type-like keys (`URL`),
repeated nested shapes and repeated field docs.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.engine import compile_value
from codegen.render.sections.python import render_python_section_sdk
from codegen.render.sections.typescript import render_typescript_section_sdk

WORDS = ["address", "Address", "data", "Data", "URL", "url", "item", "Item", "list_items"]
DOCS = [None, "The address.", "Where it is", "Max results; see docs"]


@st.composite
def shapes(draw: st.DrawFn, depth: int = 2) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True))
    properties: dict[str, Any] = {}
    for key in keys:
        kind = draw(st.sampled_from(["leaf", "leaf", "object", "array"]))
        if kind == "leaf" or depth == 0:
            node: dict[str, Any] = {"type": draw(st.sampled_from(["string", "integer"]))}
        elif kind == "object":
            node = draw(shapes(depth - 1))
        else:
            node = {"type": "array", "items": draw(shapes(depth - 1))}
        doc = draw(st.sampled_from(DOCS))
        if doc is not None:
            node["description"] = doc
        properties[key] = node
    closed = draw(st.booleans())
    return {"type": "object", "properties": properties} | (
        {"additionalProperties": False} if closed else {}
    )


@st.composite
def catalogs(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(
        st.lists(st.sampled_from([*WORDS, "get", "Get_Data"]), min_size=2, max_size=6, unique=True)
    )
    tools = []
    for name in names:
        tool: dict[str, Any] = {"name": name, "inputSchema": draw(shapes())}
        if draw(st.booleans()):
            tool["outputSchema"] = draw(shapes())
        tools.append(tool)
    return tools


def _sections(tools: list[dict[str, Any]]) -> tuple[str, str]:
    compiled = compile_value({"tools": tools})
    assert compiled.catalog is not None, compiled.diagnostics
    catalog = compiled.catalog
    return render_python_section_sdk(catalog), render_typescript_section_sdk(catalog)


def _open_python(text: str) -> str:
    """The Python section without its end: what tools sorting later extend."""
    return text


def _open_typescript(text: str) -> str:
    """The TypeScript section up to the end of its last `tools` member."""
    return text[: text.index("\n};\n")]


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(catalogs())
def test_tools_sorting_later_never_change_the_text_before_them(tools: list[Any]) -> None:
    ordered = sorted(tools, key=lambda t: t["name"])
    python, typescript = _sections(ordered)
    for cut in range(1, len(ordered)):
        before_python, before_typescript = _sections(ordered[:cut])
        assert python.startswith(_open_python(before_python))
        assert typescript.startswith(_open_typescript(before_typescript))


def test_a_later_tool_whose_name_an_earlier_type_holds_is_shown_under_tool() -> None:
    """`A` names its field's type `Zone`; the later tool `Zone` keeps its call form through
    `@tool("Zone")`, and `A`'s text is what it was alone."""
    shape = {"type": "object", "properties": {"street": {"type": "string"}}}
    first = {
        "name": "A",
        "inputSchema": {"type": "object", "properties": {"zone": shape}, "required": ["zone"]},
    }
    clash = {"name": "Zone", "inputSchema": {"type": "object", "properties": {}}}
    alone, _ = _sections([first])
    both, _ = _sections([first, clash])
    assert "async def A(*, zone: Zone) -> Any: ...\nclass Zone(TypedDict, total=False):" in alone
    assert both.startswith(alone)
    assert both[len(alone) :] == '@tool("Zone")\nasync def _() -> Any: ...\n'


def test_a_shape_is_declared_once_and_reused_by_later_tools() -> None:
    shape = {
        "type": "object",
        "properties": {"street": {"type": "string", "description": "Street and number"}},
    }
    tools = [
        {"name": name, "inputSchema": {"type": "object", "properties": {"address": shape}}}
        for name in ("a", "b", "c")
    ]
    python, typescript = _sections(tools)
    assert python.count("class Address(TypedDict, total=False):") == 1
    assert python.count("address: Address") == 3
    assert typescript.count("interface Address ") == 1
    assert python.count("# Street and number") == 1  # declared once, so written once


def test_repeated_field_docs_are_written_once_then_ditto() -> None:
    field = {"type": "string", "description": "Kubernetes namespace"}
    tools = [
        {"name": name, "inputSchema": {"type": "object", "properties": {"namespace": field}}}
        for name in ("a", "b")
    ]
    python, typescript = _sections(tools)
    assert "namespace: str = ..., # Kubernetes namespace\n" in python
    assert "namespace: str = ..., # ditto\n" in python
    assert "namespace?: string // Kubernetes namespace\n" in typescript
    assert "namespace?: string // ditto\n" in typescript


def test_a_later_tool_never_changes_whether_an_earlier_object_fits_one_line() -> None:
    """`Address`'s argument object is written on one line or not by the names its types
    want, not by the names the IR gives them, which a later tool (`address`) can lengthen:
    its line stays what it was alone."""
    shape = {"type": "object", "properties": {"address": {"type": "string"}}}
    first = {
        "name": "Address",
        "inputSchema": {
            "type": "object",
            "properties": {"address": shape, "Address": shape, "data": shape},
        },
    }
    later = {"name": "address", "inputSchema": shape}
    _, alone = _sections([first])
    _, both = _sections([first, later])
    assert both.startswith(_open_typescript(alone))
    assert " Address(args: { address?: Address; Address?: Address; data?: Address })" in both
