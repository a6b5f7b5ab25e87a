"""Documentation keywords of a schema node, collected into an `ir.Docs`.

None of these keywords changes a type; renderers surface the ones a caller needs (default,
range, length, format, pattern, deprecated) next to the field.
"""

from __future__ import annotations

import json
from typing import Any

from .ir import EMPTY_DOCS, Docs

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


def extract_docs(node: Any, notes: tuple[str, ...] = ()) -> Docs:
    """The documentation of one schema node (a dict; anything else has none). Only the
    keywords present are read: this runs for every node of every schema."""
    if not isinstance(node, dict):
        return Docs(notes=notes) if notes else EMPTY_DOCS
    present = _DOC_KEYS.intersection(node)
    if not present:
        return Docs(notes=notes) if notes else EMPTY_DOCS
    fields: dict[str, Any] = {}
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
    constraints = tuple(
        (k, json_text(node[k])) for k in CONSTRAINTS if k in present and _is_bound(k, node[k])
    )
    if constraints:
        fields["constraints"] = constraints
    for keyword, name in _FLAGS:
        if keyword in present and node[keyword] is True:
            fields[name] = True
    if "patternProperties" in present or "propertyNames" in present:
        notes = (*notes, *_key_notes(node))
    if notes:
        fields["notes"] = notes
    return Docs(**fields) if fields else EMPTY_DOCS


def _key_notes(node: dict[str, Any]) -> tuple[str, ...]:
    """What `patternProperties` and `propertyNames` say about the keys of an object."""
    notes = []
    patterns = node.get("patternProperties")
    if isinstance(patterns, dict) and patterns:
        notes.append("other keys match " + " or ".join(map(json_text, patterns)))
    names = node.get("propertyNames")
    if isinstance(names, dict) and isinstance(names.get("pattern"), str):
        notes.append(f"keys match {json_text(names['pattern'])}")
    return tuple(notes)


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
