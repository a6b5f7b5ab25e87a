"""Looking for processes the tests started: whether one is still running, and which
run_code workers, compilers (or sandbox launchers) are left."""

from __future__ import annotations

import contextlib
import os
import signal
import time

import psutil

WORKER_MARK = "The Python run_code worker"
"""In every worker's command line (its source is passed with `-c`)."""
NSBOOT_MARK = "The `namespaces` sandbox"
"""In the command line of the `namespaces` sandbox's launcher."""
TS_WORKER_MARK = "typescript_worker.js"
"""In every TypeScript worker's command line (the script Node runs)."""
TSC_MARK = "tsc_globals.d.ts"
"""In the command line of every TypeScript 7 compiler (the global types it is given) and of
its bubblewrap launcher."""
ORPHAN_GRACE = 10.0
"""Seconds an orphaned worker gets to finish dying before it counts as left behind."""


def running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def left_processes(
    marks: tuple[str, ...] = (WORKER_MARK, NSBOOT_MARK, TS_WORKER_MARK, TSC_MARK),
) -> list[psutil.Process]:
    """Running processes whose command line holds one of `marks` and that are this test
    process's descendants or orphans (adopted by init, as an escaped process would be); a
    worker of another test process running in parallel is neither."""
    found: list[psutil.Process] = []
    orphans: list[psutil.Process] = []
    for process in psutil.process_iter(["cmdline", "status", "ppid"]):
        try:
            line = " ".join(process.info["cmdline"] or ())
            if process.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if not any(mark in line for mark in marks):
                continue
            ours = any(parent.pid == os.getpid() for parent in process.parents())
        except (psutil.Error, TypeError):
            continue
        if ours:
            found.append(process)
        elif process.info["ppid"] in (0, 1):
            orphans.append(process)
    # An orphan may be another test process's sandbox on its way out (its parent just
    # killed); one that escaped is still there after the grace period.
    _, alive = psutil.wait_procs(orphans, timeout=ORPHAN_GRACE)
    return found + [process for process in alive if running(process.pid)]


def process_group_gone(pid: int) -> bool:
    """No process of the group runs: the group is empty, or holds only zombies waiting for
    init to reap them (a sandbox launcher's children, orphaned when it was killed)."""
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pid and fields[0] != "Z":  # state, ppid, pgrp
            return False
    return True


def sweep_group(pid: int, grace: float = 0.5) -> None:
    """End whatever is left of a process group: SIGTERM, a short wait, SIGKILL (a test that
    fails never leaves a server behind)."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        pass
    deadline = time.monotonic() + grace
    while not process_group_gone(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
