"""ty's diagnostics of a checked program as `ProgramDiagnostic`s: on the program's own lines,
in its own tool names, and `certain` only for a definite mistake in a call of a tool.

Certain: a name `tools` does not have; an argument the tool's function does not take, or a
required one left out; too many positional arguments; a literal of the wrong type or outside
an enum (where the argument, or the item of a display the checker points at, is written out
in the program). Never certain: anything inside a `**` argument (the one-dict call form
included), anything about a value the program computed or read from a result, `Any`, and
every other rule (they are reported, and under `refuse` only warn).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .nearest import closest_names
from .outcome import MistakeKind, ProgramDiagnostic
from .python_program import HEADER_LINES, CheckableProgram
from .python_stub import MODULE, CheckableStub

_NO_MEMBER = re.compile(rf"^Module `{MODULE}` has no member `(?P<name>[^`]+)`")
_FUNCTION = re.compile(r"function `(?P<name>[^`]+)`")
_EXPECTED = re.compile(r"Expected `(?P<expected>.*?)`, found `(?P<found>.*)`")
_TOOL_FUNCTION = re.compile(r"`(__tool_\d+)`")
_TYPED_DICT = re.compile(r"TypedDict `(?P<name>[^`]+)`")

_CALL_RULES: dict[str, MistakeKind] = {
    "unknown-argument": "unknown-argument",
    "missing-argument": "missing-argument",
    "too-many-positional-arguments": "arity",
    "invalid-argument-type": "wrong-type",
}
_UNKNOWN_ATTRIBUTE = ("unresolved-attribute", "missing-attribute")
_TYPED_DICT_RULES: dict[str, MistakeKind] = {
    "invalid-key": "unknown-argument",
    "missing-typed-dict-key": "missing-argument",
}
DECLARATION_LIMIT = 1500
"""Characters of a tool's declaration a wrong call's help shows."""


def unknown_literal_names(made: CheckableProgram, calls: dict[str, str]) -> list[ProgramDiagnostic]:
    """`tools["name"]` with a literal name no visible tool has: certain, found without a
    checker."""
    return [
        ProgramDiagnostic(
            each.line,
            each.column,
            "unknown-tool",
            f"`tools` has no tool {json.dumps(each.name[:100], ensure_ascii=False)}",
            True,
            closest_names(each.name, calls),
        )
        for each in made.unknown
    ]


def classified(
    items: list[dict[str, Any]], made: CheckableProgram, stub: CheckableStub
) -> list[ProgramDiagnostic]:
    functions = stub.by_function()
    calls = {each.name: each.call for each in stub.tools}
    found: list[ProgramDiagnostic] = []
    for item in items:
        if item.get("severity", 1) > 2:
            continue  # hints (an unused name) and information
        try:
            start = item["range"]["start"]
            checked = (int(start["line"]), int(start["character"]))
        except (KeyError, TypeError, ValueError):
            continue
        position = made.original(*checked)
        if position[0] < HEADER_LINES or position[0] >= HEADER_LINES + _body_lines(made):
            continue  # the header's own lines, or the closing `pass`
        line, column = made.program_position(*position)
        rule = str(item.get("code", ""))
        message = str(item.get("message", ""))
        kind, certain, tool = _judged(rule, message, position, made, functions, stub)
        help_text = ""
        if kind == "unknown-tool":
            match = _NO_MEMBER.search(message)
            help_text = closest_names(match.group("name") if match else "", calls)
        elif tool is not None:
            help_text = _cut(tool)
        found.append(
            ProgramDiagnostic(
                line, column, kind, _rewritten(message, functions), certain, help_text
            )
        )
    return found


def _judged(
    rule: str,
    message: str,
    position: tuple[int, int],
    made: CheckableProgram,
    functions: dict[str, Any],
    stub: CheckableStub,
) -> tuple[MistakeKind, bool, str | None]:
    """(kind, certain, the declaration of the tool called there)."""
    if rule in _UNKNOWN_ATTRIBUTE and _NO_MEMBER.search(message):
        return "unknown-tool", True, None
    named = _FUNCTION.search(message)
    function = functions.get(named.group("name")) if named else None
    declaration = function.declaration if function is not None else _enclosing(made, position, stub)
    if rule in _CALL_RULES and function is not None:
        kind = _CALL_RULES[rule]
        if made.in_spread(position):
            return kind, False, declaration
        if kind == "wrong-type":
            expected = _EXPECTED.search(message)
            if expected and expected.group("expected").startswith("Literal["):
                kind = "not-allowed-value"
            return kind, made.certain_at(position), declaration
        return kind, True, declaration
    if rule in _TYPED_DICT_RULES:
        kind = _TYPED_DICT_RULES[rule]
        typed = _TYPED_DICT.search(message)
        in_literal = made.certain_at(position)
        closed = typed is not None and typed.group("name") in stub.closed
        certain = in_literal and (kind == "missing-argument" or closed)
        return kind, certain, declaration
    return "other", False, None


def _enclosing(
    made: CheckableProgram, position: tuple[int, int], stub: CheckableStub
) -> str | None:
    """The declaration of the last tool call that starts at or before `position`."""
    before = [start for start in made.calls if start <= position]
    if not before:
        return None
    name = made.calls[max(before)]
    found = stub.by_name().get(name)
    return found.declaration if found is not None else None


def _body_lines(made: CheckableProgram) -> int:
    return made.text.count("\n") - HEADER_LINES - 1


def _rewritten(message: str, functions: dict[str, Any]) -> str:
    """The checker's message in the program's terms: `tools`, and each tool by its name."""
    match = _NO_MEMBER.search(message)
    if match:
        return f"`tools` has no tool `{match.group('name')}`" + message[match.end() :]

    def named(found: re.Match[str]) -> str:
        function = functions.get(found.group(1))
        return f"`{function.name}`" if function is not None else found.group(0)

    return _TOOL_FUNCTION.sub(named, message).replace(f"`{MODULE}.", "`")


def _cut(declaration: str) -> str:
    if len(declaration) <= DECLARATION_LIMIT:
        return declaration
    return declaration[: DECLARATION_LIMIT - 4].rstrip() + " ..."
