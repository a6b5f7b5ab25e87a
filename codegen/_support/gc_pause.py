"""Cyclic garbage collection paused for a batch command of the command line.

The pipeline allocates many small, short-lived, acyclic objects (normalized schema dicts, IR
nodes, text fragments) while everything already loaded stays alive. Each automatic
collection of the oldest generation then rescans the whole loaded catalog, which costs about
40% of the time of a 5,000-tool render. Reference counting frees the pipeline's garbage
without the cyclic collector, so pausing it loses no memory that matters; it is restored
(only if it was on) when the work ends, exceptions included. Only `cli.main` pauses it:
a library call leaves the host's collector as it found it, and a long-lived command
(`serve`) keeps it running.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the block; nesting is fine."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
