"""Envelope rules: the fields of one tool record, read by `formats` while it loads a record.

A record's name, description, title, schemas and annotations must have the right JSON types
before the record can become a `ToolDefinition` at all, so these checks belong to loading;
`validate` takes the definitions that pass and checks them as a catalog (unique names) and
as schemas (their meta-schemas).
"""

from __future__ import annotations

from typing import Any

from ..errors import Diagnostic
from .json_text import MAX_NESTING, nesting_depth


def check_envelope(
    fields: dict[str, tuple[bool, Any, str]], source: str, pointer: str
) -> list[Diagnostic]:
    """Rules for one tool record: `fields` maps a field to (present, value, pointer)."""
    problems: list[Diagnostic] = []

    def error(where: str, message: str) -> None:
        problems.append(Diagnostic(source, where or pointer, message))

    present, name, name_pointer = fields["name"]
    if not present:
        error(pointer, "tool has no name")
    elif not isinstance(name, str):
        error(name_pointer, f"name must be a string, not {_kind(name)}")
    elif not name.strip():
        error(name_pointer, "name must be a non-empty string")
    for key in ("description", "title"):
        present, value, where = fields[key]
        if present and value is not None and not isinstance(value, str):
            error(where, f"{key} must be a string, not {_kind(value)}")
    for key in ("input_schema", "output_schema"):
        present, value, where = fields[key]
        if key == "output_schema" and value is None:
            continue
        if present and not isinstance(value, dict | bool):
            error(where, f"schema must be an object or a boolean, not {_kind(value)}")
    present, value, where = fields["annotations"]
    if present and value is not None and not isinstance(value, dict):
        error(where, f"annotations must be an object, not {_kind(value)}")
    elif present and isinstance(value, dict) and (depth := nesting_depth(value)) > MAX_NESTING:
        # Decoded documents never nest this deep; values built in memory can.
        error(where, f"annotations nesting depth {depth} exceeds the limit of {MAX_NESTING}")
    return problems


def _kind(value: Any) -> str:
    names = {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)
