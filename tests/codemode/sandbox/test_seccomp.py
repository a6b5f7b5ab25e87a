"""The system-call filter: its numbers agree with the kernel's headers, and the program
decides as documented, checked by a small BPF interpreter written here (independent of the
assembler). That the kernel applies it inside both sandboxes is `test_escape_probes.py`."""

from __future__ import annotations

import errno
import re
import struct
from pathlib import Path

import pytest

from codegen.codemode.sandbox import seccomp
from codegen.codemode.sandbox.seccomp import (
    ARCHITECTURES,
    DENIED,
    EPOLL,
    NAMESPACE_FLAGS,
    NEWEST,
    RET_ALLOW,
    RET_ERRNO,
    RET_KILL_PROCESS,
    SOCKET_FAMILIES,
    UNSUPPORTED,
    filter_program,
)

HEADERS = {
    "x86_64": [
        Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
        Path("/usr/include/asm/unistd_64.h"),
    ],
    "generic": [Path("/usr/include/asm-generic/unistd.h")],
}


def header_numbers(kind: str) -> dict[str, int]:
    for path in HEADERS[kind]:
        if path.is_file():
            text = path.read_text()
            pattern = r"#define __NR(?:3264)?_(\w+)\s+(\d+)"
            return {name: int(number) for name, number in re.findall(pattern, text)}
    pytest.fail(f"no kernel headers for {kind} here: scripts/test installs linux-libc-dev")


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_numbers_agree_with_the_kernel_headers(machine: str) -> None:
    numbers = ARCHITECTURES[machine].numbers
    headers = header_numbers("x86_64" if machine == "x86_64" else "generic")
    for name, number in numbers.items():
        assert headers.get(name) == number, name
    wanted = (*DENIED, *UNSUPPORTED, *EPOLL, "socket", "socketpair")
    missing = [n for n in wanted if n not in numbers and n in headers]
    assert missing == [], f"denied calls the table lacks: {missing}"


LIBSECCOMP_ARCHES = {"x86_64": "X86_64", "aarch64": "AARCH64", "riscv64": "RISCV64"}
"""libseccomp's names of the machines it knows (Debian 12's 2.5.4 has no loongarch64)."""
RESOLVE = """
import json, sys, seccomp
out = {}
for machine, arch in json.loads(sys.argv[1]).items():
    a = getattr(seccomp.Arch, arch)
    names = json.loads(sys.argv[2])[machine]
    out[machine] = {"audit": int(a) & 0xFFFFFFFF, "numbers": {n: seccomp.resolve_syscall(a, n) for n in names}}
print(json.dumps(out))
"""


def test_numbers_and_architectures_agree_with_libseccomp() -> None:
    """A second, independent table: libseccomp's (Debian's python3-seccomp, which
    scripts/test installs), for every machine it knows, names and audit values alike."""
    import json
    import subprocess

    python = Path("/usr/bin/python3")
    names = {m: sorted(ARCHITECTURES[m].numbers) for m in LIBSECCOMP_ARCHES}
    done = subprocess.run(
        [str(python), "-c", RESOLVE, json.dumps(LIBSECCOMP_ARCHES), json.dumps(names)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if "No module named 'seccomp'" in done.stderr:
        pytest.fail("python3-seccomp is missing: scripts/test installs it")
    assert done.returncode == 0, done.stderr
    resolved = json.loads(done.stdout)
    for machine in LIBSECCOMP_ARCHES:
        arch = ARCHITECTURES[machine]
        assert resolved[machine]["audit"] == arch.audit, machine
        wrong = {
            name: (number, resolved[machine]["numbers"][name])
            for name, number in arch.numbers.items()
            if resolved[machine]["numbers"][name] != number
        }
        assert wrong == {}, machine


def run_bpf(program: bytes, nr: int, arch: int, arg0: int = 0) -> int:
    """What classic BPF `program` returns for one system call (only the instructions the
    filter may use; anything else fails the test)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    code = [struct.unpack("<HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    accumulator, pc = 0, 0
    for _ in range(len(code) + 1):
        opcode, true, false, k = code[pc]
        if opcode == 0x20:  # ld [k]
            accumulator = struct.unpack("<I", data[k : k + 4])[0]
            pc += 1
        elif opcode in (0x15, 0x25, 0x45):  # jeq, jgt, jset
            taken = {
                0x15: accumulator == k,
                0x25: accumulator > k,
                0x45: bool(accumulator & k),
            }[opcode]
            pc += 1 + (true if taken else false)
        elif opcode == 0x06:  # ret k
            return k
        else:
            raise AssertionError(f"unexpected opcode {opcode:#x}")
    raise AssertionError("the program does not end")


@pytest.mark.parametrize("epoll", [True, False])
@pytest.mark.parametrize("machine", sorted(ARCHITECTURES))
def test_the_program_decides_as_documented(machine: str, epoll: bool) -> None:
    arch = ARCHITECTURES[machine]
    program = filter_program(machine, epoll=epoll)
    assert program is not None and len(program) % 8 == 0
    numbers = arch.numbers
    refused = DENIED if epoll else (*DENIED, *EPOLL)
    for name in refused:
        if name in numbers:
            assert run_bpf(program, numbers[name], arch.audit) == RET_ERRNO | errno.EPERM, name
    for name in UNSUPPORTED:
        assert run_bpf(program, numbers[name], arch.audit) == RET_ERRNO | errno.ENOSYS, name
    checked = {numbers["clone"], numbers["socket"], numbers["socketpair"]}
    denied = {numbers[n] for n in (*refused, *UNSUPPORTED) if n in numbers}
    for number in range(NEWEST + 1):
        if number not in denied and number not in checked:
            assert run_bpf(program, number, arch.audit) == RET_ALLOW, number
    clone = numbers["clone"]
    assert run_bpf(program, clone, arch.audit, 0x01200011) == RET_ALLOW  # fork's flags
    assert run_bpf(program, clone, arch.audit, 0x003D0F00) == RET_ALLOW  # a thread's
    for flag in (0x10000000, 0x20000000, 0x40000000, 0x08000000, 0x04000000, 0x00020000):
        assert flag & NAMESPACE_FLAGS
        answer = run_bpf(program, clone, arch.audit, flag | 17)
        assert answer == RET_ERRNO | errno.EPERM, hex(flag)
    for call in ("socket", "socketpair"):
        for family in range(64):
            answer = run_bpf(program, numbers[call], arch.audit, family)
            allowed = family in SOCKET_FAMILIES.values()
            assert answer == (RET_ALLOW if allowed else RET_ERRNO | errno.EAFNOSUPPORT), family
        # the high half of the domain is not read: the kernel takes an int
        vsock_high = (1 << 32) | 40
        assert run_bpf(program, numbers[call], arch.audit, vsock_high) != RET_ALLOW
    assert run_bpf(program, NEWEST + 1, arch.audit) == RET_ERRNO | errno.ENOSYS
    assert run_bpf(program, 0x40000000 | 1, arch.audit) == RET_ERRNO | errno.ENOSYS  # x32
    assert run_bpf(program, 1, 0x40000003) == RET_KILL_PROCESS  # i386 entry point


def test_an_unknown_machine_has_no_program() -> None:
    assert filter_program("sparc64") is None
    assert seccomp.denied_numbers("sparc64") == {}
