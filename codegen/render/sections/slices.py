"""One tool of a model-facing section on its own: what Code Mode's discovery shows.

A catalog too large for the prompt is found from inside a program (`catalog.search`,
`catalog.describe`). What a model reads there must be what a section shows, or a program
calls a signature it was never given: so a slice is cut out of a placed section itself (the
same short type names, the same `@tool(...)` decisions). Code Mode's discovery cuts each
tool out of the section of a catalog holding that tool alone (`Discovery.slice`): a hit
then waits for its own tool's compile, never for the whole catalog's, and what it shows
depends on that tool only. The calls are the same either way (the worker binds `tools.X`
and `tools["X"]` to the tool named X); only the names of types, which a program never
spells, may differ from a full section's.

- `SectionSlices.text(name)`: the tool's part of the section, then every declaration it
  uses that an earlier tool declared (a shape is declared once per section), each comment
  written in full: a `ditto` would point at a tool the reader has not seen. Cut out on
  demand, so a large catalog holds its placed section once.
- `call`, `signature` and `summary`: the one-line form a search hit shows: the exact call
  (`tools.get_file`, `tools["get-file"]`), the required arguments and the result type in the
  section's spelling, and the description's first sentence that tells the tool apart from
  its server's others (`summaries`); `marks`, the tool's annotation
  hints (`hints`), which a hit writes before the sentence as the section does.

One departure: a result type the section shares with an earlier tool (two tools return the
same shape, declared once under the first one's name) is shown under this tool's own name
(`get_file_info(...) -> GetFileInfoOutput`, not `-> CreateDirectoryOutput`), in its hit and
its text alike, unless that name is taken there. A reader of one slice has not seen the
other tool; a program never spells a result type's name, so nothing it calls changes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ... import ir
from ..._support.run_memos import run_memos
from ..chunks import tool_chunks
from ..python.strings import py_str
from ..typescript.sdk import ts_key
from . import python as python_section
from . import typescript as typescript_section
from .dittos import Dittos
from .hints import hint_marks
from .short_names import PYTHON_RESERVED, Placed, ToolText, output_roots, typescript_reserved
from .summaries import summaries

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
    """The description's first distinct sentence (`summaries`), on one line ("" without a
    description)."""
    marks: tuple[str, ...] = ()
    """The tool's annotation hints as the section shows them (`hints`): `("read-only",)`."""


class SectionSlices:
    """Every tool's slice of one placed section, in catalog order; a tool's full text is
    cut out when asked for (a catalog of thousands of tools keeps one copy of its section,
    not two)."""

    def __init__(
        self,
        slices: Sequence[ToolSlice],
        placed: Sequence[Placed],
        borrowed: Sequence[tuple[tuple[str, str], ...]] = (),
        reserved: frozenset[str] = frozenset(),
    ) -> None:
        self.slices = tuple(slices)
        self._placed = tuple(placed)
        self._borrowed = {n: pairs for n, pairs in enumerate(borrowed) if pairs}
        """Per tool: (section name, own name) of each result type an earlier tool declared."""
        self._reserved = reserved
        self._index = {each.name: n for n, each in enumerate(self.slices)}
        self._declared: dict[str, tuple[str, int]] = {}
        for index, part in enumerate(placed):
            for name, text in zip(part.declared, part.declarations, strict=True):
                self._declared[name] = (text, index)

    def __getitem__(self, name: str) -> ToolSlice:
        index = self._index[name]
        own = self._own_names(index)
        found = self.slices[index]
        return replace(found, signature=_renamed(found.signature, own)) if own else found

    def text(self, name: str) -> str:
        """The tool as the full section shows it, then the declarations of earlier tools it
        uses, every comment in full; its result types under its own names (`own_names`)."""
        index = self._index[name]
        return _renamed(self._section_text(index), self._own_names(index))

    def own_names(self, name: str) -> dict[str, str]:
        """The section's names of the tool's result types shown under the tool's own name
        instead: section name -> shown name."""
        return self._own_names(self._index[name])

    def _section_text(self, index: int) -> str:
        part = self._placed[index]
        extra = _closure(part.reused, self._declared, self._placed)
        return Dittos(repeat=True).resolve("\n".join([part.head, *part.declarations, *extra]))

    def _own_names(self, index: int) -> dict[str, str]:
        """Each borrowed result type's own name, where nothing in the slice is named so."""
        pairs = self._borrowed.get(index)
        if not pairs:
            return {}
        text = self._section_text(index)
        own: dict[str, str] = {}
        for shared, wanted in pairs:
            if wanted in self._reserved or wanted in own.values() or _mentions(text, wanted):
                continue
            own[shared] = wanted
        return own


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
        lines = summaries([t.name for t in catalog.tools], [t.description for t in catalog.tools])
        slices = [
            ToolSlice(
                tool.name,
                _call(tool.name, chunk, part, language),
                Dittos(repeat=True).resolve(part.signature),
                summary,
                hint_marks(tool.annotations),
            )
            for tool, chunk, part, summary in zip(catalog.tools, chunks, placed, lines, strict=True)
        ]
        borrowed = [
            _borrowed(tool, chunk, part)
            for tool, chunk, part in zip(catalog.tools, chunks, placed, strict=True)
        ]
        reserved = PYTHON_RESERVED if language == "python" else typescript_reserved()
        return SectionSlices(slices, placed, borrowed, reserved)


def _borrowed(tool: ir.Tool, chunk: ToolText, part: Placed) -> tuple[tuple[str, str], ...]:
    """(section name, the name the tool wanted) of each result type it reuses from an
    earlier tool."""
    shown = dict(part.roots)
    wanted = {ir_name: name for ir_name, name, root in chunk.names if root}
    pairs = []
    for ir_name in output_roots(tool):
        name = shown.get(ir_name)
        if name is not None and name in part.reused and wanted.get(ir_name, name) != name:
            pairs.append((name, wanted[ir_name]))
    return tuple(pairs)


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


def _renamed(text: str, names: Mapping[str, str]) -> str:
    """`text` with each whole-word name of `names` replaced by its new one."""
    if not names:
        return text
    words = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w$])(?:{words})(?![\w$])", lambda found: names[found[0]], text)


def _call(name: str, chunk: ToolText, part: Placed, language: str) -> str:
    if language == "python":
        plain = chunk.function and not part.function_taken
        return f"tools.{chunk.function}" if plain else f"tools[{py_str(name)}]"
    return f"tools.{name}" if ts_key(name) == name else f"tools[{json.dumps(name)}]"
