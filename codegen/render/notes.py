"""The compact constraint notes shown next to a field in every target.

A note says what a caller needs and the type does not: the default, the allowed range,
length and item counts, format, pattern, an example, deprecation. Each renderer passes a
function that spells a JSON value in its own literal syntax, and decides how to lay the
notes out (one `;`-separated comment line in Python, JSDoc tags in TypeScript).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import NamedTuple

from ..ir import Docs
from .text import inline, inline_breaks


class Note(NamedTuple):
    """One fact about a node (`kind` groups them: default, range, format, ...). A named
    tuple, not a dataclass: a catalog makes one per constraint, and tuples build fastest."""

    kind: str
    text: str


def _bounds(low: str | None, high: str | None, noun: str) -> str | None:
    if low is not None and high is not None:
        return f"{low}..{high} {noun}" if noun != "length" else f"length {low}..{high}"
    if low is not None:
        return f"{noun} >= {low}"
    if high is not None:
        return f"{noun} <= {high}"
    return None


def has_notes(docs: Docs) -> bool:
    """Whether `notes` would find anything: every field but the description and title feeds
    a note, and most fields have at most a description."""
    return bool(
        docs.default is not None
        or docs.constraints
        or docs.format
        or docs.pattern
        or docs.examples
        or docs.read_only
        or docs.write_only
        or docs.notes
        or docs.deprecated
    )


def notes(docs: Docs, literal: Callable[[str], str]) -> list[Note]:
    """Notes for one node's docs; `literal` turns compact JSON text into target syntax.
    Defaults and examples are shown whole, in every target: a cut value would be a value
    the schema never gave."""
    return all_notes(docs, literal) if has_notes(docs) else []


def all_notes(docs: Docs, literal: Callable[[str], str]) -> list[Note]:
    """`notes` without the shortcut."""
    found: list[Note] = []
    if docs.default is not None:
        found.append(Note("default", literal(docs.default)))
    constraints = dict(docs.constraints) if docs.constraints else None
    if constraints:  # most notes are a default alone
        _bound_notes(constraints, found)
    if docs.format:
        found.append(Note("format", f"format: {docs.format}"))
    if docs.pattern:
        found.append(Note("pattern", f"pattern: {docs.pattern}"))
    if constraints:
        for keyword, label in (("contentMediaType", "media type"), ("contentEncoding", "encoding")):
            if keyword in constraints:
                found.append(Note("content", f"{label}: {json.loads(constraints[keyword])}"))
    if docs.examples:
        label = "example" if len(docs.examples) == 1 else "examples"
        found.append(Note("example", f"{label}: " + ", ".join(map(literal, docs.examples))))
    if docs.read_only:
        found.append(Note("access", "read-only"))
    if docs.write_only:
        found.append(Note("access", "write-only"))
    found.extend(Note("note", text) for text in docs.notes)
    if docs.deprecated:
        found.append(Note("deprecated", "deprecated"))
    return [Note(n.kind, exact(n.text) if n.kind in _VALUES else inline(n.text)) for n in found]


def _bound_notes(c: dict[str, str], found: list[Note]) -> None:
    """The range and count notes of a node's constraints, appended to `found`."""
    if "minimum" in c and "maximum" in c:  # both inclusive: one `low..high`
        found.append(Note("range", f"{c.pop('minimum')}..{c.pop('maximum')}"))
    for keyword, sign in (
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
    ):
        if keyword in c:
            found.append(Note("range", f"{sign} {c[keyword]}"))
    if "multipleOf" in c:
        found.append(Note("range", f"multiple of {c['multipleOf']}"))
    for low, high, noun in (
        ("minLength", "maxLength", "length"),
        ("minItems", "maxItems", "items"),
        ("minProperties", "maxProperties", "keys"),
        ("minContains", "maxContains", "matching items"),
    ):
        text = _bounds(c.get(low), c.get(high), noun)
        if text:
            found.append(Note("count", text))
    if c.get("uniqueItems") == "true":
        found.append(Note("count", "unique items"))


_VALUES = frozenset({"default", "example", "format", "pattern"})
"""Notes that quote a value: shown exactly (runs of spaces kept), with line breaks and tabs
as escapes so they stay on one line."""


def exact(text: str) -> str:
    """A value on one comment line, nothing folded: line breaks and tabs as `\\n`, `\\t`,
    hidden characters as escapes, backtick fences as tilde fences (as `inline` does)."""
    if text.isascii() and text.isprintable() and "```" not in text:
        return text
    return inline_breaks(text)


def with_notes(description: tuple[str, ...], found: list[str]) -> list[str]:
    """Doc lines for a reader that pays per token: the description, then its notes joined
    by `; `, on the description's line when it has just one (`Max results. default: 10;
    1..100`), so the docs fit in one trailing comment."""
    lines = list(description)
    if not found:
        return lines
    text = "; ".join(found)
    if len(lines) == 1:
        last = lines[0]
        return [f"{last}{' ' if last[-1:] in '.!?' else '; '}{text}"]
    return [*lines, text]
