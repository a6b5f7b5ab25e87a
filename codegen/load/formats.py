"""Recognise the real-world tool formats by shape and turn each record into a `ToolDefinition`.

Formats: our own / MCP (`inputSchema`), an MCP `tools/list` result, OpenAI Chat Completions
(`{"type": "function", "function": {...}}`) and Responses (`{"type": "function", "name": ...}`)
tools, Anthropic tools (`input_schema`; `output_schema` beside it, as formats that spell the
input so spell the output, is read too), BFCL function docs (`parameters` or
`input_schema` in the BFCL dialect, outputs under `response` or `output_schema`, or records
with a `function` list; an `input_schema` that uses a `type` only BFCL spells, such as
`dict` or `float`, anywhere, is detected as BFCL) and ToolUniverse tool configs (`parameter`,
`return_schema`). An output schema under a spelling the record's format does not read is a
warning, never silently dropped. Containers: one tool, a list, or an object
with a `tools` list (other top-level keys such as `server` or `nextCursor` are ignored here;
`namespaces` reads `server` and `serverInfo.name` for `--namespace`).

A document that is none of these but a plain JSON Schema (`is_plain_schema`) is read, where
the caller asks for it, as one schema whose types are generated alone (`plain_schema`);
elsewhere the error for it says how to wrap it as a tool.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import Diagnostic, join_pointer
from .definitions import ToolDefinition
from .envelope import check_envelope

JSON_TYPES = ("string", "number", "integer", "boolean", "null", "array", "object")
"""The types JSON Schema names."""

BFCL_TYPES = {
    "dict": "object",
    "HashMap": "object",
    "Map": "object",
    "object": "object",
    "float": "number",
    "double": "number",
    "Double": "number",
    "Float": "number",
    "long": "integer",
    "Long": "integer",
    "int": "integer",
    "Integer": "integer",
    "short": "integer",
    "byte": "integer",
    "String": "string",
    "str": "string",
    "char": "string",
    "Character": "string",
    "Boolean": "boolean",
    "bool": "boolean",
    "tuple": "array",
    "list": "array",
    "Array": "array",
    "ArrayList": "array",
    "List": "array",
    "Set": "array",
}
"""BFCL and Java type names and the JSON-Schema type each stands for; `any` and `""` mean
any value and are removed."""

INPUT_FORMATS = ("mcp", "openai", "anthropic", "bfcl", "tooluniverse")
"""Input formats a source may be read as (`--format`); `auto` (the default) detects each
record's format."""


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where one format keeps each field of a tool, as paths inside the record."""

    format: str
    name: tuple[str, ...]
    description: tuple[str, ...]
    input_schema: tuple[str, ...]
    output_schema: tuple[str, ...] | None = None
    title: tuple[str, ...] | None = None
    annotations: tuple[str, ...] | None = None
    fields: tuple[tuple[str, tuple[str, ...] | None, str], ...] = field(
        init=False, repr=False, compare=False
    )
    """(field, path, the path as a pointer suffix) for every field, worked out once per
    layout rather than once per record (a derived field, made the package's one way: see
    `codegen.ir`)."""

    def __post_init__(self) -> None:
        fields = tuple(
            (name, path, join_pointer("", *path) if path is not None else "")
            for name, path in (
                ("name", self.name),
                ("description", self.description),
                ("input_schema", self.input_schema),
                ("output_schema", self.output_schema),
                ("title", self.title),
                ("annotations", self.annotations),
            )
        )
        object.__setattr__(self, "fields", fields)


_MCP = _Layout(
    "mcp",
    ("name",),
    ("description",),
    ("inputSchema",),
    ("outputSchema",),
    ("title",),
    ("annotations",),
)
_OPENAI_CHAT = _Layout(
    "openai", ("function", "name"), ("function", "description"), ("function", "parameters")
)
_OPENAI_RESPONSES = _Layout("openai", ("name",), ("description",), ("parameters",))
_ANTHROPIC = _Layout(
    "anthropic", ("name",), ("description",), ("input_schema",), ("output_schema",)
)
"""Anthropic's tools have no output schema, but tool formats that spell the input schema
`input_schema` spell it `output_schema`: read it there, never dropped."""
_BFCL = _Layout("bfcl", ("name",), ("description",), ("parameters",), ("response",))
_BFCL_INPUT_KEYS = ("parameters", "input_schema")
_BFCL_OUTPUT_KEYS = ("response", "output_schema")
"""BFCL function docs keep their schemas under either key (its multi-turn docs use the
`input_schema` spelling); the first present wins, both present is an error."""
_TOOLUNIVERSE = _Layout(
    "tooluniverse", ("name",), ("description",), ("parameter",), ("return_schema",)
)

_MCP_TOOL_KEYS = frozenset(
    ("name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta", "icons")
)
"""The keys of an MCP `Tool`. A record with a name but no schema is read as an MCP tool
without input only when it has nothing else: `package.json` has a `name` too."""


_SERVER_TOOL_TYPE = re.compile(r"[a-z][a-z0-9_]*_[0-9]{8}")
"""The `type` of an Anthropic built-in tool: its kind and the date of its version
(`computer_20241022`, `text_editor_20250124`, `bash_20250124`, `web_search_20250305`). Any
other `type` beside a `name` is not one: `package.json` has `"type": "module"`."""


def _classify(record: Any) -> _Layout | str | None:
    """The layout of a tool record, `"bfcl-record"` for a BFCL test record, `"server-tool"`
    for a provider built-in without a schema, or None when it is not a tool at all."""
    if not isinstance(record, dict):
        return None
    kind = record.get("type")
    if kind == "function" and isinstance(record.get("function"), dict):
        return _OPENAI_CHAT
    if kind == "function" and "name" in record:
        return _OPENAI_RESPONSES
    if "inputSchema" in record:
        return _MCP
    if "input_schema" in record:
        return _bfcl_layout(record) if _is_bfcl_schema(record["input_schema"]) else _ANTHROPIC
    if isinstance(record.get("function"), list):
        return "bfcl-record"
    if "parameters" in record and "name" in record:
        return _BFCL
    if isinstance(record.get("parameter"), dict) and "name" in record:
        return _TOOLUNIVERSE
    if isinstance(kind, str) and _SERVER_TOOL_TYPE.fullmatch(kind) and "name" in record:
        return "server-tool"
    if "name" in record and record.keys() <= _MCP_TOOL_KEYS:
        return _MCP
    return None


_BFCL_ONLY_TYPES = frozenset((*BFCL_TYPES, "any", "Any", "Object")) - frozenset(JSON_TYPES)
_VALUE_KEYWORDS = frozenset(("enum", "const", "default", "examples", "example"))
"""Keywords whose values are data, not schemas: a `type` key inside them means nothing."""


def _is_bfcl_schema(schema: Any) -> bool:
    """A `type` only the BFCL dialect spells (`dict`, `float`, Java names, `any`) anywhere
    in the schema. Such a schema is not valid JSON Schema, so reading it as BFCL changes
    nothing an Anthropic tool could mean; JSON Schema's own names never mean BFCL."""
    containers = (dict, list)  # a tuple: `isinstance` with `dict | list` is slower
    pending = [schema] if isinstance(schema, containers) else []
    seen: set[int] = set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, list):
            pending.extend(item for item in node if isinstance(item, containers))
            continue
        kinds = node.get("type")
        if isinstance(kinds, str):
            if kinds in _BFCL_ONLY_TYPES:
                return True
        elif isinstance(kinds, list):
            for kind in kinds:
                if isinstance(kind, str) and kind in _BFCL_ONLY_TYPES:
                    return True
        for key, value in node.items():
            if isinstance(value, containers) and key not in _VALUE_KEYWORDS:
                pending.append(value)
    return False


def _bfcl_layout(record: dict[str, Any]) -> _Layout:
    """The BFCL layout with the input and output keys this record uses."""
    inputs = next((k for k in _BFCL_INPUT_KEYS if k in record), _BFCL_INPUT_KEYS[0])
    outputs = next((k for k in _BFCL_OUTPUT_KEYS if k in record), _BFCL_OUTPUT_KEYS[0])
    return _BFCL_LAYOUTS[inputs, outputs]


_BFCL_LAYOUTS = {
    (inputs, outputs): _Layout("bfcl", ("name",), ("description",), (inputs,), (outputs,))
    for inputs in _BFCL_INPUT_KEYS
    for outputs in _BFCL_OUTPUT_KEYS
}
_BFCL_LAYOUTS[_BFCL_INPUT_KEYS[0], _BFCL_OUTPUT_KEYS[0]] = _BFCL
"""Every BFCL layout, made once: a record picks its own by the keys it uses."""


PLAIN_SCHEMA = "jsonschema"
"""The `format` of a `ToolDefinition` that is a plain JSON Schema document, not a tool: its
`input_schema` is the document and its `name` the root type's (`plain_schema`)."""

_TOOL_KEYS = frozenset(
    (
        "name",
        "tools",
        "function",
        "inputSchema",
        "input_schema",
        "outputSchema",
        "output_schema",
        "parameters",
        "parameter",
        "response",
        "return_schema",
    )
)
"""Keys that make a document tool-shaped in some format: a document with one is never read
as a plain schema, whatever else it holds. Every record `_classify` recognises holds one
(a `name`, `function` or schema key), so this check alone keeps tools out."""
_SCHEMA_SUFFIX = ".schema"
"""`person.schema.json` names its root type `Person`, not `PersonSchema`."""


def is_plain_schema(document: Any) -> bool:
    """A whole document that is a JSON Schema, not a tool: an object with no key of any tool
    format that has a `$schema` string, or a JSON-Schema `type` (a JSON type name, or a list
    of them), `properties`, `$defs`/`definitions`, a non-empty `allOf`/`anyOf`/`oneOf` list
    or a `$ref` string at its root (a `title` beside `oneOf` is a common root)."""
    if not isinstance(document, dict) or not _TOOL_KEYS.isdisjoint(document):
        return False
    if isinstance(document.get("$schema"), str):
        return True
    kind = document.get("type")
    if isinstance(kind, str):
        if kind in JSON_TYPES:
            return True
    elif isinstance(kind, list) and kind and all(k in JSON_TYPES for k in kind):
        return True
    if isinstance(document.get("$ref"), str):
        return True
    if any(isinstance(document.get(key), list) and document[key] for key in _COMBINATORS):
        return True
    return any(
        isinstance(document.get(key), dict) for key in ("properties", "$defs", "definitions")
    )


_COMBINATORS = ("allOf", "anyOf", "oneOf")


def holds_tools(document: Any) -> bool:
    """Whether a document holds tool definitions in some format (a list, or a record or a
    `tools` list `_classify` recognises), as opposed to a schema or a file of schemas."""
    if isinstance(document, list):
        return True
    return any(_classify(record) is not None for record, _ in _records(document))


def plain_schema_name(document: dict[str, Any], stem: str | None) -> str:
    """What names a plain schema's root type: its `title`, else the file's name without
    its suffixes (`person.schema.json` -> `person`), else `Schema` (stdin)."""
    title = document.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    if stem and stem.lower().endswith(_SCHEMA_SUFFIX) and len(stem) > len(_SCHEMA_SUFFIX):
        stem = stem[: -len(_SCHEMA_SUFFIX)]
    return stem or "Schema"


def plain_schema(
    document: dict[str, Any], source: str, stem: str | None, decoded: bool = False
) -> ToolDefinition:
    """A plain JSON Schema document as the definition the pipeline takes: the document is
    the `input_schema` (at pointer ""), the `name` names its root type."""
    description = document.get("description")
    title = document.get("title")
    return ToolDefinition(
        name=plain_schema_name(document, stem),
        description=description if isinstance(description, str) else None,
        input_schema=document,
        title=title if isinstance(title, str) else None,
        source=source,
        input_pointer="",
        output_pointer="",
        format=PLAIN_SCHEMA,
        decoded=decoded,
    )


def plain_schema_hint(document: dict[str, Any], stem: str | None = None) -> str:
    """The error for a plain schema where tools are read: what reads it alone, and how to
    wrap it as a tool, ready to paste."""
    tool_name = re.sub(r"[^a-z0-9_-]+", "_", plain_schema_name(document, stem).lower())
    wrapped = json.dumps({"name": tool_name.strip("_") or "tool", "inputSchema": "SCHEMA"})
    return (
        "a plain JSON Schema, not a tool definition: `codegen sdk` and `codegen validate` "
        "read it on its own (its types, no tools); to use it as a tool's arguments, wrap it "
        "as " + wrapped.replace('"SCHEMA"', "<this schema>")
    )


def _forced(fmt: str, record: Any) -> _Layout | str | None:
    """The layout when `--format` names one: only that format's shapes are accepted."""
    detected = _classify(record)
    if isinstance(detected, _Layout):
        if detected.format == fmt:
            return detected
    elif fmt == "bfcl" and detected == "bfcl-record":
        return detected
    if fmt == "bfcl" and isinstance(record, dict) and "name" in record:
        return _bfcl_layout(record)
    if fmt == "mcp" and isinstance(record, dict) and "name" in record:
        return _MCP
    if fmt == "openai" and isinstance(record, dict) and "parameters" in record:
        return _OPENAI_RESPONSES
    return None


def _records(document: Any) -> Iterator[tuple[Any, str]]:
    """Records of a container: a list, an object with a `tools` list, or one record."""
    if isinstance(document, list):
        for index, item in enumerate(document):
            yield item, f"/{index}"  # `join_pointer("", index)`: an index needs no escaping
    elif isinstance(document, dict) and isinstance(document.get("tools"), list):
        for index, item in enumerate(document["tools"]):
            yield item, f"/tools/{index}"
    else:
        yield document, ""


def extract_tools(
    document: Any, source: str, fmt: str = "auto", decoded: bool = False, stem: str | None = None
) -> tuple[list[ToolDefinition], list[Diagnostic]]:
    """All tools in one decoded document, and diagnostics for records that are not tools.
    `decoded`: the document came from `json_text`, so its nesting is already bounded; `stem`:
    the file's name without suffix, which a plain schema's error names it by."""
    tools: list[ToolDefinition] = []
    diagnostics: list[Diagnostic] = []
    pending = deque(_records(document))  # a BFCL record's functions go to the front
    while pending:
        record, pointer = pending.popleft()
        layout = _classify(record) if fmt == "auto" else _forced(fmt, record)
        if isinstance(layout, _Layout):  # the usual case first
            tool, problems = _convert(record, layout, source, pointer, decoded)
            if problems:
                diagnostics.extend(problems)
            if tool is not None:
                tools.append(tool)
            continue
        if layout == "bfcl-record":
            functions = record["function"]
            pending.extendleft(
                reversed([(item, f"{pointer}/function/{i}") for i, item in enumerate(functions)])
            )
            continue
        if layout == "server-tool":
            diagnostics.append(
                Diagnostic(
                    source,
                    pointer,
                    f"built-in tool of type {record['type']!r} has no schema; skipped",
                    "warning",
                )
            )
            continue
        if fmt == "auto" and not pointer and is_plain_schema(record):
            diagnostics.append(Diagnostic(source, "", plain_schema_hint(record, stem)))
            continue
        expected = (
            f"a tool definition in any known format ({', '.join(INPUT_FORMATS)})"
            if fmt == "auto"
            else f"a tool in the {fmt!r} format"
        )
        diagnostics.append(Diagnostic(source, pointer, f"not {expected}: {_shape(record)}"))
    return tools, diagnostics


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(sorted(map(repr, value))[:6])
        return f"an object with keys {keys}" if value else "an empty object"
    names = {
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }
    return names.get(type(value), "null")


def _convert(
    record: dict[str, Any], layout: _Layout, source: str, pointer: str, decoded: bool = False
) -> tuple[ToolDefinition | None, list[Diagnostic]]:
    fields: dict[str, tuple[bool, Any, str]] = {}
    for field_name, path, suffix in layout.fields:
        if path is None:
            fields[field_name] = _ABSENT
            continue
        node: Any = record
        for key in path:
            if not isinstance(node, dict) or key not in node:
                fields[field_name] = (False, None, pointer + suffix)
                break
            node = node[key]
        else:
            fields[field_name] = (True, node, pointer + suffix)
    problems = check_envelope(fields, source, pointer)
    if layout.format == "bfcl":
        problems.extend(_bfcl_conflicts(record, source, pointer))
    if problems and any(p.is_error for p in problems):
        return None, problems
    has_input, input_schema, input_pointer = fields["input_schema"]
    if not has_input:
        input_schema = {"type": "object", "properties": {}}
        if layout.format == "mcp":
            problems.append(
                Diagnostic(
                    source, pointer, "no inputSchema; the tool takes an empty object", "warning"
                )
            )
    elif layout.format == "mcp":
        problems.extend(_mcp_input_problems(input_schema, source, input_pointer))
    has_output, output_schema, output_pointer = fields["output_schema"]
    problems.extend(_unread_outputs(record, layout, source, pointer))
    return ToolDefinition(
        name=fields["name"][1],
        description=fields["description"][1],
        input_schema=input_schema,
        output_schema=output_schema if has_output else None,
        title=fields["title"][1],
        annotations=fields["annotations"][1],
        source=source,
        pointer=pointer,
        input_pointer=input_pointer,
        output_pointer=output_pointer,
        format=layout.format,
        dialect="bfcl" if layout.format == "bfcl" else "json-schema",
        decoded=decoded,
    ), problems


_ABSENT = (False, None, "")
"""A field the layout has no place for."""


def _mcp_input_problems(schema: Any, source: str, pointer: str) -> list[Diagnostic]:
    """MCP requires an object schema for a tool's input (`"type": "object"`): a boolean
    schema or another JSON type is typed as written, with a warning, since a client may
    refuse the tool."""
    if isinstance(schema, bool):
        takes = "any value" if schema else "no value at all"
        message = (
            f"MCP requires an object schema for inputSchema; {str(schema).lower()} takes {takes}"
        )
    elif isinstance(schema, dict) and isinstance(kind := schema.get("type"), str):
        if kind not in _NOT_OBJECTS:
            return []
        message = f"MCP requires an object schema for inputSchema, not type {kind!r}"
    else:
        return []
    return [Diagnostic(source, pointer, message, "warning")]


_NOT_OBJECTS = frozenset(JSON_TYPES) - {"object"}


_OUTPUT_SPELLINGS = ("outputSchema", "output_schema", "return_schema")
"""How tool formats name an output schema; one beside a layout that reads another (or
none) would make every result `Any` without a word."""


def _unread_outputs(
    record: dict[str, Any], layout: _Layout, source: str, pointer: str
) -> list[Diagnostic]:
    """A warning for each output schema spelling beside the input schema that the record's
    format does not read (BFCL's own two spellings are `_bfcl_conflicts`' concern)."""
    container: Any = record
    for key in layout.input_schema[:-1]:
        container = container.get(key) if isinstance(container, dict) else None
    if not isinstance(container, dict):
        return []
    read = layout.output_schema[-1] if layout.output_schema else None
    own = _BFCL_OUTPUT_KEYS if layout.format == "bfcl" else (read,)
    where = f"its output schema is {read!r}" if read else "it has no output schema"
    return [
        Diagnostic(
            source,
            join_pointer(pointer, *layout.input_schema[:-1], key),
            f"{key!r} is not read in the {layout.format} format ({where}); "
            "results are typed as any value",
            "warning",
        )
        for key in _OUTPUT_SPELLINGS
        if key in container and key not in own
    ]


def _bfcl_conflicts(record: dict[str, Any], source: str, pointer: str) -> list[Diagnostic]:
    """An error for each BFCL field given under both of its keys: neither can win silently."""
    problems = []
    for keys in (_BFCL_INPUT_KEYS, _BFCL_OUTPUT_KEYS):
        if keys[0] in record and keys[1] in record:
            problems.append(
                Diagnostic(
                    source,
                    join_pointer(pointer, keys[1]),
                    f"both {keys[0]!r} and {keys[1]!r} given; keep one",
                )
            )
    return problems
