"""Cyclic garbage collection paused while a batch of work builds something large.

The pipeline allocates many small, short-lived, acyclic objects (normalized schema dicts, IR
nodes, text fragments, search postings) while everything already loaded stays alive. Each
automatic collection of the oldest generation then rescans the whole loaded catalog, which
costs about 40% of the time of a 5,000-tool render, and a third of a search index's build in
a server holding 3,000 tools. Reference counting frees the pipeline's garbage without the
cyclic collector, so pausing it loses no memory that matters.

`cli.main` pauses it for a whole batch command; a long-lived one (`serve`) keeps it running
and pauses it only while Code Mode's discovery builds its index and slices, in whichever
thread does. Pauses may overlap across threads: the collector is off while any is under
way and is turned back on when the last one ends, only if it was on when the first began
(a library call leaves the host's collector as it found it).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = 0
"""Pauses under way, in any thread."""
_resume = False
"""Whether the collector was on when the first of them began."""


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block; nesting and overlapping threads are fine."""
    global _pauses, _resume
    with _lock:
        if _pauses == 0:
            _resume = gc.isenabled()
        _pauses += 1
        gc.disable()
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()
