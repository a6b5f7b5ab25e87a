"""Killing a worker kills every process its launcher started, including one that moved to a
session of its own before arming its death signal (what bubblewrap's pid 1 does for a moment
after it is forked: a launcher killed then used to leave it running, adopted by init), and
a start cancelled at any point leaves no process and no descriptor behind. Bounds are counts
and generous waits for processes to finish dying, never a timing."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys

import psutil
import pytest

from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes import worker_pool as workers
from codegen.codemode.runtimes.worker_pool import READ, WRITE, Started, start_worker
from codegen.codemode.sandbox.launchers import Launcher, launcher
from support.descriptors import leaked_since, open_descriptors
from support.sandbox_checks import python_for

DETACHING_LAUNCHER = """\
import os, sys, time
child = os.fork()
if child == 0:
    os.setsid()  # out of the launcher's group, and no death signal armed yet
    os.write(int(sys.argv[2]), b'{"type": "ready"}\\n')
    time.sleep(600)
    os._exit(0)
os.close(int(sys.argv[2]))
os.waitpid(child, 0)
"""
"""A launcher whose child leaves its process group and says it is ready, then waits: the
shape of a sandbox launcher caught before its child armed PR_SET_PDEATHSIG."""

SILENT_LAUNCHER = DETACHING_LAUNCHER.replace("os.write(int(sys.argv[2])", "(lambda *_: 0)(0")
"""The same, but nothing ever says ready: the start is cancelled while it waits."""

PLAIN = Launcher("none", sys.executable, (), ())
LIMITS = RuntimeLimits()


def gone(pid: int) -> bool:
    """Ended (or a zombie), after a generous wait for a killed process to finish dying."""
    try:
        process = psutil.Process(pid)
        process.wait(timeout=30)
    except (psutil.NoSuchProcess, psutil.TimeoutExpired, psutil.ZombieProcess):
        pass
    except psutil.Error:
        return True
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def detached_child(root: int) -> int:
    """The launcher's child once it exists (polled a bounded number of times)."""
    for _ in range(2000):
        found = psutil.Process(root).children()
        if found:
            return found[0].pid
        await asyncio.sleep(0.01)
    raise AssertionError("the launcher never forked")


def test_disposing_a_worker_kills_a_child_that_left_the_group() -> None:
    async def scenario() -> tuple[int, Started]:
        started = await start_worker(PLAIN, ["-c", DETACHING_LAUNCHER, READ, WRITE], {}, LIMITS)
        child = await detached_child(started.process.pid)
        assert os.getpgid(child) != started.process.pid, "the child is in a group of its own"
        started.dispose()
        await started.process.wait()
        return child, started

    child, _ = asyncio.run(scenario())
    assert gone(child), "the detached child outlived its launcher"


def test_a_start_cancelled_while_waiting_for_ready_kills_the_detached_child() -> None:
    async def scenario() -> int:
        start = asyncio.ensure_future(
            start_worker(PLAIN, ["-c", SILENT_LAUNCHER, READ, WRITE], {}, LIMITS)
        )
        root = None
        earlier = {p.pid for p in psutil.Process().children()}  # other tests' servers
        for _ in range(2000):
            root = next((p for p in psutil.Process().children() if p.pid not in earlier), None)
            if root is not None and root.children():
                break
            await asyncio.sleep(0.01)
        assert root is not None
        child = await detached_child(root.pid)
        start.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await start
        return child

    child = asyncio.run(scenario())
    assert gone(child), "the detached child outlived a cancelled start"


@pytest.mark.parametrize("steps", range(8))
def test_a_start_cancelled_at_any_step_leaves_nothing(steps: int) -> None:
    """Cancelled after `steps` loop iterations: before, during and after the process is
    made; the process, once made, is killed, and every descriptor is closed."""

    earlier = {p.pid for p in psutil.Process().children(recursive=True)}  # other tests'

    def ours(zombies: bool = False) -> list[psutil.Process]:
        found = psutil.Process().children(recursive=True)
        return [p for p in found if p.pid not in earlier and (zombies or p.status() != "zombie")]

    async def scenario() -> dict[str, str]:
        before = open_descriptors()
        start = asyncio.ensure_future(
            start_worker(PLAIN, ["-c", DETACHING_LAUNCHER, READ, WRITE], {}, LIMITS)
        )
        for _ in range(steps):
            await asyncio.sleep(0)
        start.cancel()
        try:
            started = await start
        except asyncio.CancelledError:
            pass
        else:
            started.dispose()
        for _ in range(3000):  # until the killed processes are reaped
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if not others and not ours(zombies=True):
                break
            await asyncio.sleep(0.01)
        for _ in range(20):  # closed transports drop their pipes on a later loop step
            await asyncio.sleep(0)
        return before

    before = asyncio.run(scenario())
    leaked = leaked_since(before)
    assert not leaked, leaked
    assert ours() == []
    strays = [
        p
        for p in psutil.process_iter(["cmdline", "ppid"])
        if DETACHING_LAUNCHER[:40] in " ".join(p.info["cmdline"] or ()) and p.info["ppid"] == 1
    ]
    assert all(gone(p.pid) for p in strays), "a detached child outlived a cancelled start"


def test_kill_tree_of_a_group_already_gone_is_harmless() -> None:
    process = psutil.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    process.wait()
    workers.kill_tree(process.pid)  # neither raises nor touches anything else


@pytest.mark.slow
def test_bubblewrap_starts_cancelled_early_leave_no_sandbox_behind() -> None:
    """The real launcher: many starts cancelled within the first milliseconds (where
    bubblewrap's pid 1 has not armed its death signal yet), then no process whose command
    line is this test's is left, adopted by init or not."""
    chosen = launcher("bubblewrap", python_for("bubblewrap"))  # scripts/test installs bubblewrap
    mark = f"teardown-mark-{os.getpid()}"
    program = "import time\ntime.sleep(600)"

    async def scenario() -> None:
        for index in range(120):
            start = asyncio.ensure_future(
                start_worker(chosen, ["-I", "-S", "-c", program, mark, READ, WRITE], {}, LIMITS)
            )
            await asyncio.sleep(0.0005 * (index % 12))
            start.cancel()
            try:
                started = await start
            except (asyncio.CancelledError, OSError):
                continue
            started.dispose()
            await started.process.wait()
        await workers.cleanups_done()  # as a host does before its loop ends

    asyncio.run(scenario())
    left = [
        p for p in psutil.process_iter(["cmdline"]) if mark in " ".join(p.info["cmdline"] or ())
    ]
    survivors = [p for p in left if not gone(p.pid)]
    assert survivors == [], [(p.pid, p.name(), p.ppid(), p.status()) for p in survivors]


def test_cleanups_done_waits_for_a_start_cancelled_while_its_process_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A start cancelled while its process is being made returns at once; the process made
    after that is killed and its transport closed before `cleanups_done` returns, so a loop
    that ends then leaves no process running and no transport for the collector to close on
    a closed loop ("Event loop is closed")."""
    made: list[asyncio.subprocess.Process] = []
    spawn = workers._spawn

    async def slow_spawn(*args: object, **kwargs: object) -> asyncio.subprocess.Process:
        await asyncio.sleep(0.2)
        process = await spawn(*args, **kwargs)  # type: ignore[arg-type]
        made.append(process)
        return process

    monkeypatch.setattr(workers, "_spawn", slow_spawn)
    program = "import time\ntime.sleep(600)"

    async def scenario() -> None:
        start = asyncio.ensure_future(
            start_worker(PLAIN, ["-I", "-S", "-c", program, READ, WRITE], {}, LIMITS)
        )
        await asyncio.sleep(0.05)
        start.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await start
        assert made == []  # still being made
        await workers.cleanups_done()
        (process,) = made
        assert process.returncode is not None
        transport = process._transport  # type: ignore[attr-defined]
        assert transport.is_closing()

    asyncio.run(scenario())


class _Starting:
    """What `_ready` reads of a process that has not ended."""

    returncode = None
    stderr = None
    pid = -1


@pytest.mark.parametrize("turns", range(6))
def test_a_start_cancelled_as_ready_arrives_stays_cancelled(turns: int) -> None:
    """A cancel the task accepted is never lost, however close to the `ready` line it comes
    (Python 3.11's `wait_for` returned the line instead, and the cancelled run went on until
    its timeout)."""

    async def scenario() -> str:
        read, write = os.pipe()
        try:
            task = asyncio.ensure_future(workers._ready(_Starting(), read))  # type: ignore[arg-type]
            for _ in range(3):
                await asyncio.sleep(0)
            os.write(write, workers.READY)
            for _ in range(turns):
                await asyncio.sleep(0)
            accepted = task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                return "cancelled"
            return "lost" if accepted else "done before"
        finally:
            os.close(read)
            os.close(write)

    assert asyncio.run(scenario()) in ("cancelled", "done before")
