"""A catalog diff in words: Markdown for a reviewer, JSON (versioned) for a machine."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from .changes import DIFF_VERSION, CatalogDiff, Change
from .compare import scalar_text


def path_text(path: tuple[str, ...]) -> str:
    """`options.mode`, `items[].id`, `tags{}`: keys joined by dots, containers as suffixes."""
    text = ""
    for segment in path:
        if segment in ("[]", "{}") or (segment.startswith("[") and segment.endswith("]")):
            text += segment
        else:
            text += ("." if text else "") + segment
    return text


def describe(change: Change, code: Callable[[str], str]) -> str:
    """One sentence for a change; `code` marks names, types and values up."""
    output = change.part == "output"
    noun = "output field" if output else "argument"
    where = code(path_text(change.path)) if change.path else ""
    subject = f"{noun} {where}" if change.path else ("the output" if output else "the arguments")
    values = ", ".join(code(scalar_text(v)) for v in change.removed or change.added)
    old = code(change.old) if change.old is not None else "none"
    new = code(change.new) if change.new is not None else "none"
    kind = change.kind
    if kind == "tool-added":
        return "tool added"
    if kind == "tool-removed":
        return "tool removed"
    if kind == "title-changed":
        return f"title changed from {old} to {new}"
    if kind == "description-changed":
        return "description changed"
    if kind == "annotation-changed":
        return f"annotation {where} changed from {old} to {new}"
    if kind == "output-added":
        return f"output schema added: {new}"
    if kind == "output-removed":
        return f"output schema removed (was {old})"
    if kind == "field-added-required":
        return f"new required {noun} {where}: {new}"
    if kind == "field-added-optional":
        return f"new optional {noun} {where}: {new}"
    if kind == "field-removed":
        return f"{noun} {where} removed (was {old})"
    if kind == "field-required":
        return f"{subject} became required"
    if kind == "field-optional":
        return f"{subject} became optional" + (" (may be absent)" if output else "")
    if kind == "enum-narrowed":
        return f"{subject}: values removed: {values}"
    if kind == "enum-widened":
        return f"{subject}: values added: {values}"
    if kind == "enum-changed":
        removed = ", ".join(code(scalar_text(v)) for v in change.removed)
        added = ", ".join(code(scalar_text(v)) for v in change.added)
        return f"{subject}: values removed: {removed}; added: {added}"
    if kind == "type-changed":
        return f"{subject}: type changed from {old} to {new}"
    if kind == "type-widened":
        return f"{subject}: type widened from {old} to {new}"
    if kind == "type-narrowed":
        return f"{subject}: type narrowed from {old} to {new}"
    if kind == "extra-closed":
        return f"{subject} no longer accept{'s' * bool(change.path)} other keys"
    if kind == "extra-opened":
        return f"{subject} now accept{'s' * bool(change.path)} other keys"
    if kind == "field-description":
        return f"{subject}: description changed"
    if kind == "field-default":
        return f"{subject}: default changed from {old} to {new}"
    if kind == "field-deprecated":
        return f"{subject} is now deprecated"
    if kind == "field-undeprecated":
        return f"{subject} is no longer deprecated"
    raise AssertionError(f"unknown change kind {kind!r}")  # pragma: no cover


_BACKTICKS = re.compile("`+")


def code_span(text: str) -> str:
    """Markdown inline code that holds any text: hidden characters shown as escapes,
    line breaks as `\\n`, fenced by more backticks than the text contains."""
    from ...render.text import escape_hidden

    shown = escape_hidden(text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t"))
    longest = max((len(m) for m in _BACKTICKS.findall(shown)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown.strip() else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"


def _plain(text: str) -> str:
    return f"`{text}`"


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def render_markdown(diff: CatalogDiff) -> str:
    """A review summary for a pull request: a verdict, then added, removed and changed
    tools, each breaking change marked."""
    total = len(diff.tools) + diff.unchanged
    lines = ["# Tool catalog changes", ""]
    if not diff.tools:
        lines += [f"No changes: {plural(total, 'tool')}, all unchanged.", ""]
        return "\n".join(lines)
    verdict = (
        f"**{plural(diff.breaking_changes, 'breaking change')}.**"
        if diff.breaking
        else "**No breaking changes.**"
    )
    counts = (
        f"{plural(diff.count('added'), 'tool')} added, {diff.count('removed')} removed, "
        f"{diff.count('changed')} changed, {diff.unchanged} unchanged."
    )
    lines += [f"{verdict} {counts}", ""]
    for status, title in (("added", "Added"), ("removed", "Removed")):
        listed = [tool for tool in diff.tools if tool.status == status]
        if listed:
            lines += [f"## {title}", ""]
            mark = " — **breaking**" if status == "removed" else ""
            lines += [f"- {code_span(tool.name)}{mark}" for tool in listed]
            lines.append("")
    changed = [tool for tool in diff.tools if tool.status == "changed"]
    if changed:
        lines += ["## Changed", ""]
        for tool in changed:
            heading = f"### {code_span(tool.name)}" + (" — breaking" if tool.breaking else "")
            lines += [heading, ""]
            for change in tool.changes:
                text = describe(change, code_span)
                lines.append(f"- **breaking**: {text}" if change.breaking else f"- {text}")
            lines.append("")
    return "\n".join(lines)


def _change_json(change: Change) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": change.kind,
        "breaking": change.breaking,
        "in": change.part,
        "path": list(change.path),
    }
    if change.old is not None:
        data["old"] = change.old
    if change.new is not None:
        data["new"] = change.new
    if change.removed:
        data["removed"] = list(change.removed)
    if change.added:
        data["added"] = list(change.added)
    data["message"] = describe(change, _plain)
    return data


def render_json(diff: CatalogDiff) -> str:
    """The same report as data, for bots and CI annotations."""
    report = {
        "version": DIFF_VERSION,
        "breaking": diff.breaking,
        "summary": {
            "added": diff.count("added"),
            "removed": diff.count("removed"),
            "changed": diff.count("changed"),
            "unchanged": diff.unchanged,
            "breaking_changes": diff.breaking_changes,
        },
        "tools": [
            {
                "name": tool.name,
                "status": tool.status,
                "breaking": tool.breaking,
                "changes": [_change_json(change) for change in tool.changes],
            }
            for tool in diff.tools
        ],
    }
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


RENDERERS: Mapping[str, Callable[[CatalogDiff], str]] = {"md": render_markdown, "json": render_json}
