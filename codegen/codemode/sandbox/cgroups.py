"""Each sandboxed run's control group: a process count and a memory bound for everything the
run's processes hold, where the host can make one.

`RunCgroup.create` makes one folder per run (`codegen-<host pid>-<n>`) under this process's
own cgroup, on cgroup v2 (pids and memory enabled for children) or v1 (its `pids` and
`memory` hierarchies); either controller is used when it can be, and none when the host
may not create cgroups (then rlimits alone bound the run: see `sandbox/launchers.py`). The memory
bound counts the run's files in its tmpfs too; swap is refused to it, and on v2 an
out-of-memory kill takes the whole run.

A run's folders are removed once its processes are gone. None is left behind: every folder
this process made is removed when it exits (`atexit`, after killing what is left in it),
and the first run of a process sweeps away the empty folders of hosts that died without
cleaning up (a `kill -9`, or a SIGTERM nobody handled).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import signal
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..run_code.run_limits import DESCRIPTORS, RuntimeLimits
from .launchers import TMP_BYTES, children

MIB = 1024 * 1024
_IDS = itertools.count(1)
_NAME = re.compile(r"codegen-(\d+)-\d+")
_LIVE: set[Path] = set()
"""Every folder this process made and has not removed yet."""
_LOCK = threading.Lock()


@dataclass(frozen=True)
class _Parent:
    """Where one controller's run folders go, and which cgroup version it is."""

    directory: Path
    version: int


@cache
def _own_cgroups() -> dict[str, str]:
    """controller -> this process's cgroup path ("" for the v2 hierarchy)."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                found[controller] = path
    return found


def _try_child(directory: Path, files: dict[str, str]) -> bool:
    probe = directory / f"codegen-probe-{os.getpid()}"
    try:
        probe.mkdir()
        for name, value in files.items():
            (probe / name).write_text(value)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


PROBES = {"pids": {"pids.max": "1"}, "memory": {}}


@cache
def parents() -> dict[str, _Parent]:
    """controller ("pids", "memory") -> where this process may create a child that the
    controller governs; a controller missing here is not available."""
    own = _own_cgroups()
    found: dict[str, _Parent] = {}
    v2 = own.get("")
    if v2 is not None:
        for base in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
            directory = base / v2.lstrip("/")
            try:
                enabled = (directory / "cgroup.subtree_control").read_text().split()
            except OSError:
                continue
            for controller, files in PROBES.items():
                if controller in enabled and _try_child(directory, files):
                    found.setdefault(controller, _Parent(directory, 2))
    for controller, files in PROBES.items():
        path = own.get(controller)
        if controller in found or path is None:
            continue
        directory = Path("/sys/fs/cgroup") / controller / path.lstrip("/")
        if _try_child(directory, files):
            found[controller] = _Parent(directory, 1)
    return found


@dataclass
class RunCgroup:
    """The folders of one run (one on v2, one per controller on v1) and its limits."""

    folders: list[Path] = field(default_factory=list)
    pids_limit: int | None = None
    memory_limit: int | None = None
    memory_folder: Path | None = None
    version: int = 2

    @classmethod
    def for_run(cls, limits: RuntimeLimits) -> RunCgroup | None:
        """A run's cgroup: `limits.processes`, and `run_memory`."""
        return cls.create(limits.processes, run_memory(limits))

    @classmethod
    def create(cls, pids_limit: int, memory_bytes: int | None = None) -> RunCgroup | None:
        """The run's cgroup with the limits the host can set, or None if it can set none."""
        available = parents()
        if not available:
            return None
        _sweep_once()
        name = f"codegen-{os.getpid()}-{next(_IDS)}"
        run = cls()
        made: dict[Path, Path] = {}
        try:
            for controller, parent in sorted(available.items()):
                if controller == "memory" and memory_bytes is None:
                    continue
                folder = made.get(parent.directory)
                if folder is None:
                    folder = parent.directory / name
                    folder.mkdir()
                    with _LOCK:
                        _LIVE.add(folder)
                    made[parent.directory] = folder
                    run.folders.append(folder)
                run.version = parent.version
                if controller == "pids":
                    (folder / "pids.max").write_text(str(pids_limit))
                    run.pids_limit = pids_limit
                elif memory_bytes is not None:
                    _limit_memory(folder, parent.version, memory_bytes)
                    run.memory_limit = memory_bytes
                    run.memory_folder = folder
        except OSError:
            run.remove()
            return None
        return run if run.folders else None

    def add(self, root_pid: int) -> None:
        """Move `root_pid` and every descendant in. Each process is moved before its
        children are listed, so a child forked meanwhile is either listed or born inside
        (the worker itself waits for its program, so it forks nothing yet)."""
        pending = [root_pid]
        while pending:
            pid = pending.pop()
            for folder in self.folders:
                with contextlib.suppress(OSError):
                    (folder / "cgroup.procs").write_text(str(pid))
            pending.extend(children(pid))

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the run for want of memory."""
        if self.memory_folder is None:
            return False
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            text = (self.memory_folder / name).read_text()
        except OSError:
            return False
        match = re.search(r"^oom_kill (\d+)", text, re.MULTILINE)
        return match is not None and int(match.group(1)) > 0

    def processes(self) -> list[int]:
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return sorted(found)

    def remove(self) -> bool:
        """Remove the folders; False while processes are still in one."""
        for folder in list(self.folders):
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                return False
            self.folders.remove(folder)
            with _LOCK:
                _LIVE.discard(folder)
        return True

    def kill_and_remove(self, wait: float = 2.0) -> bool:
        """SIGKILL whatever is still inside, then remove the folders (waiting up to `wait`
        seconds for the processes to be gone)."""
        deadline = time.monotonic() + wait
        while not self._killed_and_removed() and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self.folders

    async def dispose(self, wait: float = 5.0) -> bool:
        """`kill_and_remove` without blocking the event loop."""
        import asyncio

        deadline = time.monotonic() + wait
        while not self._killed_and_removed() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return not self.folders

    def _killed_and_removed(self) -> bool:
        for pid in self.processes():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return self.remove()


def _limit_memory(folder: Path, version: int, limit: int) -> None:
    if version == 2:
        (folder / "memory.max").write_text(str(limit))
        with contextlib.suppress(OSError):
            (folder / "memory.swap.max").write_text("0")
        with contextlib.suppress(OSError):
            (folder / "memory.oom.group").write_text("1")
        return
    (folder / "memory.limit_in_bytes").write_text(str(limit))
    with contextlib.suppress(OSError):  # present only with swap accounting
        (folder / "memory.memsw.limit_in_bytes").write_text(str(limit))


def run_memory(limits: RuntimeLimits) -> int:
    """A run's memory cgroup limit: its processes' memory and its `/tmp`."""
    return limits.memory_bytes + TMP_BYTES


def run_memory_bound(limits: RuntimeLimits) -> tuple[int, str]:
    """The most memory one sandboxed run can hold on this host, and how it is held there:
    the memory cgroup's limit (its processes, its kernel buffers and its `/tmp`), or,
    without one, what the rlimits add up to: each process's address space, the kernel
    buffers of its open descriptors (and of as many more in flight between them), and the
    `/tmp`. Memory that no rlimit counts (anonymous files, System V shared memory and
    message queues) the system-call filter refuses."""
    if "memory" in parents():
        total = run_memory(limits)
        return total, f"a memory cgroup holds each run to {total // MIB} MiB, its /tmp included"
    buffers = DESCRIPTORS * (limits.processes + 1) * descriptor_buffer_bytes()
    total = limits.processes * limits.memory_bytes + buffers + TMP_BYTES
    return total, (
        f"no memory cgroup can be made here: a run may hold {limits.processes} processes "
        f"of {limits.memory_bytes // MIB} MiB of address space, {buffers // MIB} MiB in the "
        f"kernel buffers of their {DESCRIPTORS} descriptors each, and {TMP_BYTES // MIB} MiB "
        f"of /tmp ({total // MIB} MiB; lower `processes` or `memory_bytes` to lower it, "
        "or give codegen a memory cgroup)"
    )


def descriptor_buffer_bytes() -> int:
    """The most data one open descriptor can hold in kernel buffers here: a pipe's largest
    buffer (`fs.pipe-max-size`) or a local socket's largest send buffer (twice
    `net.core.wmem_max`, as the kernel doubles what `SO_SNDBUF` asks for)."""
    found = []
    for path, factor, fallback in (
        ("/proc/sys/fs/pipe-max-size", 1, 1024 * 1024),
        ("/proc/sys/net/core/wmem_max", 2, 212992),
    ):
        try:
            found.append(int(Path(path).read_text().split()[0]) * factor)
        except (OSError, ValueError, IndexError):
            found.append(fallback * factor)
    return max(found)


_SWEPT = False


def _sweep_once() -> None:
    """Remove the empty run folders whose host process is gone (once per process)."""
    global _SWEPT
    with _LOCK:
        if _SWEPT:
            return
        _SWEPT = True
    for parent in {p.directory for p in parents().values()}:
        with contextlib.suppress(OSError):
            for entry in os.scandir(parent):
                match = _NAME.fullmatch(entry.name)
                if match is None or not entry.is_dir(follow_symlinks=False):
                    continue
                if os.path.exists(f"/proc/{match.group(1)}"):
                    continue
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)  # refused while processes are inside


def remove_all(wait: float = 2.0) -> None:
    """Kill what is left in this process's run folders and remove them (a forked child
    inherits the list, never the folders: it leaves them to their owner)."""
    mine = str(os.getpid())
    with _LOCK:
        folders = [f for f in _LIVE if (m := _NAME.fullmatch(f.name)) and m.group(1) == mine]
    if folders:
        RunCgroup(folders=folders).kill_and_remove(wait)


atexit.register(remove_all)
