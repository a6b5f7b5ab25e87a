"""Text from schemas, made safe to place in generated code.

Every string that comes from a schema (descriptions, titles, names, patterns, defaults) goes
through here before a renderer quotes or comments it. `description_lines` splits text on
every line break Python and JavaScript know (so a comment can never end early), shows
control, invisible and bidirectional characters as visible escapes (so nothing can hide or
reorder code around it), and trims blank edges. Language-specific quoting lives with each
renderer.
"""

from __future__ import annotations

import re

from .._support.run_memos import per_run

MAX_BLANK_RUN = 1
"""Blank lines kept in a row inside a description."""

_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\ud800-\udfff]"
)
"""Control characters (C0 except tab and newline, DEL, C1), invisible and bidirectional
formatting characters, line and paragraph separators, and lone surrogates."""

_FENCE = re.compile("`{3,}")
"""A run of three or more backticks would close the Markdown fence the SDK sits in when it
goes into a prompt; in descriptions it becomes the equivalent tilde fence."""

_LINE_BREAKS = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def escape_hidden(text: str) -> str:
    """Show hidden characters as `\\xNN` / `\\uNNNN` text."""
    return _HIDDEN.sub(_escape_char, text)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def inline(text: str) -> str:
    """Text for one line inside a comment: whitespace folded, hidden characters shown,
    backtick fences turned into tilde fences."""
    folded = escape_hidden(" ".join(text.split()))
    return _FENCE.sub(lambda m: "~" * len(m.group()), folded) if "```" in folded else folded


def inline_breaks(text: str) -> str:
    """Text for one line inside a comment with nothing folded: every line break and tab
    written as an escape (`\\n`, `\\t`, `\\x0c`, `\\u2028`, ...), hidden characters
    shown, backtick fences turned into tilde fences."""
    shown = escape_hidden(text.replace("\n", "\\n").replace("\t", "\\t"))
    return _FENCE.sub(lambda m: "~" * len(m.group()), shown) if "```" in shown else shown


def split_lines(text: str) -> list[str]:
    """Split on every line break any of our targets recognises."""
    return _LINE_BREAKS.split(text)


@per_run
def description_lines(text: str | None) -> tuple[str, ...]:
    """A description as display lines: one per source line, tabs expanded, hidden characters
    escaped, trailing spaces stripped, continuation lines dedented together, blank runs
    collapsed, blank edges removed. Empty means there is nothing to show. Memoized per run:
    the same field descriptions recur across a server's tools."""
    if not text:
        return ()
    if text.isascii() and text.isprintable() and "```" not in text:  # one plain line
        stripped = text.strip()
        return (stripped,) if stripped else ()
    return _lines(text)


def _lines(text: str) -> tuple[str, ...]:
    """The general case of `description_lines`."""
    lines = [
        _space_indent(escape_hidden(line.expandtabs(4)).rstrip()) for line in split_lines(text)
    ]
    if "```" in text:
        lines = [_FENCE.sub(lambda m: "~" * len(m.group()), line) for line in lines]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        return ()
    lines[0] = lines[0].lstrip()
    rest = [line for line in lines[1:] if line]
    margin = min((len(line) - len(line.lstrip(" ")) for line in rest), default=0)
    result = [lines[0]]
    blank = 0
    for line in lines[1:]:
        if not line:
            blank += 1
            if blank <= MAX_BLANK_RUN:
                result.append("")
            continue
        blank = 0
        result.append(line[margin:])
    return tuple(result)


def _space_indent(line: str) -> str:
    """The line with its leading whitespace (an ideographic or no-break space, ...) as
    that many spaces: `black` and `inspect.cleandoc` take any Unicode whitespace at the
    start of a docstring line for indentation, so it is indentation here too."""
    body = line.lstrip()
    if len(body) == len(line) or line[: len(line) - len(body)].isascii():
        return line
    return " " * (len(line) - len(body)) + body


def one_line(text: str | None) -> str:
    """A description folded into one line (whitespace runs become one space)."""
    return " ".join(" ".join(description_lines(text)).split())


def truncate(text: str, limit: int) -> str:
    """`text` cut to `limit` characters with `...` when longer."""
    return text if len(text) <= limit else text[: max(limit - 3, 0)].rstrip() + "..."
