"""The host uid and gid a root host runs each sandbox as: a fresh one per run, in a range no
account and no other process uses.

A shared uid such as nobody's (65534) would let any unsandboxed process of that uid on the
host read a worker's memory (`/proc/<pid>/mem`: the uid that owns a user namespace holds
every capability inside it, so no dumpable flag stops it), and would pool the per-user
kernel quotas (epoll watches, pipe buffers, pending signals, processes) of every run with
every other process of that uid. A uid of its own per run gives each run its own quotas and
no neighbour.

`RANGE` lies in the block that systemd's UID/GID allocation leaves unused (between the
container ranges and the foreign range, below 2^31 so no tool reads it as negative). The
first allocation reads which uids and gids are taken (by the password and group files, and
by the real, effective, saved and file-system ids of every process now running) and starts
at an offset derived from this process's id, so two hosts on one machine rarely meet; each
further run takes the next free id, and an id comes round again only after the whole range.
"""

from __future__ import annotations

import contextlib
import os
import threading

RANGE = range(0x7E000000, 0x7E000000 + 0x10000)
"""Host uids (and equal gids) for sandboxes: 65,536 of them."""

STRANGER = (-1, -1)
"""A uid and gid no file belongs to: what `launchers.unreachable` checks for a sandbox whose
uid is not chosen yet (the permission bits for others decide)."""


def taken_ids() -> set[int]:
    """Every uid and gid named in `/etc/passwd` or `/etc/group`, or held by a running
    process (read from `/proc/<pid>/status`: a non-dumpable process's `/proc` folder belongs
    to root whatever its uid)."""
    taken: set[int] = set()
    for table in ("/etc/passwd", "/etc/group"):
        with contextlib.suppress(OSError), open(table, encoding="utf-8", errors="replace") as file:
            for line in file:
                fields = line.split(":")
                if len(fields) > 2 and fields[2].isdigit():
                    taken.add(int(fields[2]))
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError), open(f"/proc/{entry.name}/status", "rb") as status:
                for row in status:
                    if row.startswith((b"Uid:", b"Gid:")):
                        taken.update(int(value) for value in row.split()[1:])
    return taken


class Identities:
    """Hands out one fresh (uid, gid) per sandbox, the same number for both."""

    def __init__(self, ids: range = RANGE) -> None:
        self.ids = ids
        self._lock = threading.Lock()
        self._taken: set[int] | None = None
        self._cursor = 0

    def take(self) -> tuple[int, int]:
        with self._lock:
            if self._taken is None:
                self._taken = taken_ids()
                self._cursor = (os.getpid() * 97) % len(self.ids)
            for _ in range(len(self.ids)):
                candidate = self.ids[self._cursor]
                self._cursor = (self._cursor + 1) % len(self.ids)
                if candidate not in self._taken:
                    return candidate, candidate
        raise RuntimeError(f"every sandbox uid in {self.ids} is taken")


IDENTITIES = Identities()
"""This process's allocator (a forked child starts its own range from its own id)."""


def _after_fork() -> None:
    global IDENTITIES
    IDENTITIES = Identities()


os.register_at_fork(after_in_child=_after_fork)


def fresh_identity() -> tuple[int, int]:
    """A uid and gid for one sandbox of a root host."""
    return IDENTITIES.take()
