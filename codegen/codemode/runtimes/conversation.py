"""One run's conversation with its worker, whatever the worker's language: the start
message, logs, nested calls answered through the bindings, the result, every limit the host
enforces, and the teardown that leaves no process, descriptor or task behind.

The worker is started by the runtime (`worker_host.WorkerRuntime`, which this module sees only
through the `RunHost` protocol); `execute` takes it from there.
Messages are decoded strictly (`messages.decode_message`), so a forged one ends the run as
`invalid-output`; `calls` holds only unanswered calls, so `max_pending_calls` counts it and a
reused pending id is `invalid-output`; stderr is drained all through the run and only its
tail is kept, to explain a worker that exits early.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal as signals
from collections.abc import Awaitable, Callable, Coroutine
from typing import IO, Any, Protocol, TypeVar

from ..approval.pausing import PAUSER
from ..calls.cancellation import AbortSignal
from ..calls.offload import off_loop
from ..run_code.code_runtime import MISSING, Bindings, CodeRunFailed, RunOutput, ToolCallFailed
from ..run_code.run_limits import DESCRIPTORS, FRAME_SLACK, RuntimeLimits
from ..sandbox.cgroups import RunCgroup
from ..sandbox.launchers import Launcher
from .messages import FILE_BYTES, STDERR_TAIL, bounded_text, decode_message
from .worker_pool import Started, discard, kill, kill_tree

T = TypeVar("T")


class RunHost(Protocol):
    """What a run reads from the runtime that started its worker (`worker_host.WorkerRuntime`)."""

    limits: RuntimeLimits
    spawned: list[int]

    def explain_exit(self, code: int, stderr: str) -> tuple[str, str] | None: ...

    def _background(self, coroutine: Coroutine[Any, Any, None]) -> None: ...


def _encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")


LARGE_MESSAGE = 64 * 1024
"""A message at least this big is decoded in a thread: the event loop serves other runs."""


class WorkerRun:
    def __init__(
        self,
        runtime: RunHost,
        bindings: Bindings,
        signal: AbortSignal,
        chosen: Launcher,
        deadline: float,
    ) -> None:
        self.runtime = runtime
        self.deadline = deadline
        """The loop's time the run must end by (its timeout counted from when it was asked
        for, a wait for a slot included), moved on by the time its calls wait for the user."""
        self._paused = 0
        """How many of its calls wait for the user now (`pause`)."""
        self._paused_at = 0.0
        self._clock_moved = asyncio.Event()
        self.launcher = chosen
        self.cgroup: RunCgroup | None = None
        self.limits = runtime.limits
        self.bindings = bindings
        self.signal = signal
        self.logs: list[str] = []
        self.output_bytes = 0
        self.calls: dict[int, asyncio.Task[None]] = {}
        """The calls started and not answered yet, by the worker's id: its size is the
        number of pending calls."""
        self.tasks: set[asyncio.Task[Any]] = set()
        """Every task of this run not finished yet (each one's outcome is retrieved)."""
        self.process: asyncio.subprocess.Process | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.descriptors: set[int] = set()
        """Pipe ends the host still has to close itself."""
        self.files: list[IO[bytes]] = []
        self.read_transport: asyncio.ReadTransport | None = None
        self.write_transport: asyncio.WriteTransport | None = None
        self.stderr_tail = bytearray()
        self.drain: asyncio.Task[None] | None = None

    async def execute(self, program: str, start: asyncio.Task[Started]) -> RunOutput:
        """Run the program in the worker `start` gives. Whatever happens (a result, a
        failure, a cancellation at any await, starting included), the worker's group is
        killed and reaped, every pipe end is closed and every task of the run has finished
        with its outcome retrieved."""
        try:
            return await self._execute(program, start)
        finally:
            self._release()
            await self._reap()

    async def _execute(self, program: str, start: asyncio.Task[Started]) -> RunOutput:
        try:
            started = await start
        except asyncio.CancelledError:
            discard(start)
            raise
        except OSError as error:
            raise CodeRunFailed("worker-exit", f"the worker could not start: {error}") from None
        started.owned = True
        self.descriptors.update((started.to_worker, started.from_worker))
        self.process = started.process
        self.cgroup = started.cgroup
        self.runtime.spawned.append(started.process.pid)
        if started.process.stderr is not None:
            self.drain = self._task(self._drain_stderr(started.process.stderr))
        return await self._run(program, started.from_worker, started.to_worker)

    async def _run(self, program: str, from_worker_read: int, to_worker_write: int) -> RunOutput:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=self.limits.frame_bytes)
        read_pipe = self._adopt(from_worker_read, "rb")
        write_pipe = self._adopt(to_worker_write, "wb")
        self.read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), read_pipe
        )
        self.write_transport, write_protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, write_pipe
        )
        self.writer = asyncio.StreamWriter(self.write_transport, write_protocol, None, loop)
        self._send(
            {
                "type": "start",
                "program": program,
                "tools": list(self.bindings.names),
                "limits": {
                    "cpu_seconds": self.limits.cpu_seconds,
                    "memory_bytes": self.limits.memory_bytes,
                    "output_bytes": self.limits.output_bytes,
                    "argument_bytes": self.limits.argument_bytes,
                    **(
                        {
                            "processes": self.limits.processes,
                            "file_bytes": FILE_BYTES,
                            "descriptors": DESCRIPTORS,
                        }
                        if self.launcher.sandboxed
                        else {}
                    ),
                },
            }
        )
        token = PAUSER.set(self)  # the calls' tasks, made from here on, inherit it
        try:
            talk = self._task(self._converse(reader))
        finally:
            PAUSER.reset(token)
        stop = self._task(self.signal.wait())
        while True:
            self._clock_moved.clear()
            moved = self._task(self._clock_moved.wait())
            left = None if self._paused else max(0.0, self.deadline - loop.time())
            done, _ = await asyncio.wait(
                {talk, stop, moved}, timeout=left, return_when=asyncio.FIRST_COMPLETED
            )
            if moved not in done:
                moved.cancel()
            if talk in done:
                return talk.result()
            if stop in done:
                raise CodeRunFailed(
                    "abort", f"the run was cancelled ({self.signal.reason})", self.logs
                )
            if not done:
                raise CodeRunFailed(
                    "timeout",
                    f"the program ran longer than {self.limits.timeout:g} seconds",
                    self.logs,
                )

    def pause(self) -> Callable[[], None]:
        """Stop the run's wall clock while one of its calls waits for the user
        (`approval.pausing`); the returned function starts it again, moving the deadline
        by the time it stood still once no call waits."""
        loop = asyncio.get_running_loop()
        if not self._paused:
            self._paused_at = loop.time()
        self._paused += 1
        self._clock_moved.set()
        resumed = False

        def resume() -> None:
            nonlocal resumed
            if resumed:
                return
            resumed = True
            self._paused -= 1
            if not self._paused:
                self.deadline += loop.time() - self._paused_at
            self._clock_moved.set()

        return resume

    # --- resources ---------------------------------------------------------------------------

    def _close(self, fd: int) -> None:
        if fd in self.descriptors:
            self.descriptors.discard(fd)
            os.close(fd)

    def _adopt(self, fd: int, mode: str) -> IO[bytes]:
        """A file object for one of the host's ends; it owns the descriptor from now on."""
        file: IO[bytes] = os.fdopen(fd, mode, buffering=0)
        self.descriptors.discard(fd)
        self.files.append(file)
        return file

    def _task(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: the run reports its failures itself

    def _release(self) -> None:
        """Synchronously: kill the worker's group, cancel the run's tasks, close the
        transports and every pipe end. Nothing here awaits, so a second cancellation cannot
        interrupt it."""
        process = self.process
        if process is not None and process.returncode is None:
            kill_tree(process.pid)
        elif process is not None:
            # Even once the worker is reaped: its group lives on while a child of it does
            # (Linux does not reuse a pid that still names a group).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signals.SIGKILL)
        for task in list(self.tasks):
            if task is not self.drain:
                task.cancel()
        # a transport the worker's end of the pipe already closed has closed itself
        if self.write_transport is not None and not self.write_transport.is_closing():
            self.write_transport.abort()
        if self.read_transport is not None and not self.read_transport.is_closing():
            self.read_transport.close()
        for file in self.files:
            with contextlib.suppress(OSError):
                file.close()
        for fd in list(self.descriptors):
            self._close(fd)

    async def _reap(self) -> None:
        """Wait for the run's tasks to finish (bounded); the worker, already killed, is
        reaped in the background (`WorkerRuntime.aclose` waits for that), so a run does not
        wait for its sandbox to be torn down."""
        pending = [task for task in self.tasks if task is not self.drain]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        if self.process is not None or self.drain is not None:
            self.runtime._background(self._bury())

    async def _bury(self) -> None:
        """Reap the killed worker, end the stderr drain, remove the cgroup, and close the
        worker's transport, whatever happens: cancelled (the loop is shutting down), it
        still finishes the reap, briefly, so nothing is left to a closed loop."""
        try:
            if self.process is not None:
                try:
                    await asyncio.wait_for(self.process.wait(), 10)
                except asyncio.CancelledError:
                    with contextlib.suppress(BaseException):
                        await asyncio.wait_for(self.process.wait(), 2)
                    raise
                except Exception:
                    pass
            if self.drain is not None and not self.drain.done():
                # stderr reaches its end when the last process holding it has died
                await asyncio.wait({self.drain}, timeout=1)
        finally:
            if self.drain is not None:
                self.drain.cancel()
            if self.process is not None:
                kill(self.process)  # gone by now: this closes its transport's pipes
            if self.cgroup is not None:
                cgroup, self.cgroup = self.cgroup, None
                try:
                    await cgroup.dispose()
                except asyncio.CancelledError:
                    cgroup.kill_and_remove(wait=0.5)
                    raise

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        """Read the worker's stderr as it comes, so raw writes to it never block the worker,
        keeping only the last `STDERR_TAIL` bytes."""
        tail = self.stderr_tail
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return
            tail += chunk
            if len(tail) > STDERR_TAIL:
                del tail[:-STDERR_TAIL]

    # --- the conversation --------------------------------------------------------------------

    async def _converse(self, reader: asyncio.StreamReader) -> RunOutput:
        while True:
            try:
                line = await reader.readuntil(b"\n")
            except asyncio.IncompleteReadError:
                raise await self._worker_gone() from None
            except asyncio.LimitOverrunError:
                raise self._failure(
                    "invalid-output",
                    f"the worker sent a message larger than {self.limits.frame_bytes} bytes (a "
                    f"tool call's arguments may have at most {self.limits.argument_bytes} "
                    f"bytes, printed output {self.limits.output_bytes})",
                ) from None
            try:
                if len(line) >= LARGE_MESSAGE:
                    message = await asyncio.to_thread(decode_message, line)
                else:
                    message = decode_message(line)
                kind = message["type"] if isinstance(message, dict) else None
            except (ValueError, KeyError, TypeError):
                kind = None
            if kind is None:
                raise self._failure(
                    "invalid-output", "the worker wrote something that is not a protocol message"
                )
            if kind == "log":
                self._log(message.get("text"))
            elif kind in ("call", "discover"):
                self._call(message, len(line))
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

    def _call(self, message: dict[str, Any], size: int) -> None:
        """A tool call, or (`discover`) a question `op` to `catalog`: counted and answered
        alike."""
        discover = message["type"] == "discover"
        call_id, name = message.get("id"), message.get("op" if discover else "name")
        if type(call_id) is not int or not isinstance(name, str) or "args" not in message:
            what = "catalog" if discover else "tool call"
            raise self._failure("invalid-output", f"a malformed {what} message")
        if size > self.limits.argument_bytes + FRAME_SLACK:
            # the worker checks first; a message past it was written around the worker
            raise self._failure(
                "invalid-output",
                f"a tool call of {size} bytes (arguments may have at most "
                f"{self.limits.argument_bytes} bytes)",
            )
        if call_id in self.calls:
            raise self._failure(
                "invalid-output", f"the worker reused the id {call_id} of a pending tool call"
            )
        if len(self.calls) >= self.limits.max_pending_calls:
            raise self._failure(
                "exception",
                f"more than {self.limits.max_pending_calls} tool calls were pending at once",
            )
        answer = self.bindings.call
        if discover:
            answer, name = self._ask_catalog, f"catalog.{name}"
        self.calls[call_id] = self._task(self._answer(call_id, name, message["args"], answer))

    async def _answer(
        self, call_id: int, name: str, arguments: Any, answer: Callable[[str, Any], Awaitable[Any]]
    ) -> None:
        """Answer one call (`name` and its arguments) with `answer`."""
        try:
            value = await answer(name, arguments)
            reply = {"type": "result", "id": call_id, "ok": True, "value": value}
        except Exception as error:
            message = (
                error.message
                if isinstance(error, ToolCallFailed)
                else str(error) or type(error).__name__
            )
            message = bounded_text(message, self.limits.output_bytes)
            reply = {"type": "result", "id": call_id, "ok": False, "name": name, "message": message}
        finally:
            self.calls.pop(call_id, None)  # answered (or cancelled): no longer pending
        with contextlib.suppress(Exception):
            self._write(await off_loop(_encode, reply, weight=reply.get("value")))

    async def _ask_catalog(self, name: str, arguments: Any) -> Any:
        """A question `catalog.<op>` to the bindings' catalog."""
        if self.bindings.discover is None:
            raise ToolCallFailed(name, "this host offers no catalog to search")
        return await self.bindings.discover(name.removeprefix("catalog."), arguments)

    def _send(self, message: dict[str, Any]) -> None:
        self._write(_encode(message))

    def _write(self, data: bytes) -> None:
        if self.writer is not None and not self.writer.is_closing():
            self.writer.write(data)

    def _failure(self, kind: str, message: str) -> CodeRunFailed:
        return CodeRunFailed(kind, bounded_text(message, self.limits.output_bytes), self.logs)

    async def _worker_gone(self) -> CodeRunFailed:
        """The channel closed before the program finished: how did the worker end?"""
        assert self.process is not None
        try:
            code = await asyncio.wait_for(self.process.wait(), 2)
        except TimeoutError:
            return self._failure(
                "invalid-output", "the worker closed its channel before the program finished"
            )
        stderr = await self._stderr_text()
        if self.launcher.sandboxed and code > 128:
            code = -(code - 128)  # the sandbox reports a signal as 128 + its number
        if code == -signals.SIGXCPU:
            return self._failure(
                "timeout", f"the program used more than {self.limits.cpu_seconds} CPU seconds"
            )
        if self.cgroup is not None and self.cgroup.out_of_memory():
            held = (self.cgroup.memory_limit or 0) // (1024 * 1024)
            return self._failure(
                "exception",
                f"the program ran out of memory (a run may hold {held} MB, its /tmp included)",
            )
        tail = bytes(self.stderr_tail).decode("utf-8", "replace")
        explained = self.runtime.explain_exit(code, tail)
        if explained is not None:
            return self._failure(*explained)
        described = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        detail = f": {stderr}" if stderr else ""
        return self._failure(
            "worker-exit", f"the worker {described} before the program finished{detail}"
        )

    async def _stderr_text(self) -> str:
        """The end of what the worker wrote to its stderr (all of it once the drain ends)."""
        if self.drain is not None and not self.drain.done():
            await asyncio.wait({self.drain}, timeout=1)
        return bytes(self.stderr_tail).decode("utf-8", "replace").strip()[-500:]
