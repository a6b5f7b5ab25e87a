"""`codegen diff`: what changed between two tool catalogs, and whether it breaks callers.

A change to a tool definition is a change to an API that agents and generated SDKs call, so
a reviewer needs to know which edits are safe. The comparison runs on the IR, not on the
JSON: two schemas that spell the same type differently (`$ref` or inline, `enum` order,
`type: [..]` or `anyOf`) compare equal, and named types are matched by their place and
structure, never by their generated names, which move when unrelated tools change.

Arguments are what callers send, outputs what they receive, so the same edit breaks in
opposite directions: a widened argument type (a new enum value, a new optional argument) is
safe and a narrowed one breaks callers; for an output it is the other way round. The rules:

| change | arguments | output |
| --- | --- | --- |
| field added | breaking if required | safe |
| field removed | breaking | breaking |
| became required | breaking | safe |
| became optional | safe | breaking (may be absent) |
| values/arms added (widened) | safe | breaking |
| values/arms removed (narrowed) | breaking | safe |
| type changed otherwise | breaking | breaking |
| no longer accepts other keys | breaking | safe |
| description, title, default, deprecation, annotations | safe | safe |

Tools removed and output schemas removed break callers; tools and output schemas added do
not. The report is deterministic: tools in code-point order of their names, changes in
schema order.

`changes` holds what a difference is, `compare` finds them on the IR, `report` words them
(Markdown for a reviewer, JSON for a machine) and `command` is `codegen diff` itself.
"""

from __future__ import annotations

from .changes import CatalogDiff, Change, ToolDiff
from .compare import compare_tools, diff_catalogs
from .report import code_span, describe, path_text, render_json, render_markdown

__all__ = [
    "CatalogDiff",
    "Change",
    "ToolDiff",
    "code_span",
    "compare_tools",
    "describe",
    "diff_catalogs",
    "path_text",
    "render_json",
    "render_markdown",
]
