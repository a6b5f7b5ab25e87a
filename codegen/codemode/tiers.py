"""How much of the SDK a model is given up front: the whole section, or the way to find it.

MCP clients cut tool descriptions and server instructions (Claude Code at 2,048 UTF-16
code units, silently: the model sees a prefix that looks complete). So the text a model is
given never exceeds a budget, counted the way the cut is:

- `full`: the whole model-facing SDK section fits, and is given as it is;
- `search`: it does not, and the text is instead the calling convention, the discovery API
  (`catalog.search`, `catalog.describe`, ...) with a one-line example and the rule "never
  guess a name", then, if it fits, an index of the servers (each prefix with its summary, or
  the prefixes alone). Essentials come first, so a client with a smaller cap still gets a
  usable prefix; a paragraph that does not fit ends the text there.

A `search` text depends on the language, the budget and the servers' names and summaries
only: tools that change inside a server leave its bytes alone, so a client's prompt cache
survives and it need not be told anything changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

DEFAULT_BUDGET = 2048
"""UTF-16 code units: the length at which Claude Code cuts tool descriptions."""

FULL = "full"
SEARCH = "search"

KEEP: object = type("Keep", (), {"__repr__": lambda self: "KEEP"})()
"""A budget left out: the registry's own (None means no budget)."""


def utf16_units(text: str) -> int:
    """The length of `text` as JavaScript counts it (a character past U+FFFF is two)."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


@dataclass(frozen=True, slots=True)
class Tiered:
    text: str
    tier: str
    """`full` (the SDK itself) or `search` (the discovery API)."""
    index: str = ""
    """Under `search`: the server index given: `summaries`, `names` or `none`."""

    @property
    def units(self) -> int:
        return utf16_units(self.text)

    def describe(self, budget: int | None) -> str:
        """One line for a log: the tier and the size against the budget."""
        shown = "no budget" if budget is None else f"{budget:,}"
        detail = "the whole SDK" if self.tier == FULL else f"discovery, server index: {self.index}"
        return f"{self.tier} tier ({detail}), {self.units:,} of {shown} UTF-16 units"


def choose(
    full: Callable[[], str],
    floor: int,
    search: Callable[[int], Tiered],
    budget: int | None,
) -> Tiered:
    """The full text when it fits `budget` (None: no budget), else `search(budget)`.
    `floor` is a lower bound of the full text's length: past the budget, the full text is
    never rendered (a catalog of thousands of tools costs nothing here)."""
    if budget is None:
        return Tiered(full(), FULL)
    if floor <= budget:
        text = full()
        if utf16_units(text) <= budget:
            return Tiered(text, FULL)
    return search(budget)


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
        for kind, index in (
            ("summaries", _index(servers, True)),
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
