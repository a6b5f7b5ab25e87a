"""Validation: unique names across a catalog and meta-schema checks for each schema.

Takes `ToolDefinition`s, returns `Diagnostic`s and never raises. Every problem is collected,
not just the first. (A record's own fields are checked while it loads: `envelope`.) Each input and output schema is checked against the meta-schema of the
draft its `$schema` names (2020-12 when absent) with the `jsonschema` package.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from typing import Any

from .._support.recursion_limit import deep_recursion
from .._support.run_memos import per_run
from ..errors import Diagnostic, join_pointer
from ..load.definitions import ToolDefinition
from ..load.json_text import MAX_NESTING, nesting_depth
from .meta_schema import is_valid

DRAFTS = {
    "json-schema.org/draft-03/schema": "draft-03",
    "json-schema.org/draft-04/schema": "draft-04",
    "json-schema.org/draft-06/schema": "draft-06",
    "json-schema.org/draft-07/schema": "draft-07",
    "json-schema.org/draft/2019-09/schema": "2019-09",
    "json-schema.org/draft/2020-12/schema": "2020-12",
}
DEFAULT_DRAFT = "2020-12"
_MESSAGE_LIMIT = 240


def draft_of(schema: Any) -> tuple[str, str | None]:
    """The draft a schema declares, and a warning text when `$schema` is not one we know."""
    if not isinstance(schema, dict) or "$schema" not in schema:
        return DEFAULT_DRAFT, None
    uri = schema["$schema"]
    if not isinstance(uri, str):
        return DEFAULT_DRAFT, None
    key = uri.strip().split("://", 1)[-1].rstrip("#")
    if key in DRAFTS:
        return DRAFTS[key], None
    return DEFAULT_DRAFT, f"unknown $schema {json.dumps(uri)}; validated as draft {DEFAULT_DRAFT}"


def check_unique_names(tools: Sequence[ToolDefinition]) -> list[Diagnostic]:
    """A duplicate name is an error at every later definition, naming the first one. The
    hint to use `--namespace` is given only where it would help: the tools are not
    namespaced yet and come from different sources."""
    if len({tool.name for tool in tools}) == len(tools):
        return []  # the usual case, decided without sorting
    first: dict[str, ToolDefinition] = {}
    problems = []
    for tool in sorted(tools, key=lambda t: (t.source, t.pointer)):
        if tool.name in first:
            other = first[tool.name]
            hint = ""
            if tool.namespace is None and other.namespace is None and tool.source != other.source:
                hint = " (--namespace prefixes each tool name with its source)"
            problems.append(
                Diagnostic(
                    tool.source,
                    tool.pointer,
                    f"duplicate tool name {json.dumps(tool.name, ensure_ascii=False)}: also "
                    f"defined at {other.source}:{other.pointer or '/'}{hint}",
                )
            )
        else:
            first[tool.name] = tool
    return problems


def check_depth(schema: Any, source: str, pointer: str) -> list[Diagnostic]:
    """An error for a schema nested deeper than `MAX_NESTING`, found without recursion;
    callers check this before any other walk (a decoded document never nests this deep, a
    value built in memory can)."""
    depth = nesting_depth(schema)
    if depth <= MAX_NESTING:
        return []
    message = f"schema nesting depth {depth} exceeds the limit of {MAX_NESTING}"
    return [Diagnostic(source, pointer, message)]


def check_schema(schema: Any, source: str, pointer: str, decoded: bool = False) -> list[Diagnostic]:
    """Meta-schema validation of one schema; boolean schemas are always valid. The compiled
    check in `meta_schema` answers for valid schemas; `jsonschema` reports the problems of
    the others. `decoded`: the schema came from `json_text`, whose nesting is bounded."""
    if isinstance(schema, bool):
        return []
    too_deep = [] if decoded else check_depth(schema, source, pointer)
    if too_deep:
        return too_deep
    draft, warning = draft_of(schema)
    problems = []
    if warning:
        problems.append(Diagnostic(source, join_pointer(pointer, "$schema"), warning, "warning"))
    if is_valid(draft, schema) is True:
        return problems
    try:
        key = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):  # not JSON data at all (an in-memory caller's mistake)
        return [Diagnostic(source, pointer, "schema is not JSON data")]
    for relative, message in _meta_errors(draft, key):
        problems.append(Diagnostic(source, pointer + relative, message))
    return problems


@per_run
def _meta_errors(draft: str, schema_json: str) -> tuple[tuple[str, str], ...]:
    """(pointer relative to the schema, message) for every meta-schema violation."""
    from jsonschema.exceptions import best_match

    validator = _meta_validator(draft)
    schema = json.loads(schema_json)
    found = []
    with deep_recursion():
        for error in validator.iter_errors(schema):
            if error.context:
                error = best_match(error.context) or error
            relative = "".join(
                "/" + str(t).replace("~", "~0").replace("/", "~1") for t in error.absolute_path
            )
            found.append((relative, _message(error)))
    return tuple(sorted(set(found)))


@cache
def _meta_validator(draft: str) -> Any:
    import jsonschema.validators as validators

    classes = {
        "draft-03": validators.Draft3Validator,
        "draft-04": validators.Draft4Validator,
        "draft-06": validators.Draft6Validator,
        "draft-07": validators.Draft7Validator,
        "2019-09": validators.Draft201909Validator,
        "2020-12": validators.Draft202012Validator,
    }
    cls = classes[draft]
    return cls(cls.META_SCHEMA)


def _message(error: Any) -> str:
    """jsonschema's message with long instance reprs shortened."""
    message: str = error.message
    if len(message) <= _MESSAGE_LIMIT:
        return message
    validator = error.validator
    if validator == "type":
        return f"value is not of type {json.dumps(error.validator_value)}"
    return message[: _MESSAGE_LIMIT - 3] + "..."
