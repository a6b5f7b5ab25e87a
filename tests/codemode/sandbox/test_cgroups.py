"""A run's cgroups: made with the limits the host can set, removed after the run, at the
host's exit, and, when a host was killed before it could, by the next host. A host that may
create no cgroup (an unprivileged one) makes none, and states the looser memory bound."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codegen.codemode.run_code.run_limits import DESCRIPTORS, RuntimeLimits
from codegen.codemode.sandbox import cgroups
from codegen.codemode.sandbox.cgroups import (
    RunCgroup,
    descriptor_buffer_bytes,
    parents,
    run_memory_bound,
)
from codegen.codemode.sandbox.launchers import TMP_BYTES
from conftest import ROOT


def folders_of(pid: int) -> list[Path]:
    found = []
    for parent in {p.directory for p in parents().values()}:
        found += [p for p in parent.iterdir() if p.name.startswith(f"codegen-{pid}-")]
    return found


def test_a_run_cgroup_holds_its_limits_and_goes_away() -> None:
    run = RunCgroup.create(7, 300 * 1024 * 1024)
    if not parents():
        assert run is None  # rlimits alone bound the run
        return
    assert run is not None
    made = list(run.folders)
    try:
        if "pids" in parents():
            assert run.pids_limit == 7
            pids = [f for f in run.folders if (f / "pids.max").exists()]
            assert pids and (pids[0] / "pids.max").read_text().strip() == "7"
        if "memory" in parents():
            assert run.memory_limit == 300 * 1024 * 1024 and run.memory_folder is not None
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        run.add(sleeper.pid)
        assert sleeper.pid in run.processes()
        assert not run.remove()  # a process is inside
        assert run.kill_and_remove()
        assert sleeper.wait(10) == -signal.SIGKILL
    finally:
        run.kill_and_remove()
    assert made and not any(folder.exists() for folder in made)


def test_the_memory_bound_is_stated_as_it_holds() -> None:
    limits = RuntimeLimits(memory_bytes=256 * 1024 * 1024, processes=10)
    bound, how = run_memory_bound(limits)
    if "memory" in parents():
        assert bound == limits.memory_bytes + TMP_BYTES and "memory cgroup" in how
    else:
        buffers = DESCRIPTORS * 11 * descriptor_buffer_bytes()
        assert bound == 10 * limits.memory_bytes + buffers + TMP_BYTES
        assert "no memory cgroup" in how and f"{buffers // 1024 // 1024} MiB in the kernel" in how


def test_a_descriptor_holds_at_most_a_pipe_or_a_doubled_socket_buffer() -> None:
    """The per-descriptor bound is read from this kernel's settings: what a full pipe and a
    full local socket (SO_SNDBUF asked as large as can be) really hold stays within it."""
    import fcntl
    import socket

    bound = descriptor_buffer_bytes()
    read, write = os.pipe()
    left, right = socket.socketpair()
    try:
        with contextlib.suppress(OSError):
            fcntl.fcntl(write, 1031, 1 << 30)  # F_SETPIPE_SZ
        left.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
        os.set_blocking(write, False)
        left.setblocking(False)
        for send in (lambda data: os.write(write, data), left.send):
            held = 0
            with contextlib.suppress(BlockingIOError):
                while True:
                    held += send(b"x" * 65536)
            with contextlib.suppress(BlockingIOError):
                while True:
                    held += send(b"x" * 512)
            assert 0 < held <= bound
    finally:
        for fd in (read, write):
            os.close(fd)
        left.close()
        right.close()


HOST = """
import asyncio, os, sys
sys.path.insert(0, sys.argv[1])
from codegen.codemode.runtimes.python import PythonRuntime
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.run_code.code_runtime import Bindings
from codegen.codemode.calls.cancellation import AbortController

async def main():
    runtime = PythonRuntime(RuntimeLimits(timeout=120), sandbox="namespaces", spare=False)
    async def call(name, args):
        print("running", flush=True)
        await asyncio.sleep(120)
    await runtime.run("await tools.wait({})", Bindings(("wait",), call), AbortController().signal)

asyncio.run(main())
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["exit", "kill"])
def test_a_hosts_folders_never_stay(how: str) -> None:
    """A host that exits (atexit) or is killed outright (its sandbox dies with it) leaves
    no folder behind once the next host has made one of its own."""
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(ROOT)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert host.stdout is not None and host.stdout.readline() == "running\n"
        made = folders_of(host.pid)
        assert bool(made) == bool(parents()), "a run has its folder where cgroups can be made"
        host.send_signal(signal.SIGINT if how == "exit" else signal.SIGKILL)
        host.wait(180)  # a bound on a hang, not a speed: the machine may be loaded
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
    if how == "exit":
        assert folders_of(host.pid) == []  # removed at the host's exit
        return
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # its sandbox dies with it; then the folder empties
        cgroups._SWEPT = False
        cgroups._sweep_once()
        if not folders_of(host.pid):
            break
        time.sleep(0.1)
    assert folders_of(host.pid) == []
