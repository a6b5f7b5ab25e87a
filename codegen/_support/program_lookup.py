"""How a program the toolkit starts is found: on PATH's absolute folders only.

An empty or relative PATH entry (`PATH=":/usr/bin"`, `PATH="bin:/usr/bin"`) stands for the
working directory, often a cloned repository: a `bwrap`, `node` or upstream server planted
there would run on the host. The shell and `shutil.which` honour such entries; the toolkit
never does.
"""

from __future__ import annotations

import os
import shutil


def absolute_path_folders(path: str | None = None) -> list[str]:
    """The absolute folders of `path` (default: `$PATH`, else the system's default)."""
    value = os.environ.get("PATH", os.defpath) if path is None else path
    return [folder for folder in value.split(os.pathsep) if os.path.isabs(folder)]


def find_program(program: str, path: str | None = None) -> str | None:
    """Where `program` is: a name with a slash as given (if it is an executable file), a
    bare name in `path`'s absolute folders only; None when not found."""
    if os.sep in program:
        return shutil.which(program)
    folders = absolute_path_folders(path)
    return shutil.which(program, path=os.pathsep.join(folders)) if folders else None


def not_found(program: str) -> str:
    """Why `find_program` found nothing, in words (naming the PATH entries it skipped)."""
    if os.sep in program:
        return "no such file"
    skipped = [
        f for f in os.environ.get("PATH", os.defpath).split(os.pathsep) if not os.path.isabs(f)
    ]
    if not skipped:
        return "not found on PATH"
    shown = ", ".join(repr(folder) for folder in skipped)
    return f"not found on PATH (its entries that are not absolute folders, {shown}, are never searched)"
