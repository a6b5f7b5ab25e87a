"""Which command starts this codegen from a client: the absolute path of the `codegen`
script the distribution installed beside the interpreter running now, else that interpreter
with `-m codegen`.

Clients start servers without the user's shell: no PATH of theirs, no activated virtual
environment. So the command is absolute, and found in what was installed (the distribution's
record of its files), never on PATH, where another project's `codegen` may come first.
Symbolic links are kept as they are: a virtual environment's `python` is a link whose
target, the base interpreter, does not see the environment's packages.
"""

from __future__ import annotations

import os
import sys

from .._support.distribution import DISTRIBUTION
from ..errors import UsageError

SCRIPT_NAMES = ("codegen", "codegen.exe")
SCRIPT_FOLDERS = ("bin", "Scripts")


def serve_program() -> tuple[str, ...]:
    """The command (program and leading arguments) that runs this codegen's CLI."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        files = distribution(DISTRIBUTION).files or []
    except PackageNotFoundError:
        import codegen

        raise UsageError(
            f"install: {DISTRIBUTION} is not installed in the environment of {sys.executable} "
            f"(codegen runs from {os.path.dirname(codegen.__file__)}), so no client could "
            "start it: install it first (README: Installing it as a tool)"
        ) from None
    for file in files:
        if file.name in SCRIPT_NAMES and file.parent.name in SCRIPT_FOLDERS:
            script = os.path.normpath(os.path.abspath(str(file.locate())))
            if os.path.isfile(script) and os.access(script, os.X_OK):
                return (script,)
    return (os.path.abspath(sys.executable), "-m", "codegen")
