"""`codegen serve --http` bounds its connections (`codegen/serve/connections.py`): a request
head within a deadline however slowly it trickles, an idle connection closed, a body bounded
in time and size, a response stream never cut, and a cap on open connections that a flood
of stalled ones only ever fills with itself.

The first tests run the gate in this process, under uvicorn, in front of a small
application; the last ones flood a real `codegen serve --http` and watch its descriptors
in `/proc`. Every wait is for an event (a closed socket, a response) with a generous
maximum; no test measures how fast anything happened."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import resource
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from codegen.cli import build_parser
from codegen.errors import InvalidInputError, UsageError
from codegen.mcp.config import HTTP_LIMIT_KEYS, load_servers_file
from codegen.serve.command import plan
from codegen.serve.connections import Gate
from codegen.serve.descriptors import connection_cap, reserved
from codegen.serve.http_limits import HttpLimits
from conftest import ROOT
from support.serve_clients import client_call, http_serve, run

MAX_WAIT = 90.0
"""Seconds any one wait may take before the test fails: generous, the machine is shared."""


# --- raw HTTP clients ------------------------------------------------------------------------


def connect(port: int, first: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=MAX_WAIT)
    with contextlib.suppress(OSError):  # closed already: what the tests wait for anyway
        sock.sendall(first)
    return sock


def is_closed(sock: socket.socket) -> bool:
    """Whether the server has closed `sock`: readable now, with nothing left to read."""
    try:
        while select.select([sock], [], [], 0)[0]:
            if not sock.recv(65536):
                return True
    except OSError:  # reset
        return True
    return False


def wait_until_closed(
    socks: list[socket.socket], trickling: frozenset[socket.socket] = frozenset(), at_least: int = 0
) -> list[socket.socket]:
    """Wait until the server has closed every socket of `socks` (or `at_least` of them),
    sending a byte to each of `trickling` every 0.2 s meanwhile; the ones still open."""
    needed = at_least or len(socks)
    open_ = list(socks)
    deadline = time.monotonic() + MAX_WAIT
    while len(socks) - len(open_) < needed and time.monotonic() < deadline:
        ready, _, _ = select.select(open_, [], [], 0.2)
        gone = {sock for sock in ready if is_closed(sock)}
        for sock in trickling:
            if sock in open_ and sock not in gone:
                try:
                    sock.send(b"a")
                except OSError:
                    gone.add(sock)
        open_ = [sock for sock in open_ if sock not in gone]
    return open_


def read_response(sock: socket.socket) -> bytes:
    """One whole response (head and `content-length` body); b"" when the server closed
    the connection first."""
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def request_head(port: int, path: str = "/mcp", *lines: str) -> bytes:
    return "".join(
        f"{line}\r\n" for line in (f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", *lines)
    ).encode()


# --- the gate in this process ----------------------------------------------------------------


@dataclasses.dataclass
class Toy:
    """A small application: `/hold` answers once released, `/stream` sends a chunk every
    0.3 s, `/echo` reads the body and answers its length."""

    held: int = 0
    release: threading.Event = dataclasses.field(default_factory=threading.Event)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b"ok"
        if scope["path"] == "/hold":
            self.held += 1
            while not self.release.is_set():
                await asyncio.sleep(0.05)
        elif scope["path"] == "/echo":
            size, more = 0, True
            while more:
                message = await receive()
                if message["type"] != "http.request":
                    return
                size += len(message.get("body", b""))
                more = message.get("more_body", False)
            body = str(size).encode()
        elif scope["path"] == "/stream":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            for _ in range(8):
                await asyncio.sleep(0.3)
                await send({"type": "http.response.body", "body": b"x", "more_body": True})
            await send({"type": "http.response.body", "body": b"done"})
            return
        headers = [(b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@dataclasses.dataclass
class Running:
    port: int
    server: uvicorn.Server
    gate: Gate


@contextlib.contextmanager
def gated(app: Any, limits: HttpLimits, cap: int) -> Iterator[Running]:
    """uvicorn with the gate in front of `app`, on a loopback port, in a thread."""
    listener = socket.create_server(("127.0.0.1", 0))
    started: list[Running] = []

    async def serve() -> None:
        gate = Gate(limits, cap, asyncio.get_running_loop())
        config = uvicorn.Config(
            gate.watch(app), log_level="critical", lifespan="off", **gate.server_options()
        )
        server = uvicorn.Server(config)
        started.append(Running(listener.getsockname()[1], server, gate))
        await server.serve(sockets=[listener])

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    deadline = time.monotonic() + MAX_WAIT
    while not (started and started[0].server.started) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert started and started[0].server.started, "the server did not start"
    try:
        yield started[0]
    finally:
        started[0].server.should_exit = True
        thread.join(MAX_WAIT)
        listener.close()


SHORT = HttpLimits(header_timeout=MAX_WAIT, idle_timeout=0.5, body_timeout=0.5, body=1000)
"""Every deadline short but the head's: each request here is sent whole at once, and must
not miss its deadline however busy the machine (the real server's tests time heads)."""


def test_a_response_stream_outlives_every_deadline() -> None:
    with gated(Toy(), SHORT, cap=4) as running:
        sock = connect(running.port, request_head(running.port, "/stream") + b"\r\n")
        received = b""
        while not received.endswith(b"0\r\n\r\n"):  # the chunked body's end
            chunk = sock.recv(65536)
            assert chunk, f"the stream was cut: {received!r}"
            received += chunk
        assert received.count(b"\r\nx\r\n") == 8 and b"\r\ndone\r\n" in received
        sock.close()


def test_a_newcomer_is_refused_when_every_connection_has_a_request_in_flight() -> None:
    app = Toy()
    with gated(app, SHORT, cap=2) as running:
        busy = [connect(running.port, request_head(running.port, "/hold") + b"\r\n") for _ in "ab"]
        deadline = time.monotonic() + MAX_WAIT
        while app.held < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert app.held == 2
        time.sleep(2 * SHORT.body_timeout)  # a request without a body is never timed out
        newcomer = connect(running.port)
        assert read_response(newcomer).startswith(b"HTTP/1.1 503 ")
        assert wait_until_closed([newcomer]) == []
        # uvicorn never built a protocol for it: only the two busy connections have one
        assert len(running.server.server_state.connections) == 2
        app.release.set()
        for sock in busy:
            assert read_response(sock).startswith(b"HTTP/1.1 200 ")
        later = connect(running.port, request_head(running.port, "/") + b"\r\n")
        assert read_response(later).startswith(b"HTTP/1.1 200 ")


def test_at_the_cap_the_connection_waiting_longest_gives_way() -> None:
    with gated(Toy(), SHORT, cap=2) as running:
        oldest = connect(running.port)
        deadline = time.monotonic() + MAX_WAIT
        while len(running.gate.doors) < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        younger = connect(running.port, b"GET / HT")
        while len(running.gate.doors) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        client = connect(running.port, request_head(running.port, "/") + b"\r\n")
        assert read_response(client).startswith(b"HTTP/1.1 200 ")
        assert wait_until_closed([oldest]) == []
        assert not is_closed(younger)
        assert len(running.gate.doors) <= 2


def test_request_bodies_are_bounded_in_size_and_time() -> None:
    with gated(Toy(), SHORT, cap=8) as running:
        port = running.port
        declared = connect(port, request_head(port, "/echo", "Content-Length: 5000") + b"\r\n")
        assert read_response(declared).startswith(b"HTTP/1.1 413 ")
        fits = connect(
            port, request_head(port, "/echo", "Content-Length: 10") + b"\r\n" + b"0" * 10
        )
        assert read_response(fits).endswith(b"\r\n\r\n10")
        chunked = connect(port, request_head(port, "/echo", "Transfer-Encoding: chunked") + b"\r\n")
        with contextlib.suppress(OSError):  # the server may close it while it is written
            for _ in range(20):
                chunked.sendall(b"64\r\n" + b"0" * 100 + b"\r\n")
        assert not read_response(chunked).startswith(b"HTTP/1.1 200 ")
        assert wait_until_closed([chunked]) == []
        stalled = connect(port, request_head(port, "/echo", "Content-Length: 10") + b"\r\n0")
        assert wait_until_closed([stalled]) == []


# --- configuration ---------------------------------------------------------------------------


def test_every_http_limit_is_a_field_a_config_key_and_a_flag(tmp_path: Path) -> None:
    assert tuple(HTTP_LIMIT_KEYS) == tuple(f.name for f in dataclasses.fields(HttpLimits))
    config = tmp_path / "c.json"
    config.write_text(
        '{"mcpServers": {"a": {"command": "x"}}, "codegen": {"http_limits": '
        '{"header_timeout": 2.5, "body": "1KiB", "connections": 40}}}'
    )
    settings = load_servers_file(config, "c.json").settings
    assert dict(settings.http_limits) == {"header_timeout": 2.5, "body": 1024, "connections": 40}
    argv = ["serve", "--config", str(config), "--http-idle-timeout", "7", "--http-body", "2KiB"]
    chosen = plan(build_parser(argv).parse_args(argv)).http_limits
    assert chosen == HttpLimits(header_timeout=2.5, idle_timeout=7.0, body=2048, connections=40)
    for key in HTTP_LIMIT_KEYS:  # each key's flag is --http-KEY, dashed, checked as the key is
        argv = ["serve", "--config", str(config), "--http-" + key.replace("_", "-"), "-1"]
        with pytest.raises(UsageError, match=r"expected a positive value|expected an integer"):
            plan(build_parser(argv).parse_args(argv))
    config.write_text(
        '{"mcpServers": {"a": {"command": "x"}}, "codegen": {"http_limits": {"speed": 1}}}'
    )
    with pytest.raises(
        InvalidInputError, match=r"/codegen/http_limits/speed: error: unknown limit"
    ):
        load_servers_file(config, "c.json")


def test_the_cap_leaves_room_for_runs_and_upstreams() -> None:
    kept = reserved(concurrent_runs=8, upstreams=2)
    assert connection_cap(None, 65536, kept).connections == 256
    assert connection_cap(None, 1024, kept).connections == 256  # a quarter of 1024
    assert connection_cap(None, 400, kept).connections == 100
    lowered = connection_cap(5000, 1024, kept)
    assert lowered.connections == 1024 - kept and lowered.lowered_from == 5000
    assert lowered.note is not None and "open-file limit (1024)" in lowered.note
    assert connection_cap(32, 1024, kept).note is None


def test_the_open_file_limit_is_raised_towards_the_hard_limit() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard <= 64:
        pytest.skip("the hard open-file limit leaves nothing to raise")
    low = 64
    program = (
        "import resource\nfrom codegen.serve.descriptors import raise_open_file_limit\n"
        "print(resource.getrlimit(resource.RLIMIT_NOFILE)[0], raise_open_file_limit(), "
        "resource.getrlimit(resource.RLIMIT_NOFILE)[0])"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard)),
        timeout=120,
    )
    before, said, after = map(int, done.stdout.split())
    wanted = 65536 if hard == resource.RLIM_INFINITY else min(65536, hard)
    assert (before, said, after) == (low, wanted, wanted), done.stderr


# --- a real `codegen serve --http` -----------------------------------------------------------


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.slow
def test_stalled_and_idle_connections_are_closed(tmp_path: Path) -> None:
    """(a) connections that send nothing, part of a request line, part of a head, or a head
    a byte at a time are closed after the header timeout; (d) a keep-alive connection that
    stays idle after a response, or then trickles, is closed too."""
    serve, url, _ = http_serve(tmp_path, "--http-header-timeout", "2", "--http-idle-timeout", "1")
    try:
        port = int(url.split(":")[2].split("/")[0])
        silent = connect(port)
        line = connect(port, b"POST /mc")
        head = connect(port, request_head(port, "/mcp", "Content-Type: application/json"))
        trickle = connect(port, request_head(port, "/mcp", "X-Slow: "))
        idle = answered(port)
        idle_trickle = answered(port)
        with contextlib.suppress(OSError):
            idle_trickle.sendall(b"GET /mcp HTTP/1.1\r\nX-Slow: ")
        socks = [silent, line, head, trickle, idle, idle_trickle]
        still_open = wait_until_closed(socks, trickling=frozenset({trickle, idle_trickle}))
        names = ["silent", "line", "head", "trickle", "idle", "idle_trickle"]
        assert still_open == [], [names[socks.index(sock)] for sock in still_open]
        assert serve.stop() == 0
        assert "Traceback" not in serve.stderr
    finally:
        serve.kill()


def answered(port: int) -> socket.socket:
    """A connection that has had an (unauthenticated: 401) answer and is kept alive; tried
    again should the server close it before answering (a machine so busy that the head
    missed its deadline)."""
    for _ in range(10):
        sock = connect(port, request_head(port) + b"\r\n")
        if read_response(sock).startswith(b"HTTP/1.1 401 "):
            return sock
        sock.close()
    raise AssertionError("no answer in 10 tries")


@pytest.mark.slow
def test_a_flood_of_stalled_connections_leaves_clients_served_and_descriptors_bounded(
    tmp_path: Path,
) -> None:
    """(b) while 100 stalled connections are held against a cap of 16, an authenticated
    client initializes and runs a program that outlasts the body and idle timeouts; (c) the
    server's descriptors stay within the cap meanwhile."""
    cap, flood = 16, 100
    serve, url, token = http_serve(
        tmp_path,
        *("--http-connections", str(cap), "--http-header-timeout", "120"),
        *("--http-body-timeout", "2", "--http-idle-timeout", "2"),
    )
    try:
        pid = serve.process.pid
        port = int(url.split(":")[2].split("/")[0])
        baseline = open_files(pid)
        bound = baseline + cap + 16  # the runtime's spare worker and a run's pipes
        stalled = [connect(port, b"POST /mcp HTTP/1.1\r\n" if i % 2 else b"") for i in range(flood)]
        held = wait_until_closed(stalled, at_least=flood - cap)
        files = open_files(pid)
        assert len(held) <= cap and files <= bound, f"{len(held)} held, {files} files > {bound}"
        program = "import time\ntime.sleep(5)\nreturn 6 * 7"
        names, result = run(lambda: client_call(url, token, program))
        assert names == ["run_code"] and result == {"logs": [], "result": 42}
        assert open_files(pid) <= bound, (open_files(pid), bound)
        assert serve.stop() == 0
        assert "Traceback" not in serve.stderr
    finally:
        serve.kill()
