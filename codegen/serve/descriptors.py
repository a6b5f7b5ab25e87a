"""The file descriptors of `codegen serve --http`: how many it may open, and how many of
those HTTP connections may take.

Every open connection holds a descriptor, and so does every pipe of an upstream and of a
run's worker. Connections are capped well below the open-file limit, with room kept for
the runs and the upstreams, so a flood of connections is turned away by the cap and never
reaches the limit, where a run's worker could not start ("Too many open files").
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

from .http_limits import DEFAULT_CONNECTIONS

OPEN_FILES_WANTED = 65536
"""The soft open-file limit raised towards at start (never past the hard limit): far more
than the server uses, and no more, since its children inherit it and a few programs size
tables by it or close every possible descriptor when they start."""
RESERVED_BASE = 64
"""Descriptors of the server itself: the event loop, the listening socket, standard
streams, the runtime's spare worker, files opened while starting."""
RESERVED_PER_RUN = 16
"""Descriptors of one run at its busiest: the worker's pipes, the sandbox's, its cgroup."""
RESERVED_PER_UPSTREAM = 8
"""Descriptors of one upstream: its pipes, or its HTTP client's sockets."""


def raise_open_file_limit() -> int:
    """Raise the soft open-file limit towards `OPEN_FILES_WANTED` where the hard limit
    allows (raising a soft limit needs no privilege); the limit in force after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = OPEN_FILES_WANTED if hard == resource.RLIM_INFINITY else min(OPEN_FILES_WANTED, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return OPEN_FILES_WANTED if soft == resource.RLIM_INFINITY else soft


@dataclass(frozen=True, slots=True)
class Cap:
    connections: int
    open_files: int
    lowered_from: int | None = None
    """The cap asked for, when the open-file limit left too little room for it."""

    @property
    def note(self) -> str | None:
        """What the user should hear about it: only that it was lowered."""
        if self.lowered_from is None:
            return None
        return (
            f"at most {self.connections} HTTP connections, not {self.lowered_from}: the "
            f"open-file limit ({self.open_files}) must leave room for runs and upstreams"
        )


def http_cap(asked: int | None, concurrent_runs: int, upstreams: int) -> Cap:
    """The connection cap of a server with these runs and upstreams, after raising the
    open-file limit."""
    return connection_cap(asked, raise_open_file_limit(), reserved(concurrent_runs, upstreams))


def reserved(concurrent_runs: int, upstreams: int) -> int:
    """Descriptors kept for everything but HTTP connections."""
    return RESERVED_BASE + RESERVED_PER_RUN * concurrent_runs + RESERVED_PER_UPSTREAM * upstreams


def connection_cap(asked: int | None, open_files: int, kept: int) -> Cap:
    """How many connections may be open: `asked`, else `DEFAULT_CONNECTIONS` or a quarter
    of `open_files`, whichever is less; never more than leaves `kept` descriptors free."""
    wanted = asked if asked is not None else min(DEFAULT_CONNECTIONS, open_files // 4)
    room = max(1, open_files - kept)
    if wanted <= room:
        return Cap(max(1, wanted), open_files)
    return Cap(room, open_files, lowered_from=wanted)
