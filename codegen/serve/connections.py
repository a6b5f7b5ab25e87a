"""Slow, idle and surplus HTTP connections of `codegen serve --http`, closed.

uvicorn starts no timer before a connection's first request, and cancels its keep-alive
timer on every byte it receives, so a client that sends nothing, or a request head a byte
at a time, holds a descriptor for ever: enough of them and the server cannot open a file
("Too many open files"), and a run's worker cannot start. Its `limit_concurrency` does not
help: it answers 503 only once a request head is parsed, counting the stalled connections,
so it turns the real clients away. So every connection is let in, timed and closed here,
under uvicorn's HTTP/1.1 protocol (`h11`, which refuses a head over 16 KiB):

- a request head must be complete `header_timeout` seconds after its first byte (after the
  connection opens, for a new one), however slowly the bytes come;
- after a response, a connection is closed when no byte of a next request comes within
  `idle_timeout`;
- a body must be complete `body_timeout` after its head, and hold at most `body` bytes (a
  larger declared length is answered 413 before anything reads it);
- once the application answers, no deadline applies: an MCP response stream lasts as long
  as the run it waits for, and a client's notification stream as long as its session;
- at most `cap` connections are open. One more takes the place of the connection that has
  waited longest for a request (one with a request in flight is never closed for it); when
  every one has a request in flight, the newcomer is answered 503 and closed before uvicorn
  builds anything for it. A flood of connections that never finish a request therefore
  only ever replaces itself, and a client that sends its request at once gets served.

The protocol sees bytes and the application sees requests, so the two halves meet in one
`Door` per connection: `GatedProtocol` makes it and tells it of every byte; `Watch`, the
outermost application, finds it by the peer address uvicorn puts in `scope["client"]` and
tells it when a head was read, a body read, and a response begun and finished.
"""

from __future__ import annotations

import asyncio
import enum
import json
import math
from typing import Any, ClassVar

from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.utils import get_remote_addr
from uvicorn.server import ServerState

from .http import App, Receive, Scope, Send, refuse
from .http_limits import HttpLimits


def _busy_response() -> bytes:
    body = json.dumps({"error": "too many connections; try again shortly"}).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\nretry-after: 1\r\n\r\n"
    )
    return head.encode() + body


BUSY = _busy_response()
"""What a connection beyond the cap is sent before it is closed."""


class Phase(enum.Enum):
    HEAD = "waiting for a request head"
    BODY = "reading a request body"
    ANSWERING = "answering"
    IDLE = "idle after a response"


WAITING = frozenset({Phase.HEAD, Phase.IDLE})
"""No request in flight: such a connection may give way to a newcomer."""


class Door:
    """One admitted connection: where its request is, and the timer that closes it."""

    __slots__ = ("gate", "peer", "phase", "timer", "transport")

    def __init__(self, gate: Gate, transport: asyncio.Transport) -> None:
        self.gate = gate
        self.transport = transport
        self.peer = get_remote_addr(transport)
        """As uvicorn gives it in `scope["client"]`."""
        self.phase = Phase.HEAD
        self.timer: asyncio.TimerHandle | None = None
        self._arm(gate.limits.header_timeout)

    @property
    def waiting(self) -> bool:
        return self.phase in WAITING

    def _arm(self, seconds: float | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = None
        if seconds is not None and not self.transport.is_closing():
            self.timer = self.gate.loop.call_later(seconds, self.close)

    def close(self) -> None:
        """Close now, unsent bytes dropped: a peer that reads nothing cannot keep it open."""
        self._arm(None)
        self.transport.abort()

    def received(self) -> None:
        """Bytes came: after a response, they start the next request's head."""
        if self.phase is Phase.IDLE:
            self.phase = Phase.HEAD
            self._arm(self.gate.limits.header_timeout)

    def head_read(self) -> None:
        """The application has the request: its body comes next."""
        self.phase = Phase.BODY
        self._arm(self.gate.limits.body_timeout)

    def answering(self) -> None:
        """The body is read, or the application answers without it: no deadline."""
        if self.phase is Phase.BODY:
            self.phase = Phase.ANSWERING
            self._arm(None)

    def answered(self) -> None:
        """The response is complete: the connection waits for the next request."""
        if self.transport.is_closing():
            return
        self.phase = Phase.IDLE
        self._arm(self.gate.limits.idle_timeout)
        self.gate.waits(self)

    def lost(self) -> None:
        self._arm(None)


class Gate:
    """The open connections, at most `cap`, in the order they began waiting for a request."""

    def __init__(self, limits: HttpLimits, cap: int, loop: asyncio.AbstractEventLoop) -> None:
        self.limits = limits
        self.cap = cap
        self.loop = loop
        self.doors: dict[Door, None] = {}
        """Insertion order: when each began waiting (`waits` moves one to the end)."""
        self.by_peer: dict[tuple[str, int], Door] = {}

    def admit(self, transport: asyncio.Transport) -> Door | None:
        """A door for a new connection, closing the one that has waited longest when the cap
        is reached; None when every open connection has a request in flight."""
        if len(self.doors) >= self.cap:
            longest = next((door for door in self.doors if door.waiting), None)
            if longest is None:
                return None
            self.forget(longest)
            longest.close()
        door = Door(self, transport)
        self.doors[door] = None
        if door.peer is not None:
            self.by_peer[door.peer] = door
        return door

    def waits(self, door: Door) -> None:
        if door in self.doors:
            del self.doors[door]
            self.doors[door] = None

    def forget(self, door: Door) -> None:
        self.doors.pop(door, None)
        if door.peer is not None and self.by_peer.get(door.peer) is door:
            del self.by_peer[door.peer]

    def door_of(self, scope: Scope) -> Door | None:
        client = scope.get("client")
        return None if client is None else self.by_peer.get((client[0], client[1]))

    def protocol(self) -> type[GatedProtocol]:
        """The protocol class uvicorn makes for each connection (`uvicorn.Config(http=...)`)."""

        class Bound(GatedProtocol):
            pass

        Bound.gate = self
        return Bound

    def watch(self, app: App) -> App:
        return Watch(app, self)

    def server_options(self) -> dict[str, Any]:
        """What `uvicorn.Config` needs for this gate to see every connection: its protocol,
        no WebSocket upgrades (they would leave it), and uvicorn's own keep-alive timer
        later than the gate's."""
        return {
            "http": self.protocol(),
            "ws": "none",
            "timeout_keep_alive": math.ceil(self.limits.idle_timeout) + 1,
        }


class GatedProtocol(asyncio.Protocol):
    """uvicorn's h11 protocol, made only for an admitted connection, whose door hears of
    every byte first. (uvicorn calls it as it calls its own protocols; the loop is the
    gate's.)"""

    gate: ClassVar[Gate]

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.config = config
        self.server_state = server_state
        self.app_state = app_state
        self.door: Door | None = None
        self.inner: H11Protocol | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        door = self.gate.admit(transport)
        if door is None:
            transport.write(BUSY)
            transport.abort()
            return
        self.door = door
        self.inner = H11Protocol(self.config, self.server_state, self.app_state, self.gate.loop)
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.door is None or self.inner is None:
            return
        self.door.received()
        self.inner.data_received(data)

    def eof_received(self) -> None:
        if self.inner is not None:
            self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.door is not None:
            self.gate.forget(self.door)
            self.door.lost()
        if self.inner is not None:
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()


class Watch:
    """The outermost application: tells a request's door when its head was read, its body
    read, its response begun and finished, and holds the body to its limit."""

    def __init__(self, app: App, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        door = self.gate.door_of(scope) if scope["type"] == "http" else None
        if door is None:
            await self.app(scope, receive, send)
            return
        door.head_read()
        declared = _declared_body(scope)
        if declared == 0:
            door.answering()
        limit = self.gate.limits.body
        read = 0
        finished = False

        async def bounded_receive() -> dict[str, Any]:
            nonlocal read
            message = await receive()
            if message["type"] == "http.request":
                read += len(message.get("body", b""))
                if read > limit:  # a body without a declared length, grown too large
                    door.close()
                    return {"type": "http.disconnect"}
                if not message.get("more_body", False):
                    door.answering()
            return message

        async def watched_send(message: dict[str, Any]) -> None:
            nonlocal finished
            if message["type"] == "http.response.start":
                door.answering()
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                finished = True
                door.answered()

        try:
            if declared is not None and declared > limit:
                await refuse(
                    watched_send,
                    413,
                    f"a request body may hold at most {limit} bytes",
                    (b"connection", b"close"),
                )
                return
            await self.app(scope, bounded_receive, watched_send)
        finally:
            if not finished:
                door.answered()


def _declared_body(scope: Scope) -> int | None:
    """The length of the request's body: 0 when its head declares none (uvicorn has checked
    the header), None when it comes in chunks."""
    length = 0
    for key, value in scope["headers"]:
        if key == b"transfer-encoding":
            return None
        if key == b"content-length":
            length = int(value)
    return length
