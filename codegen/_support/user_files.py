"""The files a user names: how they are read (TOML) and how their paths are shown, the
same way in every command."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import UsageError


def read_toml(path: Path, display: str | None = None) -> dict[str, Any]:
    """A TOML file's document; an unreadable or invalid file is a `UsageError` naming it.
    (`tomllib` is imported here: every command that reads sources looks for a table, and
    most runs find no `pyproject.toml` to read.)"""
    import tomllib

    shown = path if display is None else display
    try:
        with path.open("rb") as stream:
            return tomllib.load(stream)
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{shown}: invalid TOML: {exc}") from None


def display_path(path: Path) -> str:
    """How a path is shown and passed on: relative to the current directory when it is
    inside it (so diagnostics read like the user's own paths), else absolute."""
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        relative = os.path.relpath(absolute)
    except ValueError:  # another drive on Windows
        return absolute.as_posix()
    if relative == ".." or relative.startswith(".." + os.sep):
        return Path(os.path.normpath(absolute)).as_posix()
    return Path(relative).as_posix()
