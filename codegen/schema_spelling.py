"""One schema with no tool around it, spelled as one type expression in Python or TypeScript.

The pipeline in small, for callers that hold a single schema: the value is normalized,
built with objects as maps (there is no name to give them) and spelled by a renderer. A
value that is not JSON data at all (a set, bytes, an object) has no meaning as a schema and
is the any type of the language; any other failure is a bug and is raised, never hidden.
"""

from __future__ import annotations

from typing import Any

from ._support.recursion_limit import deep_recursion
from ._support.run_memos import run_memos
from .ir import TypeNode
from .ir_build.builder import build_type
from .render.python import black_layout
from .render.python.sdk import type_expr
from .render.typescript.sdk import spell

_SCALARS = (str, int, float, bool, type(None))


def is_json_data(value: Any) -> bool:
    """Dicts with string keys, lists, strings, numbers, booleans and None, all the way
    down; checked without recursion."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if not all(type(key) is str for key in node):
                return False
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif not isinstance(node, _SCALARS):
            return False
    return True


def _schema_type(schema: Any) -> TypeNode | None:
    """The IR type of a JSON value read as a schema; None for a value that is not JSON."""
    if not is_json_data(schema):
        return None
    with deep_recursion(), run_memos():
        return build_type(schema)


def json_schema_to_py(schema: Any) -> str:
    """One Python annotation for a schema (objects are `dict[str, Any]`): `Any` for a
    value that is not JSON data."""
    node = _schema_type(schema)
    if node is None:
        return "Any"
    with run_memos():
        return black_layout.flat(type_expr(node))


def json_schema_to_ts(schema: Any) -> str:
    """One TypeScript type expression for a schema (objects are maps): `unknown` for a
    value that is neither an object nor a boolean schema, or not JSON data."""
    if not isinstance(schema, dict | bool):
        return "unknown"
    node = _schema_type(schema)
    if node is None:
        return "unknown"
    with run_memos():
        return spell(node)
