"""Stack depth for the recursive walks: the build and `jsonschema`'s meta-schema check.

Both recurse once or more per schema level; a document may nest `json_text.MAX_NESTING`
levels and a `$ref` chain `limits.DEPTH_LIMIT` nodes, several thousand Python frames, where
Python's default limit stops at 1,000. The command line raises the limit once, for its whole
run (`cli.main`). A library call that needs more than the host allows raises it for the
duration of the call and puts it back when the last such call ends: calls in several threads
share one raise, so none of them restores the limit under another that is still deep.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

RECURSION_LIMIT = 20_000
"""Frames the deepest walk may take (about eight per schema level, with headroom)."""

_lock = threading.Lock()
_active = 0
_restore: int | None = None


@contextmanager
def deep_recursion() -> Iterator[None]:
    """At least `RECURSION_LIMIT` frames inside the block; afterwards the limit the process
    had, unless someone else changed it meanwhile (then theirs stands)."""
    global _active, _restore
    with _lock:
        if _active == 0:
            current = sys.getrecursionlimit()
            _restore = current if current < RECURSION_LIMIT else None
            if _restore is not None:
                sys.setrecursionlimit(RECURSION_LIMIT)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _restore is not None:
                if sys.getrecursionlimit() == RECURSION_LIMIT:
                    sys.setrecursionlimit(_restore)
                _restore = None
