"""`PythonRuntime`: run_code programs in Python, one fresh worker process per run.

The worker (`worker.py`) runs as `python -I` in its own process group, with a minimal
environment, no inherited file descriptors but its two pipes, rlimits on CPU time and address
space, and process creation refused. Tool calls travel over the pipes as JSON; the host
dispatches each through the bridge (`Bindings.call`), so every policy applies. Limits, each
configurable: wall-clock timeout, CPU seconds, address space, output size, pending calls. A
violation, an exception, a worker crash or invalid output ends the run with
`CodeRunFailed(kind)`; cancelling the run (its signal) kills the worker and its children.

This isolates mistakes, not attackers: it is not a security boundary by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal as signals
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .runtime import MISSING, Bindings, CodeRunFailed, RunOutput, ToolCallFailed
from .signals import AbortSignal

MAX_MESSAGE = 64 * 1024 * 1024
"""Largest single message accepted from a worker (a log line or a call's arguments)."""


@dataclass(frozen=True)
class RuntimeLimits:
    timeout: float = 60.0
    """Wall-clock seconds for the whole run, tool calls included."""
    cpu_seconds: int = 30
    """CPU seconds of the worker (RLIMIT_CPU)."""
    memory_bytes: int = 1024 * 1024 * 1024
    """Address space of the worker (RLIMIT_AS)."""
    output_bytes: int = 1024 * 1024
    """Printed output plus the returned value, in bytes of UTF-8."""
    max_pending_calls: int = 100
    """Tool calls started but not answered at one time."""


@cache
def worker_source() -> str:
    return (Path(__file__).resolve().parent / "worker.py").read_text(encoding="utf-8")


def worker_environment() -> dict[str, str]:
    """A minimal environment: no secrets of the host process leak into programs."""
    return {
        "PATH": os.defpath,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


class PythonRuntime:
    language = "python"

    def __init__(self, limits: RuntimeLimits | None = None, python: str | None = None) -> None:
        self.limits = limits or RuntimeLimits()
        self.python = python or sys.executable
        self.spawned: list[int] = []
        """Process ids of the workers started so far (each led its own process group)."""

    async def run(self, program: str, bindings: Bindings, signal: AbortSignal) -> RunOutput:
        if signal.aborted:
            raise CodeRunFailed("abort", "the run was cancelled before it started")
        run = _WorkerRun(self, bindings, signal)
        return await run.execute(program)


class _WorkerRun:
    def __init__(self, runtime: PythonRuntime, bindings: Bindings, signal: AbortSignal) -> None:
        self.runtime = runtime
        self.limits = runtime.limits
        self.bindings = bindings
        self.signal = signal
        self.logs: list[str] = []
        self.output_bytes = 0
        self.calls: dict[int, asyncio.Task[None]] = {}
        self.process: asyncio.subprocess.Process | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def execute(self, program: str) -> RunOutput:
        to_worker_read, to_worker_write = os.pipe()
        from_worker_read, from_worker_write = os.pipe()
        try:
            self.process = await self._spawn(to_worker_read, from_worker_write)
        except OSError as error:
            os.close(to_worker_write)
            os.close(from_worker_read)
            raise CodeRunFailed("worker-exit", f"the worker could not start: {error}") from None
        finally:
            os.close(to_worker_read)
            os.close(from_worker_write)
        self.runtime.spawned.append(self.process.pid)
        return await self._run(program, from_worker_read, to_worker_write)

    async def _spawn(self, read_fd: int, write_fd: int) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            self.runtime.python,
            "-I",
            "-c",
            worker_source(),
            str(read_fd),
            str(write_fd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env=worker_environment(),
            pass_fds=(read_fd, write_fd),
            close_fds=True,
            start_new_session=True,
        )

    async def _run(self, program: str, from_worker_read: int, to_worker_write: int) -> RunOutput:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_MESSAGE)
        read_pipe = os.fdopen(from_worker_read, "rb", buffering=0)
        write_pipe = os.fdopen(to_worker_write, "wb", buffering=0)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), read_pipe
        )
        write_transport, write_protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, write_pipe
        )
        self.writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
        stop = asyncio.ensure_future(self.signal.wait())
        try:
            self._send(
                {
                    "type": "start",
                    "program": program,
                    "tools": list(self.bindings.names),
                    "limits": {
                        "cpu_seconds": self.limits.cpu_seconds,
                        "memory_bytes": self.limits.memory_bytes,
                        "output_bytes": self.limits.output_bytes,
                    },
                }
            )
            talk = asyncio.ensure_future(self._converse(reader))
            done, _ = await asyncio.wait(
                {talk, stop}, timeout=self.limits.timeout, return_when=asyncio.FIRST_COMPLETED
            )
            if talk in done:
                return talk.result()
            talk.cancel()
            await asyncio.gather(talk, return_exceptions=True)
            if stop in done:
                raise CodeRunFailed(
                    "abort", f"the run was cancelled ({self.signal.reason})", self.logs
                )
            raise CodeRunFailed(
                "timeout", f"the program ran longer than {self.limits.timeout:g} seconds", self.logs
            )
        finally:
            stop.cancel()
            await self._stop()
            transport.close()
            write_transport.close()

    # --- the conversation --------------------------------------------------------------------

    async def _converse(self, reader: asyncio.StreamReader) -> RunOutput:
        while True:
            try:
                line = await reader.readuntil(b"\n")
            except asyncio.IncompleteReadError:
                raise await self._worker_gone() from None
            except asyncio.LimitOverrunError:
                raise self._failure(
                    "invalid-output", f"the worker sent a message larger than {MAX_MESSAGE} bytes"
                ) from None
            try:
                message = json.loads(line)
                kind = message["type"]
            except (ValueError, KeyError, TypeError):
                raise self._failure(
                    "invalid-output", "the worker wrote something that is not a protocol message"
                ) from None
            if kind == "log":
                self._log(message.get("text"))
            elif kind == "call":
                self._call(message)
            elif kind == "done":
                result = message.get("result", MISSING)
                if result is not MISSING:
                    self._count(json.dumps(result, ensure_ascii=False))
                return RunOutput(list(self.logs), result)
            elif kind == "error":
                kind_name = message.get("kind", "exception")
                kind_name = (
                    kind_name
                    if kind_name in ("exception", "invalid-output", "output-limit")
                    else ("exception")
                )
                raise self._failure(kind_name, str(message.get("message", "")))
            else:
                raise self._failure("invalid-output", f"unknown message type {kind!r}")

    def _log(self, text: Any) -> None:
        if not isinstance(text, str):
            raise self._failure("invalid-output", "a log message without text")
        self._count(text)
        self.logs.append(text)

    def _count(self, text: str) -> None:
        self.output_bytes += len(text.encode("utf-8", "surrogatepass")) + 1
        if self.output_bytes > self.limits.output_bytes:
            raise self._failure(
                "output-limit",
                f"the program printed or returned more than {self.limits.output_bytes} bytes",
            )

    def _call(self, message: dict[str, Any]) -> None:
        call_id, name = message.get("id"), message.get("name")
        if not isinstance(call_id, int) or not isinstance(name, str) or "args" not in message:
            raise self._failure("invalid-output", "a malformed tool call message")
        active = sum(1 for task in self.calls.values() if not task.done())
        if active >= self.limits.max_pending_calls:
            raise self._failure(
                "exception",
                f"more than {self.limits.max_pending_calls} tool calls were pending at once",
            )
        self.calls[call_id] = asyncio.ensure_future(self._answer(call_id, name, message["args"]))

    async def _answer(self, call_id: int, name: str, arguments: Any) -> None:
        try:
            value = await self.bindings.call(name, arguments)
            reply = {"type": "result", "id": call_id, "ok": True, "value": value}
        except ToolCallFailed as failure:
            reply = {
                "type": "result",
                "id": call_id,
                "ok": False,
                "name": name,
                "message": failure.message,
            }
        except Exception as error:
            reply = {
                "type": "result",
                "id": call_id,
                "ok": False,
                "name": name,
                "message": str(error) or type(error).__name__,
            }
        with contextlib.suppress(Exception):
            self._send(reply)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.writer is not None
        if not self.writer.is_closing():
            self.writer.write(
                (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
            )

    def _failure(self, kind: str, message: str) -> CodeRunFailed:
        return CodeRunFailed(kind, message, self.logs)

    async def _worker_gone(self) -> CodeRunFailed:
        """The channel closed before the program finished: how did the worker end?"""
        assert self.process is not None
        try:
            code = await asyncio.wait_for(self.process.wait(), 2)
        except TimeoutError:
            return self._failure(
                "invalid-output", "the worker closed its channel before the program finished"
            )
        stderr = await self._stderr_tail()
        if code == -signals.SIGXCPU or (code == -signals.SIGKILL and self._cpu_exhausted()):
            return self._failure(
                "timeout", f"the program used more than {self.limits.cpu_seconds} CPU seconds"
            )
        described = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        detail = f": {stderr}" if stderr else ""
        return self._failure(
            "worker-exit", f"the worker {described} before the program finished{detail}"
        )

    def _cpu_exhausted(self) -> bool:
        return False

    async def _stderr_tail(self) -> str:
        assert self.process is not None and self.process.stderr is not None
        try:
            data = await asyncio.wait_for(self.process.stderr.read(4096), 1)
        except (TimeoutError, Exception):
            return ""
        return data.decode("utf-8", "replace").strip()[-500:]

    async def _stop(self) -> None:
        """Kill the worker's whole process group and reap it; cancel calls still waiting."""
        process = self.process
        if process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signals.SIGKILL)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(process.wait(), 10)
            if process.stderr is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(process.stderr.read(), 1)
        for task in self.calls.values():
            if not task.done():
                task.cancel()
        if self.calls:
            await asyncio.gather(*self.calls.values(), return_exceptions=True)
