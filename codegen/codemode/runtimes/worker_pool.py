"""Starting run_code workers in their sandbox, and the one spare kept ready.

A worker is started with its two channel pipes as the only descriptors it inherits besides
0-2, through the sandbox's launcher (`sandbox/launchers.py`), and moved into a pids cgroup when the
host can make one. It then waits for its program, so it can be started before a run needs
it: `SparePool` keeps one started ahead of the next run and hands each worker to exactly
one run (a worker is never reused).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signals
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from ..run_code.run_limits import RuntimeLimits
from ..sandbox.cgroups import RunCgroup
from ..sandbox.launchers import Launcher, children

READ, WRITE = "{read}", "{write}"
"""Placeholders for the worker's channel descriptors in its arguments."""


@dataclass
class Started:
    """A worker waiting for its program, and the host's ends of its channel."""

    process: asyncio.subprocess.Process
    to_worker: int
    from_worker: int
    cgroup: RunCgroup | None
    loop: asyncio.AbstractEventLoop
    run_as: tuple[int, int] | None = None
    """The host uid and gid its sandbox runs as, when the host is root."""
    owned: bool = field(default=False)
    """True once a run has taken it (and with it the duty to dispose of it)."""

    def dispose(self) -> None:
        """Kill the worker's group and close the host's ends; the process is reaped by its
        loop's child watcher, and the cgroup removed once its processes are gone (both in
        `cleanups_done`)."""
        kill(self.process)
        for fd in (self.to_worker, self.from_worker):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.cgroup is not None:
            cgroup, self.cgroup = self.cgroup, None
            if not self.loop.is_closed():
                clean_up(self.loop, cgroup.dispose())


def kill(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the worker's whole tree (`kill_tree`) and close its asyncio transport: a
    transport left to the garbage collector would try to close itself on a loop that may be
    gone. Not before the loop's child watcher has reaped the process: closing polls the
    process, which would reap it first, and the watcher would then report it as an unknown
    child (returncode 255)."""
    if process.returncode is not None:  # reaped: its pid (and group) may be another's now
        _close_transport(process)
        return
    kill_tree(process.pid)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        _close_transport(process)  # no loop will reap it: close it as it is
        return
    clean_up(loop, _close_once_reaped(process))


_CLEANUPS: set[asyncio.Task[Any]] = set()
"""What is left of disposed workers: transports waiting for their killed process to be
reaped, cgroups for their processes to be gone."""


def clean_up(loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, Any]) -> None:
    """Run `work` (what is left of a disposed process) on `loop`; `cleanups_done` waits
    for it."""
    track(loop.create_task(work))


def track(task: asyncio.Task[Any]) -> None:
    """Make `cleanups_done` wait for `task` too."""
    _CLEANUPS.add(task)
    task.add_done_callback(_CLEANUPS.discard)


async def _close_once_reaped(process: asyncio.subprocess.Process) -> None:
    try:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(process.wait(), 30)
    finally:
        _close_transport(process)


async def cleanups_done() -> None:
    """Until the transports and cgroups of disposed workers on this loop are gone, and the
    processes of starts cancelled while being made exist and are killed (a cleanup may
    schedule another: waited for too)."""
    loop = asyncio.get_running_loop()
    while pending := [t for t in _CLEANUPS if t.get_loop() is loop and not t.done()]:
        await asyncio.gather(*pending, return_exceptions=True)


def _close_transport(process: asyncio.subprocess.Process) -> None:
    transport = getattr(process, "_transport", None)  # asyncio keeps it private
    if transport is not None:
        with contextlib.suppress(Exception):
            transport.close()


def kill_tree(leader: int) -> None:
    """SIGKILL the process group `leader` leads and every process descending from it.

    The group alone is not enough: a sandbox launcher may move its child to a session of
    its own (bubblewrap's `--new-session` does, for pid 1 of the sandbox's pid namespace)
    and rely on PR_SET_PDEATHSIG to kill it with the launcher. That signal is armed by the
    child a moment after it is forked; a launcher killed in that moment (a run cancelled
    while its worker starts, on a loaded machine) leaves the child running for good. So the
    group is stopped first, which freezes the leader's set of children (a fork under way
    when the stop arrives is restarted, so its child belongs to the frozen set or is never
    made); once the leader has stopped (or ended), its descendants are killed, then the
    group. Killing pid 1 of a pid namespace kills everything in it."""
    try:
        os.killpg(leader, signals.SIGSTOP)
    except (ProcessLookupError, PermissionError):
        return
    with contextlib.suppress(ChildProcessError, OSError):
        # Returns once the leader (this process's child) has stopped or ended; leaves its
        # status to be reaped by whoever waits for it.
        os.waitid(os.P_PID, leader, os.WSTOPPED | os.WEXITED | os.WNOWAIT)
    for pid in descendants(leader):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signals.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, signals.SIGKILL)


def descendants(root: int) -> list[int]:
    """Every process below `root` (children first), as /proc shows them now."""
    found: list[int] = []
    pending = children(root)
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children(pid))
    return found


async def start_worker(
    launcher: Launcher,
    arguments: Sequence[str],
    environment: dict[str, str],
    limits: RuntimeLimits,
) -> Started:
    """Start one worker. `arguments` follow the interpreter; the arguments `READ` and
    `WRITE` stand for the worker's ends of its channel. In a sandbox the worker's tree
    moves into a cgroup of its own once ready: at most `limits.processes` processes, and
    `limits.memory_bytes` plus its `/tmp` for the whole run. Cancelled, it leaves no process
    and no descriptor behind."""
    to_worker_read, to_worker_write = os.pipe()
    try:
        from_worker_read, from_worker_write = os.pipe()
    except OSError:
        os.close(to_worker_read)
        os.close(to_worker_write)
        raise
    ours = [to_worker_write, from_worker_read]
    theirs = [to_worker_read, from_worker_write]
    """The worker's ends, closed by `_spawn` once the process is made (or never will be)."""
    numbers = {READ: str(to_worker_read), WRITE: str(from_worker_write)}
    identity: list[tuple[int, int] | None] = [None]
    spawning = asyncio.ensure_future(
        _spawn(launcher, [numbers.get(a, a) for a in arguments], environment, theirs, identity)
    )
    try:
        # Shielded: cancelled while the process is being made, asyncio would kill the
        # launcher alone (not its tree); the process is killed here once it exists instead.
        process = await asyncio.shield(spawning)
    except BaseException:
        for fd in ours:
            os.close(fd)
        spawning.add_done_callback(lambda done: _kill_spawned(done, theirs))
        track(spawning)  # a loop that ends after `cleanups_done` leaves no process being made
        raise
    try:
        await _ready(process, from_worker_read)
    except BaseException:
        kill(process)
        for fd in ours:
            os.close(fd)
        raise
    cgroup = RunCgroup.for_run(limits) if launcher.sandboxed else None
    if cgroup is not None:
        cgroup.add(process.pid)  # the whole tree exists now, and forks nothing until its run
    loop = asyncio.get_running_loop()
    return Started(process, to_worker_write, from_worker_read, cgroup, loop, identity[0])


async def _spawn(
    launcher: Launcher,
    arguments: list[str],
    environment: dict[str, str],
    inherited: list[int],
    identity: list[tuple[int, int] | None],
) -> asyncio.subprocess.Process:
    """Start the worker through `launcher` with `inherited` as the only descriptors it gets
    besides 0-2, then close (and forget) the host's copies of them; `identity[0]` becomes
    the host uid and gid its sandbox runs as (a root host's)."""
    spawn = None
    try:
        spawn = launcher.spawn(arguments, environment)
        identity[0] = spawn.run_as
        return await asyncio.create_subprocess_exec(
            *spawn.argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
            pass_fds=(*inherited, *spawn.descriptors),
            close_fds=True,
            start_new_session=True,
            **spawn.credentials,
        )
    finally:
        if spawn is not None:
            spawn.close()
        _close_all(inherited)


def _kill_spawned(
    spawning: asyncio.Future[asyncio.subprocess.Process], inherited: list[int]
) -> None:
    """The end of a spawn whose start was cancelled meanwhile: kill the process's tree, and
    close the worker's ends if the spawn was cancelled before it ran."""
    _close_all(inherited)
    if spawning.cancelled() or spawning.exception() is not None:
        return
    kill(spawning.result())


def _close_all(descriptors: list[int]) -> None:
    while descriptors:
        with contextlib.suppress(OSError):
            os.close(descriptors.pop())


READY = b'{"type": "ready"}\n'
READY_TIMEOUT = 60.0
"""Seconds a worker may take to start (generous: a loaded machine starts slowly)."""


async def _ready(process: asyncio.subprocess.Process, fd: int) -> None:
    """Wait for the worker's `ready` line; `OSError` (with what it wrote to stderr) if it
    ends or says anything else first."""
    loop = asyncio.get_running_loop()
    arrived: asyncio.Future[bytes] = loop.create_future()
    received = bytearray()

    def readable() -> None:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError as error:
            if not arrived.done():
                arrived.set_exception(error)
            return
        if arrived.done():
            return
        if not chunk:
            arrived.set_exception(EOFError())
            return
        received.extend(chunk)
        if b"\n" in received or len(received) >= len(READY):
            arrived.set_result(bytes(received))

    os.set_blocking(fd, False)
    loop.add_reader(fd, readable)
    try:
        # `asyncio.timeout`, not `wait_for`: on Python 3.11 `wait_for` returns the result
        # when the run is cancelled just as `ready` arrives, and the cancelled run goes on
        async with asyncio.timeout(READY_TIMEOUT):
            said = await arrived
    except (EOFError, OSError):
        said = b""
    except TimeoutError:
        raise OSError(f"the worker did not start within {READY_TIMEOUT:g} seconds") from None
    finally:
        loop.remove_reader(fd)
        os.set_blocking(fd, True)
    if said == READY:
        return
    if process.returncode is None:
        kill_tree(process.pid)
    stderr = b""
    if process.stderr is not None:
        with contextlib.suppress(Exception):
            stderr = await asyncio.wait_for(process.stderr.read(4096), 2)
    detail = stderr.decode("utf-8", "replace").strip()[-500:]
    raise OSError(f"the worker ended before it was ready{': ' + detail if detail else ''}")


class Spare(Protocol):
    """What a spare is: a started process waiting for its run (a worker, or a held one-shot
    command), owned by the run that takes it."""

    process: asyncio.subprocess.Process
    owned: bool

    def dispose(self) -> None: ...


SpareT = TypeVar("SpareT", bound=Spare)


class SparePool(Generic[SpareT]):
    """At most one spare started ahead of the next run, on the loop that will use it."""

    def __init__(self) -> None:
        self.pending: asyncio.Task[SpareT] | None = None

    def take(self) -> asyncio.Task[SpareT] | None:
        """The spare (started or starting) for this run, or None; the caller owns it."""
        task, self.pending = self.pending, None
        if task is None:
            return None
        if task.get_loop() is not asyncio.get_running_loop():
            discard(task)  # made for a loop that is gone: its process cannot serve here
            return None
        return task

    def refill(self, start: asyncio.Task[SpareT]) -> None:
        discard(self.pending)
        self.pending = start

    async def wait(self) -> None:
        """Until the spare (if any) has started."""
        if self.pending is not None and self.pending.get_loop() is asyncio.get_running_loop():
            await asyncio.wait({self.pending})

    async def aclose(self) -> None:
        """Stop the spare and wait until its process is reaped and its pipes are closed."""
        task, self.pending = self.pending, None
        if task is None:
            return
        if task.get_loop() is not asyncio.get_running_loop():
            discard(task)
            return
        if not task.done():
            task.cancel()
        await asyncio.wait({task})
        if task.cancelled() or task.exception() is not None:
            return
        started = task.result()
        if started.owned:
            return
        started.dispose()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(started.process.wait(), 5)
        if started.process.stderr is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(started.process.stderr.read(), 1)


def discard(task: asyncio.Task[SpareT] | None) -> None:
    """Dispose of a spare nobody will use: now if it has started, else when it does."""
    if task is None:
        return

    def dispose(done: asyncio.Task[SpareT]) -> None:
        if done.cancelled() or done.exception() is not None:
            return
        started = done.result()
        if not started.owned:
            started.dispose()

    if task.done():
        dispose(task)
    elif task.get_loop().is_closed():
        return
    else:
        task.add_done_callback(dispose)
        task.cancel()


class ShutdownGuard:
    """Runs `close` when an event loop shuts down. A spare worker, and a worker still being
    reaped, outlive the run that made them; a host that never closes its runtime would leave
    them to a loop that is gone. The guard is an async generator registered on each loop the
    runtime runs on: `asyncio.run` (and any host that calls `loop.shutdown_asyncgens()`)
    finishes it, and its `finally` runs `close`."""

    def __init__(self, close: Callable[[], Awaitable[None]]) -> None:
        self.close = close
        self.loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, object] = (
            weakref.WeakKeyDictionary()
        )

    async def watch(self) -> None:
        loop = asyncio.get_running_loop()
        if loop in self.loops:
            return
        watcher = self._until_shutdown()
        await watcher.__anext__()  # registered with the loop from its first step on
        self.loops[loop] = watcher

    async def _until_shutdown(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await self.close()
