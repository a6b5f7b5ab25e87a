"""Documentation keywords of a schema node, collected into an `ir.Docs`.

None of these keywords changes a type; renderers surface the ones a caller needs (default,
range, length, format, pattern, deprecated) next to the field.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..ir import EMPTY_DOCS, Docs
from ..normalize import LIST_KEYWORDS, MAP_KEYWORDS, SINGLE_KEYWORDS

CONSTRAINTS = (
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
    "contentMediaType",
    "contentEncoding",
)
"""Constraint keywords kept for documentation, in the order renderers show them."""


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))
"""One encoder for every call: `json.dumps` with options builds a new one each time."""


def json_text(value: Any) -> str:
    """Compact, exact JSON text of a value (non-ASCII kept, big integers exact)."""
    return _ENCODER.encode(value)


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


_DOC_KEYS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "example",
        "format",
        "pattern",
        "deprecated",
        "readOnly",
        "writeOnly",
        "patternProperties",
        "propertyNames",
        *CONSTRAINTS,
    }
)


_TEXT_FIELDS = (
    ("description", "description"),
    ("title", "title"),
    ("format", "format"),
    ("pattern", "pattern"),
)
_FLAGS = (("deprecated", "deprecated"), ("readOnly", "read_only"), ("writeOnly", "write_only"))
_TEXT_KEYS = frozenset(keyword for keyword, _ in _TEXT_FIELDS)
_CONSTRAINT_KEYS = frozenset(CONSTRAINTS)
_FLAG_KEYS = frozenset(keyword for keyword, _ in _FLAGS)
"""The groups of `_DOC_KEYS` that `extract_docs` reads only when a node holds one."""


def extract_docs(node: Any, notes: tuple[str, ...] = ()) -> Docs:
    """The documentation of one schema node (a dict; anything else has none). Only the
    keywords present are read: this runs for every node of every schema, so each group of
    keywords is looked at only when the node holds one of them. The constraints of a
    union's arms (`{"type": ["integer", "null"], "minimum": 2}` normalizes to one) are the
    node's too: see `_lift_arms`."""
    if not isinstance(node, dict):
        return Docs(notes=notes) if notes else EMPTY_DOCS
    if not _INLINE_KEYS.isdisjoint(node):
        inline = _inline_notes(node)
        notes = (*notes, *inline) if inline else notes
    if "enum" in node or "const" in node:
        structured = _structured_values(node)
        notes = (*notes, *structured) if structured else notes
    if not _NARROWING_KEYS.isdisjoint(node):
        notes = (*notes, *narrowing_notes(node))
    if "anyOf" in node or "oneOf" in node:
        arms = _documented_arms(node)
        if arms:
            described = _arm_descriptions(node, arms)
            node, arm_notes = _lift_arms(node, arms)
            notes = (*notes, *described, *arm_notes)
    present = _DOC_KEYS.intersection(node)
    if not present:
        return Docs(notes=notes) if notes else EMPTY_DOCS
    fields: dict[str, Any] = {}
    if not _TEXT_KEYS.isdisjoint(present):
        for keyword, name in _TEXT_FIELDS:
            if keyword in present:
                text = _string(node[keyword])
                if text is not None:
                    fields[name] = text
    if "default" in present:
        fields["default"] = json_text(node["default"])
    if "examples" in present and isinstance(node["examples"], list) and node["examples"]:
        fields["examples"] = tuple(json_text(v) for v in node["examples"])
    elif "example" in present:
        fields["examples"] = (json_text(node["example"]),)
    if not _CONSTRAINT_KEYS.isdisjoint(present):
        constraints = tuple(
            (k, json_text(node[k])) for k in CONSTRAINTS if k in present and _is_bound(k, node[k])
        )
        if constraints:
            fields["constraints"] = constraints
    if not _FLAG_KEYS.isdisjoint(present):
        for keyword, name in _FLAGS:
            if keyword in present and node[keyword] is True:
                fields[name] = True
    if "patternProperties" in present or "propertyNames" in present:
        notes = (*notes, *_key_notes(node))
    if notes:
        fields["notes"] = notes
    return Docs(**fields) if fields else EMPTY_DOCS


def _documented_arms(node: dict[str, Any]) -> list[dict[str, Any]]:
    """`_dict_arms`, when one of them says something the union's documentation shows; empty
    otherwise, found without building the list (a nullable's arms are bare `{"type": ...}`s,
    and most unions are nullables)."""
    for keyword in ("anyOf", "oneOf"):
        arms = node.get(keyword)
        if isinstance(arms, list):
            for arm in arms:
                if isinstance(arm, dict) and not _ARM_DOC_KEYS.isdisjoint(arm):
                    return _dict_arms(node)
    return []


def _dict_arms(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The dict arms of a node's `anyOf` and `oneOf`, in that order."""
    return [
        arm
        for keyword in ("anyOf", "oneOf")
        if isinstance(node.get(keyword), list)
        for arm in node[keyword]
        if isinstance(arm, dict)
    ]


_INLINE_KEYS = frozenset(
    {
        "items",
        "prefixItems",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "anyOf",
        "oneOf",
    }
)
"""Keywords whose schemas may be spelled inline in the node's type (`list[str]`,
`dict[str, int]`, `str | int`), where their own documentation has no place."""
INLINE_DEPTH = 8
"""Levels of nested parts (`items.items.values`) whose documentation is gathered."""


def _inline_notes(node: dict[str, Any]) -> tuple[str, ...]:
    """The description and note-level keywords of the parts of a node's type that have no
    place of their own: an array's items, a map's values (`additionalProperties`, each
    `patternProperties` schema), its keys (`propertyNames`), at every nesting level
    (`items.items: ...`), and the inline parts of a union's arms (`arm 1.items: ...`). They
    become notes beside the field (a named object type does not carry the description of
    the place it is used in either). The node's own union arms are `_arm_descriptions`'."""
    found: list[str] = []
    _gather(node, "", 0, found, arms=False)
    return tuple(dict.fromkeys(found))


def _gather(node: dict[str, Any], prefix: str, depth: int, found: list[str], arms: bool) -> None:
    own = node.get("description")
    for label, part in _inline_parts(node):
        where = prefix + label
        if _described_inline(part, own):
            found.append(f"{where}: {part['description']}")
        if not _CONDITION_KEYS.isdisjoint(part):
            found.extend(f"{where}: {text}" for text in part_conditions(part))
        if "$ref" not in part:
            # A part spelled inline (`list[str]`) has no place for its own notes either, nor
            # does an object type named after it (only a `$ref`'s target documents itself).
            skip = "pattern" if label == "keys" else None  # `keys match ...`: `_key_notes`
            shown = _part_notes(_lifted(part), skip)
            if shown:
                found.append(f"{where}: " + "; ".join(shown))
            found.extend(f"{where}: {text}" for text in _value_notes(part))
            found.extend(f"{where}: {text}" for text in _structured_values(part))
            if "patternProperties" in part or "propertyNames" in part:
                found.extend(f"{where}: {text}" for text in _key_notes(part))
        if depth < INLINE_DEPTH:
            _gather(part, f"{where}.", depth + 1, found, arms=True)
    if arms and ("anyOf" in node or "oneOf" in node):
        union = _documented_arms(node)
        if union:
            found.extend(f"{prefix.rstrip('.')}: {text}" for text in _arm_descriptions(node, union))
            found.extend(f"{prefix.rstrip('.')}: {text}" for text in _lift_arms(node, union)[1])
    if depth < INLINE_DEPTH and ("anyOf" in node or "oneOf" in node):
        every = _dict_arms(node)
        kinds = Counter(kind for arm in every if isinstance(kind := arm.get("type"), str))
        for index, arm in enumerate(every):
            kind = arm.get("type")
            named = kind if isinstance(kind, str) and kinds[kind] == 1 else f"arm {index + 1}"
            _gather(arm, f"{prefix}{named}.", depth + 1, found, arms=True)


def _lifted(part: dict[str, Any]) -> dict[str, Any]:
    """A part with the keywords its union's arms share lifted (`_lift_arms`), as a field's
    own documentation shows them; the others are its arms' notes."""
    if "anyOf" not in part and "oneOf" not in part:
        return part
    arms = _documented_arms(part)
    return _lift_arms(part, arms)[0] if arms else part


def _value_notes(part: dict[str, Any]) -> list[str]:
    """A part's default, examples and deprecation, as notes."""
    found = []
    if "default" in part:
        found.append(f"default: {json_text(part['default'])}")
    examples = part.get("examples")
    if not (isinstance(examples, list) and examples) and "example" in part:
        examples = [part["example"]]
    if isinstance(examples, list) and examples:
        label = "example" if len(examples) == 1 else "examples"
        found.append(f"{label}: " + ", ".join(json_text(v) for v in examples))
    if part.get("deprecated") is True:
        found.append("deprecated")
    return found


_PAIRS = (
    ("minimum", "maximum", "{}..{}"),
    ("minLength", "maxLength", "length {}..{}"),
    ("minItems", "maxItems", "{}..{} items"),
    ("minProperties", "maxProperties", "{}..{} keys"),
)
"""Bounds shown as one range when both are given, as the renderers' notes show them."""


def _part_notes(part: dict[str, Any], skip: str | None) -> list[str]:
    """A part's note-level keywords, in `_ARM_KEYS` order, a pair of bounds as one range."""
    paired: dict[str, str] = {}
    for low, high, spelled in _PAIRS:
        if _is_bound(low, part.get(low)) and _is_bound(high, part.get(high)):
            paired[low] = spelled.format(json_text(part[low]), json_text(part[high]))
            paired[high] = ""
    shown = []
    for keyword in _ARM_KEYS:
        if keyword in part and keyword != skip:
            text = paired[keyword] if keyword in paired else keyword_note(keyword, part[keyword])
            if text:
                shown.append(text)
    return shown


def _inline_parts(node: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(label, schema) of each part of a node that its type spells inline."""
    parts: list[tuple[str, dict[str, Any]]] = []
    prefix = node.get("prefixItems")
    if isinstance(prefix, list):
        parts.extend(
            (f"item {index + 1}", schema)
            for index, schema in enumerate(prefix)
            if isinstance(schema, dict) and schema
        )
    items = node.get("items")
    if isinstance(items, dict) and items:
        parts.append(("items", items))
    additional = node.get("additionalProperties")
    if isinstance(additional, dict) and additional and additional != {"not": {}}:
        parts.append(("values", additional))
    patterns = node.get("patternProperties")
    if isinstance(patterns, dict):
        for pattern, schema in patterns.items():
            if isinstance(schema, dict) and schema:
                parts.append((f"values of keys matching {json_text(pattern)}", schema))
    names = node.get("propertyNames")
    if isinstance(names, dict) and names:
        parts.append(("keys", names))
    return parts


_NARROWING_KEYS = frozenset({"not", "if", "dependentSchemas", "dependentRequired", "contains"})
"""Keywords that only narrow what the node's other keywords allow: the types leave them out
(what they admit is a superset, so no valid value is refused) and a note states them."""


def schema_text(schema: Any) -> str:
    """A subschema's JSON text for a note, its keywords sorted at every schema level: the
    order of keywords says nothing, so it never shows (the order of `properties` and
    `$defs` entries, and of `enum` or `default` values, is content and stays)."""
    return json_text(_canonical(schema))


def _canonical(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for key in sorted(schema):
        value = schema[key]
        if key in MAP_KEYWORDS and isinstance(value, dict):
            value = {k: _canonical(v) for k, v in value.items()}
        elif key in LIST_KEYWORDS and isinstance(value, list):
            value = [_canonical(v) for v in value]
        elif key in SINGLE_KEYWORDS:
            value = _canonical(value)
        result[key] = value
    return result


def narrowing_notes(node: dict[str, Any]) -> tuple[str, ...]:
    """The conditions a type cannot spell, in full: `not {...}`, `if {...} then {...} else
    {...}`, `dependentSchemas` as `if "key" is present: {...}` and `dependentRequired` as
    `if "key" is present: "other" is required`."""
    found = []
    if "not" in node and node["not"] != {}:
        found.append(f"not {schema_text(node['not'])}")
    if isinstance(node.get("contains"), dict):
        found.append(f"contains {schema_text(node['contains'])}")
    if isinstance(node.get("if"), dict | bool) and ("then" in node or "else" in node):
        text = f"if {schema_text(node['if'])}"
        if "then" in node:
            text += f" then {schema_text(node['then'])}"
        if "else" in node:
            text += f" else {schema_text(node['else'])}"
        found.append(text)
    dependent = node.get("dependentSchemas")
    if isinstance(dependent, dict):
        found.extend(
            f"if {json_text(key)} is present: {schema_text(schema)}"
            for key, schema in dependent.items()
        )
    needed = node.get("dependentRequired")
    if isinstance(needed, dict):
        found.extend(
            f"if {json_text(key)} is present: {_listed(keys)} "
            f"{'is' if len(keys) == 1 else 'are'} required"
            for key, keys in needed.items()
            if isinstance(keys, list) and keys
        )
    return tuple(found)


def _listed(values: list[Any]) -> str:
    """`"a"`, `"a" and "b"`, `"a", "b" and "c"`."""
    texts = [json_text(v) for v in values]
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]


def part_conditions(part: dict[str, Any]) -> tuple[str, ...]:
    """The conditions of a part spelled in place (an array's items, a union's arm), and of
    the arms of its `allOf` that are spelled in place too (not `$ref`s, whose targets are
    types documented where they are declared), at any depth."""
    found: list[str] = []
    pending = [part]
    while pending:
        node = pending.pop()
        if not _NARROWING_KEYS.isdisjoint(node):
            found.extend(narrowing_notes(node))
        arms = node.get("allOf")
        if isinstance(arms, list):
            pending.extend(a for a in reversed(arms) if isinstance(a, dict) and "$ref" not in a)
    return tuple(dict.fromkeys(found))


def _structured_values(node: dict[str, Any]) -> tuple[str, ...]:
    """Object and array values of `enum` and `const`, which no type spells (the type says
    only `dict[str, Any]`): shown in full as a note."""
    if "const" in node and isinstance(node["const"], dict | list):
        return (f"always {json_text(node['const'])}",)
    values = node.get("enum")
    if isinstance(values, list) and any(isinstance(v, dict | list) for v in values):
        return ("one of " + ", ".join(json_text(v) for v in values),)
    return ()


def _arm_descriptions(node: dict[str, Any], arms: list[dict[str, Any]]) -> list[str]:
    """The descriptions and conditions of a union's arms, which have no place of their own
    where the union is spelled inline (`str | int`): notes beside the field, labelled by the
    arm's type when no other arm has it, else by its position."""
    own = node.get("description")
    found: list[str] = []
    kinds = [arm.get("type") for arm in arms]
    for index, arm in enumerate(arms):
        described = _described_inline(arm, own)
        conditions = part_conditions(arm) if not _CONDITION_KEYS.isdisjoint(arm) else ()
        if "const" in arm or "enum" in arm:
            conditions = (*conditions, *_structured_values(arm))
        if not described and not conditions:
            continue
        kind = arm.get("type")
        label = kind if isinstance(kind, str) and kinds.count(kind) == 1 else None
        label = label or f"arm {index + 1}"
        if described:
            found.append(f"{label}: {arm['description']}")
        found.extend(f"{label}: {text}" for text in conditions)
    return found


def _described_inline(part: dict[str, Any], own: Any) -> bool:
    text = part.get("description")
    return isinstance(text, str) and bool(text.strip()) and text != own


_ARM_KEYS = ("format", "pattern", *CONSTRAINTS)
"""Keywords of a union arm that the union's own documentation shows."""
_ARM_KEY_SET = frozenset(_ARM_KEYS)
_CONDITION_KEYS = _NARROWING_KEYS | {"allOf"}
"""What a part must hold for `part_conditions` to find anything."""
_ARM_DOC_KEYS = frozenset({"description", "const", "enum", *_ARM_KEYS, *_CONDITION_KEYS})
"""What a union arm must hold for the union's documentation to mention it: an arm without
any (a nullable's `{"type": "null"}`) is skipped without reading it further."""
_ARM_FAMILIES = {
    "string": frozenset(
        {"format", "pattern", "minLength", "maxLength", "contentMediaType", "contentEncoding"}
    ),
    "number": frozenset(
        {"format", "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf"}
    ),
    "array": frozenset({"minItems", "maxItems", "uniqueItems", "minContains", "maxContains"}),
    "object": frozenset({"minProperties", "maxProperties"}),
    "boolean": frozenset(),
    "null": frozenset(),
}
_ARM_FAMILIES["integer"] = _ARM_FAMILIES["number"]


def _applies(keyword: str, arm: dict[str, Any]) -> bool:
    """Whether `keyword` could constrain the values `arm` admits: not for an arm of another
    type, nor for a literal."""
    if "const" in arm or isinstance(arm.get("enum"), list):
        return False
    kind = arm.get("type")
    family = _ARM_FAMILIES.get(kind) if isinstance(kind, str) else None
    return family is None or keyword in family


def _lift_arms(
    node: dict[str, Any], arms: list[dict[str, Any]]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A union node with its arms' note-level keywords (format, pattern, bounds) lifted.
    A keyword the node lacks, that every arm it applies to carries with one value, becomes
    the node's own (`["integer", "null"]` with a range documents like `integer` with it);
    any other arm keyword becomes a note, prefixed by its arm's type when several arms
    admit values. The node's own keywords and the arms' all hold, so both are shown.
    `arms` are the node's dict arms (`_documented_arms`)."""
    keys = set().union(*arms)
    carried = [k for k in _ARM_KEYS if k in keys]
    if not carried:
        return node, ()
    valued = [arm for arm in arms if arm.get("type") != "null" and arm.get("const", 0) is not None]
    kinds = [arm.get("type") for arm in valued]
    lifted = dict(node)
    notes: list[str] = []
    for keyword in carried:
        values = [arm[keyword] for arm in arms if keyword in arm]
        uniform = all(v == values[0] for v in values) and all(
            keyword in arm for arm in arms if _applies(keyword, arm)
        )
        if keyword not in node and uniform:
            lifted[keyword] = values[0]
            continue
        for index, arm in enumerate(arms):
            if keyword not in arm or (keyword in node and arm[keyword] == node[keyword]):
                continue
            text = keyword_note(keyword, arm[keyword])
            if text is None:
                continue
            if len(valued) > 1:
                kind = arm.get("type")
                label = kind if isinstance(kind, str) and kinds.count(kind) == 1 else None
                text = f"{label or f'arm {index + 1}'}: {text}"
            notes.append(text)
    return lifted, tuple(dict.fromkeys(notes))


_NOTE_SIGNS = {
    "minimum": ">= {}",
    "exclusiveMinimum": "> {}",
    "maximum": "<= {}",
    "exclusiveMaximum": "< {}",
    "multipleOf": "multiple of {}",
    "minLength": "length >= {}",
    "maxLength": "length <= {}",
    "minItems": "items >= {}",
    "maxItems": "items <= {}",
    "minContains": "matching items >= {}",
    "maxContains": "matching items <= {}",
    "minProperties": "keys >= {}",
    "maxProperties": "keys <= {}",
}


def keyword_note(keyword: str, value: Any) -> str | None:
    """One keyword as the text of a note, spelled like the notes renderers derive from
    `Docs` (`>= 2`, `length <= 5`, `format: date`); None for a value it cannot show."""
    if keyword in ("format", "pattern"):
        return f"{keyword}: {value}" if _string(value) is not None else None
    if keyword in ("contentMediaType", "contentEncoding"):
        label = "media type" if keyword == "contentMediaType" else "encoding"
        return f"{label}: {value}" if isinstance(value, str) else None
    if keyword == "uniqueItems":
        return "unique items" if value is True else None
    if keyword in _NOTE_SIGNS:
        return _NOTE_SIGNS[keyword].format(json_text(value)) if _is_bound(keyword, value) else None
    if keyword == "discriminator" and isinstance(value, dict):
        name = value.get("propertyName")
        return f"discriminated by {json_text(name)}" if isinstance(name, str) else None
    text = json_text(value)
    return f"{keyword}: {text if len(text) <= 60 else text[:57] + '...'}"


def _key_notes(node: dict[str, Any]) -> tuple[str, ...]:
    """What `patternProperties` and `propertyNames` say about the keys of an object."""
    notes = []
    patterns = node.get("patternProperties")
    if isinstance(patterns, dict) and patterns:
        additional = node.get("additionalProperties", node.get("unevaluatedProperties", True))
        if additional is False or additional == {"not": {}}:
            notes.append("other keys match " + " or ".join(map(json_text, patterns)))
        elif not any(pattern in _EVERY_KEY for pattern in patterns):
            # Any other key is allowed too, so the type (`dict[str, Any]`, or the union of
            # every value) does not say which values go with which keys: those of the keys
            # that match are told here, in full.
            notes.extend(
                f"values of keys matching {json_text(pattern)}: {schema_text(schema)}"
                for pattern, schema in patterns.items()
                if isinstance(schema, dict) and schema and schema != additional
            )
    names = node.get("propertyNames")
    if isinstance(names, dict) and isinstance(names.get("pattern"), str):
        notes.append(f"keys match {json_text(names['pattern'])}")
    return tuple(notes)


_EVERY_KEY = frozenset({"", "^", "$", ".*", "^.*", ".*$", "^.*$", "(.*)", "^(.*)$", "^[\\s\\S]*$"})
"""`patternProperties` patterns that every key matches (a search, not a full match): the
builder types the map's values by them."""


def matches_every_key(pattern: str) -> bool:
    return pattern in _EVERY_KEY


def _is_bound(keyword: str, value: Any) -> bool:
    if keyword == "uniqueItems":
        return value is True
    if keyword in ("contentMediaType", "contentEncoding"):
        return isinstance(value, str)
    return isinstance(value, int | float) and not isinstance(value, bool)


def merge_docs(outer: Docs, inner: Docs) -> Docs:
    """Docs of a reference site over the docs of its target: the site's keywords win."""
    if inner.is_empty():
        return outer
    if outer.is_empty():
        return inner
    return Docs(
        description=outer.description or inner.description,
        title=outer.title or inner.title,
        default=outer.default if outer.default is not None else inner.default,
        examples=outer.examples or inner.examples,
        format=outer.format or inner.format,
        pattern=outer.pattern or inner.pattern,
        constraints=outer.constraints or inner.constraints,
        deprecated=outer.deprecated or inner.deprecated,
        read_only=outer.read_only or inner.read_only,
        write_only=outer.write_only or inner.write_only,
        notes=tuple(dict.fromkeys(outer.notes + inner.notes)),
    )
