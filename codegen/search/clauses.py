"""A question that needs several tools, cut into its clauses.

"Read the file and then email it to Bob" needs a file tool and a mail tool; as one bag of
words, whichever side has the rarer words fills the whole list. `SearchIndex.search` ranks
the whole question and each clause apart, then interleaves the rankings (the whole
question's best first), so each need is represented near the top.

A clause ends at a sentence's end or a semicolon, or before a word that starts another
step (`then`, `and then`, `after that`, `and also`, `as well as`, `followed by`, `secondly`,
`second,`, `in addition`, `moreover`, a sentence that starts with `and`, ...). A plain
`and` is not cut at: too many single needs are joined by it ("the sum of 2 and 3"); nor is
an ordinal without its comma ("metres per second").
A clause with fewer than `MIN_WORDS` content words is no step of its own and stays with the
one before.
"""

from __future__ import annotations

import re

from .terms import STOPWORDS, split_words

MAX_CLAUSES = 4
"""Clauses read from one question (the first ones; the rest stay with the last)."""
MIN_WORDS = 2
"""Content words (not stopwords) a clause needs to be ranked on its own."""
MAX_CHARS = 2_000
"""A longer question is a document, not a list of steps: it is not cut."""

_CUT = re.compile(
    r"(?:[.!?;]\s+|[\s,]+)(?:and\s+then|and\s+also|and\s+finally|after\s+that|afterwards"
    r"|as\s+well\s+as|followed\s+by|then|also|additionally|finally|lastly|next"
    r"|secondly|thirdly|fourthly|(?:second|third|fourth|fifth)(?=\s*,)"
    r"|in\s+addition(?:\s+to\s+that)?|furthermore|moreover)\b[\s,]*"
    r"|[.!?;]\s+and\b[\s,]*",
    re.IGNORECASE,
)


def clauses(text: str) -> list[str]:
    """The clauses of `text`, in order; `[text]` when it is one (or too long to cut)."""
    if len(text) > MAX_CHARS:
        return [text]
    found: list[str] = []
    for piece in _CUT.split(text):
        piece = piece.strip(" ,;")
        if not piece:
            continue
        if found and (len(found) >= MAX_CLAUSES or _content(piece) < MIN_WORDS):
            found[-1] = f"{found[-1]} {piece}"
        else:
            found.append(piece)
    if len(found) > 1 and _content(found[0]) < MIN_WORDS:
        found[1] = f"{found[0]} {found[1]}"
        del found[0]
    return found or [text]


def _content(text: str) -> int:
    return sum(1 for word in split_words(text) if word not in STOPWORDS)
