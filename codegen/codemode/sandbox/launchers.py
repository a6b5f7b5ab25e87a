"""How a run_code worker is contained by the operating system: the `sandbox` setting.

- `bubblewrap`: the worker runs under `bwrap` (Debian/Ubuntu package `bubblewrap`) with new
  user, pid, network, IPC, UTS and mount namespaces, `--die-with-parent`, `--new-session`, a
  read-only view of only the interpreter and the libraries it loads, a read-only `/dev` of
  a few device nodes, a fresh `/proc` that shows only the sandbox, a private size-limited
  tmpfs at `/tmp` as its working directory, and no network.
- `auto` (the default): bubblewrap, probed once per process; where it does not work, every
  run fails with `CODE_RUN_FAILED` saying why and what to do. `auto` never falls back to
  anything home-made.
- `namespaces`: an explicit choice only. The same isolation built by `nsboot`, codegen's own
  program that makes the namespaces with the raw system calls (for hosts where bubblewrap
  cannot run, or cannot reach the worker's files when the host is root). It is tested with
  the same escape probes as bubblewrap, but it is home-made: bubblewrap, a widely used and
  reviewed tool, is the default.
- `none`: no isolation: the worker runs as the host's user and sees what the host sees.
  An explicit opt-out only.

In both sandboxes:
- nothing runs as the host's uid 0. A host that runs as root starts each sandbox as a
  fresh unprivileged host uid and gid of its own (`identities.py`, with no supplementary
  groups): the uid 0 of a user namespace the host's root made is the host's root, whom the
  kernel lets write its global settings (`/proc/sys/kernel/core_pattern` runs a program as
  root), and a uid shared with other processes (nobody's) would let them read the worker's
  memory and share its per-user kernel quotas;
- the kernel's writable or revealing `/proc` entries are covered (`PROC_DIRS` by empty
  read-only mounts, `PROC_FILES` by `/dev/null`);
- the system-call filter of `seccomp.py` applies (PR_SET_NO_NEW_PRIVS with it), without
  epoll for a worker that waits without it (`WorkerImage.epoll`);
- the worker gets a pids limit (RLIMIT_NPROC, set inside the user namespace, where it
  counts only the sandbox's processes; and a pids cgroup where the host can create one),
  a memory cgroup for the whole run where the host can create one (`cgroups.py`),
  RLIMIT_FSIZE, RLIMIT_NOFILE, PR_SET_PDEATHSIG and only its channel file descriptors.
"""

from __future__ import annotations

import contextlib
import json
import logging
import marshal
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from ..._support.program_lookup import find_program
from .identities import STRANGER, fresh_identity
from .seccomp import filter_program

SandboxMode = Literal["auto", "bubblewrap", "namespaces", "none"]
MODES: tuple[SandboxMode, ...] = ("auto", "bubblewrap", "namespaces", "none")

TMP_BYTES = 64 * 1024 * 1024
"""Size of the sandbox's writable `/tmp` (its only writable file system)."""

LIBRARY_DIRS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/local/lib", "/lib", "/lib64")
"""Where the dynamic loader finds the interpreter's shared libraries (bound read-only when
they exist; a symlink such as Debian's `/lib -> usr/lib` is recreated as a symlink)."""

LOADER_FILES = ("/etc/ld.so.cache",)

PROC_DIRS = ("sys", "irq", "bus", "fs", "acpi", "scsi", "asound", "driver", "pressure")
"""`/proc` folders covered by an empty read-only mount: the kernel's settings (`sys`, which
a uid that owns them may write), hardware, file-system and host load details."""

PROC_FILES = (
    "sysrq-trigger",
    "kcore",
    "kmsg",
    "kallsyms",
    "keys",
    "key-users",
    "latency_stats",
    "timer_list",
    "timer_stats",
    "sched_debug",
    "kpagecount",
    "kpageflags",
    "kpagecgroup",
    "config.gz",
    "mtrr",
    "slabinfo",
    "vmallocinfo",
)
"""`/proc` files covered by `/dev/null`: the machine's trigger, memory, log, keys and
scheduler internals."""

INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: "
    "`dnf install bubblewrap`) and allow unprivileged user namespaces "
    "(`sysctl kernel.unprivileged_userns_clone=1`, and on Ubuntu 24.04+ "
    "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`)"
)
CHOICE_HINT = (
    "or choose a sandbox explicitly: --sandbox namespaces (codegen's own namespace "
    "sandbox, without bubblewrap) or --sandbox none (no isolation)"
)

log = logging.getLogger("codegen.codemode.sandbox.launchers")


class SandboxUnavailable(Exception):
    """The requested sandbox cannot be built on this machine; the message says why and how
    to install what is missing."""


def check_mode(value: object) -> SandboxMode:
    for mode in MODES:
        if value == mode:
            return mode
    known = ", ".join(json.dumps(m) for m in MODES)
    raise ValueError(f"unknown sandbox {value!r}; known: {known}")


def host_is_root() -> bool:
    return os.geteuid() == 0


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
    epoll: bool = True
    """Whether the worker waits with epoll (Node's event loop does, and so does Go's runtime;
    the Python worker polls with `poll`, so its filter refuses epoll: see `seccomp.EPOLL`)."""
    answer: str = "ok"
    """What `probe` makes `executable` print."""


Link = tuple[str, str]
"""A symbolic link a sandbox holds: (where, what it points to)."""

Hold = tuple[int, int]
"""Descriptors that hold a sandboxed command before it starts: (ready, go). The sandbox
closes every copy of `ready` once its command waits (bubblewrap first writes its child's
pid there), and the command starts only once the host writes a byte to `go`."""


@dataclass
class Spawn:
    """One start of a worker: its command line, the descriptors the launcher reads (the
    host closes its copies once the process exists) and the host credentials to start as."""

    argv: list[str]
    descriptors: list[int] = field(default_factory=list)
    credentials: dict[str, Any] = field(default_factory=dict)
    """`user`, `group` and `extra_groups` for `subprocess`, when the launcher drops root."""
    run_as: tuple[int, int] | None = None
    """The host uid and gid this sandbox runs as, when the launcher drops root."""

    def close(self) -> None:
        while self.descriptors:
            with contextlib.suppress(OSError):
                os.close(self.descriptors.pop())


@dataclass(frozen=True)
class Launcher:
    """How to start one worker: `spawn(arguments, environment)` wraps its command line."""

    mode: Literal["bubblewrap", "namespaces", "none"]
    executable: str
    """The worker's program, a real path (inside the sandbox it is bound at the same path)."""
    read_only: tuple[str, ...]
    symlinks: tuple[tuple[str, str], ...]
    booter: str = sys.executable
    """The Python interpreter that runs `nsboot` (outside the sandbox it builds)."""
    drops_root: bool = False
    """A root host: each sandbox runs as a fresh host uid and gid (`identities.py`)."""
    epoll: bool = True
    """See `WorkerImage.epoll`."""

    def spawn(
        self,
        arguments: Sequence[str],
        environment: dict[str, str],
        links: Sequence[Link] = (),
        hold: Hold | None = None,
    ) -> Spawn:
        """The command line and what goes with it; the caller must `close()` the result.
        In a sandbox, `links` are symbolic links of this start only (in its `/tmp`, say),
        and `hold` keeps the command from starting until the host lets it (`Hold`)."""
        command = [self.executable, *arguments]
        if self.mode == "none":
            if links or hold:
                raise ValueError("links and holds are a sandbox's")
            return Spawn(command)
        run_as = fresh_identity() if self.drops_root else None
        if self.mode == "bubblewrap":
            return _bwrap_spawn(self, environment, command, run_as, links, hold)
        config = {
            "root": "/tmp",
            "read_only": list(self.read_only),
            "symlinks": dict((*self.symlinks, *links)),
            "tmp_bytes": TMP_BYTES,
            "proc_dirs": list(_present(PROC_DIRS)),
            "proc_files": list(_present(PROC_FILES)),
            "seccomp": (filter_program(epoll=self.epoll) or b"").hex(),
            "run_as": None if run_as is None else list(run_as),
            "hold": None if hold is None else list(hold),
            "command": command,
            "environment": environment,
        }
        argv = [self.booter, "-I", "-S", "-c", nsboot_source(), marshal.dumps(config).hex()]
        return Spawn(argv, run_as=run_as)

    @property
    def sandboxed(self) -> bool:
        return self.mode != "none"


@cache
def _present(names: tuple[str, ...]) -> tuple[str, ...]:
    """The `/proc` entries this kernel has (a cover over a missing one would fail)."""
    return tuple(name for name in names if os.path.lexists(f"/proc/{name}"))


def _bwrap_spawn(
    launcher: Launcher,
    environment: dict[str, str],
    command: list[str],
    run_as: tuple[int, int] | None,
    links: Sequence[Link] = (),
    hold: Hold | None = None,
) -> Spawn:
    bwrap = find_program("bwrap") or "bwrap"
    spawn = Spawn([], run_as=run_as)
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
    try:
        for name, value in environment.items():
            argv += ["--setenv", name, value]
        # The private `/tmp` first: a path the worker needs that lives under the host's
        # `/tmp` (a virtual environment or checkout there) is then bound into it.
        argv += ["--size", str(TMP_BYTES), "--perms", "1777", "--tmpfs", "/tmp"]
        for path in launcher.read_only:
            if launcher.drops_root and _carried(path):
                handle = os.open(f"/proc/self/fd/{_copy_of(path)}", os.O_RDONLY | os.O_CLOEXEC)
                spawn.descriptors.append(handle)  # a new description: read from its start
                argv += ["--perms", "0444", "--ro-bind-data", str(handle), path]
            else:
                argv += ["--ro-bind", path, path]
        for link, target in (*launcher.symlinks, *links):
            argv += ["--symlink", target, link]
        # /dev holds a few device nodes and nothing writable (bubblewrap's /dev is a tmpfs
        # with no size limit, /dev/shm in it)
        argv += ["--dev", "/dev", "--remount-ro", "/dev"]
        argv += ["--proc", "/proc"]
        for name in _present(PROC_DIRS):
            argv += ["--size", "4096", "--perms", "0555", "--tmpfs", f"/proc/{name}"]
            argv += ["--remount-ro", f"/proc/{name}"]
        for name in _present(PROC_FILES):
            argv += ["--ro-bind", "/dev/null", f"/proc/{name}"]
        argv += ["--chdir", "/tmp", "--remount-ro", "/"]  # the root tmpfs: mount points only
        program = filter_program(epoll=launcher.epoll)
        if program is not None:
            read, write = os.pipe()
            spawn.descriptors.append(read)
            try:
                os.write(write, program)  # far below a pipe's buffer
            finally:
                os.close(write)
            argv += ["--seccomp", str(read)]
        if hold is not None:
            # bubblewrap writes its child's pid to `ready` and closes it; the child waits
            # for `go` once the sandbox is built, before it starts anything
            argv += ["--info-fd", str(hold[0]), "--block-fd", str(hold[1])]
    except BaseException:
        spawn.close()
        raise
    if run_as is not None:
        uid, gid = run_as
        spawn.credentials = {"user": uid, "group": gid, "extra_groups": []}
    spawn.argv = [*argv, "--", *command]
    return spawn


CARRIED_BYTES = 1024 * 1024
"""A file this small that the sandbox's uid cannot reach is carried in as data instead
(bubblewrap on a root host: the TypeScript worker script of a package installed under a
folder closed to other users)."""


def _carried(path: str) -> bool:
    return (
        unreachable(path, *STRANGER) is not None
        and os.path.isfile(path)
        and os.path.getsize(path) <= CARRIED_BYTES
    )


@cache
def _copy_of(path: str) -> int:
    """An anonymous in-memory copy of a small file, made once per process."""
    with open(path, "rb") as source:
        data = source.read(CARRIED_BYTES + 1)
    copy = os.memfd_create(f"codegen:{os.path.basename(path)}", os.MFD_CLOEXEC)
    os.write(copy, data)
    return copy


@cache
def nsboot_source() -> str:
    return (Path(__file__).resolve().parent / "nsboot.py").read_text(encoding="utf-8")


def _asked(python: str, code: str) -> str:
    """What another interpreter prints for `code` (isolated, without site; `sys` imported)."""
    return subprocess.run(
        [python, "-I", "-S", "-c", f"import sys; {code}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout


@cache
def _interpreter_prefixes(python: str) -> tuple[str, ...]:
    """Where the interpreter keeps its standard library (its `sys.base_prefix` and
    `sys.base_exec_prefix`), asked of the interpreter itself unless it is this one."""
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        found = {sys.base_prefix, sys.base_exec_prefix}
    else:
        found = set(_asked(python, "print(sys.base_prefix, sys.base_exec_prefix)").split())
    return tuple(sorted(os.path.realpath(prefix) for prefix in found))


INTERPRETER_DIRS = ("/usr/local/bin", "/usr/bin", "/bin")
"""Where a system's own Python interpreters live."""


def reachable_twin(python: str) -> str | None:
    """On a root host, where bubblewrap runs as a uid of its own: a Python interpreter of the same
    version as `python` (major and minor: the same language and standard library) that uid
    can reach, when `python` itself is closed to it (an interpreter installed under
    `/root`, as pyenv does); None when `python` is reachable, or no such twin exists. The
    worker needs only the standard library, so any build of the same version runs it."""
    if not host_is_root() or _unreachable_image(python) is None:
        return None
    version = _version(python)
    if version is None:
        return None
    for folder in INTERPRETER_DIRS:
        candidate = os.path.join(folder, f"python{version[0]}.{version[1]}")
        if (
            os.access(candidate, os.X_OK)
            and _version(candidate) == version
            and _unreachable_image(candidate) is None
        ):
            return candidate
    return None


def _unreachable_image(python: str) -> str | None:
    uid, gid = STRANGER
    try:
        image = python_image(python)
    except (OSError, subprocess.SubprocessError):
        return python
    for path in (image.executable, *image.paths):
        closed = unreachable(path, uid, gid)
        if closed is not None:
            return closed
    return None


@cache
def _version(python: str) -> tuple[int, int] | None:
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return sys.version_info[0], sys.version_info[1]
    try:
        major, minor = _asked(python, "print(*sys.version_info[:2])").split()
        return int(major), int(minor)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def python_image(python: str) -> WorkerImage:
    """The sandbox image of a Python interpreter: itself and its standard library."""
    real = os.path.realpath(python)
    paths: set[str] = set()
    for prefix in _interpreter_prefixes(real):
        lib = os.path.join(prefix, "lib")
        if prefix in ("/usr", "/usr/local", "/"):
            continue  # its lib is one of the library directories below
        paths.add(lib if os.path.isdir(lib) else prefix)
    probe = ("-I", "-S", "-c", "print('ok')")
    return WorkerImage(real, tuple(sorted(paths)), probe, real, epoll=False)


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
    """The launcher of any worker for `mode`, probing once per (mode, image, host uid);
    raises `SandboxUnavailable` when the mode cannot work here."""
    return _launcher(mode, image, host_is_root())


@cache
def _launcher(mode: SandboxMode, image: WorkerImage, drops_root: bool) -> Launcher:
    with _PROBE_LOCK:
        if mode == "none":
            return Launcher("none", image.executable, (), (), image.booter)
        paths, links = _view(image)
        tried: list[str] = []
        for kind in ("bubblewrap",) if mode == "auto" else (mode,):
            candidate = Launcher(
                kind, image.executable, paths, links, image.booter, drops_root, image.epoll
            )
            problem = _probe(candidate, image.probe, image.answer)
            if problem is None:
                log.debug("run_code sandbox: %s", kind)
                if filter_program() is None:
                    log.warning(
                        "run_code sandbox: no system-call filter for %s; programs run without one",
                        os.uname().machine,
                    )
                return candidate
            tried.append(f"{kind}: {problem}")
        chosen = "the default run_code sandbox" if mode == "auto" else "the run_code sandbox"
        hints = [INSTALL_HINT] if any("not installed" in why for why in tried) else []
        hints.append(CHOICE_HINT)
        raise SandboxUnavailable(
            f"{chosen} does not work on this machine ({'; '.join(tried)}); {'; '.join(hints)}"
        )


def unreachable(path: str, uid: int, gid: int) -> str | None:
    """The first folder on the way to `path` (or `path` itself) that `uid` and `gid`, with
    no other group, may not enter or read, by its mode bits; None when all of it is open."""
    parts = os.path.realpath(path).split("/")
    for depth in range(1, len(parts) + 1):
        here = "/".join(parts[:depth]) or "/"
        try:
            info = os.stat(here)
        except OSError:
            return here
        need = 0o1 if depth < len(parts) or os.path.isdir(here) else 0o4
        shift = 6 if info.st_uid == uid else 3 if info.st_gid == gid else 0
        if not (info.st_mode >> shift) & need:
            return here
    return None


def _probe(candidate: Launcher, arguments: Sequence[str], answer: str = "ok") -> str | None:
    """None when a trivial program runs in the sandbox (it prints `answer`), else why not."""
    if candidate.mode == "bubblewrap" and find_program("bwrap") is None:
        return "`bwrap` is not installed (looked for in PATH's absolute folders)"
    if candidate.mode == "bubblewrap" and candidate.drops_root:
        for path in candidate.read_only:
            closed = unreachable(path, *STRANGER)
            if closed is not None and not _carried(path):
                return (
                    "on a root host bwrap runs as an unprivileged uid of its own, which "
                    f"cannot reach {path} ({closed} is closed to other users); install the "
                    "worker's program where every user can read it"
                )
    if not sys.platform.startswith("linux"):
        return "Linux namespaces are not available on this system"
    spawn = candidate.spawn(arguments, {"LANG": "C.UTF-8"})
    probe: subprocess.CompletedProcess[str]
    try:
        probe = subprocess.run(
            spawn.argv,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            pass_fds=tuple(spawn.descriptors),
            **spawn.credentials,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    finally:
        spawn.close()
    if probe.returncode == 0 and probe.stdout.strip() == answer:
        return None
    said = (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
    return said[:300]


def children(pid: int) -> list[int]:
    """The process ids of `pid`'s children (of every thread of it)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
                found.extend(int(child) for child in children)
    return found
