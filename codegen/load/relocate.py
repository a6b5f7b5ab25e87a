"""Diagnostics about a bundled definition, shown where the user wrote it.

The loader copies a definition another file holds into each tool that refers to it
(`bundle`), so validation and the build report its problems at the copy's place in the
tool's schema (`tools.json:/tools/0/inputSchema/$defs/Address/type`), a place no file has.
`relocated` moves each to the file and pointer the copy came from
(`common.schema.json:/$defs/Address/type`), once however many tools copied it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import Diagnostic
from .definitions import Bundled, ToolDefinition


def relocated(
    definitions: Iterable[ToolDefinition], diagnostics: Sequence[Diagnostic]
) -> Sequence[Diagnostic]:
    """`diagnostics` with each one inside a bundled definition moved to its file; the same
    sequence when no definition has one."""
    copies: dict[str, list[Bundled]] = {}
    for definition in definitions:
        if definition.bundled:
            copies.setdefault(definition.source, []).extend(definition.bundled)
    if not copies:
        return diagnostics
    return [_moved(diagnostic, copies.get(diagnostic.source, ())) for diagnostic in diagnostics]


def _moved(diagnostic: Diagnostic, copies: Iterable[Bundled]) -> Diagnostic:
    pointer = diagnostic.pointer
    for copy in copies:
        if pointer == copy.local or pointer.startswith(copy.local + "/"):
            where = copy.pointer + pointer[len(copy.local) :]
            return Diagnostic(copy.source, where, diagnostic.message, diagnostic.level)
    return diagnostic
