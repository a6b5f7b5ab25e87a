"""Type names belong to their tool: adding or removing other tools never renames them.

Every name a tool's build claims starts with the tool's stem, and a stem holds no `_`, so the
names of two tools cannot meet. The one exception is tools whose stems coincide (`todo_add`
and `todo.add`): of those, the canonical spelling keeps the plain stem and the others get a
tag made from their own name. The properties below generate tool-name sets built to collide
(shared words, every separator, the words `args`, `output`, `item` and `value` that the
names of nested types are made of) and check both rules on the real builder.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import identifiers as names
from codegen import ir
from codegen.engine import compile_value
from codegen.identifiers import STEM_SEPARATOR, TAG_SEPARATOR, plain_stem, tool_stems

WORDS = ["run", "args", "output", "item", "value", "user", "get", "1", "x", "Run", "ARGS", "é"]
SEPARATORS = ["_", "-", ".", "", "__", " "]


@st.composite
def tool_names(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
    name = words[0]
    for word in words[1:]:
        name += draw(st.sampled_from(SEPARATORS)) + word
    return name


@st.composite
def schemas(draw: st.DrawFn, depth: int = 2) -> dict[str, Any]:
    """An object whose keys come from the same words, with nested objects, arrays of
    objects, unions of objects and `$defs`, so every kind of nested name is claimed."""
    keys = draw(st.lists(tool_names(), min_size=1, max_size=3, unique=True))
    properties: dict[str, Any] = {}
    for key in keys:
        kind = draw(st.sampled_from(["leaf", "object", "array", "union", "ref"]))
        if kind == "leaf" or depth == 0:
            properties[key] = {"type": "string"}
        elif kind == "object":
            properties[key] = draw(schemas(depth - 1))
        elif kind == "array":
            properties[key] = {"type": "array", "items": draw(schemas(depth - 1))}
        elif kind == "union":
            properties[key] = {"anyOf": [draw(schemas(depth - 1)), draw(schemas(depth - 1))]}
        else:
            properties[key] = {"$ref": "#/$defs/" + key}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    defs = {key: {"type": "object", "properties": {"n": {"type": "object"}}} for key in keys}
    if any("$ref" in p for p in properties.values()):
        schema["$defs"] = defs
    return schema


def _tool(name: str, schema: dict[str, Any], with_output: bool) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "inputSchema": schema}
    if with_output:
        tool["outputSchema"] = schema
    return tool


def _names_by_tool(tools: list[dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    compiled = compile_value({"tools": tools})
    assert compiled.catalog is not None, compiled.diagnostics
    return {
        tool.name: (
            ir.type_text(tool.args),
            ir.type_text(tool.output) if tool.output else "",
            *(named.name for named in tool.types),
        )
        for tool in compiled.catalog.tools
    }


@st.composite
def catalogs(draw: st.DrawFn) -> list[tuple[str, dict[str, Any], bool]]:
    """Random tools, plus tools named after another tool's nested types (`run` with a key
    `args` beside a tool `run_args`): the names that collided before stems had a separator."""
    entries = draw(
        st.lists(
            st.tuples(tool_names(), schemas(), st.booleans()),
            min_size=1,
            max_size=4,
            unique_by=lambda entry: entry[0],
        )
    )
    taken = {name for name, _, _ in entries}
    for name, schema, _ in list(entries):
        key = draw(st.sampled_from(sorted(schema["properties"])))
        role = draw(st.sampled_from(["args", "output", ""]))
        separator = draw(st.sampled_from(SEPARATORS))
        derived = separator.join(part for part in (name, role, key) if part)
        if derived not in taken and draw(st.booleans()):
            taken.add(derived)
            entries.append((derived, draw(schemas()), draw(st.booleans())))
    return entries


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(catalogs())
def test_a_tools_names_do_not_depend_on_the_other_tools(entries: list[Any]) -> None:
    tools = [_tool(*entry) for entry in entries]
    together = _names_by_tool(tools)
    stems = tool_stems(together)
    for tool in tools:
        name = tool["name"]
        if stems[name] != plain_stem(name):
            continue  # a tagged stem: the one case that depends on the catalog
        assert together[name] == _names_by_tool([tool])[name], name


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(catalogs())
def test_every_name_starts_with_its_tools_stem(entries: list[Any]) -> None:
    tools = [_tool(*entry) for entry in entries]
    together = _names_by_tool(tools)
    stems = tool_stems(together)
    assert len(set(stems.values())) == len(stems)
    for name, types in together.items():
        stem = stems[name]
        for type_name in types:
            if not type_name or not type_name[0].isalpha():
                continue  # an unnamed root: `str`, `list[...]`
            rest = type_name[len(stem) :]
            assert type_name.startswith(stem), (type_name, stem)
            assert rest.startswith(STEM_SEPARATOR) or rest.rstrip("0123456789") in (
                "Args",
                "Output",
            ), (type_name, stem)
            head = type_name.split(TAG_SEPARATOR)[0] if TAG_SEPARATOR in stem else stem
            assert STEM_SEPARATOR not in head


def test_the_issue_example_keeps_the_first_tools_names() -> None:
    run = _tool(
        "run",
        {
            "type": "object",
            "properties": {"args": {"type": "object", "properties": {"a": {"type": "string"}}}},
        },
        False,
    )
    run_args = _tool("run_args", {"type": "object", "properties": {"b": {"type": "string"}}}, False)
    alone = _names_by_tool([run])
    together = _names_by_tool([run, run_args])
    assert alone["run"] == together["run"] == ("RunArgs", "", "Run_ArgsArgs", "RunArgs")
    assert together["run_args"] == ("RunArgsArgs", "", "RunArgsArgs")


def test_tags_are_unique_and_come_from_the_name_alone() -> None:
    names = ["todo_add", "todo.add", "Todo-Add", "TODO_ADD", "todoAdd"]
    stems = tool_stems(names)
    assert stems["todo_add"] == "TodoAdd"
    assert len(set(stems.values())) == len(names)
    assert all(
        stems[n].startswith("TodoAdd__") or n == "todo_add" for n in names if n != "TODO_ADD"
    )
    # The tag of a name is the same in any catalog that shares its stem.
    assert tool_stems(["todo.add", "todoAdd"])["todo.add"] == stems["todo.add"]


def test_long_names_equal_in_their_first_code_points_are_told_apart() -> None:
    base = "a_very_long_tool_name_that_goes_on_and_on_and_on_and_on_and_on_"
    stems = tool_stems([base + "one", base + "two"])
    assert len(set(stems.values())) == 2
    assert all(len(stem) <= 58 for stem in stems.values())


@settings(max_examples=1_000, deadline=None)
@given(st.text(max_size=120))
def test_a_recorded_base_is_already_normalized_so_replay_claims_it_as_is(text: str) -> None:
    """`NameAllocator.replay` claims recorded bases without normalizing them again; that is
    only right because normalizing and capping a base that is both already changes
    nothing (a prefix of an NFKC string is NFKC)."""
    base = names.cap(names.nfkc(text))
    assert names.cap(names.nfkc(base)) == base
    recorded = names.NameAllocator(frozenset())
    recorded.claim(text)
    recorded.claim(text)
    replayed = names.NameAllocator(frozenset())
    assert replayed.replay(recorded.claims)
    assert replayed.claims == recorded.claims
