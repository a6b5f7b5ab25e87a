"""An upstream's tools as registry `ToolSpec`s.

Each tool the upstream lists and its `allow` / `deny` lists admit becomes `prefix__name`
(the `--namespace` rule, so the first `__` splits back to the name the server knows), keeps
its definition key for key, and calls the upstream with its own name. Whether programs may
run its calls in parallel is the upstream entry's `concurrency_safe` for that tool, else the
tool's `readOnlyHint` annotation (only an exact `true` counts). A tool the registry could not
hold (no name, a schema that is not valid JSON Schema) is left out with a warning, never the
whole upstream.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..codemode.calls.jsonvalue import thaw
from ..codemode.calls.offload import off_loop
from ..codemode.registry import ToolSpec
from ..load.namespaces import namespaced
from ..mcp.config import Upstream

Caller = Callable[[str, dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Mounted:
    """What one listing of an upstream contributes: its specs, and warnings to print."""

    specs: tuple[ToolSpec, ...]
    warnings: tuple[str, ...]


def _always(value: bool) -> Callable[[Any], bool]:
    def classify(arguments: Any) -> bool:
        return value

    return classify


def _handler(call: Caller, name: str) -> Callable[[Any, Any], Awaitable[Any]]:
    async def handler(arguments: Any, context: Any) -> Any:
        return await call(name, await off_loop(thaw, arguments, weight=arguments))

    return handler


def _schema_problems(schema: Any, name: str, pointer: str) -> list[str]:
    from ..validate.checks import check_schema

    return [f"{d.pointer}: {d.message}" for d in check_schema(schema, name, pointer) if d.is_error]


def mount(upstream: Upstream, tools: tuple[dict[str, Any], ...], call: Caller) -> Mounted:
    """The specs of one listing, in the order listed."""
    specs: list[ToolSpec] = []
    warnings: list[str] = []
    listed: set[str] = set()
    safe = dict(upstream.concurrency_safe)
    for index, tool in enumerate(tools):
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            warnings.append(f"tool {index} has no name; left out")
            continue
        if name in listed:
            warnings.append(f"tool {name!r} is listed twice; the first is kept")
            continue
        listed.add(name)
        if not upstream.admits(name):
            continue
        schema = tool.get("inputSchema", {"type": "object"})
        output = tool.get("outputSchema")
        problems = _schema_problems(schema, name, "/inputSchema")
        if output is not None:
            problems += _schema_problems(output, name, "/outputSchema")
        if problems:
            warnings.append(f"tool {name!r} left out, its schema is invalid: {'; '.join(problems)}")
            continue
        annotations = tool.get("annotations")
        annotations = annotations if isinstance(annotations, dict) else None
        read_only = annotations is not None and annotations.get("readOnlyHint") is True
        description = tool.get("description")
        title = tool.get("title")
        specs.append(
            ToolSpec(
                name=namespaced(upstream.prefix, name),
                description=description if isinstance(description, str) else "",
                input_schema=schema,
                output_schema=output,
                handler=_handler(call, name),
                is_concurrency_safe=_always(safe.get(name, read_only)),
                title=title if isinstance(title, str) else None,
                annotations=annotations,
            )
        )
    warnings.extend(upstream.unlisted(listed))
    for unknown in sorted(set(safe) - listed):
        warnings.append(f"concurrency_safe names {unknown!r}, which the server does not list")
    return Mounted(tuple(specs), tuple(warnings))


SUMMARY_NAMES = 6
"""Tool names a summary made from the tools alone shows."""


def server_summary(about: tuple[str, ...], tools: tuple[dict[str, Any], ...]) -> str:
    """A server's one-line summary for the model when the config gives none: its
    `serverInfo` description, else the first sentence of its `instructions`, else its
    title, else what its tools are ("6 tools: read_file, write_file, ..."). One line; the
    registry cuts it to its limit."""
    description, title, instructions = (*about, "", "", "")[:3]
    for text in (description, _first_sentence(instructions), title):
        line = " ".join(text.split())
        if line:
            return line
    names = [tool["name"] for tool in tools if isinstance(tool.get("name"), str)]
    if not names:
        return ""
    shown = ", ".join(sorted(names)[:SUMMARY_NAMES])
    more = ", ..." if len(names) > SUMMARY_NAMES else ""
    return f"{len(names)} tool{'s' * (len(names) != 1)}: {shown}{more}"


_META = re.compile(r"\b(instructions?|guidelines?|this (document|guide|prompt))\b", re.IGNORECASE)
"""A sentence about the instructions themselves ("These instructions are written for an
LLM...") says nothing of the server."""


def _first_sentence(text: str) -> str:
    """The first sentence of a prose paragraph of `text` that is about the server: not a
    heading, not a list item, not about the instructions themselves ("" when none is)."""
    for paragraph in text.split("\n\n")[:8]:
        stripped = paragraph.strip()
        if not stripped or stripped[0] in "#-*>|`" or stripped[:2].rstrip(".)").isdigit():
            continue
        line = " ".join(stripped.split())
        end = line.find(". ")
        sentence = line if end < 0 else line[: end + 1]
        if not _META.search(sentence):
            return sentence
    return ""
