"""A language server spoken to over its pipes, one request at a time, each by a deadline.

Blocking I/O on purpose: a warm checker outlives the event loop of any one run (a host may
run each call on a loop of its own), so a check runs in a thread (`asyncio.to_thread`) and
its caller holds the checker's lock. Every read waits with `select` for what is left of the
request's deadline; a server that answers nothing in time, answers too much, or closes its
pipe raises `ServerFailed`, and its owner stops it and starts another on the next check.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

MAX_MESSAGE = 32 * 1024 * 1024
"""Bytes one message from the server may have: a larger one is a broken server."""


class ServerFailed(Exception):
    """The server timed out, broke the protocol, or exited; `timeout` says which."""

    def __init__(self, message: str, timeout: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout


class LanguageServer:
    """One server process and its JSON-RPC conversation (LSP's `Content-Length` framing)."""

    def __init__(
        self,
        argv: Sequence[str],
        environment: dict[str, str],
        cwd: str,
        pass_fds: Sequence[int] = (),
        credentials: dict[str, Any] | None = None,
        stderr: int | None = None,
    ) -> None:
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if stderr is None else stderr,
            env=environment,
            cwd=cwd,
            pass_fds=tuple(pass_fds),
            process_group=0,
            close_fds=True,
            **(credentials or {}),
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = self.process.stdin
        self._out = self.process.stdout.fileno()
        self._buffer = b""
        self._next = 0

    # --- the conversation ------------------------------------------------------------------

    def request(self, method: str, params: Any, deadline: float) -> Any:
        """The result of one request; `ServerFailed` for an error answer, a timeout or an
        exit."""
        self._next += 1
        number = self._next
        self._send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        while True:
            message = self._receive(deadline)
            if "method" in message:
                if "id" in message:  # the server asks: answer that nothing is configured
                    self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            if message.get("id") != number:
                continue
            if "error" in message:
                error = message["error"]
                text = error.get("message", "") if isinstance(error, dict) else str(error)
                raise ServerFailed(f"{method} failed: {str(text)[:300]}")
            return message.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        try:
            self._in.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self._in.flush()
        except (BrokenPipeError, OSError, ValueError) as error:
            raise ServerFailed(f"the server closed its input ({self._exit_text(error)})") from None

    def _receive(self, deadline: float) -> dict[str, Any]:
        while True:
            head, separator, rest = self._buffer.partition(b"\r\n\r\n")
            if separator:
                length = _content_length(head)
                if len(rest) >= length:
                    self._buffer = rest[length:]
                    try:
                        message = json.loads(rest[:length])
                    except ValueError:
                        raise ServerFailed("the server sent a message that is not JSON") from None
                    if not isinstance(message, dict):
                        raise ServerFailed("the server sent a message that is not an object")
                    return message
            elif len(self._buffer) > 8192:
                raise ServerFailed("the server sent a header of more than 8192 bytes")
            self._buffer += self._read(deadline)

    def _read(self, deadline: float) -> bytes:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ServerFailed("the server did not answer in time", timeout=True)
        ready, _, _ = select.select([self._out], [], [], left)
        if not ready:
            raise ServerFailed("the server did not answer in time", timeout=True)
        chunk = os.read(self._out, 1 << 16)
        if not chunk:
            raise ServerFailed(f"the server exited ({self._exit_text()})")
        return chunk

    def _exit_text(self, error: BaseException | None = None) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=0.5)
        code = self.process.returncode
        if code is None:
            return str(error) if error is not None else "still running"
        if code < 0:
            import signal

            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"

    # --- stopping ----------------------------------------------------------------------------

    def stop(self) -> None:
        """Kill the server's process group and reap it."""
        stop_group(self.process)


_STARTER: list[ThreadPoolExecutor] = []
_STARTER_LOCK = threading.Lock()


def start_lasting(start: Callable[[], T]) -> T:
    """`start()` called from one thread that lives as long as the process: a sandbox dies
    with the thread that started it (bubblewrap's `--die-with-parent` is PR_SET_PDEATHSIG,
    which follows the parent thread), and a check's thread (`asyncio.to_thread`, a loop's
    executor) may end long before the server it started should."""
    with _STARTER_LOCK:
        if not _STARTER:
            _STARTER.append(ThreadPoolExecutor(1, thread_name_prefix="codegen-checker-start"))
        starter = _STARTER[0]
    return starter.submit(start).result()


def stop_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, 9)
    for stream in (process.stdin, process.stdout):
        with contextlib.suppress(OSError):
            if stream is not None:
                stream.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                break
            if not 0 <= length <= MAX_MESSAGE:
                raise ServerFailed(f"the server sent a message of {length} bytes")
            return length
    raise ServerFailed("the server sent a message without a Content-Length")
