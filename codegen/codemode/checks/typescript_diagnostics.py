"""The TypeScript checker's findings as `ProgramDiagnostic`s: in the program's own tool names,
with help.

The checker process (`typescript_check_server.js`) has already put each diagnostic on the
program's own line and column, said what it is about and whether it is certain (which needs
the syntax tree). Here the message is written for the model: the call as the program writes
it (`tools.get_file`), the argument's path, then the compiler's own words, with the tools'
interface called `tools`; the help is the closest tool names for an unknown tool, the tool's
declaration for a wrong call.
"""

from __future__ import annotations

import json
import re
from typing import Any, cast

from .nearest import closest_names
from .outcome import MistakeKind, ProgramDiagnostic
from .typescript_declarations import TOOLS_TYPE, CheckableDeclarations

KINDS: frozenset[str] = frozenset(
    (
        "unknown-tool",
        "unknown-argument",
        "missing-argument",
        "wrong-type",
        "not-allowed-value",
        "arity",
        "other",
    )
)

_SUGGESTION = re.compile(r"Did you mean(?: to write)? '([^']+)'\?")


def diagnostics_of(
    found: Any, declarations: CheckableDeclarations
) -> tuple[ProgramDiagnostic, ...]:
    """The checker's answer (`{"diagnostics": [...]}`) as `ProgramDiagnostic`s; anything
    malformed is left out."""
    items = found.get("diagnostics") if isinstance(found, dict) else None
    if not isinstance(items, list):
        return ()
    tools = declarations.by_name()
    calls = declarations.calls()
    made = []
    for item in items:
        if isinstance(item, dict):
            made.append(_diagnostic(item, tools, calls))
    return tuple(made)


def _diagnostic(
    item: dict[str, Any], tools: dict[str, Any], calls: dict[str, str]
) -> ProgramDiagnostic:
    kind = item.get("kind") if item.get("kind") in KINDS else "other"
    tool = item.get("tool") if isinstance(item.get("tool"), str) else None
    declared = tools.get(tool) if tool is not None else None
    call = declared.call if declared is not None else None
    name = str(item.get("name") or "")
    said = _rewritten(str(item.get("message", "")))
    path = _path(item.get("path"))
    found = str(item.get("found") or "")
    if kind == "unknown-tool":
        message = f"`tools` has no tool `{name}`"
        help_text = closest_names(name, calls)
    elif call is None:
        message, help_text = said, ""
    else:
        message = _message(cast(MistakeKind, kind), call, name, path, found, said)
        help_text = declared.declaration if declared is not None else ""
    certain = item.get("certain") is True and kind != "other"
    return ProgramDiagnostic(
        _number(item.get("line"), 1),
        _number(item.get("column"), 0),
        cast(MistakeKind, kind),
        message,
        certain,
        help_text,
    )


def _message(kind: MistakeKind, call: str, name: str, path: str, found: str, said: str) -> str:
    where = f" `{path}`" if path else ""
    if kind == "unknown-argument":
        suggestion = _SUGGESTION.search(said)
        hint = f"; did you mean `{suggestion.group(1)}`?" if suggestion else ""
        if path:
            return f"`{call}`: the argument `{path}` has no key `{name}`{hint}"
        return f"`{call}` has no argument `{name}`{hint}"
    if kind == "missing-argument":
        if found == "0":
            return f"`{call}()` passes no arguments, and the tool requires some"
        names = ", ".join(f"`{each.strip()}`" for each in name.split(",") if each.strip())
        plural = "s" if "," in name else ""
        inside = f" of{where}" if path else ""
        return f"`{call}`: missing argument{plural}{inside} {names}"
    if kind == "arity":
        return f"`{call}` takes one object of arguments, not {found or 'more'}"
    if kind in ("wrong-type", "not-allowed-value"):
        value = f" is {found}" if found else ""
        target = f"the argument{where}" if path else "the arguments"
        return f"`{call}`: {target}{value}: {_first_line(said)}"
    return f"`{call}`: {said}"


def _rewritten(message: str) -> str:
    """The compiler's message with the tools' interface said as `tools`."""
    return message.replace(f"'{TOOLS_TYPE}'", "'tools'").replace(TOOLS_TYPE, "tools")


def _first_line(message: str) -> str:
    return message.split("\n", 1)[0]


def _path(path: Any) -> str:
    """`filter.mode`, `ids[1]`, `["odd key"]`: the keys and indexes from the argument down."""
    if not isinstance(path, list):
        return ""
    text = ""
    for step in path:
        if isinstance(step, int) and not isinstance(step, bool):
            text += f"[{step}]"
        elif isinstance(step, str) and re.fullmatch(r"[A-Za-z_$][\w$]*", step):
            text += f".{step}" if text else step
        else:
            text += f"[{json.dumps(str(step), ensure_ascii=False)}]"
    return text


def _number(value: Any, default: int) -> int:
    return (
        value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default
    )
