"""The `namespaces` sandbox: puts a command into new Linux namespaces with the raw syscalls,
where bubblewrap is missing. Standard library only, and only what loads fast (it runs once
per sandboxed run): started as `python -I -S -c <this file> CONFIG` (a `marshal`led dict in
hex) and replaced by CONFIG's command at the end.

What it builds, in order (the same isolation as the bubblewrap sandbox):
1. this process (the launcher) forks a child that makes new user, mount, pid, network, IPC
   and UTS namespaces;
2. the launcher, still outside, writes the child's uid and gid maps. A host that runs as
   root maps the namespace's root to an unprivileged host uid and gid (`run_as`, with no
   supplementary groups), so nothing in the sandbox ever runs as the host's uid 0, which may
   write the kernel's global settings; any other host maps its own uid (needing no
   privilege). The child opens the paths the sandbox shows while it still has the host's
   uid, then becomes that namespace root;
3. the child forks pid 1 of the new pid namespace, a reaper that starts the command as
   pid 2 and ends with it; each process dies with its parent (PR_SET_PDEATHSIG), and when
   pid 1 dies the kernel kills everything else in the namespace;
4. pid 1 builds a tmpfs root holding binds of only the opened paths (the interpreter and
   the libraries it loads), read-only, nosuid and nodev at every level (a mount beneath a
   bound folder too: `bind_read_only`), a few read-only device nodes, a fresh `/proc` that
   shows only the sandbox (with the kernel's writable or revealing entries, `/proc/sys`,
   `/proc/sysrq-trigger` and the like, covered by empty read-only mounts), and a
   size-limited tmpfs at `/tmp` as the working directory; `pivot_root` into it and the
   host's tree detached; no network but a loopback that is down;
5. a second, nested user namespace in which the command runs as uid 65534 with no
   capabilities over the mounts above (they belong to the outer namespace),
   PR_SET_NO_NEW_PRIVS, and the system-call filter (`seccomp.py`) the host built;
6. with CONFIG's `hold` (two descriptors, ready and go), the command's process closes
   `ready` and waits for a byte on `go` before it becomes the command, so the host can set
   the limits it inherits first (as bubblewrap's `--info-fd` and `--block-fd`); a `go`
   closed without that byte ends it.

The launcher waits for the child and exits with its status; killing it kills the sandbox.
Any failure is one line on stderr and exit status 125, before the command runs.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal loads enum: slower to start
import ctypes
import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
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
MS_NOSYMFOLLOW = 256
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2

SYS_PIVOT_ROOT = {
    "x86_64": 155,
    "aarch64": 41,
    "riscv64": 41,
    "loongarch64": 41,
    "ppc64le": 203,
    "s390x": 217,
}
"""`pivot_root` has no libc wrapper; its number per architecture."""

SYS_MOUNT_SETATTR = 442
"""`mount_setattr` (Linux 5.12) has this number on every architecture above."""
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2
MOUNT_ATTR_NODEV = 0x4

SEALED = MS_RDONLY | MS_NOSUID | MS_NODEV
"""What a read-only bind is at every level, as bubblewrap's `--ro-bind`: read-only, no
set-user-id programs, no device nodes."""
SEALED_ATTRIBUTES = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
"""`SEALED` in `mount_setattr`'s terms."""

STATVFS_FLAGS = {
    os.ST_RDONLY: MS_RDONLY,
    os.ST_NOSUID: MS_NOSUID,
    os.ST_NODEV: MS_NODEV,
    os.ST_NOEXEC: MS_NOEXEC,
}
"""A remount in a user namespace must keep the flags the kernel locked on a mount copied
from the host (dropping one fails with EPERM): a mount's flags, from `statvfs`."""

MOUNT_OPTIONS = {
    b"ro": MS_RDONLY,
    b"nosuid": MS_NOSUID,
    b"nodev": MS_NODEV,
    b"noexec": MS_NOEXEC,
    b"nosymfollow": MS_NOSYMFOLLOW,
}
"""The same flags from /proc/self/mountinfo's per-mount options (a remount that names no
atime option keeps the mount's own)."""

DEVICES = ("null", "zero", "full", "random", "urandom")
NOBODY = 65534
FAILED = 125

libc = ctypes.CDLL(None, use_errno=True)


class SetupError(Exception):
    pass


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class MountAttr(ctypes.Structure):
    """`struct mount_attr`, its first version."""

    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


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


def _bytes(value: str | bytes | None) -> bytes | None:
    return os.fsencode(value) if value is not None else None


def mount(
    source: str | None, target: str, kind: str | None, flags: int, data: str | None = None
) -> None:
    result = libc.mount(_bytes(source), _bytes(target), _bytes(kind), flags, _bytes(data))
    check(result, f"mounting {target}")


def remount(target: str, flags: int) -> None:
    """Add `flags` to the one mount at `target`, keeping the flags it has (see
    `STATVFS_FLAGS`)."""
    kept = 0
    for flag, mount_flag in STATVFS_FLAGS.items():
        if os.statvfs(target).f_flag & flag:
            kept |= mount_flag
    mount(None, target, None, MS_BIND | MS_REMOUNT | kept | flags)


def bind_read_only(source: str, target: str, shown: str) -> None:
    """Bind `source` at `target` (`shown` inside the sandbox) with every mount beneath it
    (without them the bind would show the folders they cover), then seal every one of them:
    a remount changes only the mount it names, so a writable mount beneath a bound folder
    (a tmpfs under a library folder) would stay writable inside."""
    mount(source, target, None, MS_BIND | MS_REC)
    try:
        seal_tree(target)
    except SetupError as refused:
        remount_tree(target, shown, str(refused))


def seal_tree(target: str) -> None:
    """`mount_setattr` with AT_RECURSIVE (Linux 5.12): one system call that seals every
    mount of the tree at `target`, or none. It only sets flags, so the locked ones stay."""
    attributes = MountAttr(SEALED_ATTRIBUTES, 0, 0, 0)
    result = libc.syscall(
        ctypes.c_long(SYS_MOUNT_SETATTR),
        ctypes.c_long(AT_FDCWD),
        os.fsencode(target),
        ctypes.c_ulong(AT_RECURSIVE),
        ctypes.byref(attributes),
        ctypes.c_ulong(ctypes.sizeof(attributes)),
    )
    check(result, "mount_setattr")


def remount_tree(target: str, shown: str, refused: str) -> None:
    """Where `mount_setattr` is missing or refused (`refused` says why): each mount of the
    tree at `target` that a path reaches, remounted by that path with `SEALED` added to the
    flags it has, as bubblewrap does. One that fails stops the sandbox, so none is left
    writable; a mount no path reaches (covered by another) is out of the program's reach."""
    for point, flags in reachable_mounts(target):
        result = libc.mount(None, point, None, MS_BIND | MS_REMOUNT | flags | SEALED, None)
        if result != 0:
            reason = os.strerror(ctypes.get_errno())
            place = os.fsdecode(point)
            if place.startswith(target):
                place = shown + place[len(target) :]
            raise SetupError(f"cannot make {place} read-only: {reason} ({refused})")


def reachable_mounts(target: str) -> list[tuple[bytes, int]]:
    """The mounts of the tree at `target` that a path reaches, parents first, each with its
    flags (from /proc/self/mountinfo): the tree's top, then through each reached mount its
    children but those under a sibling mounted on a folder above them, and of a stack of
    mounts on one point only the last (the others' children are covered with them)."""
    top = mount_id(target)
    children: dict[int, list[tuple[int, bytes, int]]] = {}
    first: tuple[int, bytes, int] | None = None
    with open("/proc/self/mountinfo", "rb") as table:
        for line in table:
            fields = line.split(b" ")
            entry = (int(fields[0]), unescape(fields[4]), mount_flags(fields[5]))
            children.setdefault(int(fields[1]), []).append(entry)
            if entry[0] == top:
                first = entry
    if first is None:
        raise SetupError(f"{target} is not in /proc/self/mountinfo")
    found: list[tuple[bytes, int]] = []
    pending = [first]
    while pending:
        number, point, flags = pending.pop(0)
        found.append((point, flags))
        below = children.get(number, [])
        for child in below:
            if not any(child[1].startswith(other[1] + b"/") for other in below):
                pending.append(top_of_stack(child, children))
    return found


def top_of_stack(
    entry: tuple[int, bytes, int], children: dict[int, list[tuple[int, bytes, int]]]
) -> tuple[int, bytes, int]:
    """The mount a path reaches at `entry`'s point: the last one mounted on it."""
    while True:
        stacked = [child for child in children.get(entry[0], []) if child[1] == entry[1]]
        if not stacked:
            return entry
        entry = stacked[-1]


def mount_id(path: str) -> int:
    """The id of the mount `path` reaches, mountinfo's key (its descriptor's fdinfo)."""
    handle = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        with open(f"/proc/self/fdinfo/{handle}", "rb") as info:
            for line in info:
                if line.startswith(b"mnt_id:"):
                    return int(line.split()[1])
    finally:
        os.close(handle)
    raise SetupError(f"no mount id for {path}")


def unescape(field: bytes) -> bytes:
    """A path of /proc/self/mountinfo: the kernel writes a space, tab, newline or backslash
    as a backslash and three octal digits."""
    head, *rest = field.split(b"\\")
    return head + b"".join(bytes([int(part[:3], 8)]) + part[3:] for part in rest)


def mount_flags(options: bytes) -> int:
    flags = 0
    for option in options.split(b","):
        flags |= MOUNT_OPTIONS.get(option, 0)
    return flags


def mountpoint(root: str, path: str, directory: bool) -> str:
    target = root + path
    os.makedirs(target if directory else os.path.dirname(target), exist_ok=True)
    if not directory and not os.path.exists(target):
        open(target, "w").close()
    return target


def open_sources(config: dict[str, Any]) -> dict[str, int]:
    """A handle on every path the sandbox shows, opened in the new mount namespace (a bind
    from another one is refused) but still with the host's uid (a root host's paths may lie
    under folders the unprivileged uid cannot enter), and before the staging root covers
    the host's `root` (a virtual environment or checkout under `/tmp` is still bound)."""
    sources: dict[str, int] = {}
    for path in config["read_only"]:
        try:
            sources[path] = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError as error:
            raise SetupError(f"opening {path}: {error.strerror}") from None
    return sources


def cover_proc(proc: str, config: dict[str, Any]) -> None:
    """Empty read-only mounts over the kernel's writable or revealing `/proc` entries."""
    for name in config.get("proc_dirs", ()):
        target = f"{proc}/{name}"
        if os.path.isdir(target) and not os.path.islink(target):
            flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
            mount("tmpfs", target, "tmpfs", flags, "size=4k,nr_inodes=1,mode=0555")
    for name in config.get("proc_files", ()):
        target = f"{proc}/{name}"
        if os.path.isfile(target) and not os.path.islink(target):
            mount("/dev/null", target, None, MS_BIND)
            remount(target, MS_RDONLY | MS_NOSUID | MS_NODEV)


def build_root(config: dict[str, Any], sources: dict[str, int]) -> None:
    """Step 4: the sandbox's file system, entered with `pivot_root`."""
    root = config["root"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    # The private `/tmp` before the binds, so binds of paths under `/tmp` land inside it.
    work = mountpoint(root, "/tmp", True)
    mount("tmpfs", work, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={config['tmp_bytes']}")
    for path, handle in sources.items():
        directory = os.fstat(handle).st_mode & 0o170000 == 0o040000  # S_ISDIR
        bind_read_only(f"/proc/self/fd/{handle}", mountpoint(root, path, directory), path)
        os.close(handle)
    sources.clear()
    for link, target in config.get("symlinks", {}).items():
        os.symlink(target, root + link)
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            # read-only too (a device node's reads and writes go to the driver, not the
            # mount), with no set-user-id or exec; not nodev, which would close the device
            target = mountpoint(root, f"/dev/{name}", False)
            mount(f"/dev/{name}", target, None, MS_BIND)
            remount(target, MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    proc = mountpoint(root, "/proc", True)
    mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    cover_proc(proc, config)
    os.chdir(root)
    os.mkdir(".host")
    machine = os.uname().machine
    number = SYS_PIVOT_ROOT.get(machine)
    if number is None:
        raise SetupError(f"pivot_root: unknown architecture {machine}")
    check(libc.syscall(number, b".", b".host"), "pivot_root")
    os.chdir("/")
    check(libc.umount2(b"/.host", MNT_DETACH), "detaching the host's tree")
    os.rmdir("/.host")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir("/tmp")
    check(libc.sethostname(b"sandbox", 7), "sethostname")


def drop_privileges() -> None:
    """Step 5: a nested user namespace where the command is uid 65534 and holds no
    capability over the sandbox's mounts, and no way to gain privileges."""
    check(libc.unshare(CLONE_NEWUSER), "unshare (nested user namespace)")
    for capability in range(64):  # the bounding set (a new namespace fills it again)
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            break  # past the kernel's last capability
    write("/proc/self/setgroups", "deny")
    write("/proc/self/uid_map", f"{NOBODY} 0 1")
    write("/proc/self/gid_map", f"{NOBODY} 0 1")
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")


def install_filter(program: bytes) -> None:
    """The host's system-call filter, for this process and everything it starts."""
    if not program:
        return
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    check(
        libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0),
        "installing the system-call filter",
    )


def reap(command: list[str], environment: dict[str, str], hold: list[int] | None = None) -> int:
    """Pid 1's job: start the command as pid 2 (so it gets the usual signal semantics; the
    kernel protects pid 1 from its own namespace), reap every orphan, and end with the
    command's status, which ends the namespace and everything left in it."""
    worker = os.fork()
    if worker == 0:
        try:
            if hold is not None:
                wait_for_go(*hold)
            os.execve(command[0], command, environment)
        except OSError as error:
            os.write(2, f"sandbox (namespaces): cannot start {command[0]}: {error}\n".encode())
        os._exit(FAILED)
    close_others()
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return FAILED
        except InterruptedError:
            continue
        if pid == worker:
            return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def wait_for_go(ready: int, go: int) -> None:
    """Step 6: tell the host the command is about to start (the last copy of `ready` is
    this process's: pid 1 and the launchers closed theirs), then wait for its byte."""
    os.close(ready)
    while True:
        try:
            answer = os.read(go, 1)
            break
        except InterruptedError:
            continue
    if answer != b"g":
        os._exit(FAILED)  # the host let go of it without a start
    os.close(go)


def wait_for(pid: int) -> int:
    """The exit status of a child, as a shell reports it."""
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


def close_others(*keep: int) -> None:
    """Close every descriptor above 2 but `keep`: the worker's channel was passed through
    the launcher, and a copy left in a process that outlives the worker would hide from
    the host that the worker closed its end."""
    start = 3
    for fd in sorted(k for k in keep if k >= 3):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, 1 << 16)


def die_with_parent(alive: int) -> None:
    """PR_SET_PDEATHSIG, then exit if the parent died before it was set (`alive` is the read
    end of a pipe whose write end only the parent holds: readable means closed)."""
    check(libc.prctl(PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
    os.set_blocking(alive, False)
    try:
        os.read(alive, 1)  # the parent writes nothing: an answer means its end is closed
        os._exit(FAILED)
    except BlockingIOError:
        pass
    os.close(alive)


def sandbox(config: dict[str, Any], sources: dict[str, int]) -> int:
    """Step 3, in the namespaces' root: pid 1 and its command; returns pid 1's status."""
    alive_read, alive_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(alive_write)
        try:
            die_with_parent(alive_read)
            # Changing uid made this process non-dumpable, which gives its /proc files to
            # the host's root: dumpable while it writes its own maps, then not again, so
            # the program (the same host uid) cannot open /proc/1/mem, fd or root.
            check(libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "PR_SET_DUMPABLE")
            build_root(config, sources)
            drop_privileges()
            check(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "PR_SET_DUMPABLE")
            install_filter(bytes.fromhex(config.get("seccomp", "")))
        except (SetupError, OSError) as error:
            os.write(2, f"sandbox (namespaces): {error}\n".encode())
            os._exit(FAILED)
        os._exit(reap(config["command"], config["environment"], config.get("hold")))
    close_others(alive_write)
    _signal.signal(_signal.SIGTERM, lambda *_: os.kill(pid, _signal.SIGKILL))
    return wait_for(pid)


def map_identity(pid: int, run_as: list[int] | None) -> None:
    """Step 2: the child's namespace root is `run_as` on the host (a root host: needs
    CAP_SETUID, and keeps setgroups allowed so the child can clear its groups), else this
    process's own uid and gid."""
    if run_as is not None:
        uid, gid = run_as
    else:
        uid, gid = os.geteuid(), os.getegid()
        write(f"/proc/{pid}/setgroups", "deny")
    write(f"/proc/{pid}/uid_map", f"0 {uid} 1")
    write(f"/proc/{pid}/gid_map", f"0 {gid} 1")


def enter(config: dict[str, Any]) -> int:
    """Steps 1 and 2; returns the sandbox's exit status (this process's, to exit with)."""
    check(libc.prctl(PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
    if os.getppid() == 1:
        return FAILED  # the host died before the line above
    run_as = config.get("run_as")
    if run_as is not None:
        os.setgroups([])  # the root host's supplementary groups stay outside
    alive_read, alive_write = os.pipe()
    unshared_read, unshared_write = os.pipe()
    mapped_read, mapped_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        for fd in (alive_write, unshared_read, mapped_write):
            os.close(fd)
        try:
            die_with_parent(alive_read)
            flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
            check(libc.unshare(flags | CLONE_NEWUTS), "unshare")
            os.write(unshared_write, b"u")
            os.close(unshared_write)
            if os.read(mapped_read, 1) != b"m":
                os._exit(FAILED)  # the launcher reported the failure
            os.close(mapped_read)
            sources = open_sources(config)
            launcher = os.getppid()
            os.setresgid(0, 0, 0)  # the namespace's root: `run_as` (or the host's user)
            if run_as is not None:
                os.setgroups([])
            os.setresuid(0, 0, 0)
            # a change of uid clears the death signal: arm it again
            check(libc.prctl(PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
            if os.getppid() != launcher:
                os._exit(FAILED)  # the launcher died before the line above
        except (SetupError, OSError) as error:
            os.write(2, f"sandbox (namespaces): {error}\n".encode())
            os._exit(FAILED)
        os._exit(sandbox(config, sources))
    close_others(alive_write, unshared_read, mapped_write)
    _signal.signal(_signal.SIGTERM, lambda *_: os.kill(pid, _signal.SIGKILL))
    try:
        if os.read(unshared_read, 1) != b"u":
            return wait_for(pid)  # the child said why on stderr
        map_identity(pid, run_as)
    except (SetupError, OSError):
        os.kill(pid, _signal.SIGKILL)
        wait_for(pid)
        raise
    os.write(mapped_write, b"m")
    os.close(mapped_write)
    return wait_for(pid)


def main() -> None:
    config = marshal.loads(bytes.fromhex(sys.argv[1]))
    try:
        status = enter(config)
    except (SetupError, OSError) as error:
        os.write(2, f"sandbox (namespaces): {error}\n".encode())
        status = FAILED
    os._exit(status)


if __name__ == "__main__":
    main()
