"""`ditto` in the model-facing sections: a field's comment written once per name.

Servers repeat parameter docs across their tools word for word (`context: Kubeconfig
Context to use for the command...` on twenty tools). A model reads each repeat at full
price, so a field or parameter whose one-line comment equals the comment last written on a
field of the same name above it gets `ditto` instead. The reader's rule is that one
sentence, stated in the `run_code` instructions, and it counts every form a field's comment
takes: the one on its line and the comment lines just before it (docs of more than one
line). A reader cannot tell which form the generator skipped, so none is skipped: comment
lines before a field are the last comment of its name too (`mark_above`), and a one-line
comment that reads `ditto` itself goes before its field, where it is not a `ditto`.

Chunks are rendered per tool, before the tools around them are known, so a chunk marks each
field's comment and the assembled text decides, in reading order (`Dittos`): a tool's text
depends only on what comes before it. Rendered text never holds the raw control characters
used as marks (they are escaped).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

DITTO = "ditto"

_START, _SPLIT, _END, _ABOVE = "\x02", "\x1f", "\x03", "\x04"
_MARKED = re.compile("\x02([^\x1f]*)\x1f([^\x03\x04]*)([\x03\x04])")


def mark(key: str, comment: str) -> str:
    """The one-line comment on the line of the field `key`, to be decided when the text
    is assembled: itself or `ditto`."""
    return f"{_START}{key}{_SPLIT}{comment}{_END}"


def mark_above(key: str, lines: Sequence[str]) -> str:
    """The comment lines before the field `key` (their text, without `#`/`//`): written
    as they are, and the last comment of `key` from there on. Empty once resolved."""
    return _START + key + _SPLIT + "\n".join(lines) + _ABOVE


def on_its_line(docs: Sequence[str], key: str) -> bool:
    """Whether docs are one comment on their line: one line, and, on a field's line (`key`),
    not one a reader would take for a `ditto`."""
    return len(docs) == 1 and not (key and docs[0].strip().casefold() == DITTO)


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def dittoable(key: str) -> bool:
    """Whether a field's comment may be a `ditto`: its name is plain ASCII, so a reader
    (and `tests/support/section_lossless.py`) finds it at the start of the line."""
    return _KEY.fullmatch(key) is not None


class Dittos:
    """Decides marked comments in reading order: the last comment written per field name,
    in either form.
    With `repeat`, every comment is written in full (the text a reader expands to)."""

    def __init__(self, repeat: bool = False) -> None:
        self._last: dict[str, str] = {}
        self._repeat = repeat

    def resolve(self, text: str) -> str:
        """`text` (the next piece in reading order) with every marked comment decided."""
        if _START not in text:
            return text
        return _MARKED.sub(self._one, text)

    def _one(self, match: re.Match[str]) -> str:
        key, comment, end = match.groups()
        if end == _ABOVE:
            self._last[key] = comment
            return ""
        if not self._repeat and self._last.get(key) == comment:
            return DITTO
        self._last[key] = comment
        return comment
