"""One tool's IR as plain JSON data and back, for the cache on disk.

A cache folder may come with a repository, so what is read from it must be data that cannot
run anything: decoding makes only the IR classes of the tables below, chosen by a tag from a
closed set (never a name looked up from the file), and checks the type of every field on
the way (`checked`); anything else is a `CacheDataError`.

The layout is lean because a warm `build` decodes every tool it did not build (measured
on 5,003 tools, `bench/bench_cache.py`'s catalog): a type node is a string when it can be
(a primitive's kind, `any`, `never`, a reference as `#Name`), else an array led by its tag
(`["array", node]`, `["union", [arms]]`); a field is `[key, type, required, docs]`;
documentation is `null` when empty (decoded as the shared `ir.EMPTY_DOCS`, which renderers
test by identity), a description alone its string, else an object of its non-default
keywords; the tool is an object with one key per `ir.Tool` field. The hot readers check
types inline rather than through `checked`'s helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

from .. import ir
from .checked import CacheDataError, array, flag, kind, optional_text, pairs, text, texts

# --- encoding -------------------------------------------------------------------------------


def encode_tool(tool: ir.Tool) -> dict[str, Any]:
    """The tool as JSON data; `decode_tool` gives back an equal tool."""
    return {
        "name": tool.name,
        "description": tool.description,
        "title": tool.title,
        "args": encode_node(tool.args),
        "output": None if tool.output is None else encode_node(tool.output),
        "types": [_encode_named(named) for named in tool.types],
        "annotations": tool.annotations,
        "input_schema": tool.schemas.input_text,
        "output_schema": tool.schemas.output_text,
        "source": tool.source,
    }


def encode_node(node: ir.TypeNode) -> Any:
    if isinstance(node, ir.Primitive):
        return node.kind
    if isinstance(node, ir.RefType):
        return "#" + node.name
    if isinstance(node, ir.ArrayType):
        return ["array", encode_node(node.items)]
    if isinstance(node, ir.UnionType):
        return ["union", [encode_node(arm) for arm in node.arms]]
    if isinstance(node, ir.LiteralType):
        return ["literal", list(node.values)]
    if isinstance(node, ir.MapType):
        return ["map", encode_node(node.values)]
    if isinstance(node, ir.TupleType):
        rest = None if node.rest is None else encode_node(node.rest)
        return ["tuple", [encode_node(item) for item in node.items], node.min_items, rest]
    if isinstance(node, ir.AnyType):
        return "any"
    if isinstance(node, ir.NeverType):
        return "never"
    return ["unknown", node.reason]


def _encode_named(named: ir.NamedType) -> list[Any]:
    if isinstance(named, ir.ObjectType):
        extra = None if named.extra is None else encode_node(named.extra)
        fields = [
            [item.key, encode_node(item.type), item.required, _encode_docs(item.docs)]
            for item in named.fields
        ]
        return ["object", named.name, fields, extra, _encode_docs(named.docs)]
    return ["alias", named.name, encode_node(named.target), _encode_docs(named.docs)]


_DOCS_DEFAULTS = {name: getattr(ir.EMPTY_DOCS, name) for name in ir.Docs.__match_args__}


def _encode_docs(docs: ir.Docs) -> dict[str, Any] | str | None:
    if docs is ir.EMPTY_DOCS:
        return None
    changed: dict[str, Any] = {
        name: getattr(docs, name)
        for name, default in _DOCS_DEFAULTS.items()
        if getattr(docs, name) != default
    }
    if changed.keys() == {"description"}:
        return changed["description"]  # type: ignore[no-any-return]
    return changed or None


# --- decoding -------------------------------------------------------------------------------


def decode_tool(data: Any) -> ir.Tool:
    """The tool `encode_tool` gave `data` for; `CacheDataError` when `data` is anything
    else."""
    if type(data) is not dict or data.keys() != _TOOL_KEYS:
        raise CacheDataError("a tool is an object with the keys " + ", ".join(sorted(_TOOL_KEYS)))
    output = data["output"]
    return ir.Tool(
        name=text(data["name"], "a tool's name"),
        description=optional_text(data["description"], "a tool's description"),
        title=optional_text(data["title"], "a tool's title"),
        args=decode_node(data["args"]),
        output=None if output is None else decode_node(output),
        types=tuple([_decode_named(named) for named in array(data["types"], "a tool's types")]),
        annotations=optional_text(data["annotations"], "a tool's annotations"),
        schemas=ir.RawSchemas.from_text(
            text(data["input_schema"], "a tool's input schema"),
            optional_text(data["output_schema"], "a tool's output schema"),
        ),
        source=text(data["source"], "a tool's source"),
    )


_TOOL_KEYS = frozenset(ir.Tool.__match_args__) - {"schemas"} | {"input_schema", "output_schema"}


def decode_node(data: Any) -> ir.TypeNode:
    """One type node; `CacheDataError` for anything that is not one."""
    if type(data) is str:
        simple = _SIMPLE.get(data)
        if simple is not None:
            return simple
        if data[:1] == "#":
            return ir.RefType(data[1:])
        raise CacheDataError("a type node given as a string is not a kind, any, never or a #ref")
    if type(data) is not list or not data or type(data[0]) is not str:
        raise CacheDataError(f"a type node is a string or a tagged array, not {kind(data)}")
    decode = _NODES.get(data[0])
    if decode is None:
        raise CacheDataError("a type node has an unknown tag")
    return decode(data)


def _nodes(data: Any, what: str) -> tuple[ir.TypeNode, ...]:
    return tuple([decode_node(item) for item in array(data, what)])


def _length(data: list[Any], length: int, what: str) -> None:
    if len(data) != length:
        raise CacheDataError(f"{what} is an array of {length} items, not {len(data)}")


def _decode_array(data: list[Any]) -> ir.TypeNode:
    _length(data, 2, "an array node")
    return ir.ArrayType(decode_node(data[1]))


def _decode_union(data: list[Any]) -> ir.TypeNode:
    _length(data, 2, "a union node")
    return ir.UnionType(_nodes(data[1], "a union's arms"))


def _decode_literal(data: list[Any]) -> ir.TypeNode:
    _length(data, 2, "a literal node")
    values = array(data[1], "a literal's values")
    if not set(map(type, values)) <= _SCALARS:
        raise CacheDataError("a literal's values are not all JSON scalars")
    return ir.LiteralType(tuple(values))


def _decode_map(data: list[Any]) -> ir.TypeNode:
    _length(data, 2, "a map node")
    return ir.MapType(decode_node(data[1]))


def _decode_tuple(data: list[Any]) -> ir.TypeNode:
    _length(data, 4, "a tuple node")
    items = _nodes(data[1], "a tuple's items")
    min_items = data[2]
    if type(min_items) is not int or not 0 <= min_items <= len(items):
        raise CacheDataError("a tuple's min_items is not a count of its items")
    rest = None if data[3] is None else decode_node(data[3])
    return ir.TupleType(items, min_items, rest)


def _decode_unknown(data: list[Any]) -> ir.TypeNode:
    _length(data, 2, "an unknown node")
    return ir.UnknownType(text(data[1], "an unknown node's reason"))


_SIMPLE: dict[str, ir.TypeNode] = {
    **{primitive: ir.Primitive(primitive) for primitive in get_args(ir.PrimitiveKind)},
    "any": ir.AnyType(),
    "never": ir.NeverType(),
}
"""The nodes written as a string: the primitives by kind, `any` and `never`."""
_NODES: dict[str, Callable[[list[Any]], ir.TypeNode]] = {
    "array": _decode_array,
    "union": _decode_union,
    "literal": _decode_literal,
    "map": _decode_map,
    "tuple": _decode_tuple,
    "unknown": _decode_unknown,
}
"""The closed set of tagged type nodes: a tag chooses one of these functions, and each makes
one IR class."""
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _decode_named(data: Any) -> ir.NamedType:
    if type(data) is list and len(data) == 5 and data[0] == "object":
        _, name, fields, extra, docs = data
        if type(name) is str and type(fields) is list:
            return ir.ObjectType(
                name,
                tuple([_decode_field(item) for item in fields]),
                None if extra is None else decode_node(extra),
                _EMPTY if docs is None else _decode_docs(docs),
            )
    if type(data) is list and len(data) == 4 and data[0] == "alias":
        _, name, target, docs = data
        if type(name) is str:
            docs = _EMPTY if docs is None else _decode_docs(docs)
            return ir.AliasType(name, decode_node(target), docs)
    raise CacheDataError(
        "a named type is not ['object', name, fields, extra, docs] or ['alias', name, target, docs]"
    )


def _decode_field(data: Any) -> ir.Field:
    """`[key, type, required, docs]`; the most common field (a primitive or a reference,
    without docs or with a description) without a call beyond the `Field` itself: a warm
    build decodes tens of thousands."""
    if type(data) is list and len(data) == 4:
        key, node, required, docs = data
        if type(key) is str and type(required) is bool:
            found = None
            if type(node) is str:
                found = _SIMPLE.get(node)
                if found is None and node[:1] == "#":
                    found = ir.RefType(node[1:])
            return ir.Field(
                key,
                decode_node(node) if found is None else found,
                required,
                _EMPTY if docs is None else _decode_docs(docs),
            )
    raise CacheDataError("a field is not [key, type, required, docs]")


_EMPTY = ir.EMPTY_DOCS


def _decode_docs(data: Any) -> ir.Docs:
    """Documentation: a description alone as its string, else an object of its non-default
    keywords."""
    if type(data) is str:
        return ir.Docs(description=data)
    if type(data) is not dict:
        raise CacheDataError(f"documentation is a string, an object or null, not {kind(data)}")
    values = data
    for name, value in data.items():
        check = _DOCS_FIELDS.get(name)
        if check is None:
            raise CacheDataError("documentation has an unknown keyword")
        if check is optional_text:  # most keywords: checked here, without a call
            if value is not None and type(value) is not str:
                raise CacheDataError(f"documentation's {name} is not a string")
        else:  # arrays become tuples, in a copy
            values = dict(values) if values is data else values
            values[name] = check(value, f"documentation's {name}")
    return ir.Docs(**values) if values else ir.EMPTY_DOCS


_DOCS_FIELDS: dict[str, Callable[[Any, str], Any]] = {
    "description": optional_text,
    "title": optional_text,
    "default": optional_text,
    "examples": texts,
    "format": optional_text,
    "pattern": optional_text,
    "constraints": pairs,
    "deprecated": flag,
    "read_only": flag,
    "write_only": flag,
    "notes": texts,
}
"""Every `ir.Docs` keyword and the reader that checks its value (`tests/incremental/test_cache.py`
checks these are the class's fields)."""
