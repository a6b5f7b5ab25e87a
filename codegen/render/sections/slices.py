"""One tool of a model-facing section on its own: what Code Mode's discovery shows.

A catalog too large for the prompt is found from inside a program (`catalog.search`,
`catalog.describe`). What a model reads there must be what a section shows, or a program
calls a signature it was never given: so a slice is cut out of a placed section itself (the
same short type names, the same `@tool(...)` decisions), the section of a catalog holding
that tool alone (`Discovery.slice` compiles it so): a hit then waits for its own tool's
compile, never for the whole catalog's, and what it shows depends on that tool only. The
calls are the same as in the whole catalog's section (the worker binds `tools.X` and
`tools["X"]` to the tool named X); only the names of types, which a program never spells,
may differ (`Options` where the whole section, sharing the name, says `Options2`), and a
result type is declared under the tool's own name (`get_file_info(...) ->
GetFileInfoOutput`), never under an earlier tool's that shares its shape.

`tool_slice` gives:
- the hit (`ToolSlice`): the exact call (`tools.get_file`, `tools["get-file"]`), the
  required arguments and the result type in the section's spelling, the description's
  first sentence that is no heading or stub (`summaries`; Discovery puts the one that tells
  the tool apart from its server's others in its place), and the tool's annotation hints
  (`hints`), which a hit writes before the sentence as the section does;
- the text: the tool's part of the section with every declaration it uses, each comment
  written in full.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ... import ir
from ..._support.run_memos import run_memos
from ..chunks import tool_chunks
from ..python.strings import py_str
from ..typescript.sdk import ts_key
from . import python as python_section
from . import typescript as typescript_section
from .dittos import Dittos
from .hints import hint_marks
from .short_names import Placed, ToolText
from .summaries import summaries


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


_SECTIONS = {"python": python_section, "typescript": typescript_section}


def tool_slice(catalog: ir.Catalog, language: str) -> tuple[ToolSlice, str]:
    """The hit and the whole text of the one tool of `catalog` in `language`'s section
    ("python" or "typescript")."""
    section = _SECTIONS.get(language)
    if section is None:
        raise ValueError(f"no model-facing section for {language!r}")
    if len(catalog.tools) != 1:
        raise ValueError(f"a slice is cut from a catalog of one tool, not {len(catalog.tools)}")
    (tool,) = catalog.tools
    with run_memos():
        (chunk,) = tool_chunks(catalog, f"{language}-section", section.section_chunk, None)
        (part,) = section.place_chunks([chunk])
    (summary,) = summaries([tool.name], [tool.description])
    hit = ToolSlice(
        tool.name,
        _call(tool.name, chunk, part, language),
        Dittos(repeat=True).resolve(part.signature),
        summary,
        hint_marks(tool.annotations),
    )
    # alone in its section, the tool reuses no earlier tool's declarations (`part.reused`)
    return hit, Dittos(repeat=True).resolve("\n".join([part.head, *part.declarations]))


def _call(name: str, chunk: ToolText, part: Placed, language: str) -> str:
    if language == "python":
        plain = chunk.function and not part.function_taken
        return f"tools.{chunk.function}" if plain else f"tools[{py_str(name)}]"
    return f"tools.{name}" if ts_key(name) == name else f"tools[{json.dumps(name)}]"
