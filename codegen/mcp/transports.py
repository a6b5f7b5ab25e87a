"""How codegen talks to an upstream (`serve` for as long as it runs, `harvest` to list its
tools): stdio and streamable HTTP, each with a size cap on what the upstream may send in one
message.

One upstream's 500 MB result must not pin serve at 100% CPU and starve the others, so no
message is held whole past `cap` bytes:

- stdio: lines are split from bytes as they come (every byte looked at once), and a line
  that grows past the cap is skipped to its end without being kept; the request it answers
  (its `id` is read from the line's first or last few kilobytes, where JSON-RPC puts it)
  gets an error instead, so only the program that asked sees a failure. A line is parsed
  off the event loop when it is large. The server runs in its own session and process
  group, with the MCP SDK's default environment plus its `env`; closing the transport closes
  its stdin, then stops the group (SIGTERM, then SIGKILL).
- HTTP: every response body is counted as it streams, and a JSON one past the cap fails
  its request; server-sent events are capped per event by the SDK.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
import anyio.abc

STOP_GRACE = 2.0
"""Seconds a server gets to exit after its stdin closes, and again after SIGTERM."""
LARGE_LINE = 1024 * 1024
"""A line at least this long is parsed in a thread."""
EDGE = 4096
"""Bytes kept from each end of a line that is too large, to find the id it answers."""

_HEAD_ID = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")'
)
_TAIL_ID = re.compile(
    rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$'
)


def answered_id(head: bytes, tail: bytes) -> int | str | None:
    """The JSON-RPC id of a response too large to read, from its first or last bytes: the
    id comes before `result` (most SDKs) or last (the TypeScript SDK)."""
    for pattern, text in ((_HEAD_ID, head), (_TAIL_ID, tail)):
        match = pattern.search(text)
        if match is not None:
            try:
                found = json.loads(match.group(1))
            except ValueError:
                continue
            if isinstance(found, int | str):
                return found
    return None


class LineSplitter:
    """Bytes in, complete lines out; a line past `cap` bytes comes out as `Skipped`."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[bytes] = []
        self.size = 0
        self.skipping = False
        self.head = b""
        self.tail = b""

    def feed(self, chunk: bytes) -> list[bytes | Skipped]:
        found: list[bytes | Skipped] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            self._add(piece)
            if end < 0:
                return found
            found.append(self._finish())
            start = end + 1

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        self.size += len(piece)
        if self.skipping:
            self.tail = (self.tail + piece)[-EDGE:]
            return
        self.parts.append(piece)
        if self.size > self.cap:
            joined_head = b"".join(self.parts)
            self.head = joined_head[:EDGE]
            self.tail = joined_head[-EDGE:]
            self.parts = []
            self.skipping = True

    def _finish(self) -> bytes | Skipped:
        if self.skipping:
            item: bytes | Skipped = Skipped(self.size, answered_id(self.head, self.tail))
        else:
            item = b"".join(self.parts)
        self.parts, self.size, self.skipping, self.head, self.tail = [], 0, False, b"", b""
        return item


@dataclass(frozen=True)
class Skipped:
    """A line that was too large: its size and the request id it answered, if found."""

    size: int
    request: int | str | None


def _too_large(skipped: Skipped, cap: int) -> Any:
    from mcp.shared.message import SessionMessage
    from mcp.types import ErrorData, JSONRPCError

    message = (
        f"the server sent a message of {skipped.size} bytes; messages from a server may have "
        f"at most {cap} (the upstream_message limit)"
    )
    return SessionMessage(
        JSONRPCError(
            jsonrpc="2.0", id=skipped.request, error=ErrorData(code=-32603, message=message)
        )
    )


def _parse(line: bytes) -> Any:
    from mcp import types
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as error:
        return error


@asynccontextmanager
async def stdio_transport(
    command: list[str],
    env: dict[str, str] | None,
    cwd: str | None,
    errlog: TextIO,
    cap: int,
    on_skipped: Any = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams of a server started over stdio, as the MCP `Client` takes
    them; `on_skipped(size)` hears of a message that was too large."""
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(
        command,
        env=get_default_environment() | (env or {}),
        stderr=errlog,
        cwd=cwd,
        start_new_session=True,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def deliver(line: bytes | Skipped) -> None:
        if isinstance(line, Skipped):
            if on_skipped is not None:
                on_skipped(line.size)
            if line.request is not None:  # else a notification: nobody waits for it
                await read_writer.send(_too_large(line, cap))
        elif line.strip():
            large = len(line) >= LARGE_LINE
            await read_writer.send(
                await anyio.to_thread.run_sync(_parse, line) if large else _parse(line)
            )

    async def reader() -> None:
        assert process.stdout is not None
        splitter = LineSplitter(cap)
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with read_writer:
                async for chunk in process.stdout:
                    for line in splitter.feed(chunk):
                        await deliver(line)

    async def writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(text.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)
                for stream in (read_stream, write_stream, read_writer, write_reader):
                    await stream.aclose()
            group.cancel_scope.cancel()


async def _stop(process: anyio.abc.Process) -> None:
    """Close stdin, then SIGTERM, then SIGKILL the server's process group."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    for sent in (None, signal.SIGTERM, signal.SIGKILL):
        if sent is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sent)
        if await _exited(process, STOP_GRACE):
            break
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # what the server left in its group
    if process.stdout is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdout.aclose()


async def _exited(process: anyio.abc.Process, seconds: float) -> bool:
    """Whether the process ends within `seconds` (its return code, not its pipes: a child it
    left holding them would make it look alive)."""
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(0.02)
    return process.returncode is not None


def http_client(headers: dict[str, str] | None, cap: int) -> Any:
    """An HTTP client for one upstream whose response bodies stop at `cap` bytes."""
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    class CappedStream(httpx2.AsyncByteStream):
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self.inner:
                seen += len(chunk)
                if seen > cap:
                    raise httpx2.StreamError(
                        f"the server sent a response of more than {cap} bytes "
                        "(the upstream_message limit)"
                    )
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    class CappedTransport(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            response = await self.inner.handle_async_request(request)
            response.stream = CappedStream(response.stream)
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

    return httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT),
        transport=CappedTransport(),
    )
