"""`ditto` in the model-facing sections: a field's comment written once per name.

Servers repeat parameter docs across their tools word for word (`context: Kubeconfig
Context to use for the command...` on twenty tools). A model reads each repeat at full
price, so a field or parameter whose trailing comment equals the last trailing comment
shown on a field of the same name above it gets `ditto` instead. The reader's rule is
that one sentence, stated in the `run_code` instructions.

Chunks are rendered per tool, before the tools around them are known, so a chunk marks each
such comment (`mark`) and the assembled text decides, in reading order (`Dittos`): a
tool's text depends only on what comes before it. Rendered text never holds the raw
control characters used as marks (they are escaped).
"""

from __future__ import annotations

import re

DITTO = "ditto"

_START, _SPLIT, _END = "\x02", "\x1f", "\x03"
_MARKED = re.compile("\x02([^\x1f]*)\x1f([^\x03]*)\x03")


def mark(key: str, comment: str) -> str:
    """A trailing comment of the field `key`, to be decided when the text is assembled."""
    return f"{_START}{key}{_SPLIT}{comment}{_END}"


_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def dittoable(key: str) -> bool:
    """Whether a field's comment may be a `ditto`: its name is plain ASCII, so a reader
    (and `tests/section_lossless.py`) finds it at the start of the line."""
    return _KEY.fullmatch(key) is not None


class Dittos:
    """Decides marked comments in reading order: the last comment shown per field name.
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
        key, comment = match.group(1), match.group(2)
        if not self._repeat and self._last.get(key) == comment:
            return DITTO
        self._last[key] = comment
        return comment
