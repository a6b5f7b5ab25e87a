"""The `namespaces` sandbox: puts a command into new Linux namespaces with the raw syscalls,
where bubblewrap is missing. Standard library only; started as
`python -I -S -c <this file> CONFIG_JSON COMMAND...` and replaced by COMMAND at the end.

What it builds, in order (the same isolation as the bubblewrap sandbox):
1. a new user namespace (the caller's uid and gid appear as 0, so the rest needs no host
   privilege), and new mount, pid, network, IPC and UTS namespaces;
2. a fork: the child is pid 1 of the new pid namespace, a reaper that starts the command as
   pid 2 and ends with it; it dies with this process (PR_SET_PDEATHSIG), and when it dies
   the kernel kills everything else in the namespace;
3. in the child, a tmpfs root holding read-only binds of only the paths in CONFIG (the
   interpreter and the libraries it loads), a few device nodes, a fresh `/proc` that shows only
   the sandbox, and a size-limited tmpfs at `/tmp` as the working directory; `pivot_root`
   into it and the host's tree detached; no network but a loopback that is down;
4. a second, nested user namespace in which the command runs as uid 65534 with no
   capabilities over the mounts above (they belong to the outer namespace), and
   PR_SET_NO_NEW_PRIVS.

This process stays outside, waits for pid 1 and exits with its status; killing it kills the
sandbox. Any failure is one line on stderr and exit status 125, before the command runs.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import select
import signal
import stat
import sys
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38

SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
"""`pivot_root` has no libc wrapper; its number per architecture."""

STATVFS_FLAGS = {
    os.ST_RDONLY: MS_RDONLY,
    os.ST_NOSUID: MS_NOSUID,
    os.ST_NODEV: MS_NODEV,
    os.ST_NOEXEC: MS_NOEXEC,
}
"""A read-only remount in a user namespace must keep the locked flags of the source."""

DEVICES = ("null", "zero", "full", "random", "urandom")
NOBODY = 65534
FAILED = 125

libc = ctypes.CDLL(None, use_errno=True)


class SetupError(Exception):
    pass


def check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(number)}")


def write(path: str, text: str) -> None:
    try:
        with open(path, "w") as file:
            file.write(text)
    except OSError as error:
        raise SetupError(f"writing {path}: {error.strerror}") from None


def _bytes(value: str | None) -> bytes | None:
    return value.encode() if value is not None else None


def mount(
    source: str | None, target: str, kind: str | None, flags: int, data: str | None = None
) -> None:
    result = libc.mount(_bytes(source), _bytes(target), _bytes(kind), flags, _bytes(data))
    check(result, f"mounting {target}")


def bind_read_only(source: str, target: str) -> None:
    mount(source, target, None, MS_BIND | MS_REC)
    locked = 0
    for flag, mount_flag in STATVFS_FLAGS.items():
        if os.statvfs(source).f_flag & flag:
            locked |= mount_flag
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | locked)


def mountpoint(root: str, path: str, directory: bool) -> str:
    target = root + path
    os.makedirs(target if directory else os.path.dirname(target), exist_ok=True)
    if not directory and not os.path.exists(target):
        open(target, "w").close()
    return target


def build_root(config: dict[str, Any]) -> None:
    """Steps 3: the sandbox's file system, entered with `pivot_root`."""
    root = config["root"]
    # Each path is opened before the staging root covers the host's `root` (`/tmp`), so a
    # path that lives there (a virtual environment or checkout under `/tmp`) is still bound.
    sources = {path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path in config["read_only"]}
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    # The private `/tmp` before the binds, so binds of paths under `/tmp` land inside it.
    work = mountpoint(root, "/tmp", True)
    mount("tmpfs", work, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={config['tmp_bytes']}")
    for path, handle in sources.items():
        directory = stat.S_ISDIR(os.fstat(handle).st_mode)
        bind_read_only(f"/proc/self/fd/{handle}", mountpoint(root, path, directory))
        os.close(handle)
    for link, target in config.get("symlinks", {}).items():
        os.symlink(target, root + link)
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            mount(f"/dev/{name}", mountpoint(root, f"/dev/{name}", False), None, MS_BIND)
    proc = mountpoint(root, "/proc", True)
    mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir(root)
    os.mkdir(".host")
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise SetupError(f"pivot_root: unknown architecture {platform.machine()}")
    check(libc.syscall(number, b".", b".host"), "pivot_root")
    os.chdir("/")
    check(libc.umount2(b"/.host", MNT_DETACH), "detaching the host's tree")
    os.rmdir("/.host")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir("/tmp")
    check(libc.sethostname(b"sandbox", 7), "sethostname")


def drop_privileges() -> None:
    """Step 4: a nested user namespace where the command is uid 65534 and holds no
    capability over the sandbox's mounts, and no way to gain privileges."""
    check(libc.unshare(CLONE_NEWUSER), "unshare (nested user namespace)")
    write("/proc/self/setgroups", "deny")
    write("/proc/self/uid_map", f"{NOBODY} 0 1")
    write("/proc/self/gid_map", f"{NOBODY} 0 1")
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")


def reap(command: list[str], environment: dict[str, str]) -> int:
    """Pid 1's job: start the command as pid 2 (so it gets the usual signal semantics; the
    kernel protects pid 1 from its own namespace), reap every orphan, and end with the
    command's status, which ends the namespace and everything left in it."""
    worker = os.fork()
    if worker == 0:
        try:
            os.execve(command[0], command, environment)
        except OSError as error:
            os.write(2, f"sandbox (namespaces): cannot start {command[0]}: {error}\n".encode())
        os._exit(FAILED)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return FAILED
        except InterruptedError:
            continue
        if pid == worker:
            return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def enter(config: dict[str, Any]) -> int:
    """Steps 1 and 2; returns the sandbox's exit status (this process's, to exit with)."""
    check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
    if os.getppid() == 1:
        return FAILED  # the host died before the line above
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
    check(libc.unshare(flags | CLONE_NEWUTS), "unshare")
    write("/proc/self/setgroups", "deny")
    write("/proc/self/uid_map", f"0 {uid} 1")
    write("/proc/self/gid_map", f"0 {gid} 1")
    alive_read, alive_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(alive_write)
        check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
        if select.select([alive_read], [], [], 0)[0]:
            os._exit(FAILED)  # this process died before the line above
        os.close(alive_read)
        try:
            build_root(config)
            drop_privileges()
        except (SetupError, OSError) as error:
            os.write(2, f"sandbox (namespaces): {error}\n".encode())
            os._exit(FAILED)
        os._exit(reap(config["command"], config["environment"]))
    os.close(alive_read)
    signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            return FAILED
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def main() -> None:
    config = json.loads(sys.argv[1])
    try:
        status = enter(config)
    except SetupError as error:
        os.write(2, f"sandbox (namespaces): {error}\n".encode())
        status = FAILED
    os._exit(status)


if __name__ == "__main__":
    main()
