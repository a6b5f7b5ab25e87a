"""The help of a mistake: the closest tool names to an unknown one, in either language."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

NEAREST = 3
"""Names the help of an unknown tool shows."""


def closest_names(name: str, calls: dict[str, str], limit: int = NEAREST) -> str:
    """`closest: tools.a, tools.b` for a name no tool has (`calls`: each tool's name -> how a
    program calls it), or where to look when nothing is close."""
    found = _closest(name, calls, limit)
    if not found:
        return "no tool has a name like it; catalog.search(...) finds tools"
    return "closest: " + ", ".join(calls[each] for each in found)


def _closest(name: str, calls: dict[str, str], limit: int) -> list[str]:
    folded = {each.lower(): each for each in _likely(name, calls)}
    hits = difflib.get_close_matches(name.lower(), list(folded), n=limit, cutoff=0.6)
    if not hits:  # a server's prefix left out: compare with the names after it
        tails = _tails(calls)
        hits = [
            tails[hit]
            for hit in difflib.get_close_matches(name.lower(), list(tails), n=limit, cutoff=0.6)
        ]
        return hits
    return [folded[hit] for hit in hits]


def _likely(name: str, names: Iterable[str]) -> list[str]:
    """The names worth comparing (a comparison costs time in both lengths, and thousands of
    tools are common): of the same server when the name has one, of a similar length."""
    server, separator, _ = name.partition("__")
    pool = list(names)
    if separator:
        same = [each for each in pool if each.startswith(server + separator)]
        pool = same or pool
    slack = max(3, len(name) // 3)
    return [each for each in pool if abs(len(each) - len(name)) <= slack]


def _tails(names: Iterable[str]) -> dict[str, str]:
    tails: dict[str, str] = {}
    for name in names:
        _, separator, tail = name.partition("__")
        if separator and tail:
            tails.setdefault(tail.lower(), name)
    return tails
