"""A per-tool cache, so re-rendering a catalog in which a few tools changed only builds and
lays out those tools.

Each tool is keyed by a hash of its definition (name, title, description, schemas in their
key order, annotations, format and dialect, its source, and where its schemas sit relative
to the tool), plus a fingerprint of the toolkit's own code and templates, so a changed
generator never serves old output. An entry holds the tool built alone (its IR and the
type-name claims its build made) and its diagnostics, with pointers relative to the tool,
so moving a tool within its file still hits; renderers add each tool's finished text per
target through `chunk`.

A catalog is assembled by `build.build_catalog_reusing`: a cached tool is used as it is
when its names come out the same in the catalog, and built again in place when another
tool took one of them first (two tools whose names differ only in punctuation). The result
is exactly what an uncached run gives.

Entries live in memory for the cache object's life and, when it has a `directory`, in one
pickle file there, written atomically when something new was added. The file is trusted
like any build cache (a `__pycache__`): keep it where only you can write. A file that does
not load, or comes from another toolkit build, is ignored.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from . import ir
from .build import Prebuilt
from .errors import Diagnostic
from .gcpause import paused_gc
from .model import ToolDefinition

T = TypeVar("T")

CACHE_FORMAT = 1
"""Version of the entry layout; part of every key and of the file name."""
FILE_NAME = f"tools-v{CACHE_FORMAT}.pickle"
DEFAULT_CAPACITY = 50_000
"""Most entries kept on disk; the least recently used go first."""


@cache
def code_fingerprint() -> str:
    """A hash of the toolkit's Python sources and templates: output can only change when
    one of them does."""
    from .render.env import templates_dir

    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    files = sorted(package.rglob("*.py")) + sorted(package.rglob("*.txt"))
    files += sorted(Path(templates_dir()).rglob("*.jinja"))
    for path in files:
        digest.update(str(path.relative_to(path.parents[1])).encode("utf-8", "surrogatepass"))
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def _relative(pointer: str, base: str) -> str:
    return pointer[len(base) :] if pointer.startswith(base) else pointer


@dataclass(frozen=True, slots=True)
class Entry:
    """What one tool's definition compiled to, independent of where the tool sits in its
    file: the validation and normalization `problems`, and the tool built alone (None when
    there are errors). Diagnostic pointers are relative to the tool and carry no source."""

    problems: tuple[Diagnostic, ...]
    prebuilt: Prebuilt | None

    @staticmethod
    def of(
        definition: ToolDefinition, problems: Iterable[Diagnostic], prebuilt: Prebuilt | None
    ) -> Entry:
        if prebuilt is not None:
            prebuilt = prebuilt._replace(warnings=_detached(definition, prebuilt.warnings))
        return Entry(_detached(definition, problems), prebuilt)

    def located_problems(self, definition: ToolDefinition) -> list[Diagnostic]:
        return _located(definition, self.problems)

    def located_warnings(self, definition: ToolDefinition) -> list[Diagnostic]:
        return _located(definition, self.prebuilt.warnings if self.prebuilt else ())


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
    chunks: dict[str, Any] = field(default_factory=dict)
    used: float = 0.0


class ToolCache:
    """Per-tool results by definition key, in memory and optionally on disk.

    One object serves any number of catalogs and renders; pass it to
    `pipeline.compile_definitions(..., cache=)` and to the SDK renderers (`memo=`), then call
    `save()` to write the directory's file."""

    def __init__(
        self, directory: str | os.PathLike[str] | None = None, capacity: int = DEFAULT_CAPACITY
    ) -> None:
        self.directory = Path(directory) if directory is not None else None
        self.capacity = capacity
        self._slots: dict[str, _Slot] = {}
        self._by_tool: dict[int, tuple[ir.Tool, _Slot]] = {}
        self._loaded = self.directory is None
        self._dirty = False
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
        self._remember(slot)
        return slot.entry

    def put(self, key: str, entry: Entry) -> None:
        self._load()
        slot = _Slot(entry, used=time.time())
        self._slots[key] = slot
        self._remember(slot)
        self._dirty = True

    def _remember(self, slot: _Slot) -> None:
        """Index the slot by its tool's identity, for `chunk`."""
        if slot.entry.prebuilt is not None:
            tool = slot.entry.prebuilt.tool
            self._by_tool[id(tool)] = (tool, slot)

    def __len__(self) -> int:
        self._load()
        return len(self._slots)

    # --- renderers' chunks (codegen.render.chunks.ChunkMemo) ------------------------------

    def chunk(self, tool: ir.Tool, target: str, make: Callable[[ir.Tool], T]) -> T:
        """`make(tool)`, remembered for a tool this cache handed out."""
        found = self._by_tool.get(id(tool))
        if found is None or found[0] is not tool:
            return make(tool)
        slot = found[1]
        if target in slot.chunks:
            result: T = slot.chunks[target]
            return result
        made = make(tool)
        slot.chunks[target] = made
        self._dirty = True
        return made

    # --- the file -------------------------------------------------------------------------

    def _file(self) -> Path | None:
        return self.directory / FILE_NAME if self.directory is not None else None

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        path = self._file()
        if path is None or not path.is_file():
            return
        try:
            with paused_gc():  # many objects at once: see gcpause
                fingerprint, stored = pickle.loads(path.read_bytes())
        except Exception:  # a torn or foreign file is a cold cache, never an error
            return
        if fingerprint != code_fingerprint() or not isinstance(stored, dict):
            return
        for key, (entry, chunks, used) in stored.items():
            self._slots.setdefault(key, _Slot(entry, dict(chunks), used))

    def save(self) -> bool:
        """Write the directory's file when entries or chunks were added (atomically: a
        temporary file renamed over the old one). Returns whether it wrote."""
        path = self._file()
        if path is None or not self._dirty:
            return False
        kept = sorted(self._slots.items(), key=lambda item: item[1].used, reverse=True)
        stored = {key: (slot.entry, slot.chunks, slot.used) for key, slot in kept[: self.capacity]}
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with paused_gc():
                data = pickle.dumps((code_fingerprint(), stored), protocol=pickle.HIGHEST_PROTOCOL)
            temporary.write_bytes(data)
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
        self._dirty = False
        return True

    def save_or_warn(self) -> None:
        """`save`, with a failure printed as a warning: a cache that cannot be written
        costs speed, never the output."""
        try:
            self.save()
        except OSError as exc:
            sys.stderr.write(f"codegen: warning: cache not written: {exc.strerror or exc}\n")
