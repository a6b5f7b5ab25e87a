"""A per-tool cache, so re-rendering a catalog in which a few tools changed only builds and
lays out those tools.

Each tool is keyed by a hash of its definition (name, title, description, schemas in their
key order, annotations, format and dialect, its source, and where its schemas sit relative
to the tool), plus a fingerprint of the toolkit's own code and templates, so a changed
generator never serves old output. An entry holds the tool built alone (its IR and the
type-name claims its build made) and its diagnostics, with pointers relative to the tool,
so moving a tool within its file still hits; renderers add each tool's finished text per
target through `chunk`.

A catalog is assembled by `build.builder.assemble_catalog`: a cached tool is used as it is
when its names come out the same in the catalog, and built again in place when another
tool took one of them first (two tools whose names differ only in punctuation). The result
is exactly what an uncached run gives.

Entries live in memory for the cache object's life and, when it has a `directory`, in
pickle files there (one per key prefix), each written atomically when something new was
added to it. The files are trusted like any build cache (a `__pycache__`): keep them where
only you can write. A file that does not load, or comes from another toolkit build, is
ignored.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from .. import ir
from .._support.atomic_write import remove_file, write_bytes
from ..build.builder import Prebuilt
from ..errors import Diagnostic, UsageError
from ..load.definitions import ToolDefinition

if TYPE_CHECKING:
    from pathlib import Path

# `hashlib`, `pickle` and `pathlib` are imported where they are used: `Entry` carries a
# catalog's text between the processes of `codegen sdk` (`shares`), a path that needs none
# of them, and together they cost it about ten milliseconds of start-up.

T = TypeVar("T")

CACHE_FORMAT = 3
"""Version of the entry layout; part of every key and of the directory name."""
SHARDS = f"tools-v{CACHE_FORMAT}"
"""The folder inside the cache directory: one pickle file per two-hex-digit key prefix, so
saving after a few tools changed rewrites a few small files, not the whole cache."""
DEFAULT_CAPACITY = 50_000
"""Most entries kept on disk; the least recently used go first."""


@cache
def code_fingerprint() -> str:
    """A hash of the toolkit's Python sources and templates: output can only change when
    one of them does."""
    import hashlib
    from pathlib import Path

    from ..render.templates import templates_dir

    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent.parent
    files = sorted(package.rglob("*.py")) + sorted(package.rglob("*.txt"))
    files += sorted(Path(templates_dir()).rglob("*.jinja"))
    for path in files:
        digest.update(str(path.relative_to(path.parents[1])).encode("utf-8", "surrogatepass"))
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def _relative(pointer: str, base: str) -> str:
    return pointer[len(base) :] if pointer.startswith(base) else pointer


class Entry:
    """What one tool's definition compiled to, independent of where the tool sits in its
    file: the validation and normalization `problems`; when there are no errors, the name
    `claims` and `warnings` of its build alone, and its IR; and the renderers' `chunks` of
    text by target. Diagnostic pointers are relative to the tool and carry no source.

    The IR is pickled on its own and loaded back only when asked for (`tool`): a warm
    render that only needs each tool's text and claims never pays for rebuilding IR
    objects, which is most of what loading a cache file would otherwise cost."""

    __slots__ = ("_blob", "_tool", "chunks", "claims", "has_output", "problems", "warnings")

    def __init__(
        self,
        problems: tuple[Diagnostic, ...],
        claims: tuple[tuple[str, str], ...] | None,
        warnings: tuple[Diagnostic, ...],
        has_output: bool,
        tool: ir.Tool | None = None,
        blob: bytes | None = None,
        chunks: dict[str, Any] | None = None,
    ) -> None:
        self.problems = problems
        self.claims = claims
        self.warnings = warnings
        self.has_output = has_output
        self._tool = tool
        self._blob = blob
        self.chunks: dict[str, Any] = chunks if chunks is not None else {}

    @staticmethod
    def of(
        definition: ToolDefinition, problems: Iterable[Diagnostic], prebuilt: Prebuilt | None
    ) -> Entry:
        detached = _detached(definition, problems)
        if prebuilt is None:
            return Entry(detached, None, (), False)
        warnings = _detached(definition, prebuilt.warnings)
        output = prebuilt.tool.output is not None
        return Entry(detached, prebuilt.claims, warnings, output, tool=prebuilt.tool)

    def text_only(self) -> Entry:
        """The entry without its IR: its problems, claims, warnings and chunks, all an
        assembled SDK needs of a tool it does not build again."""
        return Entry(
            self.problems, self.claims, self.warnings, self.has_output, None, None, self.chunks
        )

    @property
    def built(self) -> bool:
        """Whether the definition compiled (no errors), so there is a tool."""
        return self.claims is not None

    @property
    def loaded(self) -> bool:
        return self._tool is not None

    @property
    def tool(self) -> ir.Tool:
        """The tool's IR, unpickled on first use."""
        if self._tool is None:
            assert self._blob is not None, "an entry with errors has no tool"
            import pickle

            self._tool = pickle.loads(self._blob)
        return self._tool

    def located_problems(self, definition: ToolDefinition) -> list[Diagnostic]:
        return _located(definition, self.problems)

    def located_warnings(self, definition: ToolDefinition) -> list[Diagnostic]:
        return _located(definition, self.warnings)

    def __reduce__(self) -> Any:
        if self._blob is None and self._tool is not None:
            import pickle

            self._blob = pickle.dumps(self._tool, protocol=pickle.HIGHEST_PROTOCOL)
        fields = (self.problems, self.claims, self.warnings, self.has_output, None, self._blob)
        return (Entry, (*fields, self.chunks))


def _detached(definition: ToolDefinition, found: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    return tuple(
        replace(d, source="", pointer=_relative(d.pointer, definition.pointer)) for d in found
    )


def _located(definition: ToolDefinition, found: Iterable[Diagnostic]) -> list[Diagnostic]:
    return [
        replace(d, source=definition.source, pointer=definition.pointer + d.pointer) for d in found
    ]


@dataclass
class _Slot:
    entry: Entry
    used: float = 0.0


class ToolCache:
    """Per-tool results by definition key, in memory and optionally on disk.

    One object serves any number of catalogs and renders; pass it to `engine.Engine(cache)`
    (or `compile_definitions(..., cache=)`) and to the SDK renderers (`memo=`), then call
    `save()` to write the directory's file."""

    def __init__(
        self, directory: str | os.PathLike[str] | None = None, capacity: int = DEFAULT_CAPACITY
    ) -> None:
        from pathlib import Path

        self.directory = Path(directory) if directory is not None else None
        self.capacity = capacity
        self._slots: dict[str, _Slot] = {}
        self._by_tool: dict[int, tuple[ir.Tool, Entry]] = {}
        self._loaded = self.directory is None
        self._dirty: set[str] = set()
        self._key_of: dict[int, tuple[Entry, str]] = {}
        """Keys by entry identity; each value holds its entry, so an id is never another's."""
        self.hits = 0
        self.misses = 0

    # --- keys and entries -----------------------------------------------------------------

    def key(self, definition: ToolDefinition) -> str | None:
        """The definition's key, or None when it is not plain JSON data (then it is not
        cached)."""
        record = [
            CACHE_FORMAT,
            code_fingerprint(),
            definition.name,
            definition.title,
            definition.description,
            definition.input_schema,
            definition.output_schema,
            definition.annotations,
            definition.format,
            definition.dialect,
            definition.source,
            _relative(definition.input_pointer, definition.pointer),
            _relative(definition.output_pointer, definition.pointer),
        ]
        import hashlib
        import pickle

        try:
            # Pickled, not JSON: twice as fast, and exact about types (`1`, `1.0` and `True`
            # differ). Equal bytes always mean equal definitions; key order is kept, since
            # properties and enum values render in schema order.
            data = pickle.dumps(record, protocol=5)
        except Exception:  # not plain data (an in-memory caller's own objects): no key
            return None
        return hashlib.sha256(data).hexdigest()

    def get(self, key: str) -> Entry | None:
        self._load()
        slot = self._slots.get(key)
        if slot is None:
            self.misses += 1
            return None
        self.hits += 1
        slot.used = time.time()
        self._key_of[id(slot.entry)] = (slot.entry, key)
        self._remember(slot.entry)
        return slot.entry

    def put(self, key: str, entry: Entry) -> None:
        self._load()
        self._slots[key] = _Slot(entry, used=time.time())
        self._key_of[id(entry)] = (entry, key)
        self._remember(entry)
        self._dirty.add(key[:2])

    def _remember(self, entry: Entry) -> None:
        """Index a loaded entry by its tool's identity, for `chunk`."""
        if entry.loaded:
            self._by_tool[id(entry.tool)] = (entry.tool, entry)

    def tool(self, entry: Entry) -> ir.Tool:
        """The entry's tool, its IR loaded (and indexed for `chunk`)."""
        tool = entry.tool
        self._remember(entry)
        return tool

    def __len__(self) -> int:
        self._load()
        return len(self._slots)

    # --- renderers' chunks (codegen.render.chunks.ChunkMemo) ------------------------------

    def chunk(self, tool: ir.Tool, target: str, make: Callable[[ir.Tool], T]) -> T:
        """`make(tool)`, remembered for a tool this cache handed out."""
        found = self._by_tool.get(id(tool))
        if found is None or found[0] is not tool:
            return make(tool)
        return self.entry_chunk(found[1], target, make)

    def entry_chunk(self, entry: Entry, target: str, make: Callable[[ir.Tool], T]) -> T:
        """The entry's chunk for `target`, made from its tool (loading its IR) only when
        not remembered yet."""
        if target in entry.chunks:
            result: T = entry.chunks[target]
            return result
        made = make(entry.tool)
        entry.chunks[target] = made
        known = self._key_of.get(id(entry))
        if known is not None and known[0] is entry:
            self._dirty.add(known[1][:2])
        return made

    # --- the file -------------------------------------------------------------------------

    def _shards(self) -> Path | None:
        return self.directory / SHARDS if self.directory is not None else None

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        folder = self._shards()
        if folder is None or not folder.is_dir():
            return
        import pickle

        fingerprint = code_fingerprint()
        for path in sorted(folder.glob("*.pickle")):
            try:
                stored_fingerprint, stored = pickle.loads(path.read_bytes())
                if stored_fingerprint != fingerprint or not isinstance(stored, dict):
                    continue
                for key, (entry, used) in stored.items():
                    if isinstance(entry, Entry):
                        self._slots.setdefault(key, _Slot(entry, used))
            except Exception:  # a torn or foreign file is a cold shard, never an error
                continue

    def save(self) -> bool:
        """Write the shard files that gained entries or chunks (each atomically: a temporary
        file renamed over the old one), keeping the `capacity` most recently used entries.
        Returns whether it wrote."""
        folder = self._shards()
        if folder is None or not self._dirty:
            return False
        if len(self._slots) > self.capacity:
            kept = sorted(self._slots.items(), key=lambda item: item[1].used, reverse=True)
            for key, _ in kept[self.capacity :]:
                del self._slots[key]
                self._dirty.add(key[:2])
        grouped: dict[str, dict[str, tuple[Entry, float]]] = {shard: {} for shard in self._dirty}
        for key, slot in self._slots.items():
            if key[:2] in grouped:
                grouped[key[:2]][key] = (slot.entry, slot.used)
        import pickle

        fingerprint = code_fingerprint()
        for shard, stored in sorted(grouped.items()):
            path = folder / f"{shard}.pickle"
            if not stored:
                remove_file(path)
                continue
            data = pickle.dumps((fingerprint, stored), protocol=pickle.HIGHEST_PROTOCOL)
            write_bytes(path, data)
        self._dirty = set()
        return True

    def save_or_warn(self) -> None:
        """`save`, with a failure printed as a warning: a cache that cannot be written
        costs speed, never the output."""
        try:
            self.save()
        except UsageError as error:
            sys.stderr.write(f"codegen: warning: cache not written: {error}\n")
