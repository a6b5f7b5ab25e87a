"""The system-call filter every sandboxed run_code worker runs under (seccomp, classic BPF).

A denylist of what a program never needs and attackers use to reach the kernel or the host:

- kernel attack surface: io_uring, bpf, perf_event_open, userfaultfd, the key store
  (keyctl, add_key, request_key), kexec, module loading;
- the file-system view: mount and the new mount API, pivot_root, chroot, file handles
  (open_by_handle_at, the classic container escape);
- other processes: ptrace, process_vm_readv/writev, pidfd_getfd, process_madvise;
- namespaces: unshare, setns, and clone with any namespace flag (a nested user namespace
  is how unprivileged code regains capabilities); clone3, whose flags a filter cannot read,
  answers ENOSYS so the C library falls back to clone;
- the machine: reboot, swap, syslog, acct, quotas, the clock, raw I/O ports, x86 LDTs;
- per-user quotas and side channels: inotify and fanotify (and epoll, for a worker that
  waits without it);
- memory outside every address-space limit: memfd, System V shared memory, message queues
  and semaphores, POSIX message queues;
- sockets of any family but AF_UNIX (vsock, which no network namespace isolates, IP,
  netlink, packet, ...): EAFNOSUPPORT;
- any number past the newest system call known here (ENOSYS: a program or its C library
  treats it as an older kernel), x32's calls on x86-64 among them (their numbers carry bit
  30); and any other architecture's calling convention (the i386 entry point on x86-64),
  which would bypass the numbers below: the process is killed.

Denied calls fail with EPERM (ENOSYS where a fallback exists), so a program sees an
ordinary error. The program is built here, on the host, and handed to the sandbox: to
bubblewrap with `--seccomp FD`, to `nsboot` as bytes it installs with `prctl`.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass
from functools import cache

# classic BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGT_K = 0x25
_JSET_K = 0x45
_RET_K = 0x06

RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000

_NR_OFFSET = 0
_ARCH_OFFSET = 4
_ARG0_LOW_OFFSET = 16
"""`seccomp_data.args[0]`'s low 32 bits (little-endian machines only)."""

NAMESPACE_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)
"""clone() flags that make a namespace (CLONE_NEWTIME exists only for clone3 and unshare)."""

DENIED = (
    # kernel attack surface
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    # the file-system view
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    # watching files: inotify and fanotify count against a per-user quota the host shares
    # (an unprivileged host's own watches would fail), and show one run which files
    # another run opens, and when
    "fanotify_init",
    "fanotify_mark",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    # memory that no address-space limit counts: anonymous files and System V shared
    # memory (held until removed, past the process), System V message queues and
    # semaphores, POSIX message queues (a per-user quota the host shares)
    "memfd_create",
    "memfd_secret",
    "shmget",
    "shmat",
    "shmctl",
    "shmdt",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semctl",
    "semtimedop",
    "mq_open",
    # other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "process_madvise",
    # namespaces (clone is checked by its flags)
    "unshare",
    "setns",
    # the machine
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "quotactl_fd",
    "lookup_dcookie",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "clock_adjtime",
    "vhangup",
    "modify_ldt",
    "iopl",
    "ioperm",
    "uselib",
)
"""Calls that fail with EPERM (those an architecture does not have are left out)."""

UNSUPPORTED = ("io_uring_setup", "io_uring_enter", "io_uring_register", "clone3")
"""Calls that fail with ENOSYS: callers fall back (libuv without io_uring, glibc's clone)."""

EPOLL = ("epoll_create", "epoll_create1", "epoll_ctl")
"""Calls also refused (EPERM) to a worker that waits without epoll (`epoll=False`): every
epoll watch counts against a per-user quota (`fs.epoll.max_user_watches`) that an
unprivileged host shares with its sandboxes, and a watch outlives the descriptor it was
added through, so no descriptor limit bounds them. Node's event loop needs epoll; its
programs reach it only through Node's own handles, one watch per descriptor."""

SOCKET_FAMILIES = {"AF_UNIX": 1}
"""The only address family `socket` and `socketpair` may open; any other fails with
EAFNOSUPPORT. vsock is not isolated by a network namespace (it reaches the hypervisor and
the machine's other guests); netlink, packet and the rest are kernel attack surface; and IP,
though it reaches nothing outside the sandbox's empty network namespace, would let a
program fill the machine's TCP memory (`net.ipv4.tcp_mem` is one pool for every namespace)
over its own loopback."""

_COMMON = {
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "pidfd_getfd": 438,
    "process_madvise": 440,
    "mount_setattr": 442,
    "quotactl_fd": 443,
    "memfd_secret": 447,
}
"""Numbers every architecture shares (system calls added since Linux 5.1)."""

_X86_64 = {
    **_COMMON,
    "shmget": 29,
    "shmat": 30,
    "shmctl": 31,
    "socket": 41,
    "socketpair": 53,
    "clone": 56,
    "semget": 64,
    "semop": 65,
    "semctl": 66,
    "shmdt": 67,
    "msgget": 68,
    "msgsnd": 69,
    "msgrcv": 70,
    "msgctl": 71,
    "ptrace": 101,
    "syslog": 103,
    "uselib": 134,
    "vhangup": 153,
    "modify_ldt": 154,
    "pivot_root": 155,
    "adjtimex": 159,
    "chroot": 161,
    "acct": 163,
    "settimeofday": 164,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "iopl": 172,
    "ioperm": 173,
    "init_module": 175,
    "delete_module": 176,
    "quotactl": 179,
    "lookup_dcookie": 212,
    "epoll_create": 213,
    "semtimedop": 220,
    "clock_settime": 227,
    "epoll_ctl": 233,
    "mq_open": 240,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "inotify_init": 253,
    "inotify_add_watch": 254,
    "unshare": 272,
    "epoll_create1": 291,
    "inotify_init1": 294,
    "perf_event_open": 298,
    "fanotify_init": 300,
    "fanotify_mark": 301,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "clock_adjtime": 305,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "finit_module": 313,
    "memfd_create": 319,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
}

_GENERIC = {
    **_COMMON,
    "lookup_dcookie": 18,
    "epoll_create1": 20,
    "epoll_ctl": 21,
    "inotify_init1": 26,
    "inotify_add_watch": 27,
    "umount2": 39,
    "mount": 40,
    "pivot_root": 41,
    "chroot": 51,
    "vhangup": 58,
    "quotactl": 60,
    "acct": 89,
    "unshare": 97,
    "kexec_load": 104,
    "init_module": 105,
    "delete_module": 106,
    "clock_settime": 112,
    "syslog": 116,
    "ptrace": 117,
    "reboot": 142,
    "settimeofday": 170,
    "adjtimex": 171,
    "mq_open": 180,
    "msgget": 186,
    "msgctl": 187,
    "msgrcv": 188,
    "msgsnd": 189,
    "semget": 190,
    "semctl": 191,
    "semtimedop": 192,
    "semop": 193,
    "shmget": 194,
    "shmctl": 195,
    "shmat": 196,
    "shmdt": 197,
    "socket": 198,
    "socketpair": 199,
    "add_key": 217,
    "request_key": 218,
    "keyctl": 219,
    "clone": 220,
    "swapon": 224,
    "swapoff": 225,
    "perf_event_open": 241,
    "fanotify_init": 262,
    "fanotify_mark": 263,
    "name_to_handle_at": 264,
    "open_by_handle_at": 265,
    "clock_adjtime": 266,
    "setns": 268,
    "process_vm_readv": 270,
    "process_vm_writev": 271,
    "finit_module": 273,
    "memfd_create": 279,
    "bpf": 280,
    "userfaultfd": 282,
    "kexec_file_load": 294,
}
"""The generic table (`asm-generic/unistd.h`) of arm64, riscv64 and loongarch64."""

NEWEST = 466
"""The newest system call allowed (removexattrat, Linux 6.13); anything above is ENOSYS."""


@dataclass(frozen=True)
class Architecture:
    name: str
    audit: int
    """AUDIT_ARCH_* of the native calling convention."""
    numbers: dict[str, int]


ARCHITECTURES = {
    "x86_64": Architecture("x86_64", 0xC000003E, _X86_64),
    "aarch64": Architecture("aarch64", 0xC00000B7, _GENERIC),
    "riscv64": Architecture("riscv64", 0xC00000F3, _GENERIC),
    "loongarch64": Architecture("loongarch64", 0xC0000102, _GENERIC),
}
"""Machines (`platform.machine()`) the filter is known for; all little-endian."""


def architecture(machine: str | None = None) -> Architecture | None:
    return ARCHITECTURES.get(machine or platform.machine())


class _Assembler:
    """Classic BPF with labels: conditional jumps name their targets, resolved at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | int, str | int, int]] = []
        self.labels: dict[str, int] = {}

    def load(self, offset: int) -> None:
        self.code.append((_LD_W_ABS, 0, 0, offset))

    def jump(self, opcode: int, value: int, true: str | int = 0, false: str | int = 0) -> None:
        self.code.append((opcode, true, false, value))

    def ret(self, value: int) -> None:
        self.code.append((_RET_K, 0, 0, value))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (opcode, true, false, value) in enumerate(self.code):
            offsets = []
            for target in (true, false):
                offset = target if isinstance(target, int) else self.labels[target] - index - 1
                if not 0 <= offset <= 255:
                    raise ValueError(f"jump out of range at instruction {index}")
                offsets.append(offset)
            out += struct.pack("<HBBI", opcode, offsets[0], offsets[1], value)
        return bytes(out)


@cache
def filter_program(machine: str | None = None, epoll: bool = True) -> bytes | None:
    """The filter as `struct sock_filter` records, or None on a machine it is not known for;
    `epoll=False` also refuses the calls in `EPOLL`."""
    arch = architecture(machine)
    if arch is None:
        return None
    numbers = arch.numbers
    asm = _Assembler()
    asm.load(_ARCH_OFFSET)
    asm.jump(_JEQ_K, arch.audit, 1, 0)
    asm.ret(RET_KILL_PROCESS)
    asm.load(_NR_OFFSET)
    asm.jump(_JGT_K, NEWEST, "enosys", 0)
    for name in _refused(epoll):
        if name in numbers:
            asm.jump(_JEQ_K, numbers[name], "eperm", 0)
    for name in UNSUPPORTED:
        asm.jump(_JEQ_K, numbers[name], "enosys", 0)
    asm.jump(_JEQ_K, numbers["socket"], "family", 0)
    asm.jump(_JEQ_K, numbers["socketpair"], "family", 0)
    asm.jump(_JEQ_K, numbers["clone"], 0, "allow")
    asm.load(_ARG0_LOW_OFFSET)
    asm.jump(_JSET_K, NAMESPACE_FLAGS, "eperm", "allow")
    asm.label("family")
    asm.load(_ARG0_LOW_OFFSET)  # the domain (an int: the kernel reads the low 32 bits)
    for family in sorted(SOCKET_FAMILIES.values()):
        asm.jump(_JEQ_K, family, "allow", 0)
    asm.ret(RET_ERRNO | errno.EAFNOSUPPORT)
    asm.label("allow")
    asm.ret(RET_ALLOW)
    asm.label("eperm")
    asm.ret(RET_ERRNO | errno.EPERM)
    asm.label("enosys")
    asm.ret(RET_ERRNO | errno.ENOSYS)
    return asm.assemble()


def _refused(epoll: bool) -> tuple[str, ...]:
    return DENIED if epoll else (*DENIED, *EPOLL)


def denied_numbers(machine: str | None = None, epoll: bool = True) -> dict[str, tuple[int, int]]:
    """name -> (number, errno) of every call the filter refuses outright, for tests and
    documentation."""
    arch = architecture(machine)
    if arch is None:
        return {}
    found = {
        name: (arch.numbers[name], errno.EPERM) for name in _refused(epoll) if name in arch.numbers
    }
    found.update({name: (arch.numbers[name], errno.ENOSYS) for name in UNSUPPORTED})
    return found
