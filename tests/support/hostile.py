"""Hostile inputs at any size, for the tripwire tests and `bench/bench_growth.py`.

Every builder works without recursion, so it can make documents far deeper than Python's
stack (and than `jsontext.MAX_NESTING`), both as values in memory and as JSON text.
"""

from __future__ import annotations

from typing import Any

NESTINGS = {
    "properties": ('{"type": "object", "properties": {"a": ', "}}"),
    "items": ('{"type": "array", "items": ', "}"),
    "anyOf": ('{"anyOf": [', ', {"type": "null"}]}'),
}
"""How each nesting wraps a schema, as (text before, text after) the wrapped schema."""
LEAF = {"type": "string"}


def tool(
    schema: Any, description: str = "A hostile tool.", name: str = "hostile"
) -> dict[str, Any]:
    """One MCP tool with `schema` as its input schema."""
    return {"name": name, "description": description, "inputSchema": schema}


def nested(kind: str, levels: int) -> dict[str, Any]:
    """`levels` schemas wrapped in each other through `kind` (a key of `NESTINGS`)."""
    node: dict[str, Any] = dict(LEAF)
    for _ in range(levels):
        if kind == "properties":
            node = {"type": "object", "properties": {"a": node}}
        elif kind == "items":
            node = {"type": "array", "items": node}
        else:
            node = {"anyOf": [node, {"type": "null"}]}
    return node


def nested_text(kind: str, levels: int) -> str:
    """The JSON text of `tool(nested(kind, levels))`, written without recursion."""
    before, after = NESTINGS[kind]
    schema = before * levels + '{"type": "string"}' + after * levels
    return '{"name": "hostile", "description": "A hostile tool.", "inputSchema": ' + schema + "}"


def ref_chain(length: int, through: str = "object") -> dict[str, Any]:
    """`length` definitions, each referring to the next: through a property of an object
    (`through="object"`, every link a named type) or directly (`"ref"`, aliases only)."""
    defs: dict[str, Any] = {}
    for index in range(length):
        target = {"$ref": f"#/$defs/d{index + 1}"} if index + 1 < length else dict(LEAF)
        if through == "object":
            defs[f"d{index}"] = {"type": "object", "properties": {"next": target}}
        else:
            defs[f"d{index}"] = target
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def union(arms: int) -> dict[str, Any]:
    """An `anyOf` of `arms` different object types (a discriminated union)."""
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {"kind": {"const": f"kind{index}"}, "value": {"type": "string"}},
                "required": ["kind"],
            }
            for index in range(arms)
        ]
    }


def nested_unions(levels: int, arms: int) -> dict[str, Any]:
    """Arrays of `arms`-arm unions, `levels` deep, the deeper level always the first arm: the
    deepest Python expression a union can make at that size."""
    node: dict[str, Any] = dict(LEAF)
    for level in range(levels):
        others = [
            {"type": "array", "items": {"const": f"v{level}.{index}"}, "minItems": index}
            for index in range(arms - 1)
        ]
        node = {"type": "array", "items": {"anyOf": [node, *others]}}
    return {"type": "object", "properties": {"deep": node}, "required": ["deep"]}


def all_of(arms: int) -> dict[str, Any]:
    """An object merged from `allOf` arms of one property each, beside the intersection of
    two `arms`-member enums."""
    values = [f"value{index}" for index in range(arms)]
    return {
        "type": "object",
        "properties": {
            "merged": {
                "allOf": [
                    {"type": "object", "properties": {f"p{index}": {"type": "string"}}}
                    for index in range(arms)
                ]
            },
            "both": {"allOf": [{"enum": values}, {"enum": values[::-1]}]},
        },
    }


def enum(members: int) -> dict[str, Any]:
    """An object whose one property is an enum of `members` strings."""
    values = [f"value{index}" for index in range(members)]
    return {"type": "object", "properties": {"choice": {"enum": values}}, "required": ["choice"]}


def description(chars: int) -> str:
    """`chars` characters of prose in lines of about 80, with an occasional quote,
    backslash and blank line."""
    line = 'Returns the "value" of C:\\path for every item; see the notes below.\n'
    paragraph = line * 9 + "\n"
    return (paragraph * (chars // len(paragraph) + 1))[:chars]


def catalog(tools: int) -> dict[str, Any]:
    """`{"tools": [...]}` with `tools` small, realistic tools."""
    return {
        "tools": [
            {
                "name": f"tool_{index}",
                "description": f"Search collection {index}.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to look for."},
                        "limit": {"type": "integer", "minimum": 1, "default": 10},
                    },
                    "required": ["query"],
                },
            }
            for index in range(tools)
        ]
    }


def shape(name: str, size: int) -> Any:
    """The tool data of one tripwire shape at `size` (levels, arms, members, characters or
    tools)."""
    if name in NESTINGS:
        return tool(nested(name, size))
    if name == "ref_chain":
        return tool(ref_chain(size))
    if name == "union":
        return tool({"type": "object", "properties": {"pick": union(size)}, "required": ["pick"]})
    if name == "enum":
        return tool(enum(size))
    if name == "allOf":
        return tool(all_of(size))
    if name == "description":
        return tool({"type": "object"}, description(size))
    if name == "catalog":
        return catalog(size)
    if name == "annotations":  # tool data beside the schemas, nested `size` levels
        return {**tool({"type": "object"}), "annotations": nested("properties", size)}
    if name == "bfcl":  # BFCL's dialect is translated before validation
        return {"name": "hostile", "description": "d", "parameters": nested("properties", size)}
    raise ValueError(f"unknown shape {name!r}")


SHAPES = (
    "properties",
    "items",
    "anyOf",
    "ref_chain",
    "union",
    "allOf",
    "enum",
    "description",
    "catalog",
)
