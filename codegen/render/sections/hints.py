"""MCP tool annotations as a model reads them: one short marker before a tool's description.

A tool's `annotations` (the IR keeps them as JSON text) may carry four behaviour hints. A
model deciding whether a call is safe to make, or to repeat, should see the ones the tool
states, in the section, in `catalog.describe` and in a search hit alike:
`[read-only, closed-world] Read a file.`

Only what the tool states is shown, never a default guessed for it. An exact `true` shows;
an exact `false` shows only where it says the opposite of MCP's default, which is what a
careful reader assumes of a tool that says nothing:

| hint | `true` | `false` | MCP default |
| --- | --- | --- | --- |
| `readOnlyHint` | `read-only` | (the default) | false |
| `destructiveHint` | `destructive` | `non-destructive` | true |
| `idempotentHint` | `idempotent` | (the default) | false |
| `openWorldHint` | `open-world` | `closed-world` | true |

`destructiveHint` and `idempotentHint` mean something only for a tool that may write, so a
`read-only` tool shows neither. Any other value (`"yes"`, `1`, `null`), any other key
(`title` included) and annotations that are not an object show nothing; the markers are a
closed set of words in a fixed order, so no annotation text reaches the output, and key
order never changes a byte.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

_WRITING_ONLY = frozenset({"destructiveHint", "idempotentHint"})
"""Hints that mean something only when the tool is not read-only."""

MARKS: tuple[tuple[str, str, str], ...] = (
    ("readOnlyHint", "read-only", ""),
    ("destructiveHint", "destructive", "non-destructive"),
    ("idempotentHint", "idempotent", ""),
    ("openWorldHint", "open-world", "closed-world"),
)
"""Each hint, the marker of an exact `true` and of an exact `false` ("": none), in the order
the markers are written."""


def hint_marks(annotations: str | None) -> tuple[str, ...]:
    """The markers of a tool's annotations (JSON text, as `ir.Tool` holds them), in
    `MARKS` order; () when there is nothing to show or the text is not a JSON object."""
    if not annotations or "Hint" not in annotations:
        return ()
    try:
        value = json.loads(annotations)
    except (ValueError, RecursionError):
        return ()
    return marks_of(value)


def marks_of(annotations: Any) -> tuple[str, ...]:
    """The markers of an annotations value (any value: only an object's exact booleans
    count)."""
    if not isinstance(annotations, dict):
        return ()
    read_only = annotations.get("readOnlyHint") is True
    found = []
    for key, if_true, if_false in MARKS:
        value = annotations.get(key)
        if read_only and key in _WRITING_ONLY:
            continue
        if value is True:
            found.append(if_true)
        elif value is False and if_false:
            found.append(if_false)
    return tuple(found)


def tag(marks: Sequence[str]) -> str:
    """`[read-only, closed-world]`, or "" for no markers."""
    return f"[{', '.join(marks)}]" if marks else ""


def marked(lines: Sequence[str], marks: Sequence[str]) -> tuple[str, ...]:
    """Description lines with the markers' tag before the first (the tag alone when there
    is no description)."""
    if not marks:
        return tuple(lines)
    if not lines:
        return (tag(marks),)
    return (f"{tag(marks)} {lines[0]}", *lines[1:])
