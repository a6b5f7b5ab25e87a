"""The sentence a search hit shows of a tool: the first one that tells it apart from its
server's other tools.

Many servers open every tool's description with the same lines (an emoji heading,
"Purpose: 1.", "⚠️ PREREQUISITE: Use the 'think' tool FIRST", "Error Responses: 400 ..."),
so the description's first sentence says nothing about which tool a hit is. `summaries`
skips headings (a Markdown `#` line, a short line ending in `:`, a line without letters),
stubs (fewer than `MIN_LETTERS` letters, or a label and a number: `Purpose: 1.`) and any
sentence that at least half of the server's tools share (servers of `MIN_TOOLS` tools or
more), and takes the first sentence left; else the first that is no stub; else the description's
first sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import groupby, takewhile

from ..text import description_lines, truncate

MIN_LETTERS = 8
"""Letters a sentence needs to say what a tool does (counted, not words: Chinese or
Japanese text has no spaces)."""
MIN_TOOLS = 3
"""Tools a server needs before a sentence can be judged common to them."""
LIMIT = 160
"""Longest summary a hit shows (characters); a longer one ends in `...`."""
SCAN = 4_000
"""Characters of a description searched for its sentence."""

_END = re.compile(r"(?<=[.!?])\s")
_LEAD = re.compile(r"^[\W_]+")
_STUB = re.compile(r"^[\w\s-]{0,40}:\s*\d+[.)]?$")
_LETTER = re.compile(r"[^\W\d_]")


def summaries(names: Sequence[str], descriptions: Sequence[str | None]) -> list[str]:
    """Each tool's summary, in the order given; `names` give the servers (prefix before
    `__`)."""
    sentences = [_sentences(text) for text in descriptions]
    shared: dict[str, dict[str, int]] = {}
    sizes: dict[str, int] = {}
    order = sorted(range(len(names)), key=lambda n: split_name(names[n])[0])
    for server, members in groupby(order, key=lambda n: split_name(names[n])[0]):
        counts: dict[str, int] = {}
        size = 0
        for n in members:
            size += 1
            for key in {_key(s) for s in sentences[n]}:
                counts[key] = counts.get(key, 0) + 1
        shared[server], sizes[server] = counts, size
    found = []
    for name, text, own in zip(names, descriptions, sentences, strict=True):
        server = split_name(name)[0]
        counts, size = shared[server], sizes[server]
        common = max(2, (size + 1) // 2)
        distinct = [s for s in own if size < MIN_TOOLS or counts.get(_key(s), 0) < common]
        pick = next((s for s in distinct if not _stub(s)), None) or next(
            (s for s in (*distinct, *own) if not _stub(s)), None
        )
        found.append(truncate(pick, LIMIT) if pick else _first(text))
    return found


def _first(text: str | None) -> str:
    return first_sentence(text)


def first_sentence(description: str | None) -> str:
    """The first sentence of the first paragraph, on one line, at most `LIMIT`
    characters."""
    paragraph = " ".join(
        line.strip() for line in takewhile(str.strip, description_lines(description))
    )
    found = _END.search(paragraph)
    return truncate(paragraph if found is None else paragraph[: found.start()], LIMIT)


def split_name(name: str) -> tuple[str, str]:
    """(server prefix, own name) at the first `__`, as search reads a name (render does
    not import search)."""
    prefix, separator, rest = name.partition("__")
    if separator and prefix and rest:
        return prefix, rest
    return "", name


def _sentences(text: str | None) -> list[str]:
    """The description's sentences, in order, headings left out, each on one line."""
    if not text:
        return []
    kept: list[str] = []
    paragraph: list[str] = []
    for line in (*description_lines(text[:SCAN]), ""):
        line = line.strip()
        if line and not _heading(line):
            paragraph.append(_LEAD.sub("", line) if not paragraph else line)
            continue
        if paragraph:
            kept.extend(p.strip() for p in _END.split(" ".join(paragraph)) if p.strip())
            paragraph = []
    return [_LEAD.sub("", s) for s in kept if _LEAD.sub("", s)]


def _heading(line: str) -> bool:
    return (
        line.startswith("#")
        or not _LETTER.search(line)
        or (line.endswith(":") and len(line.split()) <= 6)
    )


def _stub(sentence: str) -> bool:
    return len(_LETTER.findall(sentence)) < MIN_LETTERS or bool(_STUB.match(sentence))


def _key(sentence: str) -> str:
    return " ".join(sentence.lower().split())
