"""Standard input as lines for the stdio transport, read by a daemon thread.

The MCP SDK reads stdin in a worker thread that a cancellation must wait for, and that the
interpreter joins at exit: after Ctrl-C, `codegen serve` would hang until its client wrote
another line. This reader's thread is a daemon and hands lines over a memory stream, so
shutting down never waits for a read; end of input ends the stream. A daemon thread still
running when the interpreter finalizes is ended by `pthread_exit` when it next wants the GIL;
this one only ever waits in `os.read` or for the loop to take a line (the interpreter's own
C code, which an unwind passes through), so that is harmless here. A thread that runs
extension code must not be a daemon (see `Host.close`).
"""

from __future__ import annotations

import contextlib
import os
import threading

import anyio
import anyio.from_thread
import anyio.lowlevel

CHUNK = 65536


class StdinLines:
    """`async for line in StdinLines()`: decoded UTF-8 lines (undecodable bytes replaced),
    each with its newline, as `stdio_server` reads them."""

    def __init__(self, fd: int = 0) -> None:
        self._fd = fd
        self._send, self._receive = anyio.create_memory_object_stream[str](64)
        self._token = anyio.lowlevel.current_token()
        threading.Thread(target=self._pump, name="codegen-serve-stdin", daemon=True).start()

    def _pump(self) -> None:
        buffer = b""
        try:
            while True:
                chunk = os.read(self._fd, CHUNK)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    text = (line + b"\n").decode("utf-8", "replace")
                    anyio.from_thread.run(self._send.send, text, token=self._token)
            if buffer:
                anyio.from_thread.run(
                    self._send.send, buffer.decode("utf-8", "replace"), token=self._token
                )
        except Exception:  # the loop is gone or the stream closed: nobody is reading
            pass
        finally:
            with contextlib.suppress(Exception):
                anyio.from_thread.run_sync(self._send.close, token=self._token)

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._receive.close()
