"""Each upstream kept served for the whole session, whatever it does.

A `Supervisor` starts its upstream's `Connection` and mounts its tools; when the connection
ends, it starts a new one after a pause that doubles up to `RESTART_MAX`. An upstream that
fails to start is reported and left out. Nothing an upstream does ends serve: a failure,
even one that is a bug of codegen set off by what the server sent, is reported on stderr
with the upstream's name and what went wrong, its tools leave the catalog, and the other
upstreams go on being served. Only an error outside that loop (stderr itself failing)
propagates, carrying the upstream's name as a note.
"""

from __future__ import annotations

from typing import Any, TextIO

import anyio
import anyio.abc

from .._support.failures import failure_text
from ..mcp.config import UPSTREAM_MESSAGE, Upstream
from .upstream import Connection

RESTART_FIRST = 1.0
RESTART_MAX = 60.0
"""Seconds before restarting an upstream that died: doubling from the first to the max, and
back to the first once it has run for `RESTART_MAX`."""


class Supervisor:
    """One upstream for the whole session: its connection, and a new one after it dies."""

    def __init__(
        self,
        upstream: Upstream,
        host: Any,
        errlog: TextIO,
        message_cap: int = UPSTREAM_MESSAGE,
    ) -> None:
        self.upstream = upstream
        self.host = host
        self.errlog = errlog
        self.message_cap = message_cap
        self.closing = False
        self.connection: Connection | None = None
        self._told_start = False

    def close(self) -> None:
        self.closing = True
        if self.connection is not None:
            self.connection.closing = True

    async def run(self, *, task_status: anyio.abc.TaskStatus[bool]) -> None:
        """Start once (telling `task_status` whether it did), then keep the upstream
        served: after it dies, start it again after a pause that grows while it keeps
        dying."""
        try:
            await self._keep_served(task_status)
        except Exception as error:
            error.add_note(f"while serving the upstream {self.upstream.label}")
            raise

    async def _keep_served(self, task_status: anyio.abc.TaskStatus[bool]) -> None:
        label = self.upstream.label
        pause = RESTART_FIRST
        while not self.closing:
            began = anyio.current_time()
            broke = False
            try:
                failed = await self._session(task_status)
            except Exception as error:  # a bug this upstream set off must not end serve
                failed = f"internal error: {failure_text(error)} (a bug in codegen)"
                broke = True
                await self._forget()
            if failed is not None and not self._told_start:
                self.host.note(f"{label} failed to start: {failed}; its tools are left out")
                self._told_start = True
                task_status.started(False)
                return
            if broke:
                self.host.note(f"{label} stopped: {failed}; its tools are removed")
            elif failed is not None:
                self.host.note(f"{label} failed to restart: {failed}")
            if self.closing:
                return
            if anyio.current_time() - began >= RESTART_MAX:
                pause = RESTART_FIRST
            self.host.note(f"{label}: restarting in {pause:g} s")
            await anyio.sleep(pause)
            pause = min(pause * 2, RESTART_MAX)

    async def _session(self, task_status: anyio.abc.TaskStatus[bool]) -> str | None:
        """One connection from its start to its end: None once it has ended, or why it
        could not start."""
        connection = Connection(
            self.upstream,
            self.host.on_change,
            self.host.on_end,
            self.errlog,
            message_cap=self.message_cap,
        )
        self.connection = connection
        label = self.upstream.label
        async with anyio.create_task_group() as group:
            outcome = await group.start(connection.run)
            if isinstance(outcome, str):
                return outcome
            count = self.host.mount(connection, outcome)
            tools = f"{count} tool{'s' * (count != 1)}"
            if not self._told_start:
                self.host.note(f"{label}: {tools}")
                self._told_start = True
                task_status.started(True)
            else:
                self.host.note(f"{label} is back: {tools}")
                await self.host.notify_changed()
        return None

    async def _forget(self) -> None:
        """After a failure the connection did not report: its tools leave the catalog."""
        if self.host.unmount(self.upstream.prefix):
            await self.host.notify_changed()


async def start_all(supervisors: list[Supervisor], group: anyio.abc.TaskGroup) -> int:
    """Start every upstream at once in `group` (where each then stays served); how many
    started."""
    started = 0

    async def start(supervisor: Supervisor) -> None:
        nonlocal started
        if await group.start(supervisor.run):
            started += 1

    async with anyio.create_task_group() as starting:
        for supervisor in supervisors:
            starting.start_soon(start, supervisor)
    return started
