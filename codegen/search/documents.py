"""What the index knows of one tool, read from an MCP tool definition.

Tool definitions come from servers nobody here wrote, so `document` takes any mapping and
never raises: a field of the wrong type is treated as missing, and the walk through the
input schema is bounded in depth, nodes, parameters, enum values and text length, so a
hostile schema costs no more than a large honest one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

SEPARATOR = "__"
"""Between a server's prefix and the tool's own name (`github__get_file`): the first one.
The loader's `codegen.load.namespaces.SEPARATOR`, written again: this package imports
nothing of codegen."""

MAX_DEPTH = 4
"""Levels of nested objects whose properties become parameters (1: the top level only)."""
MAX_NODES = 512
"""Schema nodes visited per tool."""
MAX_PARAMETERS = 64
MAX_ENUM = 32
"""Enum (and const) values kept per parameter."""
MAX_DESCRIPTION = 8_000
"""Characters of the tool's description kept (real ones reach 6,500)."""
MAX_TEXT = 1_000
"""Characters kept of a title, a parameter's name or description, or an enum value; a tool
name longer than this is unusable (cutting it would name another tool)."""

_ARMS = ("anyOf", "oneOf", "allOf")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "if", "then", "else", "contains")


@dataclass(frozen=True, slots=True, order=True)
class Parameter:
    """One property of the input schema, at any depth: its key, description and enum values
    (as text), which say what a tool works on (`owner`, `repo`, `"celsius"`)."""

    name: str
    description: str = ""
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, order=True)
class Document:
    """What the index knows of one tool: the full name as called, title, description and
    the flattened parameters."""

    name: str
    title: str = ""
    description: str = ""
    parameters: tuple[Parameter, ...] = ()

    @property
    def server(self) -> str:
        """The server prefix (`split_name`): "" when there is none."""
        return split_name(self.name)[0]

    @property
    def own_name(self) -> str:
        """The name without the server prefix: the name the server knows the tool by."""
        return split_name(self.name)[1]


def split_name(name: str) -> tuple[str, str]:
    """(server prefix, own name) at the first `__`; ("", name) when there is none or either
    side would be empty (`__init`, `tool__`)."""
    prefix, separator, rest = name.partition(SEPARATOR)
    if separator and prefix and rest:
        return prefix, rest
    return "", name


def document(definition: Mapping[str, Any]) -> Document:
    """The document of an MCP tool definition `{name, title?, description?, inputSchema?}`
    (also read: `input_schema` and `parameters`, as other formats call the schema; a title
    in `annotations`). Anything malformed reads as absent; an unusable name gives "" (and
    the index leaves such a document out)."""
    if not isinstance(definition, Mapping):
        return Document("")
    name = definition.get("name")
    if not isinstance(name, str) or len(name) > MAX_TEXT:
        name = ""
    annotations = definition.get("annotations")
    title = _text(definition.get("title"), MAX_TEXT) or (
        _text(annotations.get("title"), MAX_TEXT) if isinstance(annotations, Mapping) else ""
    )
    schema = next(
        (
            definition[key]
            for key in ("inputSchema", "input_schema", "parameters")
            if isinstance(definition.get(key), Mapping)
        ),
        None,
    )
    return Document(
        name=name,
        title=title,
        description=_text(definition.get("description"), MAX_DESCRIPTION),
        parameters=parameters(schema) if schema is not None else (),
    )


def parameters(schema: Mapping[str, Any]) -> tuple[Parameter, ...]:
    """The properties of `schema` and of the objects nested in it (through `items`, `anyOf`
    arms, `$defs`, ...), breadth first, each distinct one once, within the bounds above."""
    found: dict[Parameter, None] = {}
    queue: list[tuple[Mapping[str, Any], int]] = [(schema, 1)]
    visited = 0
    while visited < len(queue) and visited < MAX_NODES and len(found) < MAX_PARAMETERS:
        node, depth = queue[visited]
        visited += 1
        properties = node.get("properties")
        if isinstance(properties, Mapping):
            for key, value in properties.items():
                if len(found) >= MAX_PARAMETERS:
                    break
                if not isinstance(key, str) or not key:
                    continue
                found.setdefault(_parameter(key, value), None)
                if isinstance(value, Mapping) and depth < MAX_DEPTH and len(queue) < MAX_NODES:
                    queue.append((value, depth + 1))
        for child in _children(node):
            if len(queue) >= MAX_NODES:
                break
            queue.append((child, depth))
    return tuple(found)


def _children(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The subschemas of `node` that describe the same value or its items (same depth)."""
    children: list[Mapping[str, Any]] = []
    for key in _SUBSCHEMAS:
        child = node.get(key)
        if isinstance(child, Mapping):
            children.append(child)
    for key in _ARMS:
        arms = node.get(key)
        if isinstance(arms, list):
            children.extend(arm for arm in arms[:MAX_NODES] if isinstance(arm, Mapping))
    for key in ("$defs", "definitions"):
        defs = node.get(key)
        if isinstance(defs, Mapping):
            children.extend(d for d in islice(defs.values(), MAX_NODES) if isinstance(d, Mapping))
    return children


def _parameter(key: str, value: Any) -> Parameter:
    if not isinstance(value, Mapping):
        return Parameter(key[:MAX_TEXT])
    values: list[str] = []
    enum = value.get("enum")
    for item in (enum[:MAX_ENUM] if isinstance(enum, list) else []) + [value.get("const")]:
        if isinstance(item, str | int | float) and not isinstance(item, bool):
            values.append(str(item)[:MAX_TEXT])
    return Parameter(
        key[:MAX_TEXT], _text(value.get("description"), MAX_TEXT), tuple(values[:MAX_ENUM])
    )


def _text(value: Any, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""
