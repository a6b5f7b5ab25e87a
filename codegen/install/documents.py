"""A client's config file as `codegen install` reads, changes and writes it.

Read strictly (the toolkit's JSON decoder: duplicate keys, invalid UTF-8 and the like are
errors with a line and column), since a file misread would be a file damaged on write. A
file holding comments (VS Code's mcp.json may: JSONC) is refused by name, never rewritten
without them. The change touches one server entry (and, for VS Code, the input it asks
for): every other key and entry is kept, in its order; the text is laid out again as the
file was (its indent, line ending, final newline and byte order mark), JSON with two spaces
when it was on one line or new.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import Diagnostic, InvalidInputError, UsageError, escape_pointer_token
from ..load import json_text
from .entries import Entry, is_ours, updated, with_input

BOM = b"\xef\xbb\xbf"
_INDENT = re.compile(r"\n([ \t]+)\S")


@dataclass(frozen=True, slots=True)
class Layout:
    """How a file's text is laid out, so it is written back the same way."""

    indent: str = "  "
    newline: str = "\n"
    final_newline: bool = True
    bom: bool = False


def read_document(data: bytes | None, display: str, hint: str) -> tuple[dict[str, Any], Layout]:
    """The file's top-level object and layout (an empty object for a missing or blank file).
    `hint`: how to add the entry by hand, for the message when it cannot be read."""
    if data is None:
        return {}, Layout()
    bom = data.startswith(BOM)
    try:
        text = json_text.decode_bytes(data)
    except json_text.DecodeProblem as problem:
        raise _invalid(display, "", f"{problem.describe()}; {hint}") from None
    if not text.strip():
        return {}, Layout(bom=bom)
    try:
        document = json_text.loads(text)
    except json_text.DecodeProblem as problem:
        comment = comment_at(text)
        if comment is not None:
            line, column = comment
            message = (
                f"a comment at line {line} column {column}: codegen install keeps everything "
                f"in this file it does not change, and cannot keep comments, so it leaves the "
                f"file as it is; {hint}"
            )
            raise _invalid(display, "", message) from None
        message = f"{problem.describe()}; the file is left as it is; {hint}"
        raise _invalid(display, problem.pointer, message) from None
    if not isinstance(document, dict):
        raise _invalid(display, "", f"expected a JSON object, got {_kind(document)}; {hint}")
    return document, layout_of(text, bom)


def layout_of(text: str, bom: bool = False) -> Layout:
    """The indent of the first indented line (one level), the line ending and whether the
    text ends with one."""
    found = _INDENT.search(text)
    indent = found.group(1) if found else "  "
    return Layout(
        indent="\t" if indent.startswith("\t") else indent,
        newline="\r\n" if "\r\n" in text else "\n",
        final_newline=text.endswith("\n"),
        bom=bom,
    )


def render(document: Mapping[str, Any], layout: Layout) -> bytes:
    """The document's bytes in `layout` (JSON strings never hold a raw line break, so line
    endings are the layout's alone)."""
    text = json.dumps(document, indent=layout.indent, ensure_ascii=False)
    text += "\n" if layout.final_newline else ""
    data = text.replace("\n", layout.newline).encode("utf-8")
    return BOM + data if layout.bom else data


def with_entry(
    document: Mapping[str, Any],
    servers_key: str,
    name: str,
    entry: Entry,
    display: str,
    url: str | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """`document` with the server `name` set to `entry` (a new copy; nothing else changes).
    An entry of that name that is not ours is replaced only with `force`."""
    servers = document.get(servers_key, {})
    if not isinstance(servers, dict):
        pointer = "/" + escape_pointer_token(servers_key)
        raise _invalid(display, pointer, f"expected an object of servers, got {_kind(servers)}")
    value = entry.value
    if name in servers and not force:
        existing = servers[name]
        if not is_ours(existing, url):
            raise UsageError(
                f"install: {display} already has a server named {json.dumps(name)} that is "
                f"not codegen serve ({_summary(existing)}): choose another --name, or pass "
                "--force to replace it"
            )
        value = updated(existing, entry.value)
    changed = dict(document)
    changed[servers_key] = {**servers, name: value}
    if entry.input is not None:
        inputs = document.get("inputs", [])
        if not isinstance(inputs, list):
            raise _invalid(display, "/inputs", f"expected an array of inputs, got {_kind(inputs)}")
        changed["inputs"] = with_input(inputs, entry.input)
    return changed


def unified_diff(display: str, before: bytes | None, after: bytes) -> str:
    """A unified diff from `before` (None: no file yet) to `after`."""
    old = [] if before is None else _lines(before)
    lines = difflib.unified_diff(
        old, _lines(after), "/dev/null" if before is None else display, display
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def comment_at(text: str) -> tuple[int, int] | None:
    """Line and column of the first `//` or `/*` outside a string, if any."""
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "/" and text[index + 1 : index + 2] in ("/", "*"):
            line = text.count("\n", 0, index) + 1
            return line, index - (text.rfind("\n", 0, index) + 1) + 1
    return None


def _lines(data: bytes) -> list[str]:
    return data.removeprefix(BOM).decode("utf-8").replace("\r\n", "\n").splitlines(keepends=True)


def _summary(entry: Any) -> str:
    if isinstance(entry, Mapping):
        for key in ("command", "url"):
            if isinstance(entry.get(key), str):
                return f"{key} {json.dumps(entry[key], ensure_ascii=False)}"
    return _kind(entry)


def _invalid(source: str, pointer: str, message: str) -> InvalidInputError:
    return InvalidInputError((Diagnostic(source, pointer, message),))


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "null" if value is None else "an object"
