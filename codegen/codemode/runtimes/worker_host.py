"""The host side of every run_code runtime: one fresh worker per run, started through the
sandbox's launcher, one spare kept ready ahead of the next run, and the killed workers of
finished runs reaped in the background.

A language is a subclass that says only how to make its launcher (`_make_launcher`, which
probes the sandbox and whatever the worker needs) and how to start its worker (`_start`);
optionally it turns a program into what its worker runs before the worker gets it
(`_prepare`, by the run's deadline), names a trivial program for `check` (`trial_program`),
and explains an early exit that means something in that language (`explain_exit`).
Everything else (the pipe protocol, limits, pending calls, cancellation, reaping) is
`conversation.WorkerRun`, shared.

`check` is for a host that should refuse to start rather than fail every run (`codegen
serve`): it makes the launcher and runs a trivial program in a worker of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from ..calls.cancellation import AbortController, AbortSignal
from ..run_code.code_runtime import Bindings, CodeRunFailed, RunOutput, ToolCallFailed
from ..run_code.run_limits import RuntimeLimits
from ..sandbox.launchers import Launcher, SandboxMode, SandboxUnavailable, check_mode
from .conversation import WorkerRun
from .worker_pool import ShutdownGuard, SparePool, Started, cleanups_done


class RuntimeUnavailable(Exception):
    """What a worker needs (an interpreter, a compiler) is missing or too old here; the
    message says what and how to install it."""


class WorkerRuntime:
    """Runs each program in a fresh worker, contained by the `sandbox` setting (see
    `sandbox/launchers.py`; "auto" by default). With `spare` (the default), the next run's worker is
    started and sandboxed while the current one runs; `aclose()` stops it."""

    language: str
    trial_program = "return 1"
    """A program that returns 1 in this language: `check` runs it."""

    def __init__(self, limits: RuntimeLimits | None, sandbox: str, spare: bool) -> None:
        self.limits = limits or RuntimeLimits()
        self.sandbox: SandboxMode = check_mode(sandbox)
        self.spare = spare
        self.spawned: list[int] = []
        """Process ids of the workers started so far (each led its own process group)."""
        self._launcher: Launcher | None = None
        self._pool: SparePool[Started] = SparePool()
        self._burying: set[asyncio.Task[None]] = set()
        """Killed workers being reaped after their runs returned."""
        self._guard = ShutdownGuard(self.aclose)
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    # --- what a language provides ------------------------------------------------------------

    def _make_launcher(self) -> Launcher:
        """The launcher for this runtime's worker (called once, in a thread: probing starts
        processes); `SandboxUnavailable` or `RuntimeUnavailable` when it cannot work here."""
        raise NotImplementedError

    async def _start(self, chosen: Launcher) -> Started:
        """Start one worker that waits for its program."""
        raise NotImplementedError

    def _prepares(self) -> bool:
        """Whether `_prepare` turns programs into something else (once the launcher is made)."""
        return False

    async def _prepare(self, program: str) -> str:
        """The program as the worker takes it, made before the worker gets it (TypeScript 7's
        compiler, in the run's sandbox); `CodeRunFailed` when it cannot be (a syntax error)."""
        return program

    def explain_exit(self, code: int, stderr: str) -> tuple[str, str] | None:
        """(kind, message) for a worker that ended before its program finished (`code` as
        `Popen.returncode`; `stderr` the last `STDERR_TAIL` bytes it wrote), when the way it
        ended means something in this language; None for the generic `worker-exit`."""
        return None

    # --- shared ------------------------------------------------------------------------------

    async def run(self, program: str, bindings: Bindings, signal: AbortSignal) -> RunOutput:
        if signal.aborted:
            raise CodeRunFailed("abort", "the run was cancelled before it started")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.timeout
        async with self._slot(deadline):
            chosen = await self.launcher()
            program = await self._prepared(program, signal, deadline)
            start = self._pool.take() or asyncio.ensure_future(self._start(chosen))
            await self._guard.watch()
            if self.spare:
                self._pool.refill(asyncio.ensure_future(self._start(chosen)))
            run = WorkerRun(self, bindings, signal, chosen, deadline)
            return await run.execute(program, start)

    async def _prepared(self, program: str, signal: AbortSignal, deadline: float) -> str:
        """`_prepare(program)`, ended by the run's deadline or signal."""
        if not self._prepares():
            return program
        loop = asyncio.get_running_loop()
        work = asyncio.ensure_future(self._prepare(program))
        stop = asyncio.ensure_future(signal.wait())
        try:
            done, _ = await asyncio.wait(
                {work, stop},
                timeout=max(0.0, deadline - loop.time()),
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            for task in (work, stop):
                task.cancel()
            await asyncio.gather(work, stop, return_exceptions=True)
        if work in done:
            return work.result()
        if stop in done:
            raise CodeRunFailed("abort", f"the run was cancelled ({signal.reason})")
        raise CodeRunFailed(
            "timeout", f"the program ran longer than {self.limits.timeout:g} seconds"
        )

    @contextlib.asynccontextmanager
    async def _slot(self, deadline: float) -> AsyncIterator[None]:
        """One of `max_concurrent_runs` places on this loop, waited for until `deadline`."""
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            slots = self._slots[loop] = asyncio.Semaphore(self.limits.max_concurrent_runs)
        try:
            # not wait_for: cancelled as the slot comes free, it may keep the slot and drop
            # the cancellation (Python 3.11)
            async with asyncio.timeout_at(deadline):
                await slots.acquire()
        except TimeoutError:
            raise CodeRunFailed(
                "timeout",
                f"no run could start within {self.limits.timeout:g} seconds: "
                f"{self.limits.max_concurrent_runs} runs were going on",
            ) from None
        try:
            yield
        finally:
            slots.release()

    async def launcher(self) -> Launcher:
        """The launcher, made once; `CodeRunFailed` when the sandbox or the worker cannot
        work here."""
        try:
            return await self._made_launcher()
        except (SandboxUnavailable, RuntimeUnavailable) as error:
            raise CodeRunFailed("worker-exit", str(error)) from None

    async def _made_launcher(self) -> Launcher:
        if self._launcher is None:
            self._launcher = await asyncio.to_thread(self._make_launcher)
        return self._launcher

    async def check(self) -> None:
        """Make sure programs can run here before any does: make the launcher (the sandbox
        probed, the interpreter and whatever the worker needs found) and run
        `trial_program` in a worker of its own, as a run would (the spare is left alone).
        `RuntimeUnavailable` says what is wrong and what fixes it."""
        try:
            chosen = await self._made_launcher()
        except SandboxUnavailable as error:
            raise RuntimeUnavailable(str(error)) from None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.timeout
        signal = AbortController().signal
        try:
            program = await self._prepared(self.trial_program, signal, deadline)
            run = WorkerRun(self, Bindings((), _no_tools), signal, chosen, deadline)
            output = await run.execute(program, asyncio.ensure_future(self._start(chosen)))
        except CodeRunFailed as failure:
            raise RuntimeUnavailable(
                f"a trivial {self.language} program failed to run ({failure.kind}): "
                f"{failure.message}"
            ) from None
        finally:
            await self._settled()
        if output.result != 1:
            raise RuntimeUnavailable(
                f"a trivial {self.language} program returned {output.result!r}, not 1"
            )

    async def wait_spare(self) -> None:
        """Until the spare worker (if any) has started: for benchmarks and tests."""
        await self._pool.wait()

    def _background(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._burying.add(task)
        task.add_done_callback(self._burying.discard)

    async def aclose(self) -> None:
        """Stop the spare worker and wait until the workers of finished runs are reaped.
        Runs still going are not affected."""
        await self._pool.aclose()
        await self._settled()

    async def _settled(self) -> None:
        """Until the workers of finished runs are reaped and their cgroups removed."""
        if self._burying:
            await asyncio.gather(*list(self._burying), return_exceptions=True)
        await cleanups_done()


async def _no_tools(name: str, arguments: Any) -> Any:
    raise ToolCallFailed(name, "a trial program has no tools")
