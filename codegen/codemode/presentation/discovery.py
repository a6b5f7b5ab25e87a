"""Discovery inside a program: `catalog.search`, `catalog.describe`, `catalog.servers`,
`catalog.names`, answered by the host over the tools the run's scope sees.

A catalog too large for the `run_code` description is found on demand. `Discovery` holds one
visible tool set's answers: the search index (`codegen.search`, built on the first search;
with the `search` extra installed it fuses a small embedding model with BM25F), built once
per tool set and shared by every run that sees the same set, in a thread (the caller's
`answer` is blocking), under a lock, with the cyclic collector paused (`_support.gc_pause`:
its passes over a loaded catalog cost a third of the build); and each tool's slice
(`render.sections.slices`: the tool as the section of a catalog holding it alone shows it),
compiled when a hit or `describe` first shows it and kept, also by the next tool set that
holds the same spec. So the first search of 3,000 tools waits for the index and its own
eight tools, not for the whole catalog's compile (`fill` makes the rest in the background).

Answers are plain JSON values, kept small: a search returns at most `MAX_HITS` one-line hits
(at most 250 characters each; a tool's annotation hints, `[read-only]`, lead its sentence as
in the section and are never cut), with how many tools matched and whether the list was
cut; an unknown name gets the closest hits instead of the list of every tool.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from ..._support.gc_pause import paused_gc
from ...render.sections.hints import tag
from ...render.text import truncate
from ...search.documents import split_name
from ..calls.specs import ToolSpec

if TYPE_CHECKING:
    from ... import ir
    from ...render.sections.slices import ToolSlice
    from ...search import SearchIndex

DEFAULT_HITS = 8
MAX_HITS = 50
"""A search returns `k` hits (default `DEFAULT_HITS`), never more than `MAX_HITS`."""
MAX_QUERIES = 32
"""Queries one search may combine (one per step of a task)."""
LINE_LIMIT = 250
"""Longest hit line (characters): eight hits stay under about 2,000."""
NEAR_HITS = 5
"""Hits an unknown tool name's error shows."""
FILL_BLOCK = 64
"""Tools `Discovery.fill` compiles between two looks at whether to stop."""

T = TypeVar("T")

Alone = tuple[ToolSpec, "ToolSlice", str]
"""A tool's slice as a section holding it alone shows it: the spec it was made of, its hit
(without its sentence, which depends on the server's other tools) and its whole text."""


class DiscoveryError(Exception):
    """A question the catalog cannot answer (an unknown tool, a bad argument): the program
    sees it as `ToolCallError`."""


class Discovery:
    """The answers about one visible tool set, in one language's spelling."""

    def __init__(
        self,
        specs: Sequence[ToolSpec],
        language: str,
        summaries: Mapping[str, str],
        compile_tools: Callable[[tuple[ToolSpec, ...]], ir.Catalog],
        earlier: Discovery | None = None,
    ) -> None:
        self.specs = tuple(specs)
        self.language = language
        self.summaries = dict(summaries)
        self._compile = compile_tools
        self._names = {spec.name: index for index, spec in enumerate(self.specs)}
        self._index: SearchIndex | None = None
        self._index_lock = threading.Lock()
        self._alone: dict[str, Alone] = {}
        """Each tool's slice once made: what `earlier` (the tool set before, in the same
        language) made of the very same specs is kept."""
        self._sentences: dict[str, dict[str, str]] = {}
        self._slices_lock = threading.Lock()
        if earlier is not None and earlier.language == language:
            with earlier._slices_lock:
                made = list(earlier._alone.items())
            for name, alone in made:
                index = self._names.get(name)
                if index is not None and self.specs[index] is alone[0]:
                    self._alone[name] = alone

    # --- lazily built parts ---------------------------------------------------------------

    def index(self) -> SearchIndex:
        with self._index_lock:
            if self._index is None:
                from ...search import SearchIndex, document

                with paused_gc():
                    documents = [document(spec.read_definition()) for spec in self.specs]
                    self._index = SearchIndex.build(documents, semantic="auto")
            return self._index

    def slice(self, name: str) -> tuple[ToolSlice, str]:
        """A tool's hit (`ToolSlice`) and its whole text, as a section holding the tool
        alone shows them (compiled on first use, then kept): a hit waits for its own tool,
        never for the catalog. Its sentence is the one that tells it apart from its
        server's other tools (`summaries`)."""
        _, hit, text = self._made(name)
        return replace(hit, summary=self._sentence(name)), text

    def _made(self, name: str) -> Alone:
        return self._kept(self._alone, name, self._make)

    def _make(self, name: str) -> Alone:
        from ...render.sections.slices import tool_slice

        spec = self.specs[self._names[name]]
        return spec, *tool_slice(self._compile((spec,)), self.language)

    def _sentence(self, name: str) -> str:
        """The tool's summary among its server's tools (worked out once per server)."""
        return self._kept(self._sentences, server_of(name), self._server_sentences)[name]

    def _server_sentences(self, server: str) -> dict[str, str]:
        from ...render.sections.summaries import summaries

        members = [self.specs[index] for index in self._members[server]]
        lines = summaries([s.name for s in members], [s.description for s in members])
        return dict(zip((s.name for s in members), lines, strict=True))

    def _kept(self, table: dict[str, T], key: str, make: Callable[[str], T]) -> T:
        """`table[key]`, made outside the lock when missing (two threads may both make it;
        the first one kept wins, so every caller sees the same value)."""
        with self._slices_lock:
            found = table.get(key)
        if found is None:
            made = make(key)
            with self._slices_lock:
                found = table.setdefault(key, made)
        return found

    def warm(self) -> None:
        """Build the search index now (a server does it off the path of its first run);
        hits and descriptions are compiled per tool when first asked for (`fill`)."""
        self.index()

    def fill(self, stop: Callable[[], bool] = lambda: False) -> None:
        """Make every tool's slice not made yet, in catalog order, until `stop` says so: a
        server does it after the index, so later hits wait for nothing (0.3 to 0.6 ms of
        compile per tool, in blocks with the cyclic collector paused)."""
        specs = [spec for spec in self.specs if spec.name not in self._alone]
        for start in range(0, len(specs), FILL_BLOCK):
            if stop():
                return
            with paused_gc():
                for spec in specs[start : start + FILL_BLOCK]:
                    self._made(spec.name)

    # --- the questions ---------------------------------------------------------------------

    def answer(self, op: str, args: Any) -> Any:
        """One question from a program: `op` and its arguments (a JSON object)."""
        if not isinstance(args, dict):
            raise DiscoveryError("catalog: malformed request")
        if op == "search":
            return self.search(args.get("query"), args.get("k", DEFAULT_HITS), args.get("server"))
        if op == "describe":
            return self.describe(args.get("name"))
        if op == "servers":
            return self.servers()
        if op == "names":
            return self.names(args.get("server"))
        raise DiscoveryError(f"catalog: no operation {op!r}")

    def search(self, query: Any, k: Any = DEFAULT_HITS, server: Any = None) -> dict[str, Any]:
        """`{"text", "names", "matched", "cut"}`: the hits as lines (what a model reads),
        their names best first, how many tools matched, whether the list was cut."""
        queries = _queries(query)
        if type(k) is not int or k < 1:
            raise DiscoveryError(f"catalog.search: k must be a positive integer, not {k!r}")
        if server is not None and not isinstance(server, str):
            raise DiscoveryError("catalog.search: server must be a server's name (a string)")
        if server is not None and server not in self._servers:
            raise DiscoveryError(f"catalog.search: no server {server!r}; {self._server_list()}")
        k = min(k, MAX_HITS)
        ranking = self.index().search(queries if len(queries) > 1 else queries[0], k, server)
        names = list(ranking.names)
        lines = self.hit_lines(names)
        if not names:
            text = "no tool matches; try other words, or catalog.servers() and catalog.names()"
        elif ranking.cut:
            more = _narrower(k, server)
            lines.append(f"({len(names)} of {ranking.matched} matching tools; {more})")
            text = "\n".join(lines)
        else:
            lines.append(f"({len(names)} matching tool{'s' * (len(names) != 1)})")
            text = "\n".join(lines)
        return {"text": text, "names": names, "matched": ranking.matched, "cut": ranking.cut}

    def hit_lines(self, names: Sequence[str]) -> list[str]:
        comment = "#" if self.language == "python" else "//"
        lines = []
        for name in names:
            part, _ = self.slice(name)
            marks = tag(part.marks)
            room = LINE_LIMIT - 40 - (len(marks) + 1 if marks else 0)  # hints are never cut
            call = part.call + part.signature
            if len(call) > room:
                call = call[: room - 3] + "..."
            line = call
            if part.summary or marks:
                room = LINE_LIMIT - len(call) - len(comment) - 3
                text = marks
                if part.summary:
                    lead = f"{marks} " if marks else ""
                    text = lead + truncate(part.summary, room - len(lead))
                line = f"{call}  {comment} {text}"
            lines.append(line)
        return lines

    def describe(self, name: Any) -> str:
        """The tool as the full model-facing section shows it, with the types it uses."""
        if not isinstance(name, str):
            raise DiscoveryError("catalog.describe: name must be a tool's name (a string)")
        if name not in self._names:
            raise DiscoveryError(self.unknown(name, "catalog.describe"))
        return self.slice(name)[1]

    def servers(self) -> list[dict[str, Any]]:
        """Each server (a tool-name prefix before `__`): name, summary, tool count."""
        counts = self._servers
        return [
            {"name": name, "summary": self.summaries.get(name, ""), "tools": counts[name]}
            for name in sorted(counts)
        ]

    def names(self, server: Any = None) -> list[str]:
        """The tool names of one server (all of them without one), in code-point order."""
        if server is None:
            return sorted(self._names)
        if not isinstance(server, str):
            raise DiscoveryError("catalog.names: server must be a server's name (a string)")
        if server not in self._servers:
            raise DiscoveryError(f"catalog.names: no server {server!r}; {self._server_list()}")
        return sorted(n for n in self._names if server_of(n) == server)

    def unknown(self, name: str, where: str = "") -> str:
        """The message for a name no visible tool has: the closest tools by search."""
        head = f"{where}: " if where else ""
        quoted = json.dumps(name[:100], ensure_ascii=False) + ("..." if len(name) > 100 else "")
        return f"{head}no tool named {quoted}{self.nearest(name)}"

    def nearest(self, name: str) -> str:
        """`; closest by search:` and the hits for a name no visible tool has (a
        sentence that says search finds tools when nothing is close)."""
        ranking = self.index().search(name[:1000], NEAR_HITS, None)
        if not ranking.names:
            return ", and nothing like it; catalog.search(...) finds tools"
        lines = "\n".join(self.hit_lines(list(ranking.names)))
        return f"; closest by search:\n{lines}\nNever guess a name: catalog.search(...) finds tools"

    # --- servers -----------------------------------------------------------------------

    @cached_property
    def _members(self) -> dict[str, list[int]]:
        """Each server's tools ("" for the tools without a prefix), as indexes of `specs`."""
        members: dict[str, list[int]] = {}
        for index, spec in enumerate(self.specs):
            members.setdefault(server_of(spec.name), []).append(index)
        return members

    @cached_property
    def _servers(self) -> dict[str, int]:
        """How many tools each server has."""
        counts: dict[str, int] = {}
        for name in self._names:
            server = server_of(name)
            if server:
                counts[server] = counts.get(server, 0) + 1
        return counts

    def _server_list(self) -> str:
        names = sorted(self._servers)
        if not names:
            return "no tool here has a server prefix"
        shown = ", ".join(names[:30]) + (f", and {len(names) - 30} more" if len(names) > 30 else "")
        return f"servers: {shown}"


def server_of(name: str) -> str:
    """The server of a tool name: its prefix before the first `__` ("" for none), as the
    search index reads it."""
    return split_name(name)[0]


def _narrower(k: int, server: str | None) -> str:
    """What a cut list's footer suggests: only what would show more (no larger k past
    `MAX_HITS`, no `server=` when one is given)."""
    ways = ["more specific words"]
    if server is None:
        ways.append("server=")
    if k < MAX_HITS:
        ways.append("a larger k")
    said = ways[0]
    if len(ways) > 1:
        said = ", ".join(ways[:-1]) + ("," if len(ways) > 2 else "") + f" or {ways[-1]}"
    capped = f"; k is at most {MAX_HITS}" if k >= MAX_HITS else ""
    return f"use {said}{capped}"


def _queries(query: Any) -> list[str]:
    if isinstance(query, str):
        return [query]
    if (
        isinstance(query, list)
        and query
        and len(query) <= MAX_QUERIES
        and all(isinstance(each, str) for each in query)
    ):
        return list(query)
    raise DiscoveryError(
        "catalog.search: query must be a string or a list of at most "
        f"{MAX_QUERIES} strings (one per step of a task)"
    )
