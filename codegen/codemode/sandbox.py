"""How a run_code worker is contained by the operating system: the `sandbox` setting.

- `bubblewrap`: the worker runs under `bwrap` (Debian/Ubuntu package `bubblewrap`) with new
  user, pid, network, IPC, UTS and mount namespaces, `--die-with-parent`, `--new-session`, a
  read-only view of only the interpreter and the libraries it loads, a fresh `/proc` that
  shows only the sandbox, a private size-limited tmpfs at `/tmp` as its working directory,
  and no network.
- `namespaces`: the same isolation built by `nsboot` from unprivileged user namespaces with
  the raw syscalls, where bubblewrap is missing.
- `auto` (the default): the first of the two that works on this machine, probed once per
  process; if neither does, every run fails with `CODE_RUN_FAILED` naming what is missing.
- `none`: no isolation: the worker runs as the host's user and sees what the host sees.
  An explicit opt-out only.

In every sandboxed mode the worker also gets a pids limit (RLIMIT_NPROC, set inside the user
namespace, where it counts only the sandbox's processes; and a pids cgroup when the host can
create one, which is what holds when the host runs as root, whom RLIMIT_NPROC exempts),
RLIMIT_FSIZE, PR_SET_PDEATHSIG and only its channel file descriptors.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

SandboxMode = Literal["auto", "bubblewrap", "namespaces", "none"]
MODES: tuple[SandboxMode, ...] = ("auto", "bubblewrap", "namespaces", "none")

TMP_BYTES = 64 * 1024 * 1024
"""Size of the sandbox's writable `/tmp`."""

LIBRARY_DIRS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/local/lib", "/lib", "/lib64")
"""Where the dynamic loader finds the interpreter's shared libraries (bound read-only when
they exist; a symlink such as Debian's `/lib -> usr/lib` is recreated as a symlink)."""

LOADER_FILES = ("/etc/ld.so.cache",)

INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: "
    "`dnf install bubblewrap`) or allow unprivileged user namespaces "
    "(`sysctl kernel.unprivileged_userns_clone=1`, and on Ubuntu 24.04+ "
    '`sysctl kernel.apparmor_restrict_unprivileged_userns=0`); or set sandbox = "none" '
    "to run programs without isolation"
)

log = logging.getLogger("codegen.codemode.sandbox")


class SandboxUnavailable(Exception):
    """The requested sandbox cannot be built on this machine; the message says why and how
    to install what is missing."""


def check_mode(value: object) -> SandboxMode:
    for mode in MODES:
        if value == mode:
            return mode
    known = ", ".join(json.dumps(m) for m in MODES)
    raise ValueError(f"unknown sandbox {value!r}; known: {known}")


@dataclass(frozen=True)
class WorkerImage:
    """What a sandbox must hold for one kind of worker."""

    executable: str
    """The worker's program, a real path (inside the sandbox it is bound at the same path)."""
    paths: tuple[str, ...]
    """Read-only paths it needs besides itself and the shared libraries (real paths)."""
    probe: tuple[str, ...]
    """Arguments that make `executable` print `ok` and exit 0."""
    booter: str
    """The Python interpreter that runs `nsboot` for the `namespaces` sandbox."""


@dataclass(frozen=True)
class Launcher:
    """How to start one worker: `argv(arguments)` wraps the worker's command line."""

    mode: Literal["bubblewrap", "namespaces", "none"]
    executable: str
    """The worker's program, a real path (inside the sandbox it is bound at the same path)."""
    read_only: tuple[str, ...]
    symlinks: tuple[tuple[str, str], ...]
    booter: str = sys.executable
    """The Python interpreter that runs `nsboot` (outside the sandbox it builds)."""

    def argv(self, arguments: Sequence[str], environment: dict[str, str]) -> list[str]:
        command = [self.executable, *arguments]
        if self.mode == "none":
            return command
        if self.mode == "bubblewrap":
            return [*_bwrap_prefix(self, environment), *command]
        config = {
            "root": "/tmp",
            "read_only": list(self.read_only),
            "symlinks": dict(self.symlinks),
            "tmp_bytes": TMP_BYTES,
            "command": command,
            "environment": environment,
        }
        return [self.booter, "-I", "-S", "-c", nsboot_source(), json.dumps(config)]

    @property
    def sandboxed(self) -> bool:
        return self.mode != "none"


def _bwrap_prefix(launcher: Launcher, environment: dict[str, str]) -> list[str]:
    bwrap = shutil.which("bwrap") or "bwrap"
    argv = [
        bwrap,
        "--unshare-all",  # user, pid, network, IPC, UTS, mount (and cgroup) namespaces
        "--die-with-parent",
        "--new-session",
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--hostname",
        "sandbox",
        "--clearenv",
        "--cap-drop",
        "ALL",
    ]
    for name, value in environment.items():
        argv += ["--setenv", name, value]
    # The private `/tmp` first: a path the worker needs that lives under the host's `/tmp`
    # (a virtual environment or checkout there) is then bound into it, not hidden by it.
    argv += ["--size", str(TMP_BYTES), "--perms", "1777", "--tmpfs", "/tmp"]
    for path in launcher.read_only:
        argv += ["--ro-bind", path, path]
    for link, target in launcher.symlinks:
        argv += ["--symlink", target, link]
    argv += ["--dev", "/dev", "--proc", "/proc", "--chdir", "/tmp"]
    argv += ["--remount-ro", "/"]  # the root tmpfs holds only mount points
    return [*argv, "--"]


@cache
def nsboot_source() -> str:
    return (Path(__file__).resolve().parent / "nsboot.py").read_text(encoding="utf-8")


@cache
def _interpreter_prefixes(python: str) -> tuple[str, ...]:
    """Where the interpreter keeps its standard library (its `sys.base_prefix` and
    `sys.base_exec_prefix`), asked of the interpreter itself unless it is this one."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        found = {sys.base_prefix, sys.base_exec_prefix}
    else:
        asked = subprocess.run(
            [python, "-I", "-S", "-c", "import sys; print(sys.base_prefix, sys.base_exec_prefix)"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        found = set(asked.stdout.split())
    return tuple(sorted(os.path.realpath(prefix) for prefix in found))


def python_image(python: str) -> WorkerImage:
    """The sandbox image of a Python interpreter: itself and its standard library."""
    real = os.path.realpath(python)
    paths: set[str] = set()
    for prefix in _interpreter_prefixes(real):
        lib = os.path.join(prefix, "lib")
        if prefix in ("/usr", "/usr/local", "/"):
            continue  # its lib is one of the library directories below
        paths.add(lib if os.path.isdir(lib) else prefix)
    return WorkerImage(real, tuple(sorted(paths)), ("-I", "-S", "-c", "print('ok')"), real)


def _view(image: WorkerImage) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The read-only paths and symlinks of the sandbox's file system."""
    paths: set[str] = {image.executable, *image.paths}
    links: dict[str, str] = {}
    for directory in LIBRARY_DIRS:
        if os.path.islink(directory):
            links[directory] = os.readlink(directory)
        elif os.path.isdir(directory):
            paths.add(directory)
    paths.update(path for path in LOADER_FILES if os.path.isfile(path))
    ordered = sorted(paths, key=lambda p: (p.count("/"), p))
    kept: list[str] = []
    for path in ordered:  # a path inside one already bound needs no bind of its own
        if not any(path.startswith(parent.rstrip("/") + "/") for parent in kept):
            kept.append(path)
    return tuple(kept), tuple(sorted(links.items()))


def launcher(mode: SandboxMode, python: str) -> Launcher:
    """The launcher of a Python worker for `mode`, probing once per (mode, interpreter);
    raises `SandboxUnavailable` when the mode cannot work here."""
    return image_launcher(mode, python_image(python))


_PROBE_LOCK = threading.Lock()


def image_launcher(mode: SandboxMode, image: WorkerImage) -> Launcher:
    """The launcher of any worker for `mode`, probing once per (mode, image); raises
    `SandboxUnavailable` when the mode cannot work here."""
    return _launcher(mode, image)


@cache
def _launcher(mode: SandboxMode, image: WorkerImage) -> Launcher:
    with _PROBE_LOCK:
        if mode == "none":
            return Launcher("none", image.executable, (), (), image.booter)
        paths, links = _view(image)
        tried: list[str] = []
        for kind in ("bubblewrap", "namespaces") if mode == "auto" else (mode,):
            candidate = Launcher(kind, image.executable, paths, links, image.booter)
            problem = _probe(candidate, image.probe)
            if problem is None:
                log.debug("run_code sandbox: %s", kind)
                return candidate
            tried.append(f"{kind}: {problem}")
        raise SandboxUnavailable(
            f"no run_code sandbox works on this machine ({'; '.join(tried)}); {INSTALL_HINT}"
        )


def _probe(candidate: Launcher, arguments: Sequence[str]) -> str | None:
    """None when a trivial program runs in the sandbox, else why not."""
    if candidate.mode == "bubblewrap" and shutil.which("bwrap") is None:
        return "`bwrap` is not installed"
    if not sys.platform.startswith("linux"):
        return "Linux namespaces are not available on this system"
    argv = candidate.argv(arguments, {"LANG": "C.UTF-8"})
    try:
        probe = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if probe.returncode == 0 and probe.stdout.strip() == "ok":
        return None
    said = (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
    return said[:300]


# --- the pids cgroup ------------------------------------------------------------------------

PIDS_MAX = 64
"""Processes (and threads) one sandboxed run may have at once."""

_CGROUP_IDS = itertools.count(1)


@cache
def _pids_parent() -> Path | None:
    """A pids cgroup directory this process may create children in (v2 with the pids
    controller enabled for children, or v1's pids hierarchy), or None."""
    own = _own_cgroups()
    candidates: list[Path] = []
    v2 = own.get("")
    if v2 is not None:
        for base in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
            directory = base / v2.lstrip("/")
            controllers = directory / "cgroup.subtree_control"
            with contextlib.suppress(OSError):
                if "pids" in controllers.read_text().split():
                    candidates.append(directory)
    v1 = own.get("pids")
    if v1 is not None:
        candidates.append(Path("/sys/fs/cgroup/pids") / v1.lstrip("/"))
    for directory in candidates:
        probe = directory / f"codegen-probe-{os.getpid()}"
        try:
            probe.mkdir()
            (probe / "pids.max").write_text("1")
            probe.rmdir()
            return directory
        except OSError:
            with contextlib.suppress(OSError):
                probe.rmdir()
    return None


def _own_cgroups() -> dict[str, str]:
    """controller -> this process's cgroup path ("" for the v2 hierarchy)."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                found[controller] = path
    return found


class PidsCgroup:
    """One run's pids cgroup: created before the worker runs the program, removed after
    its processes are gone. `add` moves a process tree into it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def create(cls, limit: int = PIDS_MAX) -> PidsCgroup | None:
        parent = _pids_parent()
        if parent is None:
            return None
        directory = parent / f"codegen-{os.getpid()}-{next(_CGROUP_IDS)}"
        try:
            directory.mkdir()
            (directory / "pids.max").write_text(str(limit))
        except OSError:
            with contextlib.suppress(OSError):
                directory.rmdir()
            return None
        return cls(directory)

    def add(self, root_pid: int) -> None:
        """Move `root_pid` and every descendant into the cgroup. Each process is moved
        before its children are listed, so a child forked meanwhile is either listed or
        born inside (the worker itself waits for its program, so it forks nothing yet)."""
        pending = [root_pid]
        while pending:
            pid = pending.pop()
            with contextlib.suppress(OSError):
                (self.directory / "cgroup.procs").write_text(str(pid))
            pending.extend(children(pid))

    def remove(self) -> bool:
        """Remove the cgroup; False while processes are still in it."""
        try:
            self.directory.rmdir()
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True


def children(pid: int) -> list[int]:
    """The process ids of `pid`'s children (of every thread of it)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
                found.extend(int(child) for child in children)
    return found
