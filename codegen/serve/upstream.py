"""One live connection to an upstream MCP server, for as long as it lasts.

`Connection.run` connects (a stdio server is started in its own process group; an HTTP one
is reached by URL; both through `codegen.mcp.connect`, which `harvest` shares and whose
transports cap what one message may hold), lists every page of its tools, reports them as
started, then watches: a `notifications/tools/list_changed` (or, on a 2026-07-28 connection,
a tools event on a `subscriptions/listen` stream) lists them again, at most once per
`RELIST_INTERVAL` however many notices arrive, and hands the new list to `on_change`; the
end of the connection (the server exited, closed its stdout, or its transport failed) is
handed to `on_end` with the reason. Start-up has one deadline; a server that fails to start
is reported by `run` returning without starting, with the reason and the step it failed in
(a line that is not JSON-RPC before the handshake fails it at once; later, it is a warning).
Leaving `run` (cancellation included) closes the session and stops the server's whole
process group.

Calls go through `codegen.mcp.client.bind`, so a result is a JSON value (structured content,
else text, else content blocks) and an error result or a refused call is a `ToolCallError`.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
import anyio.abc

from ..mcp.client import bind
from ..mcp.config import UPSTREAM_MESSAGE, Upstream
from ..mcp.connect import bad_line, describe, list_all, open_client, open_transport

START_TIMEOUT = 60.0
"""Seconds an upstream gets to start, shake hands and list its tools."""
PING_TIMEOUT = 10.0
"""Seconds a streamable-HTTP upstream gets to answer the ping sent after a failed call."""
RELIST_INTERVAL = 1.0
"""Seconds between two listings of one upstream's tools: a flood of change notices is
coalesced into one listing per interval (the last state always wins)."""


def about_of(client: Any) -> tuple[str, ...]:
    """What the server says of itself: its `serverInfo` description and title, and its
    `instructions` (each "" when absent or not text)."""
    info = getattr(client, "server_info", None)
    said = (
        getattr(info, "description", None),
        getattr(info, "title", None),
        getattr(client, "instructions", None),
    )
    return tuple(text if isinstance(text, str) else "" for text in said)


Tools = tuple[dict[str, Any], ...]
"""An upstream's tools as sent (`name`, `title`, `description`, `inputSchema`,
`outputSchema`, `annotations`), in the order listed."""


class _WatchedRead:
    """The transport's read stream, telling its owner when it ends: that is how a dead
    server (stdout closed, process gone) shows on every transport."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result


@asynccontextmanager
async def _watched(transport: Any, on_end: Callable[[], None]) -> AsyncIterator[Any]:
    async with transport as (read, write):
        yield _WatchedRead(read, on_end), write


def _transport(upstream: Upstream, errlog: TextIO, cap: int) -> Any:
    def skipped(size: int) -> None:
        errlog.write(
            f"codegen serve: {upstream.label}: a message of {size} bytes was refused "
            f"(at most {cap}); the call it answered failed\n"
        )
        errlog.flush()

    return open_transport(upstream, errlog, cap, skipped)


async def list_tools(client: Any) -> Tools:
    """Every page of `tools/list`, each tool reduced to its interface keys."""
    return (await list_all(client)).tools


class Connection:
    """One upstream while it lives. `tools` is its last listing; `call` reaches it."""

    def __init__(
        self,
        upstream: Upstream,
        on_change: Callable[[Connection, Tools], Awaitable[None]],
        on_end: Callable[[Connection, str], Awaitable[None]],
        errlog: TextIO | None = None,
        start_timeout: float = START_TIMEOUT,
        message_cap: int = UPSTREAM_MESSAGE,
    ) -> None:
        self.upstream = upstream
        self.message_cap = message_cap
        self.on_change = on_change
        self.on_end = on_end
        self.errlog = errlog or sys.stderr
        self.start_timeout = start_timeout
        self.tools: Tools = ()
        self.about: tuple[str, ...] = ()
        """What the server says of itself (`about_of`), once connected."""
        self.ended = anyio.Event()
        self.closing = False
        self._changed = anyio.Event()
        self._bound: Any = None
        self._live: Any = None
        self._end_reason: str | None = None
        self._step = ""
        """What start-up is doing once the server runs, for the reason it failed."""
        self._starting: anyio.CancelScope | None = None
        """Start-up's scope until the tools are listed: an unreadable message cancels it."""
        self._refused: str | None = None
        """Why start-up was cut short (what the server sent instead of JSON-RPC)."""
        self._warned = False

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """The tool's value, or `ToolCallError` (an error result, a refused call, or a
        connection that is gone). A failed call to a streamable-HTTP upstream asks it for a
        ping: no persistent stream tells that it died, so an unanswered ping ends it here
        (its tools are removed, as a dead stdio upstream's are)."""
        from ..mcp.client import ToolCallError

        if self._bound is None or self.ended.is_set():
            raise ToolCallError(name, f"the server {self.upstream.label} is not running")
        try:
            return await self._bound[name](arguments)
        except ToolCallError:
            if self.upstream.url is not None and not await self._answers_ping():
                self._end_reason = "it stopped answering (a call failed and a ping went unanswered)"
                self.ended.set()
            raise

    async def _answers_ping(self) -> bool:
        client = self._live
        if client is None or self.ended.is_set():
            return False
        with anyio.move_on_after(PING_TIMEOUT):
            try:
                await client.send_ping()
            except Exception:
                return False
            return True
        return False

    async def run(self, *, task_status: anyio.abc.TaskStatus[Tools | str]) -> None:
        """Serve this upstream until its connection ends or the caller cancels. Starts with
        its tools, or with the reason it could not start (and returns)."""
        started = False
        reason = "the connection ended"
        try:
            async with anyio.create_task_group() as group:
                self._starting = group.cancel_scope
                deadline = anyio.CancelScope()
                timed_out = False

                async def watchdog() -> None:
                    nonlocal timed_out
                    with deadline:
                        await anyio.sleep(self.start_timeout)
                        timed_out = True
                        group.cancel_scope.cancel()

                group.start_soon(watchdog)
                try:
                    async with self._client() as client:
                        self._step = "while listing its tools"
                        self.tools = await list_tools(client)
                        self.about = about_of(client)
                        deadline.cancel()
                        self._bound = bind(client, names=[tool["name"] for tool in self.tools])
                        self._live = client
                        started = True
                        self._starting = None
                        task_status.started(self.tools)
                        await self._watch(client)
                except Exception as error:
                    reason = describe(error) if started else self._at_step(describe(error))
                group.cancel_scope.cancel()
            if not started and self._refused is not None:
                reason = self._at_step(self._refused)
            elif timed_out and not started:
                reason = self._at_step(f"no answer within {self.start_timeout:g} s")
        except Exception as error:
            reason = describe(error)
        finally:
            self._starting = None
            self.ended.set()
        if not started:
            task_status.started(reason)
        elif not self.closing:
            await self.on_end(self, self._end_reason or reason)

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[Any]:
        from mcp import types

        async def on_message(message: object) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                self._changed.set()
            elif isinstance(message, Exception):
                self._unreadable(message)

        def gone() -> None:
            self.ended.set()

        transport = _watched(_transport(self.upstream, self.errlog, self.message_cap), gone)
        self._step = "during the handshake"
        session = open_client(transport, name="codegen-serve", message_handler=on_message)
        async with session as client:
            yield client

    def _at_step(self, reason: str) -> str:
        return f"{reason} {self._step}" if self._step else reason

    def _unreadable(self, error: Exception) -> None:
        """Something the server sent that the client could not read (a line that is not
        JSON-RPC, a failed HTTP stream): before its tools are listed, the reason start-up
        fails, at once rather than at the deadline; later a warning, the first time only."""
        if self.upstream.url is None:
            said = bad_line(error)
        else:
            said = f"the HTTP transport failed: {describe(error)}"
        if self._starting is not None:
            if self._refused is None:
                self._refused = said
            self._starting.cancel()
        elif not self._warned:
            self._warned = True
            self.errlog.write(
                f"codegen serve: {self.upstream.label}: warning: {said}; ignored (and any "
                "more of them)\n"
            )
            self.errlog.flush()

    async def _watch(self, client: Any) -> None:
        """Until the connection ends: re-list on every change notice."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        async with anyio.create_task_group() as group:
            capability = client.server_capabilities.tools
            if (
                capability is not None
                and capability.list_changed
                and client.protocol_version in MODERN_PROTOCOL_VERSIONS
            ):
                group.start_soon(self._listen, client)

            async def relist() -> None:
                while True:
                    await self._changed.wait()
                    self._changed = anyio.Event()
                    tools = await list_tools(client)
                    self.tools = tools
                    self._bound = bind(client, names=[tool["name"] for tool in tools])
                    await self.on_change(self, tools)
                    await anyio.sleep(RELIST_INTERVAL)  # notices meanwhile: one listing

            group.start_soon(relist)
            await self.ended.wait()
            group.cancel_scope.cancel()

    async def _listen(self, client: Any) -> None:
        from mcp.client.subscriptions import ToolsListChanged

        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for event in subscription:
                    if isinstance(event, ToolsListChanged):
                        self._changed.set()
        except Exception as error:  # no change notices is no reason to stop serving
            if not self.ended.is_set():
                self.errlog.write(
                    f"codegen serve: {self.upstream.label}: cannot watch its tool list: "
                    f"{describe(error)}\n"
                )
