"""Hypothesis strategies for the robustness properties: tool catalogs full of hostile text,
and schemas generated from the draft-07 meta-schema with `hypothesis-jsonschema`.

Shared by `tests/test_robustness.py` (a few hundred examples in CI), `bench/fuzz.py` (as long
as asked) and `tests/test_escaping_mutations.py` (the fixed `hostile_catalog()`).
"""

from __future__ import annotations

import copy
import json
import keyword
import random
from functools import cache
from typing import Any

from hypothesis import strategies as st

from support import jsonschema_strategies

# --- hostile text -----------------------------------------------------------------------

MARKERS = (
    '__import__("pwn_os").system("pwn")',
    '"""; import pwn_os; """',
    "'''; import pwn_os; '''",
    "*/ declare const pwned: 1; /*",
    '"; declare const pwned: 1; "',
    "\n*/ declare const pwned: 1; /*\nimport pwn_os\n",
    '\\"); import pwn_os  # ',
    "`); declare const pwned: 1; //",
)
"""Statements that would run or declare something if schema text ever became code. Their
identifiers (`MARKER_WORDS`) occur nowhere else, so finding one outside a string literal
or comment proves an injection."""

MARKER_WORDS = frozenset({"pwn_os", "pwned"})

NEWLINES = ("\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
"""Every character sequence Python's `str.splitlines` or a JavaScript engine treats as a line
break."""

BIDI = tuple(chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))
"""Bidirectional embedding, override and isolate controls (Trojan Source)."""

SURROGATES = ("\ud800", "\udbff", "\udc00", "\udfff")
"""Lone surrogates: what a JSON `\\ud800` escape decodes to; not encodable as UTF-8."""

CONTROLS = (
    "\x00",
    "\x07",
    "\x08",
    "\t",
    "\x1b",
    "\x7f",
    "\x9b",
    "\u00ad",
    "\u061c",
    "\u180e",
    "\u200b",
    "\u200e",
    "\u200f",
    "\u2060",
    "\ufeff",
    "\ufff9",
)

DELIMITERS = (
    '"',
    "'",
    '"""',
    "'''",
    '""',
    "\\",
    "\\\\",
    '\\"',
    "\\'",
    "\\n",
    "\\x00",
    "\\u2028",
    "\\N{BULLET}",
    "*/",
    "/*",
    "/**",
    "//",
    "*",
    "/",
    "-->",
    "<!--",
    "</script>",
    "<script>",
    "```",
    "````",
    "`",
    "${x}",
    "{",
    "}",
    "#",
    "%s",
    "{0}",
    "{{x}}",
    "{% raw %}",
)

PRAGMA_TEXTS = (
    "type: ignore",
    "# type: ignore",
    "TYPE: IGNORE",
    "fmt: off",
    "fmt: skip",
    "noqa",
    "NoQA: E501",
    "pyright: basic",
    "mypy: ignore-errors",
    "pylint: disable=all",
    "ruff: noqa",
    "isort: skip_file",
    "pragma: no cover",
    "@ts-ignore",
    "@ts-expect-error",
    "@ts-nocheck",
    "@TS-IGNORE",
    "@jsx h",
    " * @ts-ignore",
)
"""Comment text some checker, formatter or compiler reads as an instruction."""

UNICODE = ("é", "e\u0301", "ℌ", "ﬁ", "Ǆ", "中文", "😀", "İ", "ß", "Ⅸ", "\u00a0", "\u3000")

LONG_TEXTS = ("word " * 2000, "x" * 3000, "é" * 500 + "\n" + "中" * 500)
"""Very long text: one 10,000-character paragraph, one unbroken token, wide characters."""

PIECES = (*MARKERS, *NEWLINES, *BIDI, *SURROGATES, *CONTROLS, *DELIMITERS, *PRAGMA_TEXTS, *UNICODE)

NAME_POOL = tuple(
    dict.fromkeys(
        (
            *keyword.kwlist,
            *keyword.softkwlist,
            "self",
            "args",
            "cls",
            "list",
            "dict",
            "str",
            "int",
            "float",
            "bool",
            "tuple",
            "type",
            "object",
            "print",
            "Any",
            "Literal",
            "NotRequired",
            "Never",
            "Protocol",
            "TypeAlias",
            "TypedDict",
            "Tools",
            "tools",
            "ToolCallError",
            "JsonValue",
            "ToolArgsMap",
            "ToolOutputMap",
            "ToolName",
            "Array",
            "Promise",
            "Record",
            "Error",
            "Object",
            "String",
            "constructor",
            "__proto__",
            "prototype",
            "toString",
            "hasOwnProperty",
            "__init__",
            "__class__",
            "__dict__",
            "__debug__",
            "__annotations__",
            "__x",
            "__x_",
            "_private",
            "_",
            "__",
            "",
            " ",
            "0",
            "1abc",
            "123",
            "1e3",
            "-1",
            "a-b",
            "a.b",
            "a b",
            "a_b",
            "A_B",
            "aB",
            "my-tool",
            "my_tool",
            "my.tool",
            "MyTool",
            "myTool",
            "my tool",
            "MY_TOOL",
            "my__tool",
            "get-user",
            "get_user",
            "GetUser",
            "Args",
            "Output",
            "null",
            "undefined",
            "true",
            "false",
            "default",
            "delete",
            "enum",
            "interface",
            "declare",
            "readonly",
            "keyof",
            "unknown",
            "ℌello",
            "ﬁle",
            "Ǆ",
            "e\u0301",
            "名前",
            "$ref",
            "$defs",
            "$",
            "x\u200by",
            "~0/~1",
            "%25",
            "#",
        )
    )
)
"""Names that are keywords (hard and soft) in either language, builtins, dunders, private or
mangled, empty or blank, digits first, names the SDKs declare themselves, and names that
collide once sanitised (`my-tool`, `my.tool`, `my_tool`, ...)."""


@cache
def hostile_text() -> st.SearchStrategy[str]:
    """Text made of hostile pieces and arbitrary characters."""
    piece = st.one_of(st.sampled_from(PIECES), st.sampled_from(PIECES), st.text(max_size=4))
    return st.lists(piece, max_size=4).map("".join).filter(_no_marker_word)


@cache
def marked_text() -> st.SearchStrategy[str]:
    """Hostile text that always carries an injection marker."""
    return st.tuples(hostile_text(), st.sampled_from(MARKERS), hostile_text()).map("".join)


@cache
def long_or(text: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """`text`, and about one time in twenty a very long text (descriptions only, to keep
    examples small)."""
    return st.tuples(st.integers(0, 59), text).map(
        lambda pair: LONG_TEXTS[pair[0]] if pair[0] < len(LONG_TEXTS) else pair[1]
    )


def _no_marker_word(text: str) -> bool:
    return not any(word in text for word in MARKER_WORDS) or any(m in text for m in MARKERS)


@cache
def names(text: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Tool names, property keys and `$defs` keys: the name pool, pairs of pool names joined
    by separators that sanitising removes, and hostile text."""
    pool = st.sampled_from(NAME_POOL)
    pair = st.tuples(pool, st.sampled_from(("-", "_", ".", " ", "__", "")), pool).map("".join)
    return st.one_of(pool, pair, text)


# --- JSON values --------------------------------------------------------------------------

BIG_INTEGERS = (2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 10**30, -(10**40))


@cache
def scalars(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from(BIG_INTEGERS),
        st.floats(allow_nan=False, allow_infinity=False),
        text,
    )


@cache
def json_values(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars(text),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)
        ),
        max_leaves=4,
    )


# --- hand-written schemas and catalogs ----------------------------------------------------

REF_SLOTS = ("<ref-slot-0>", "<ref-slot-1>", "<ref-slot-2>")
"""Placeholders a generated `$ref` holds until `tool_schemas` knows the `$defs` keys."""


@cache
def docs(text: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    """The annotation keywords of a node, each present or not; half the nodes have none,
    which keeps examples small enough to generate quickly."""
    annotated = st.fixed_dictionaries(
        {},
        optional={
            "description": long_or(text),
            "title": text,
            "default": json_values(text),
            "examples": st.lists(json_values(text), max_size=2),
            "deprecated": st.booleans(),
            "readOnly": st.booleans(),
        },
    )
    return st.one_of(st.just({}), annotated)


def _with_docs(
    body: st.SearchStrategy[dict[str, Any]], text: st.SearchStrategy[str]
) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda b, d: {**d, **b}, body, docs(text))


@cache
def leaf_schemas(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    number = st.one_of(st.integers(-(10**20), 10**20), st.floats(-1e6, 1e6))
    string = st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "pattern": text,
            "format": text,
            "minLength": st.integers(0, 5),
            "maxLength": st.integers(5, 20),
            "contentMediaType": text,
            "contentEncoding": text,
        },
    )
    numeric = st.fixed_dictionaries(
        {"type": st.sampled_from(("integer", "number"))},
        optional={
            "minimum": number,
            "exclusiveMaximum": number,
            "multipleOf": st.sampled_from((1, 2, 0.5, 1e-9)),
        },
    )
    kinds = ("string", "integer", "number", "boolean", "null", "array", "object")
    bodies = st.one_of(
        string,
        numeric,
        st.fixed_dictionaries({"enum": st.lists(scalars(text), min_size=1, max_size=5)}),
        st.fixed_dictionaries({"const": json_values(text)}),
        st.fixed_dictionaries(
            {"type": st.lists(st.sampled_from(kinds), min_size=1, max_size=3, unique=True)}
        ),
        st.just({}),
        st.sampled_from(("#", *REF_SLOTS)).map(lambda ref: {"$ref": ref}),
    )
    return st.one_of(st.booleans(), _with_docs(bodies, text))


def _object_schema(
    properties: dict[str, Any], required: int, extra: Any, patterns: dict[str, Any]
) -> dict[str, Any]:
    """An object schema; bit `i` of `required` makes the `i`-th property required."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if properties:
        schema["required"] = [k for i, k in enumerate(properties) if required >> i & 1]
    if extra is not None:
        schema["additionalProperties"] = extra
    if patterns:
        schema["patternProperties"] = patterns
    return schema


def _objects(
    text: st.SearchStrategy[str], children: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    body = st.builds(
        _object_schema,
        st.dictionaries(names(text), children, min_size=1, max_size=4),
        st.integers(0, 15),
        st.one_of(st.none(), st.booleans(), children),
        st.one_of(st.just({}), st.just({}), st.dictionaries(text, children, max_size=1)),
    )
    return _with_docs(body, text)


def _extend_schemas(
    text: st.SearchStrategy[str], children: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    arms = st.lists(children, min_size=1, max_size=3)
    bodies = st.one_of(
        st.fixed_dictionaries({"type": st.just("array"), "items": children}),
        st.fixed_dictionaries(
            {"type": st.just("array"), "prefixItems": arms, "items": st.just(False)},
            optional={"minItems": st.integers(0, 2)},
        ),
        st.fixed_dictionaries({"anyOf": arms}),
        st.fixed_dictionaries({"oneOf": arms}),
        st.fixed_dictionaries({"allOf": arms}),
        st.fixed_dictionaries({"not": children}),
        st.fixed_dictionaries({"if": children, "then": children}),
        st.fixed_dictionaries(
            {
                "type": st.just(["object", "null"]),
                "properties": st.dictionaries(names(text), children, max_size=2),
            }
        ),
    )
    return st.one_of(_objects(text, children), _with_docs(bodies, text))


def pointer_token(key: str) -> str:
    """`key` as one JSON-pointer token inside a URI fragment (`%`, tab, CR and LF
    percent-encoded: URL parsing drops raw tabs and line breaks)."""
    token = key.replace("%", "%25").replace("~", "~0").replace("/", "~1")
    return token.replace("\t", "%09").replace("\r", "%0D").replace("\n", "%0A")


def _fill_refs(node: Any, refs: dict[str, str]) -> Any:
    """`node` with every `$ref` slot replaced by the reference it stands for."""
    if isinstance(node, list):
        return [_fill_refs(item, refs) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: refs.get(value, value)
        if key == "$ref" and isinstance(value, str)
        else _fill_refs(value, refs)
        for key, value in node.items()
    }


def _attach_defs(root: Any, keys: list[str], definitions: list[Any]) -> Any:
    """The root with `$defs` under `keys`; slots for missing keys dangle on purpose."""
    refs = {
        slot: f"#/$defs/{pointer_token(keys[i])}" if i < len(keys) else f"#/$defs/missing{i}"
        for i, slot in enumerate(REF_SLOTS)
    }
    root = _fill_refs(root, refs)
    if keys and isinstance(root, dict):
        root["$defs"] = {
            key: _fill_refs(d, refs) for key, d in zip(keys, definitions, strict=False)
        }
    return root


@cache
def tool_schemas(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """A root schema, mostly an object, with `$defs` under hostile keys that nodes refer to
    (and references that dangle or point at the root)."""
    nodes = st.recursive(
        leaf_schemas(text), lambda inner: _extend_schemas(text, inner), max_leaves=6
    )
    roots = st.one_of(_objects(text, nodes), _objects(text, nodes), nodes)
    keys = st.lists(names(text), max_size=len(REF_SLOTS), unique=True)
    definitions = st.lists(nodes, min_size=len(REF_SLOTS), max_size=len(REF_SLOTS))
    return st.builds(_attach_defs, roots, keys, definitions)


@cache
def broken_records(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """Records the loader or validator must reject with a diagnostic."""
    return st.one_of(
        st.fixed_dictionaries({"description": text}),
        st.fixed_dictionaries({"name": st.one_of(st.integers(), st.just(" "), st.none())}),
        st.fixed_dictionaries({"name": text, "inputSchema": st.one_of(st.integers(), text)}),
        st.fixed_dictionaries(
            {"name": text, "inputSchema": st.just({"type": "object", "properties": []})}
        ),
        st.fixed_dictionaries({"name": text, "inputSchema": st.just({"type": 5})}),
        json_values(text),
    )


def tool_records(
    text: st.SearchStrategy[str], schemas: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    """One MCP tool record with hostile text in its name, title, description and schemas."""
    return st.fixed_dictionaries(
        {
            "name": names(text).filter(lambda name: name.strip() != ""),
            "inputSchema": schemas,
        },
        optional={
            "description": long_or(text),
            "title": text,
            "outputSchema": schemas,
            "annotations": st.fixed_dictionaries(
                {},
                optional={"title": text, **{key: hint_values(text) for key in HINT_KEYS}},
            ),
        },
    )


HINT_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def hint_values(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """An MCP behaviour hint as servers send it: mostly a boolean, sometimes anything else
    (which the sections must ignore)."""
    return st.one_of(st.booleans(), st.none(), st.integers(-1, 2), text)


def _with_broken(tools: list[Any], broken: tuple[int, Any, int]) -> dict[str, Any]:
    chance, record, position = broken
    if chance == 0:
        tools = [
            *tools[: position % (len(tools) + 1)],
            record,
            *tools[position % (len(tools) + 1) :],
        ]
    return {"tools": tools}


def catalogs(
    text: st.SearchStrategy[str] | None = None,
    schemas: st.SearchStrategy[Any] | None = None,
    max_tools: int = 4,
) -> st.SearchStrategy[dict[str, Any]]:
    """`{"tools": [...]}` with unique tool names; one catalog in ten also holds a record that
    must be rejected, so the diagnostics path is exercised too."""
    text = hostile_text() if text is None else text
    schemas = tool_schemas(text) if schemas is None else schemas
    tools = st.lists(
        tool_records(text, schemas), min_size=1, max_size=max_tools, unique_by=_tool_name
    )
    broken = st.tuples(st.integers(0, 9), broken_records(text), st.integers(0, 100))
    return st.builds(_with_broken, tools, broken).map(from_json_text)


def from_json_text(value: Any) -> Any:
    """The value as a JSON file gives it back: a high and a low surrogate next to each
    other in a string are one character once written as JSON escapes and read again."""
    return json.loads(to_json(value))


def _tool_name(record: dict[str, Any]) -> str:
    name: str = record["name"]
    return name


# --- schemas from the meta-schema --------------------------------------------------------

DRAFT_07 = "http://json-schema.org/draft-07/schema#"

_REFS = ("#", "#/definitions/a", "#/properties/a", "#/$defs/a", "#a", "other.json#/x", "#/nowhere")
"""`$ref` values: local pointers that resolve or dangle, an anchor, a remote document."""

_LEAF_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "title",
        "description",
        "default",
        "examples",
        "format",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "multipleOf",
        "maxLength",
        "minItems",
        "uniqueItems",
        "readOnly",
        "required",
        "$ref",
    }
)
"""Keywords of the innermost generated level: no subschemas, so the unrolled meta-schema
stays finite."""

_TEXT_KEYWORDS = ("title", "description", "$comment", "format", "pattern")


def _meta_schema() -> dict[str, Any]:
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

    return copy.deepcopy(dict(REGISTRY.contents(DRAFT_07)))


def unrolled_meta_schema(depth: int = 3) -> dict[str, Any]:
    """The draft-07 meta-schema with its recursion (`$ref: "#"`) unrolled `depth` levels
    (`hypothesis-jsonschema` cannot follow recursive references); the innermost level keeps
    only keywords without subschemas. Text keywords and object keys use the custom formats
    `hostile` / `hostile-name`, `$ref` values come from a fixed list."""
    meta = _meta_schema()
    definitions = meta.pop("definitions")

    def expand(node: Any, level: int) -> Any:
        if isinstance(node, list):
            return [expand(item, level) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if ref == "#":
            return level_schema(level - 1)
        if isinstance(ref, str) and ref.startswith("#/definitions/"):
            return expand(definitions[ref.rsplit("/", 1)[1]], level)
        return {key: expand(value, level) for key, value in node.items()}

    def level_schema(level: int) -> dict[str, Any]:
        properties = dict(meta["properties"])
        for key in ("$id", "$schema"):
            del properties[key]
        for key in _TEXT_KEYWORDS:
            properties[key] = {"type": "string", "format": "hostile"}
        properties["$ref"] = {"enum": list(_REFS)}
        for key in ("properties", "definitions", "dependencies"):
            properties[key] = {**properties[key], "propertyNames": {"format": "hostile-name"}}
            properties[key]["maxProperties"] = 3
        properties["patternProperties"] = {
            **properties["patternProperties"],
            "propertyNames": {"format": "hostile"},
            "maxProperties": 1,
        }
        properties["required"] = {
            "type": "array",
            "items": {"format": "hostile-name"},
            "maxItems": 3,
        }
        if level <= 0:
            properties = {k: v for k, v in properties.items() if k in _LEAF_KEYWORDS}
        schema = {
            "type": ["object", "boolean"],
            "properties": properties,
            "additionalProperties": False,
            "maxProperties": 6,
        }
        expanded: dict[str, Any] = expand(schema, max(level, 1))
        return expanded

    root = level_schema(depth)
    # The root of a tool's schema is usually an object with properties: ask for them.
    root["type"] = "object"
    root["required"] = ["properties"]
    root["properties"]["properties"]["minProperties"] = 1
    return root


@cache
def meta_schemas(depth: int = 2) -> st.SearchStrategy[Any]:
    """Schemas the draft-07 meta-schema accepts (strings may hold lone surrogates),
    declared as draft-07."""
    from hypothesis_jsonschema import from_schema

    jsonschema_strategies.prepare()
    text = hostile_text()
    strategy = from_schema(
        unrolled_meta_schema(depth),
        custom_formats={"hostile": text, "hostile-name": names(text)},
        codec=None,
    )
    return strategy.map(
        lambda schema: {"$schema": DRAFT_07, **schema} if isinstance(schema, dict) else schema
    )


@cache
def meta_catalogs(depth: int = 2) -> st.SearchStrategy[dict[str, Any]]:
    """One tool whose input and output schemas come from `meta_schemas`."""
    schemas = meta_schemas(depth)
    tool = st.fixed_dictionaries(
        {
            "name": names(hostile_text()).filter(lambda name: name.strip() != ""),
            "inputSchema": schemas,
        },
        optional={"outputSchema": schemas, "description": marked_text()},
    )
    return tool.map(lambda record: from_json_text({"tools": [record]}))


# --- input order ---------------------------------------------------------------------------

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
)


def shuffled_keywords(schema: Any, rng: random.Random) -> Any:
    """The same schema with the keywords of every schema object in another order. Maps
    whose order is content (the fields of `properties`, `$defs` entries) and JSON values
    (`enum`, `const`, `default`, `examples`) keep their order."""
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    keys = list(schema)
    rng.shuffle(keys)
    for key in keys:
        value = schema[key]
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            value = {k: shuffled_keywords(v, rng) for k, v in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            value = [shuffled_keywords(v, rng) for v in value]
        elif key in _SCHEMA_VALUES:
            value = (
                [shuffled_keywords(v, rng) for v in value]
                if isinstance(value, list)
                else shuffled_keywords(value, rng)
            )
        result[key] = value
    return result


def shuffled_catalog(value: Any, seed: int) -> Any:
    """The catalog with its tools, each record's keys and every schema's keywords in
    another order."""
    if not isinstance(value, dict) or not isinstance(value.get("tools"), list):
        return value
    rng = random.Random(seed)
    tools = list(value["tools"])
    rng.shuffle(tools)
    shuffled = []
    for tool in tools:
        if not isinstance(tool, dict):
            shuffled.append(tool)
            continue
        keys = list(tool)
        rng.shuffle(keys)
        shuffled.append(
            {
                key: shuffled_keywords(tool[key], rng)
                if key in ("inputSchema", "outputSchema")
                else tool[key]
                for key in keys
            }
        )
    return {"tools": shuffled}


def to_json(value: Any) -> str:
    """JSON text for a catalog as it would sit in a file: lone surrogates as `\\ud800`
    escapes."""
    return json.dumps(value, ensure_ascii=True, indent=1)


# --- one fixed hostile catalog ---------------------------------------------------------------


def hostile_texts() -> list[str]:
    """Every hostile piece at the start, middle and end of a text, plus texts that mix
    them across lines."""
    texts = [f"{piece}x{piece}" for piece in PIECES]
    texts += [
        "\n".join(PRAGMA_TEXTS),
        "".join(NEWLINES).join(MARKERS),
        'ends with a quote"',
        "both \"double\" and 'single' quotes",
        "ends with a backslash\\",
        '"starts with a quote',
        '""""',
        "'",
        "\\",
        " ",
        "```python\nimport os\n```",
        LONG_TEXTS[0],
        "\t indented\n\t\tmore\n  * bullet",
    ]
    return texts


def hostile_tools(index: int, text: str) -> list[dict[str, Any]]:
    """Two tools carrying `text` everywhere a schema string reaches the output: one with
    hostile names and keys (functional TypedDicts, a `tools["..."]` comment), one with plain
    names (class TypedDicts and a method, so the text lands in docstrings)."""
    docs = {"description": text, "title": text}
    def_key = f"d{index}{text}"
    hostile = {
        "name": f"t{index}{text}",
        **docs,
        "inputSchema": {
            "type": "object",
            **docs,
            "$defs": {def_key: {"type": "object", **docs, "properties": {text: {**docs}}}},
            "properties": {
                text: {
                    "type": "string",
                    **docs,
                    "default": text,
                    "examples": [text],
                    "pattern": text,
                    "format": text,
                },
                f"enum {text}": {"enum": [text, 1, None], **docs},
                f"const {text}": {"const": text, **docs},
                f"ref {text}": {"$ref": f"#/$defs/{pointer_token(def_key)}"},
                "nested": {
                    "type": "object",
                    **docs,
                    "properties": {text: {"type": "integer", **docs}},
                    "additionalProperties": {"type": "string", **docs},
                },
            },
            "required": [text],
            "additionalProperties": False,
        },
        "outputSchema": {"type": "array", **docs, "items": {"const": {text: [text]}}},
    }
    plain = {
        "name": f"method_{index}",
        **docs,
        "inputSchema": {
            "type": "object",
            **docs,
            "properties": {
                "field": {"type": "string", **docs, "default": text, "pattern": text},
                "child": {"type": "object", **docs, "properties": {"x": {"enum": [text]}}},
            },
        },
        "outputSchema": {"anyOf": [{"const": text, **docs}, {"type": "null"}], **docs},
    }
    return [hostile, plain]


def hostile_catalog() -> dict[str, Any]:
    """The fixed adversarial catalog: every hostile text in every place."""
    tools = []
    for index, text in enumerate(hostile_texts()):
        tools.extend(hostile_tools(index, text))
    return {"tools": tools}
