"""One tool of a model-facing section on its own: what Code Mode's discovery shows.

A catalog too large for the prompt is found from inside a program (`catalog.search`,
`catalog.describe`). What a model reads there must be what the full section would have
shown, or a program calls a signature it was never given: so a slice is cut out of the
section itself, placed in catalog order like the whole (the same short type names, the same
`@tool(...)` decisions), never rendered on its own.

- `SectionSlices.text(name)`: the tool's part of the section, then every declaration it
  uses that an earlier tool declared (a shape is declared once per section), each comment
  written in full: a `ditto` would point at a tool the reader has not seen. Cut out on
  demand, so a large catalog holds its placed section once.
- `call`, `signature` and `summary`: the one-line form a search hit shows: the exact call
  (`tools.get_file`, `tools["get-file"]`), the required arguments and the result type in the
  section's spelling, and the description's first sentence; `marks`, the tool's annotation
  hints (`hints`), which a hit writes before the sentence as the section does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import takewhile

from ... import ir
from ..._support.run_memos import run_memos
from ..chunks import tool_chunks
from ..python.strings import py_str
from ..text import description_lines, truncate
from ..typescript.sdk import ts_key
from . import python as python_section
from . import typescript as typescript_section
from .dittos import Dittos
from .hints import hint_marks
from .short_names import Placed, ToolText

SUMMARY_LIMIT = 160
"""Longest first sentence a hit shows (characters); longer ones end in `...`."""


@dataclass(frozen=True, slots=True)
class ToolSlice:
    name: str
    call: str
    """How a program calls it: `tools.get_file` or `tools["get-file"]`."""
    signature: str
    """`(path: str, ...) -> str` (Python) or `({ path: string; ... }): Promise<string>`."""
    summary: str
    """The description's first sentence, on one line ("" without a description)."""
    marks: tuple[str, ...] = ()
    """The tool's annotation hints as the section shows them (`hints`): `("read-only",)`."""


class SectionSlices:
    """Every tool's slice of one placed section, in catalog order; a tool's full text is
    cut out when asked for (a catalog of thousands of tools keeps one copy of its section,
    not two)."""

    def __init__(self, slices: Sequence[ToolSlice], placed: Sequence[Placed]) -> None:
        self.slices = tuple(slices)
        self._placed = tuple(placed)
        self._index = {each.name: n for n, each in enumerate(self.slices)}
        self._declared: dict[str, tuple[str, int]] = {}
        for index, part in enumerate(placed):
            for name, text in zip(part.declared, part.declarations, strict=True):
                self._declared[name] = (text, index)

    def __getitem__(self, name: str) -> ToolSlice:
        return self.slices[self._index[name]]

    def text(self, name: str) -> str:
        """The tool as the full section shows it, then the declarations of earlier tools it
        uses, every comment in full."""
        part = self._placed[self._index[name]]
        extra = _closure(part.reused, self._declared, self._placed)
        return Dittos(repeat=True).resolve("\n".join([part.head, *part.declarations, *extra]))


def first_sentence(description: str | None) -> str:
    """The first sentence of the first paragraph, on one line, at most `SUMMARY_LIMIT`
    characters."""
    paragraph = " ".join(
        line.strip() for line in takewhile(str.strip, description_lines(description))
    )
    found = re.search(r"(?<=[.!?])\s", paragraph)
    return truncate(paragraph if found is None else paragraph[: found.start()], SUMMARY_LIMIT)


_SECTIONS = {"python": python_section, "typescript": typescript_section}


def section_slices(catalog: ir.Catalog, language: str) -> SectionSlices:
    """Every tool's slice, in catalog order, for `language` ("python" or "typescript")."""
    section = _SECTIONS.get(language)
    if section is None:
        raise ValueError(f"no model-facing section for {language!r}")
    with run_memos():
        chunks: Sequence[ToolText] = tool_chunks(
            catalog, f"{language}-section", section.section_chunk, None
        )
        placed: Sequence[Placed] = section.place_chunks(chunks)
        slices = [
            ToolSlice(
                tool.name,
                _call(tool.name, chunk, part, language),
                Dittos(repeat=True).resolve(part.signature),
                first_sentence(tool.description),
                hint_marks(tool.annotations),
            )
            for tool, chunk, part in zip(catalog.tools, chunks, placed, strict=True)
        ]
        return SectionSlices(slices, placed)


def _closure(
    names: Sequence[str], declared: dict[str, tuple[str, int]], placed: Sequence[Placed]
) -> list[str]:
    """The declarations of `names` (declared by earlier tools) and of every name they use,
    in the order first needed. A declaration can only use names its own tool declared or
    reused, so only those are looked for in its text."""
    seen: set[str] = set()
    order: list[str] = []
    queue = [name for name in names if name in declared]
    while queue:
        name = queue.pop(0)
        if name in seen:
            continue
        seen.add(name)
        order.append(name)
        text, owner = declared[name]
        for other in (*placed[owner].declared, *placed[owner].reused):
            if other not in seen and other in declared and _mentions(text, other):
                queue.append(other)
    return [declared[name][0] for name in order]


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text) is not None


def _call(name: str, chunk: ToolText, part: Placed, language: str) -> str:
    if language == "python":
        plain = chunk.function and not part.function_taken
        return f"tools.{chunk.function}" if plain else f"tools[{py_str(name)}]"
    return f"tools.{name}" if ts_key(name) == name else f"tools[{json.dumps(name)}]"
