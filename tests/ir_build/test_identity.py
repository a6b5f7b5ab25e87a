"""Per-node tables of the build: keyed by identity, never by an id a freed node left behind."""

from __future__ import annotations

import copy
import gc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.identifiers import NameAllocator
from codegen.ir_build.builder import SchemaInput, ToolBuilder, build_tool_alone
from codegen.ir_build.identity import NodeTable
from codegen.normalize import normalize_schema
from support.robustness_strategies import tool_schemas


def test_a_node_table_holds_the_nodes_it_keys() -> None:
    table: NodeTable[str] = NodeTable()
    table.put({"type": "string"}, "first")  # no other reference to this node
    gc.collect()
    (key,) = table
    # Freshly allocated dicts of the same size would reuse a freed node's address; the
    # table holds its node, so none of them can take that id.
    fresh = [{"type": "string"} for _ in range(10_000)]
    assert all(id(node) != key for node in fresh)
    assert any(table.holds(held) and id(held) == key for held in table._held)


def test_a_node_table_is_written_only_through_put() -> None:
    table: NodeTable[int] = NodeTable()
    node: dict[str, Any] = {}
    with pytest.raises(TypeError, match="put"):
        table[id(node)] = 1
    with pytest.raises(TypeError, match="put"):
        table.setdefault(id(node), 1)
    with pytest.raises(TypeError, match="put"):
        table.update({id(node): 1})
    table.put(node, 1)
    table.put(node, 2)  # the same node again: one held reference, the new value
    assert table[id(node)] == 2 and len(table._held) == 1
    table.clear()
    assert not table and not table._held


def test_a_plain_id_keyed_dict_would_hand_a_freed_nodes_entry_to_a_new_one() -> None:
    """The hazard the tables remove: after a node is freed, a new node can be allocated at
    its address and find the dead node's entry."""
    reused = 0
    for _ in range(100):
        node: dict[str, Any] = {"type": "string", "title": "x"}
        table = {id(node): "stale"}
        del node
        fresh = [{"type": "string", "title": "y"} for _ in range(50)]
        reused += any(id(other) in table for other in fresh)
    assert reused > 0


def _schema_input(schema: Any) -> SchemaInput:
    normalized = normalize_schema(schema)
    return SchemaInput("t", None, None, "<t>", normalized, "/inputSchema", normalized, "/out")


def _tables(builder: ToolBuilder) -> dict[str, NodeTable[Any]]:
    return {k: v for k, v in vars(builder).items() if isinstance(v, NodeTable)}


MAKES_NODES = {
    "type": "object",
    "properties": {
        "union": {
            "type": "object",
            "properties": {"kind": {"type": "string"}, "size": {"type": "integer"}},
            "anyOf": [
                {"properties": {"kind": {"const": "a"}, "extra": {"type": "object"}}},
                {"properties": {"kind": {"const": "b"}}, "required": ["kind"]},
                {"$ref": "#/$defs/c"},
            ],
        },
        "merged": {"allOf": [{"required": ["size"]}, {"$ref": "#/$defs/c"}]},
        "choice": {
            "type": "object",
            "properties": {"kind": {"type": "string"}, "size": {"type": "integer"}},
            "oneOf": [{"required": ["kind"]}, {"required": ["size"]}],
        },
    },
    "$defs": {"c": {"type": "object", "properties": {"c": {"type": "boolean"}}}},
}


def test_every_per_node_entry_of_the_build_names_a_live_node() -> None:
    """Every dict of the builder keyed by node ids is a NodeTable (except the two stack
    tables, empty once the walk returns), and each holds exactly the nodes it keys: the
    arms and merges the build made itself included."""
    tool = _schema_input(MAKES_NODES)
    origins_before = dict(tool.input.origins)
    builder = ToolBuilder(tool, NameAllocator(), [], {})
    builder.build("T", "TArgs", "TOutput")
    assert builder.busy == {} and builder.levels == {}
    tables = _tables(builder)
    assert {"names", "memo", "merged", "merge_notes", "origins"} <= tables.keys()
    assert builder.merged and builder.origins  # the case makes nodes of its own
    for table in tables.values():
        # Every key names a node the table holds (an entry deleted mid-build, as a settled
        # partial union is, may leave its node held: that costs memory, never a wrong hit).
        assert set(table) <= {id(node) for node in table._held}
    assert tool.input.origins == origins_before  # the build never writes Normalized


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool_schemas(st.text(max_size=6)))
def test_the_build_never_keys_a_node_it_does_not_hold(schema: Any) -> None:
    tool = _schema_input(schema)
    builder = ToolBuilder(tool, NameAllocator(), [], {})
    builder.build("T", "TArgs", "TOutput")
    for table in _tables(builder).values():
        # Every key names a node the table holds (an entry deleted mid-build, as a settled
        # partial union is, may leave its node held: that costs memory, never a wrong hit).
        assert set(table) <= {id(node) for node in table._held}


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool_schemas(st.text(max_size=6)))
def test_building_again_after_garbage_gives_the_same_tool(schema: Any) -> None:
    """What the cache does: a tool built alone, then the same normalized input built again
    (made nodes of the first build freed, their addresses reused by new garbage)."""
    tool = _schema_input(schema)
    first = build_tool_alone(tool)
    gc.collect()
    garbage = [copy.deepcopy(schema) for _ in range(20)]
    second = build_tool_alone(tool)
    del garbage
    assert second == first
