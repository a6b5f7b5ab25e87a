"""The paths of a `[tool.codegen]` table stay inside its project.

A `pyproject.toml` comes with the repository, and `codegen build` runs on every clone of it
(a developer's checkout, CI, the pre-commit hook), so the table must not make the toolkit
write, cache or read anywhere else on the machine: `out = "../../x"` would overwrite files
beside the checkout, `cache` would plant files there, and `sources` would read a developer's
files and print what it makes of them in diagnostics and `--check` diffs (a CI log). So each
path the table gives is resolved (`..` and symbolic links followed) and must be the folder
that holds the `pyproject.toml` or lie under it; anything else is a `UsageError` naming the
file, the key and where the path leads. A path named on the command line is the user's own
choice and is not checked.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import NoReturn

from .._support.user_files import display_path
from ..errors import UsageError

PATH_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "sources": "as SOURCE arguments",
        "out": "with -o/--output",
        "cache": "with --cache",
    }
)
"""The table's keys that hold paths, and how the command line names such a path instead."""


def check_inside_project(pyproject: Path, key: str, path: Path) -> None:
    """Refuse `path` (the table's value for `key`, already joined to the table's folder)
    unless it resolves inside the folder of `pyproject`."""
    root = pyproject.parent.resolve()
    shown = display_path(path)
    loop = f"{shown} cannot be resolved (a loop of symbolic links)"
    try:
        resolved = path.resolve()
    except RuntimeError:  # a loop, as Python 3.11 and 3.12 report it
        _refuse(pyproject, key, loop)
    except OSError as error:
        if error.errno == errno.ELOOP:
            _refuse(pyproject, key, loop)
        _refuse(pyproject, key, f"{shown} cannot be resolved: {error.strerror or error}")
    if resolved.is_symlink():  # a link left after resolving is part of a loop
        _refuse(pyproject, key, loop)
    if resolved == root or root in resolved.parents:
        return
    folder = Path(os.path.normpath(pyproject.parent.absolute()))
    lexical = Path(os.path.normpath(path.absolute()))
    if lexical == folder or folder in lexical.parents:
        where = f"{shown} leads through a symbolic link to {resolved}"
    else:
        where = f"{shown} is {resolved}"
    _refuse(pyproject, key, f"{where}, outside the project folder {root}")


def _refuse(pyproject: Path, key: str, problem: str) -> NoReturn:
    raise UsageError(
        f"{pyproject}: [tool.codegen] {key}: {problem}; a project's table may only name "
        f"paths inside its project (a path elsewhere can be given on the command line, "
        f"{PATH_KEYS[key]})"
    )
