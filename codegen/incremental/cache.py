"""A per-tool cache, so re-rendering a catalog in which a few tools changed only builds and
lays out those tools.

Each tool is keyed by a hash of its definition (name, title, description, schemas in their
key order, annotations, format and dialect, its source, and where its schemas sit relative
to the tool), plus a fingerprint of the toolkit's own code and templates, so a changed
generator never serves old output. An entry (`tool_entry.Entry`) holds the tool built alone
(its IR and the type-name claims its build made) and its diagnostics, with pointers relative
to the tool, so moving a tool within its file still hits; renderers add each tool's finished
text per target through `chunk`.

A catalog is assembled by `build.builder.assemble_catalog`: a cached tool is used as it is
when its names come out the same in the catalog, and built again in place when another
tool took one of them first (two tools whose names differ only in punctuation). The result
is exactly what an uncached run gives.

Entries live in memory for the cache object's life and, when it has a `directory`, in
shard files there (`cache_file`: one per key prefix, JSON lines), each written atomically
when something new was added to it. A cache folder may come with a repository, so its files
are data, never code, and believed only when sealed under the user's key (`seal`,
`cache_key`): a well-formed file could otherwise say anything about what a tool compiles
to. A folder written under another key (another user or machine: a cache committed to a
repository, restored in CI without the key) is ignored with one note per folder; a file
that is not a shard this toolkit wrote under this key (torn, planted, edited, a symbolic
link) with one warning on stderr naming it and what is wrong; a file from another build of
the toolkit silently. Their tools are built again, the next save replaces the files, and the
output is the output of an uncached run. Where no key can be had, the folder is neither read
nor written (one warning says why): the cache lives in memory only.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, TypeVar

from .. import ir
from .._support.atomic_write import remove_file, write_bytes
from ..errors import UsageError
from ..load.definitions import ToolDefinition
from .cache_file import VERSION, CacheFileError, StaleFile, read_shard, shard_bytes
from .cache_key import CacheKey, NoCacheKey, user_cache_key
from .checked import CacheDataError
from .seal import OtherKey
from .tool_entry import Entry, relative

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["CACHE_FORMAT", "DEFAULT_CAPACITY", "SHARDS", "Entry", "ToolCache", "code_fingerprint"]

# `hashlib`, `pickle` (for keys only: hashed, never loaded) and `pathlib` are imported where
# they are used: the shares path of `codegen sdk` imports this module (for `Entry`) and needs
# none of them, and together they cost it about ten milliseconds of start-up.

T = TypeVar("T")

CACHE_FORMAT = VERSION
"""Version of the entry layout; part of every key and of the directory name."""
SHARDS = f"tools-v{CACHE_FORMAT}"
"""The folder inside the cache directory: one file per two-hex-digit key prefix, so saving
after a few tools changed rewrites a few small files, not the whole cache."""
SHARD_FILE = re.compile(r"([0-9a-f]{2})\.json")
"""A shard's file name; any other file in the folder is left alone."""
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


def warn(message: str) -> None:
    """A cache problem, on stderr: it costs speed, never the output."""
    sys.stderr.write(f"codegen: warning: {message}\n")


def note(message: str) -> None:
    """Something normal that costs speed (files of another key), on stderr."""
    sys.stderr.write(f"codegen: note: {message}\n")


@dataclass
class _Slot:
    entry: Entry
    used: float = 0.0
    origin: str | None = None
    """The shard file the entry was read from; None for an entry made in this process."""


class ToolCache:
    """Per-tool results by definition key, in memory and optionally on disk.

    One object serves any number of catalogs and renders; pass it to `engine.Engine(cache)`
    (or `compile_definitions(..., cache=)`) and to the SDK renderers (`memo=`), then call
    `save()` to write the directory's files. `quiet`: no note about a folder written under
    another key (warnings are still shown)."""

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        capacity: int = DEFAULT_CAPACITY,
        *,
        quiet: bool = False,
    ) -> None:
        from pathlib import Path

        self.directory = Path(directory) if directory is not None else None
        self.capacity = capacity
        self.quiet = quiet
        self._key: CacheKey | None = None
        self._slots: dict[str, _Slot] = {}
        self._by_tool: dict[int, tuple[ir.Tool, Entry]] = {}
        self._loaded = self.directory is None
        self._usable_folder = self.directory is not None
        self._dirty: set[str] = set()
        self._warned: set[str] = set()
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
            relative(definition.input_pointer, definition.pointer),
            relative(definition.output_pointer, definition.pointer),
        ]
        import hashlib
        import pickle

        try:
            # Pickled (only ever written, to be hashed; never read back), not JSON: twice as
            # fast, and exact about types (`1`, `1.0` and `True` differ). Equal bytes always
            # mean equal definitions; key order is kept, since properties and enum values
            # render in schema order.
            data = pickle.dumps(record, protocol=5)
        except Exception:  # not plain data (an in-memory caller's own objects): no key
            return None
        return hashlib.sha256(data).hexdigest()

    def get(
        self, key: str, name: str | None = None, texts: AbstractSet[str] | None = None
    ) -> Entry | None:
        """The entry stored under `key`, or None (a miss). `name`: the definition's name,
        which the entry must carry. `texts`: the chunk targets the caller takes from the
        entry; None when it takes the IR. An entry read from disk whose IR is needed (no
        `texts`, or one of them missing) has it decoded and checked here, so a record that
        does not decode is a miss (with a warning), never a failure later."""
        self._load()
        slot = self._slots.get(key)
        if slot is not None and slot.origin is not None and not self._checked(slot, name, texts):
            del self._slots[key]
            self._dirty.add(key[:2])
            slot = None
        if slot is None:
            self.misses += 1
            return None
        self.hits += 1
        slot.used = time.time()
        self._key_of[id(slot.entry)] = (slot.entry, key)
        self._remember(slot.entry)
        return slot.entry

    def _checked(self, slot: _Slot, name: str | None, texts: AbstractSet[str] | None) -> bool:
        """Whether an entry read from disk is the one asked for and its IR decodes where
        it is needed (warned about once per file when not)."""
        entry = slot.entry
        if name is not None and entry.name != name:
            self._warn_file(slot.origin, "a record's name is not its definition's")
            return False
        if entry.built and not entry.loaded and (texts is None or not entry.chunks.keys() >= texts):
            try:
                entry.tool  # noqa: B018  (decoded and checked now, kept by the entry)
            except CacheDataError as error:
                self._warn_file(slot.origin, f"a record's IR is unusable: {error}")
                return False
        return True

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

    # --- the files ------------------------------------------------------------------------

    def _shards(self) -> Path | None:
        return self.directory / SHARDS if self.directory is not None else None

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        folder = self._shards()
        if folder is None or not self._folder_usable(folder):
            return
        try:
            self._key = sealing = user_cache_key()
        except NoCacheKey as error:
            warn(f"cache folder {_shown(folder)} is neither read nor written: {error}")
            self._usable_folder = False
            return
        try:
            names = sorted(os.listdir(folder))
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as error:
            warn(f"cache folder {_shown(folder)} not read: {error.strerror or error}")
            return
        fingerprint = code_fingerprint()
        another_key = False
        for name in names:
            match = SHARD_FILE.fullmatch(name)
            if match is None:
                continue
            shard = match.group(1)
            path = os.fspath(folder / name)
            try:
                records = read_shard(path, sealing, fingerprint, shard)
            except OtherKey:
                another_key = True
                records = []
            except StaleFile:
                records = []
            except CacheFileError as error:
                self._warn_file(path, str(error))
                records = []
            if not records:  # the next save replaces or removes the file
                self._dirty.add(shard)
            for key, used, entry in records:
                self._slots[key] = _Slot(entry, used, path)
        if another_key and not self.quiet:
            note(
                f"cache folder {_shown(folder)} was written with another key (another user "
                "or machine): its entries are ignored and rebuilt"
            )

    def _folder_usable(self, folder: Path) -> bool:
        """Whether the shard folder is a folder of its own (or not there yet): one that is
        a symbolic link could lead reads and writes anywhere, so it is neither read nor
        written."""
        try:
            status = os.lstat(folder)
        except (FileNotFoundError, NotADirectoryError):  # not there yet: `save` makes it
            return True
        except OSError as error:
            problem = f"cannot be read: {error.strerror or error}"
        else:
            import stat

            if stat.S_ISDIR(status.st_mode):
                return True
            problem = "is a symbolic link" if stat.S_ISLNK(status.st_mode) else "is not a folder"
        warn(f"cache folder {_shown(folder)} {problem}; the cache is neither read nor written")
        self._usable_folder = False
        return False

    def _warn_file(self, path: str | None, problem: str) -> None:
        """One warning per shard file: the file, and what is wrong with it."""
        if path is None or path in self._warned:
            return
        self._warned.add(path)
        warn(f"cache file {_shown(path)} ignored: {problem}; its tools are built again")

    def save(self) -> bool:
        """Write the shard files that gained entries or chunks (each atomically: a temporary
        file renamed over the old one), keeping the `capacity` most recently used entries;
        a file that was ignored is replaced (or removed). Returns whether it wrote."""
        folder = self._shards()
        sealing = self._key
        if folder is None or sealing is None or not self._dirty or not self._usable_folder:
            return False
        if len(self._slots) > self.capacity:
            kept = sorted(self._slots.items(), key=lambda item: item[1].used, reverse=True)
            for key, _ in kept[self.capacity :]:
                del self._slots[key]
                self._dirty.add(key[:2])
        grouped: dict[str, list[tuple[str, float, Entry]]] = {shard: [] for shard in self._dirty}
        for key, slot in self._slots.items():
            if key[:2] in grouped:
                grouped[key[:2]].append((key, slot.used, slot.entry))
        fingerprint = code_fingerprint()
        for shard, records in sorted(grouped.items()):
            path = folder / f"{shard}.json"
            if not records:
                remove_file(path)
                continue
            write_bytes(path, shard_bytes(sealing, fingerprint, shard, records))
        self._dirty = set()
        return True

    def save_or_warn(self) -> None:
        """`save`, with a failure printed as a warning: a cache that cannot be written
        costs speed, never the output."""
        try:
            self.save()
        except UsageError as error:
            warn(f"cache not written: {error}")


def _shown(path: str | os.PathLike[str]) -> str:
    from pathlib import Path

    from .._support.user_files import display_path

    return display_path(Path(path))
