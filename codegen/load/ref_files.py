"""The files `$ref`s name, read for one run: confined, bounded, each decoded once.

A tool's `{"$ref": "common.schema.json#/$defs/Address"}` names a file beside the one that
holds it; the bundler (`bundle`) asks a `RefFiles` for it. Whatever a definition file says,
codegen reads only:

- below the folder tree of the source the reference came from (the folder of a file named
  as a source, or a directory source), or below a folder the user allows on the command line
  (`--ref-root`), judged after `..` and symbolic links are resolved;
- regular files: a directory, a FIFO (which would block) or a device is refused;
- at most `MAX_FILES` files and `MAX_BYTES` bytes a run, each file read and decoded once
  (by the strict decoder) however many tools refer to it; a source of the run is not read
  again.

The network is never read: only relative references reach a `RefFiles`. `DiskFiles` reads
the working tree; `workflow.gitrev` has the reader of a git revision.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from . import json_text

MAX_FILES = 1000
"""Referenced files one run may read (its sources not counted)."""
MAX_BYTES = 64 * 1024 * 1024
"""Bytes of referenced files one run may read."""


@dataclass(frozen=True, slots=True)
class RefDocument:
    """A file a reference named: `key` is the file whatever the spelling (`./a.json`,
    `a.json`, a symbolic link to it), `location` what references inside it are resolved
    against, `display` how diagnostics name it. `single`: one document, so a pointer into
    it means something (not JSON Lines)."""

    key: str
    location: str
    display: str
    value: Any
    single: bool = True


class RefFiles:
    """One run's referenced files; a subclass says how a location is spelled and read."""

    def __init__(self, roots: Sequence[str] = ()) -> None:
        self.roots = tuple(roots)
        """Folders (keys) any reference may read below, besides its source's own."""
        self._documents: dict[str, RefDocument | str] = {}
        self._sources: list[tuple[str, str, Any, bool]] = []
        self._trees: dict[str, str] = {}
        self.files_read = 0
        self.bytes_read = 0

    # --- what a subclass says ---------------------------------------------------------------

    def join(self, base: str, path: str) -> str:
        """The location of `path` (decoded, relative) seen from the file at `base`."""
        raise NotImplementedError

    def key(self, location: str) -> str:
        """The one name of the file at `location`."""
        raise NotImplementedError

    def inside(self, key: str, folder: str) -> bool:
        """Whether the file `key` is below the folder `folder` (a key too)."""
        raise NotImplementedError

    def read(self, key: str, location: str, budget: int) -> bytes | str:
        """The file's bytes, or why it cannot be read; more than `budget` bytes is refused."""
        raise NotImplementedError

    def shown(self, key: str) -> str:
        """A resolved path as messages show it."""
        return key

    def displayed(self, location: str) -> str:
        """How diagnostics name the file at `location`."""
        return location

    # --- the shared part --------------------------------------------------------------------

    def seed(self, sources: Sequence[tuple[str, str, Any, bool]]) -> None:
        """The run's own decoded sources, as (location, display, value, single): a reference
        to one uses its value, never reads it again (keyed on first use, so a run without
        references costs nothing here)."""
        self._sources.extend(sources)

    def open(self, location: str, tree: str) -> RefDocument | str:
        """The decoded file at `location`, or why it cannot be read. `tree`: the folder of
        the source the reference came from."""
        if self._sources:
            for source, display, value, single in self._sources:
                key = self.key(source)
                self._documents.setdefault(key, RefDocument(key, source, display, value, single))
            self._sources.clear()
        key = self.key(location)
        allowed = self._tree(tree)
        if not any(self.inside(key, folder) for folder in (allowed, *self.roots)):
            return (
                f"{self.shown(key)} is outside {self.shown(allowed)}, the folder of its "
                "source; pass --ref-root to allow another folder"
            )
        found = self._documents.get(key)
        if found is None:
            found = self._load(key, location)
            self._documents[key] = found
        return found

    def _tree(self, folder: str) -> str:
        if folder not in self._trees:
            self._trees[folder] = self.key(folder)
        return self._trees[folder]

    def _load(self, key: str, location: str) -> RefDocument | str:
        if self.files_read >= MAX_FILES:
            return f"more than {MAX_FILES} referenced files in one run"
        data = self.read(key, location, MAX_BYTES - self.bytes_read)
        if isinstance(data, str):
            return data
        self.files_read += 1
        self.bytes_read += len(data)
        display = self.displayed(location)
        value = decode_referenced(display, location, data)
        if isinstance(value, Problem):
            return value.message
        return RefDocument(key, location, display, value.value, value.single)


def too_many_bytes() -> str:
    """The error for the reference that would read past `MAX_BYTES`."""
    size = f"{MAX_BYTES // 1048576} MiB" if MAX_BYTES % 1048576 == 0 else f"{MAX_BYTES} bytes"
    return f"more than {size} of referenced files in one run"


@dataclass(frozen=True, slots=True)
class Problem:
    message: str


@dataclass(frozen=True, slots=True)
class Decoded:
    value: Any
    single: bool


def decode_referenced(display: str, location: str, data: bytes) -> Decoded | Problem:
    """A referenced file's value, by its name as `sources` decodes one: YAML by suffix, JSON
    Lines refused (its records are separate documents, so no pointer names one), strict
    JSON otherwise."""
    name = location.replace("\\", "/").rpartition("/")[2].lower()
    try:
        text = json_text.decode_bytes(data)
        if name.endswith((".yaml", ".yml")):
            return Decoded(json_text.load_yaml(text), True)
        if name.endswith(".jsonl"):
            return Decoded(None, False)
        return Decoded(json_text.loads(text, json_text.without_bom(data)), True)
    except json_text.DecodeProblem as problem:
        where = f" at {problem.pointer}" if problem.pointer and not problem.line else ""
        return Problem(f"{display}: {problem.describe()}{where}")


class DiskFiles(RefFiles):
    """Referenced files in the working tree. Locations are paths as the sources name them
    (relative ones stay relative, so diagnostics name files as the user does); keys are real
    paths."""

    def __init__(self, roots: Sequence[str] = ()) -> None:
        for root in roots:
            if not os.path.isdir(root):
                raise UsageError(f"--ref-root {root}: not a directory")
        super().__init__([os.path.realpath(root) for root in roots])

    def join(self, base: str, path: str) -> str:
        return os.path.normpath(os.path.join(os.path.dirname(base), path))

    def key(self, location: str) -> str:
        return os.path.realpath(location)

    def inside(self, key: str, folder: str) -> bool:
        return key == folder or key.startswith(folder.rstrip(os.sep) + os.sep)

    def read(self, key: str, location: str, budget: int) -> bytes | str:
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            # Opened without blocking and checked after: a FIFO swapped in never hangs us.
            descriptor = os.open(key, flags | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return f"no such file: {location}"
        except OSError as error:
            return f"{location}: cannot read: {error.strerror or error}"
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            os.close(descriptor)
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            return f"{location} is {kind}"
        with os.fdopen(descriptor, "rb") as file:
            try:
                data = file.read(budget + 1)
            except OSError as error:
                return f"{location}: cannot read: {error.strerror or error}"
        if len(data) > budget:
            return too_many_bytes()
        return data
