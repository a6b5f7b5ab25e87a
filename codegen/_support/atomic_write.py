"""Writing: the only module that touches the disk.

Writes are atomic (a temporary file in the same directory, then a rename), so a reader never
sees half a file and an interrupted run leaves the old file intact. A file whose bytes would
not change is not touched, so timestamps and build caches stay valid.
"""

from __future__ import annotations

import contextlib
import os
import stat  # already imported by `os`
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path


def write_text(path: str | Path, text: str) -> bool:
    """Write `text` as UTF-8 to `path` atomically; returns False when it was already current."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path: str | Path, data: bytes, new_mode: int | None = None) -> bool:
    """Write `data` to `path` atomically, creating its directory; returns False when the file
    already held exactly these bytes (and was not touched). `UsageError` when it cannot. A
    file that exists keeps its permissions; a new one gets `new_mode` when given (a copy of a
    file only its owner may read stays so), else what the umask allows.
    (`os.path`, not `pathlib`, whose import costs a cold run more than the write.)"""
    target = os.fspath(path)
    try:
        if _holds(target, data):
            return False
        directory = os.path.dirname(target) or "."
        os.makedirs(directory, exist_ok=True)
        try:
            mode: int | None = os.stat(target).st_mode & 0o7777
        except FileNotFoundError:
            mode = new_mode
        # A new file with no mode asked for is created as `open` would (0666 less the umask,
        # applied by the kernel: reading the umask means setting it, which races with
        # threads); any other is made private, then given its mode.
        created = 0o666 if mode is None else 0o600
        descriptor, temporary = _temporary(directory, os.path.basename(target), created)
        try:
            with os.fdopen(descriptor, "wb") as stream:
                stream.write(data)
            if mode is not None:
                os.chmod(temporary, mode)
            os.replace(temporary, target)
        except BaseException:
            _unlink(temporary)
            raise
    except OSError as exc:
        raise UsageError(f"{target}: cannot write: {exc.strerror or exc}") from None
    return True


def _holds(target: str, data: bytes) -> bool:
    """Whether `target` is a regular file holding exactly `data` (its size is compared
    first, so a changed file of another length is never read)."""
    try:
        status = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        return False
    if not stat.S_ISREG(status.st_mode) or status.st_size != len(data):
        return False
    with open(target, "rb") as file:
        return file.read() == data


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


_TEMPORARY_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
)


def _temporary(directory: str, name: str, mode: int) -> tuple[int, str]:
    """A new file `.<name>.<random>.tmp` in `directory`, open for writing, created with
    `mode` (`tempfile.mkstemp`'s guarantees, without importing `tempfile`, which brings
    `shutil` and `random` to every cold run)."""
    for _ in range(100):
        candidate = os.path.join(directory, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(candidate, _TEMPORARY_FLAGS, mode), candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {directory}")


def remove_file(path: str | Path) -> None:
    """Delete `path` if it exists; `UsageError` when it cannot."""
    try:
        _unlink(os.fspath(path))
    except OSError as exc:
        raise UsageError(f"{path}: cannot remove: {exc.strerror or exc}") from None
