"""Writing: the only module that touches the disk.

Writes are atomic (a temporary file in the same directory, then a rename), so a reader never
sees half a file and an interrupted run leaves the old file intact. A file whose bytes would
not change is not touched, so timestamps and build caches stay valid.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import UsageError


def write_text(path: str | Path, text: str) -> bool:
    """Write `text` as UTF-8 to `path` atomically; returns False when it was already current."""
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path: str | Path, data: bytes) -> bool:
    """Write `data` to `path` atomically, creating its directory; returns False when the file
    already held exactly these bytes (and was not touched). `UsageError` when it cannot."""
    target = Path(path)
    try:
        if target.is_file() and target.read_bytes() == data:
            return False
        directory = target.parent if str(target.parent) else Path(".")
        directory.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = _temporary(directory, target.name)
        try:
            with os.fdopen(descriptor, "wb") as stream:
                stream.write(data)
            if target.exists():
                os.chmod(temporary, target.stat().st_mode & 0o7777)
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(temporary, 0o666 & ~umask)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise UsageError(f"{target}: cannot write: {exc.strerror or exc}") from None
    return True


_TEMPORARY_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
)


def _temporary(directory: Path, name: str) -> tuple[int, str]:
    """A new file `.<name>.<random>.tmp` in `directory`, open for writing, readable by its
    owner only (`tempfile.mkstemp`'s guarantees, without importing `tempfile`, which brings
    `shutil` and `random` to every cold run)."""
    for _ in range(100):
        candidate = str(directory / f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(candidate, _TEMPORARY_FLAGS, 0o600), candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {directory}")


def remove_file(path: str | Path) -> None:
    """Delete `path` if it exists; `UsageError` when it cannot."""
    try:
        Path(path).unlink(missing_ok=True)
    except OSError as exc:
        raise UsageError(f"{path}: cannot remove: {exc.strerror or exc}") from None
