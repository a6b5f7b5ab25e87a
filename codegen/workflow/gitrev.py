"""Tool definitions as they were at a git revision, for `codegen diff --git REV`.

A reviewer wants "what did this branch change in our tools" without checking anything out.
The same sources are read from the revision (`git ls-tree` to list them, one
`git cat-file --batch` to read every blob) and go through the same decoding and the same
pipeline as files on disk. Directory sources follow the working-tree rules of `load/sources.py`:
every `.json`, `.jsonl`, `.yaml` and `.yml` file below, hidden ones skipped, in sorted
relative-path order. Diagnostics name their source `REV:path`, so a problem in the old
version is never mistaken for one in the working tree. A source that did not exist at the
revision contributes no tools (everything in it is new).
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..engine import compile_definitions
from ..errors import Diagnostic, UsageError
from ..load.ref_files import RefFiles, too_many_bytes
from ..load.sources import SUFFIXES, Document, decode_document, tools_from
from ..pipeline import Compiled


@dataclass(frozen=True, slots=True)
class _Blob:
    display: str
    path: str
    object_id: str
    tree: str
    """The repository folder of the source it came from, below which its `$ref`s read."""


def _git(arguments: Sequence[str], data: bytes | None = None) -> bytes:
    try:
        result = subprocess.run(["git", *arguments], input=data, capture_output=True, check=False)
    except FileNotFoundError:
        raise UsageError("diff: --git needs the 'git' command, which was not found") from None
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"diff: git {arguments[0]}: {message[-1] if message else 'failed'}")
    return result.stdout


def resolve_revision(revision: str) -> str:
    """The commit id of `revision`, or a usage error naming it."""
    if revision.startswith("-"):
        raise UsageError(f"diff: --git {revision!r}: not a revision")
    try:
        commit = _git(["rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"])
    except UsageError:
        raise UsageError(f"diff: --git {revision!r}: no such revision in this repository") from None
    return commit.decode().strip()


def _repository_path(source: str, top: str) -> str:
    """`source` (relative to the current directory) relative to the repository's top."""
    if source == "-":
        raise UsageError("diff: --git cannot read '-' (stdin) at a revision")
    relative = os.path.relpath(os.path.abspath(source), top)
    if relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative):
        raise UsageError(f"diff: {source}: outside the git repository")
    return "" if relative == "." else PurePosixPath(*relative.split(os.sep)).as_posix()


def _blobs(revision: str, label: str, source: str, path: str) -> list[_Blob]:
    listing = _git(["ls-tree", "-r", "-z", "--full-tree", revision, "--", path or "."])
    entries: list[tuple[str, str]] = []
    for record in listing.decode("utf-8", "surrogateescape").split("\0"):
        if not record:
            continue
        header, _, name = record.partition("\t")
        _mode, kind, object_id = header.split()
        if kind == "blob":
            entries.append((name, object_id))
    exact = [(name, oid) for name, oid in entries if name == path]
    if exact:
        return [_Blob(f"{label}:{source}", path, exact[0][1], posixpath.dirname(path))]
    prefix = f"{path}/" if path else ""
    base = source.rstrip("/\\") or source
    found = []
    for name, object_id in entries:
        if not name.startswith(prefix):
            continue
        relative = name[len(prefix) :]
        parts = PurePosixPath(relative).parts
        if PurePosixPath(relative).suffix.lower() not in SUFFIXES:
            continue
        if any(part.startswith(".") for part in parts):
            continue
        found.append((relative, _Blob(f"{label}:{base}/{relative}", name, object_id, path)))
    return [blob for _, blob in sorted(found, key=lambda item: item[0])]


def _read_blobs(blobs: Sequence[_Blob]) -> list[bytes]:
    """Every blob's bytes from one `git cat-file --batch`, in order."""
    if not blobs:
        return []
    output = _git(["cat-file", "--batch"], "".join(f"{b.object_id}\n" for b in blobs).encode())
    contents: list[bytes] = []
    position = 0
    for _ in blobs:
        end = output.index(b"\n", position)
        header = output[position:end].split()
        size = int(header[2])
        start = end + 1
        contents.append(output[start : start + size])
        position = start + size + 1
    return contents


def compile_at_revision(
    revision: str,
    sources: Sequence[str],
    fmt: str = "auto",
    namespace: bool = False,
    ref_roots: Sequence[str] = (),
) -> Compiled:
    """Compile `sources` as they were at `revision` (paths relative to the current
    directory, which must be inside a git work tree); a `$ref` to another file reads that
    file at the revision too (`RevisionFiles`)."""
    if not sources:
        raise UsageError("no sources given")
    commit = resolve_revision(revision)
    top = _git(["rev-parse", "--show-toplevel"]).decode().strip()
    blobs: list[_Blob] = []
    for source in sources:
        blobs.extend(_blobs(commit, revision, source, _repository_path(source, top)))
    documents: list[Document] = []
    diagnostics: list[Diagnostic] = []
    for blob, data in zip(blobs, _read_blobs(blobs), strict=True):
        found, problems = decode_document(blob.display, blob.path, data, blob.path, blob.tree)
        documents.extend(found)
        diagnostics.extend(problems)
    roots = [_repository_path(root, top) for root in ref_roots]
    files = RevisionFiles(commit, revision, roots)
    tools, problems = tools_from(documents, fmt, namespace, files=files)
    return compile_definitions(tools, diagnostics + problems)


class RevisionFiles(RefFiles):
    """Referenced files as they were at a commit: locations are repository paths, read with
    `git ls-tree` and `git cat-file`; a symbolic link is refused, never followed."""

    def __init__(self, commit: str, label: str, roots: Sequence[str] = ()) -> None:
        super().__init__(roots)
        self.commit = commit
        self.label = label

    def join(self, base: str, path: str) -> str:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(base), path))
        return "" if joined == "." else joined

    def key(self, location: str) -> str:
        return location

    def inside(self, key: str, folder: str) -> bool:
        if key == ".." or key.startswith("../"):
            return False
        return not folder or key == folder or key.startswith(folder + "/")

    def shown(self, key: str) -> str:
        return f"{self.label}:{key or '.'}"

    def displayed(self, location: str) -> str:
        return f"{self.label}:{location}"

    def read(self, key: str, location: str, budget: int) -> bytes | str:
        if not key:
            return f"{self.shown(key)} is a directory"
        listing = _git(["ls-tree", "-l", "-z", "--full-tree", self.commit, "--", key])
        header, _, name = listing.decode("utf-8", "surrogateescape").partition("\t")
        if not header or name.rstrip("\0") != key:
            return f"no such file at {self.label}: {key}"
        mode, kind, object_id, size = header.split()
        if mode == "120000":
            return f"{self.shown(key)} is a symbolic link (not followed)"
        if kind != "blob":
            return f"{self.shown(key)} is {'a directory' if kind == 'tree' else 'not a file'}"
        if int(size) > budget:
            return too_many_bytes()
        return _git(["cat-file", "blob", object_id])
