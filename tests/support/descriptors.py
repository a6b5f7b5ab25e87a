"""Descriptors a piece of work left open: compared by what each is, not by their count,
which another thread of the test process (closing a finished subprocess's pipes, opening a
model's weights) changes at any moment."""

from __future__ import annotations

import contextlib
import os
import sys


def open_descriptors() -> dict[str, str]:
    """This process's open descriptors, each with what it is (`readlink`)."""
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            found[fd] = os.readlink(f"/proc/self/fd/{fd}")
    return found


_INSTALLED = (sys.prefix, sys.base_prefix)


def leaked_since(before: dict[str, str]) -> list[str]:
    """Descriptors opened since `before` and still open: what the work left behind (a pipe,
    a socket, a pidfd, a temporary file), not a file of the Python installation another
    thread opened meanwhile (a module, a model's weights), nor one another thread closed."""
    return [
        f"{fd} -> {target}"
        for fd, target in open_descriptors().items()
        if before.get(fd) != target and not target.startswith(_INSTALLED)
    ]
