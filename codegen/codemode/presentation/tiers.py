"""How much of the SDK a model is given up front: the whole section, or the way to find it.

MCP clients cut tool descriptions and server instructions (Claude Code at 2,048 UTF-16
code units, silently: the model sees a prefix that looks complete). So the text a model is
given never exceeds a budget, counted the way the cut is:

- `full`: the whole model-facing SDK section fits, and is given as it is;
- `listing`: it does not, but every tool's name does: the discovery text's essentials, then
  every tool grouped by server, each with the richest signature that fits them all (its
  arguments, `?` marking an optional one; else its required ones; else its name alone);
- `search`: not even that, and the text is instead the calling convention, the discovery API
  (`catalog.search`, `catalog.describe`, ...) with a one-line example and the rule "never
  guess a name", then, if it fits, an index of the servers (each prefix with its summary, or
  the prefixes alone). Essentials come first, so a client with a smaller cap still gets a
  usable prefix; a paragraph that does not fit ends the text there.

A `search` text depends on the language, the budget and the servers' names and summaries
only: tools that change inside a server leave its bytes alone, so a client's prompt cache
survives and it need not be told anything changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

DEFAULT_BUDGET = 2048
"""UTF-16 code units: the length at which Claude Code cuts tool descriptions."""

FULL = "full"
LISTING = "listing"
SEARCH = "search"

LISTED = ("arguments", "required arguments", "names")
"""What the listing tier shows of each tool, richest first."""

KEEP: object = type("Keep", (), {"__repr__": lambda self: "KEEP"})()
"""A budget left out: the registry's own (None means no budget)."""


def utf16_units(text: str) -> int:
    """The length of `text` as JavaScript counts it (a character past U+FFFF is two)."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


@dataclass(frozen=True, slots=True)
class Tiered:
    text: str
    tier: str
    """`full` (the SDK itself), `listing` (every tool's name) or `search` (the discovery
    API)."""
    index: str = ""
    """Under `search`: the server index given: `summaries`, `names` or `none`; under
    `listing`: what each tool shows (`LISTED`)."""

    @property
    def units(self) -> int:
        return utf16_units(self.text)

    def describe(self, budget: int | None) -> str:
        """One line for a log: the tier and the size against the budget."""
        shown = "no budget" if budget is None else f"{budget:,}"
        if self.tier == FULL:
            detail = "the whole SDK"
        elif self.tier == LISTING:
            detail = f"every tool listed, with its {self.index}"
        else:
            detail = f"discovery, server index: {self.index}"
        return f"{self.tier} tier ({detail}), {self.units:,} of {shown} UTF-16 units"


def choose(
    full: Callable[[], str],
    floor: int,
    search: Callable[[int], Tiered],
    budget: int | None,
    listing: Callable[[int], Tiered | None] | None = None,
) -> Tiered:
    """The full text when it fits `budget` (None: no budget), else the listing when it
    fits, else `search(budget)`. `floor` is a lower bound of the full text's length (and of
    the listing's): past the budget, neither is rendered (a catalog of thousands of tools
    costs nothing here)."""
    if budget is None:
        return Tiered(full(), FULL)
    if floor <= budget:
        text = full()
        if utf16_units(text) <= budget:
            return Tiered(text, FULL)
    listed = listing(budget) if listing is not None else None
    return listed if listed is not None else search(budget)


@dataclass(frozen=True, slots=True)
class ListedTool:
    """What the listing tier may show of one tool: its name and its arguments, in the
    schema's order, each with whether it is required."""

    name: str
    arguments: tuple[tuple[str, bool], ...] = ()


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
_PLAIN_ARGUMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]{0,63}")


def listing_text(
    paragraphs: Sequence[str], tools: Sequence[ListedTool], budget: int
) -> Tiered | None:
    """The `listing` tier's text, the richest that fits `budget`, or None when not even
    the names do. `paragraphs` come first, whole (each is essential here); the tools are
    grouped by server in code-point order. A name or argument that is not plain text (an
    identifier, `-` and `.`) is written as a JSON string, never as it is."""
    head = "\n\n".join(paragraphs)
    if (
        utf16_units(head)
        + sum(len(tool.name.partition("__")[2] or tool.name) + 2 for tool in tools)
        > budget
    ):
        return None  # not even the names: nothing is laid out
    groups: dict[str, list[ListedTool]] = {}
    for tool in sorted(tools, key=lambda each: each.name):
        server, _, rest = tool.name.partition("__")
        groups.setdefault(server if rest else "", []).append(tool)
    for level in LISTED:
        lines = ["Tools by server (a tool named server__tool is `tools.server__tool`):"]
        for server in sorted(groups):
            shown = ", ".join(_listed(tool, level, bool(server)) for tool in groups[server])
            lines.append(f"- {_plain(server) if server else '(no server)'}: {shown}")
        text = "\n\n".join([head, "\n".join(lines)])
        if utf16_units(text) <= budget:
            return Tiered(text, LISTING, level)
    return None


def _listed(tool: ListedTool, level: str, grouped: bool) -> str:
    name = tool.name.partition("__")[2] if grouped else tool.name
    shown = _plain(name)
    if level == "names":
        return shown
    arguments = [
        _plain(argument, _PLAIN_ARGUMENT) + ("" if required else "?")
        for argument, required in tool.arguments
        if required or level == "arguments"
    ]
    if level == "required arguments" and len(arguments) < len(tool.arguments):
        arguments.append("...")
    return f"{shown}({', '.join(arguments)})"


def _plain(text: str, pattern: re.Pattern[str] = _PLAIN_NAME) -> str:
    return text if pattern.fullmatch(text) else json.dumps(text, ensure_ascii=True)


def search_text(
    paragraphs: Sequence[str], servers: Sequence[tuple[str, str]], budget: int
) -> Tiered:
    """The `search` tier's text: `paragraphs` in order while they fit, then the richest
    server index that fits (summaries, else names, else none)."""
    kept: list[str] = []
    used = 0
    for paragraph in paragraphs:
        cost = utf16_units(paragraph) + (2 if kept else 0)
        if used + cost > budget:
            if not kept:  # not even the first: its prefix, at a word boundary
                kept.append(_prefix(paragraph, budget))
            return Tiered("\n\n".join(kept), SEARCH, "none")
        kept.append(paragraph)
        used += cost
    if servers:
        # a line per server reads as a list of names when no server has a summary
        listed = "summaries" if any(summary for _, summary in servers) else "names"
        for kind, index in (
            (listed, _index(servers, True)),
            ("names", _index(servers, False)),
        ):
            if used + 2 + utf16_units(index) <= budget:
                return Tiered("\n\n".join([*kept, index]), SEARCH, kind)
    return Tiered("\n\n".join(kept), SEARCH, "none")


def _index(servers: Sequence[tuple[str, str]], summaries: bool) -> str:
    if not summaries:
        names = ", ".join(name for name, _ in servers)
        return f"Servers (a tool named server__tool belongs to server): {names}."
    lines = [f"- {name}: {summary}" if summary else f"- {name}" for name, summary in servers]
    return "\n".join(["Servers (a tool named server__tool belongs to server):", *lines])


def _prefix(text: str, budget: int) -> str:
    cut = text
    while utf16_units(cut) > budget:
        cut = cut[: max(0, len(cut) - max(1, utf16_units(cut) - budget))]
    space = cut.rfind(" ")
    return cut[:space] if space > len(cut) // 2 else cut
