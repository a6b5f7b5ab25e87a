"""A writable mount beneath a folder the sandbox binds read-only is read-only inside too.

The `namespaces` sandbox once sealed only the top of each bind: a tmpfs mounted beneath a
bound library folder stayed writable, and a program wrote there as the sandbox's uid, where
bubblewrap refuses the write. Now every bind is read-only, nosuid and nodev at every level.

Each test starts a driver process with a mount namespace of its own (a root test process
unshares one; any other makes a user namespace to be root in, and after the mounts a nested
one that gives it its own uid back, so the host it starts is unprivileged). There the driver
covers one of the library folders every worker's sandbox binds with a tmpfs holding binds of
its entries and a new folder, `PLANTED`, with a writable tmpfs (noexec, a flag the sandbox
must keep) on it: the host's file system and mount table are never touched, and every mount
goes with the driver. In that namespace a host, running as the test's uid and, for a root
test process, as the unprivileged `unprivileged.PROBE_ID` too, runs a program through the
real runtime (Python or TypeScript) that lists the planted folder, writes beneath it, to
`/tmp` and to `/dev/null`, and returns its mount table:

- `namespaces`: as built (`mount_setattr`); with `mount_setattr` answering ENOSYS, as on a
  kernel before 5.12, so nsboot walks /proc/self/mountinfo and remounts each mount; and
  (Python) with every remount refused too, where the sandbox must not start;
- `bubblewrap`, which already refuses the write: parity;
- `none` (Python), the control: without a sandbox the same write succeeds.

A test process that is not root and may not make a user namespace cannot mount anything:
the tests skip there, saying so.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import codegen
from codegen.codemode.sandbox.launchers import LIBRARY_DIRS
from codegen.codemode.sandbox.seccomp import architecture
from support.sandbox_checks import python_for, reachable_python, stage, staged
from support.typescript_nodes import WHEEL_NODE
from support.unprivileged import PROBE_ID, _toolkit

PLANTED = "codegen-planted-mount"
"""The folder the driver adds under a library folder, with a writable tmpfs on it."""

MS_REMOUNT = 32
MOUNT_SETATTR = 442

DRIVER = r'''
import ctypes, json, os, subprocess, sys

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 8, 4096, 16384, 1 << 18


def fail(what):
    number = ctypes.get_errno()
    raise OSError(number, f"{what}: {os.strerror(number)}")


def mount(source, target, kind, flags, data=None):
    encoded = [None if v is None else os.fsencode(v) for v in (source, target, kind, data)]
    if libc.mount(encoded[0], encoded[1], encoded[2], flags, encoded[3]) != 0:
        fail(f"mounting {target}")


def map_ids(inside_uid, outside_uid, inside_gid, outside_gid):
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{inside_uid} {outside_uid} 1"),
        ("gid_map", f"{inside_gid} {outside_gid} 1"),
    ):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)


def own_mount_namespace():
    """A private mount namespace; for a driver that is not root, in a user namespace where
    it is root (returns its uid and gid, to take back once the mounts are made)."""
    back = None
    if os.geteuid() == 0:
        if libc.unshare(CLONE_NEWNS) != 0:
            fail("unshare")
    else:
        uid, gid = os.geteuid(), os.getegid()
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
            why = os.strerror(ctypes.get_errno())
            print(json.dumps({"impossible": f"uid {uid} is not root and may not make a "
                              f"user namespace to mount in ({why})"}))
            sys.exit(0)
        map_ids(0, uid, 0, gid)
        back = (uid, gid)
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing propagates to the host
    return back


def plant(folder, name):
    """`folder` as it was, plus `name` with a writable tmpfs holding `marker`: a tmpfs over
    `folder` with binds of its entries, reached through a descriptor opened before."""
    entries = os.listdir(folder)
    below = os.open(folder, os.O_PATH | os.O_DIRECTORY)
    mount("tmpfs", folder, "tmpfs", 0, "mode=0755,size=1m")
    for entry in entries:
        source, target = f"/proc/self/fd/{below}/{entry}", os.path.join(folder, entry)
        if os.path.islink(source):
            os.symlink(os.readlink(source), target)
        elif os.path.isdir(source):
            os.mkdir(target)
            mount(source, target, None, MS_BIND | MS_REC)
        elif os.path.isfile(source):
            open(target, "w").close()
            mount(source, target, None, MS_BIND | MS_REC)
    writable = os.path.join(folder, name)
    os.mkdir(writable)
    mount("tmpfs", writable, "tmpfs", MS_NOEXEC, "mode=1777,size=1m")
    with open(os.path.join(writable, "marker"), "w") as file:
        file.write("planted")
    os.chmod(os.path.join(writable, "marker"), 0o644)
    return writable


def become(uid, gid):
    """`uid` and `gid` again, in a nested user namespace (the host it starts holds no
    capability: an exec as a uid other than 0 drops them)."""
    if libc.unshare(CLONE_NEWUSER) != 0:
        fail("unshare (nested user namespace)")
    map_ids(uid, 0, gid, 0)


config = json.loads(sys.argv[1])
back = own_mount_namespace()
planted = plant(config["folder"], config["name"])
if back is not None:
    become(*back)
extra = {"user": config["user"], "group": config["user"], "extra_groups": []} if config["user"] else {}
done = subprocess.run(
    [config["python"], "-I", "-c", config["host"], config["path"], json.dumps(dict(config["job"], folder=planted))],
    capture_output=True, text=True, timeout=600, env=config["env"], cwd=config["cwd"], **extra,
)
print(json.dumps({"status": done.returncode, "stdout": done.stdout, "stderr": done.stderr[-5000:]}))
'''
"""Run as `python -I -c DRIVER CONFIG`: the namespace, the planted mount, then the host."""

HOST = r'''
import asyncio, ctypes, json, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from codegen.codemode.run_code.code_runtime import Bindings, CodeRunFailed
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes.by_language import runtime_for
from codegen.codemode.sandbox import launchers
from codegen.codemode.calls.cancellation import AbortController

job = json.loads(sys.argv[2])
folder = job["folder"]
nsboot = launchers.nsboot_source()


def filtered(code, program):
    """`code` (run as `python -I -S -c`) under one more system-call filter, `program`."""
    return (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"program = bytes.fromhex({program!r})\n"
        "buffer = ctypes.create_string_buffer(program, len(program))\n"
        "class Fprog(ctypes.Structure):\n"
        "    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]\n"
        "fprog = Fprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))\n"
        "if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0):\n"
        "    raise SystemExit('the extra filter was refused')\n"
        f"exec(compile({code!r}, 'filtered', 'exec'), {{'__name__': '__main__'}})\n"
    )


MOUNT_SETATTR_PROBE = (
    "import ctypes\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.syscall(442, -100, b'/', 0x8000, None, 32)\n"  # a NULL attr: changes nothing
    "print(ctypes.get_errno())\n"
)

PROGRAMS = {
    "python": """
import errno, os
def attempt(path):
    try:
        with open(path, "w") as file:
            file.write("x")
        return "written"
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))
return {
    "seen": sorted(os.listdir(FOLDER)),
    "beneath": attempt(FOLDER + "/" + NAME),
    "tmp": attempt("/tmp/" + NAME),
    "null": attempt("/dev/null"),
    "mounts": open("/proc/self/mountinfo").read(),
}
""",
    "typescript": """
const fs = await import("node:fs");
function attempt(path: string): string {
  try {
    fs.writeFileSync(path, "x");
    return "written";
  } catch (error) {
    return String((error as { code?: string }).code);
  }
}
return {
  seen: fs.readdirSync(FOLDER).sort(),
  beneath: attempt(FOLDER + "/" + NAME),
  tmp: attempt("/tmp/" + NAME),
  null: attempt("/dev/null"),
  mounts: fs.readFileSync("/proc/self/mountinfo", "utf8"),
};
""",
}


async def nothing(name, arguments):
    return None


async def run(language, sandbox, variant):
    source = nsboot if variant == "plain" else filtered(nsboot, job["filters"][variant])
    assert callable(launchers.nsboot_source)
    launchers.nsboot_source = lambda: source  # what `Launcher.spawn` starts
    launchers._launcher.cache_clear()  # probed again, with this source
    name = f"written-{language}-{sandbox}-{variant}"
    program = PROGRAMS[language].replace("FOLDER", json.dumps(folder))
    program = program.replace("NAME", json.dumps(name))
    options = job["options"][language]
    runtime = runtime_for(language, RuntimeLimits(timeout=60), sandbox=sandbox, spare=False, **options)
    try:
        output = await runtime.run(program, Bindings((), nothing), AbortController().signal)
        return {"ok": True, "result": output.result}
    except CodeRunFailed as failure:
        return {"ok": False, "text": str(failure)}
    finally:
        await runtime.aclose()


report = {"uid": os.geteuid(), "outcomes": {}}
if "enosys" in job["filters"]:
    probe = [sys.executable, "-I", "-S", "-c", filtered(MOUNT_SETATTR_PROBE, job["filters"]["enosys"])]
    report["probe"] = subprocess.run(probe, capture_output=True, text=True).stdout.strip()
for variant in job["variants"]:
    report["outcomes"][variant] = asyncio.run(run(job["language"], job["sandbox"], variant))
print(json.dumps(report))
'''
"""Run as `python -I -c HOST TOOLKIT JOB` in the driver's namespace: each variant's outcome."""


TREE = r'''
import ctypes, errno, json, os, sys
sys.path.insert(0, sys.argv[1])
from codegen.codemode.sandbox import nsboot

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
tree = sys.argv[2]


def enter(flags, uid, gid):
    """New namespaces (`flags`) where this process is root: uid 0 is `uid` outside."""
    if nsboot.libc.unshare(flags) != 0:
        return os.strerror(ctypes.get_errno())
    if flags & CLONE_NEWUSER:
        nsboot.write("/proc/self/setgroups", "deny")
        nsboot.write("/proc/self/uid_map", f"0 {uid} 1")
        nsboot.write("/proc/self/gid_map", f"0 {gid} 1")
    nsboot.mount(None, "/", None, nsboot.MS_REC | nsboot.MS_PRIVATE)
    return None


def tmpfs(path, flags=0):
    os.makedirs(path, exist_ok=True)
    nsboot.mount("tmpfs", path, "tmpfs", flags, "size=64k,mode=0755")


uid, gid = os.geteuid(), os.getegid()
refused = enter(CLONE_NEWNS if uid == 0 else CLONE_NEWUSER | CLONE_NEWNS, uid, gid)
if refused is not None:
    print(json.dumps({"impossible": f"uid {uid} is not root and may not make a user "
                      f"namespace to mount in ({refused})"}))
    sys.exit(0)
tmpfs(tree)
tmpfs(tree + "/a b", nsboot.MS_NOEXEC)  # a space: written escaped in mountinfo
tmpfs(tree + "/a b/inner", nsboot.MS_NOEXEC | nsboot.MS_NOSUID)
tmpfs(tree + "/stack")
tmpfs(tree + "/stack/below")  # covered with the mount it is on
tmpfs(tree + "/stack", nsboot.MS_NOEXEC)  # on the first: the one a path reaches
os.makedirs(tree + "/deep/x")
tmpfs(tree + "/deep/x")  # covered by the next, its sibling
tmpfs(tree + "/deep", nsboot.MS_NODEV)
# a less privileged copy, where the kernel locks every mount's flags, as in the sandbox
assert enter(CLONE_NEWUSER | CLONE_NEWNS, 0, 0) is None
found = [os.fsdecode(point) for point, _ in nsboot.reachable_mounts(tree)]
nsboot.remount_tree(tree, "/shown", "checked")
after = {}
for point in found:
    flags = os.statvfs(point).f_flag
    try:
        open(point + "/new", "w").close()
        wrote = "written"
    except OSError as error:
        wrote = errno.errorcode[error.errno]
    names = {"ro": os.ST_RDONLY, "nosuid": os.ST_NOSUID, "nodev": os.ST_NODEV, "noexec": os.ST_NOEXEC}
    after[point] = {"write": wrote, **{name: bool(flags & bit) for name, bit in names.items()}}
print(json.dumps({"found": found, "after": after}))
'''
"""Run as `python -I -c TREE TOOLKIT FOLDER`: nsboot's fallback over a tree of mounts built
at FOLDER (in namespaces of its own), and what each mount it reached became."""


def library_folder() -> str:
    """The library folder every worker's sandbox binds with the fewest entries (the one
    cheapest to cover with binds of its entries)."""
    found = [path for path in LIBRARY_DIRS if os.path.isdir(path) and not os.path.islink(path)]
    assert found, f"none of {LIBRARY_DIRS} is a folder here"
    return min(found, key=lambda path: len(os.listdir(path)))


def instruction(code: int, true: int, false: int, value: int) -> bytes:
    return struct.pack("<HBBI", code, true, false, value)


def extra_filter(refuse_remounts: bool) -> bytes:
    """A system-call filter where `mount_setattr` answers ENOSYS (a kernel before 5.12), and
    with `refuse_remounts` every `mount` with MS_REMOUNT fails with EPERM; all else passes."""
    load, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    allow, fails = 0x7FFF0000, 0x00050000
    program = instruction(load, 0, 0, 0)  # the system call's number
    program += instruction(jeq, 0, 1, MOUNT_SETATTR)
    program += instruction(ret, 0, 0, fails | errno.ENOSYS)
    if refuse_remounts:
        arch = architecture()
        assert arch is not None
        program += instruction(jeq, 0, 3, arch.numbers["mount"])
        # mount's flags: the low half of its fourth argument (little-endian, as every
        # architecture `seccomp` knows)
        program += instruction(load, 0, 0, 16 + 3 * 8)
        program += instruction(jset, 0, 1, MS_REMOUNT)
        program += instruction(ret, 0, 0, fails | errno.EPERM)
    return program + instruction(ret, 0, 0, allow)


def host_setup(host: str, language: str, sandbox: str) -> dict[str, Any]:
    """How the driver starts the host: as whom, with which interpreter, toolkit and worker
    programs (copies the host's uid can reach, for an unprivileged host or bubblewrap)."""
    as_probe_id = host == "unprivileged" and os.geteuid() == 0
    python = reachable_python() if as_probe_id else python_for(sandbox) or sys.executable
    if language == "python":
        options: dict[str, Any] = {"python": python}
    else:
        options = {"node": staged(WHEEL_NODE), "stripper": "node"}
    if as_probe_id:
        path, env, cwd = _toolkit(), {"PATH": os.defpath, "LANG": "C.UTF-8"}, stage()
    else:
        path, env, cwd = str(Path(codegen.__file__).parent.parent), dict(os.environ), None
    return {
        "user": PROBE_ID if as_probe_id else None,
        "python": python if as_probe_id else sys.executable,
        "path": path,
        "env": env,
        "cwd": cwd,
        "options": {language: options},
    }


def run_host(host: str, language: str, sandbox: str, variants: list[str]) -> dict[str, Any]:
    """The host's report: each variant's outcome, its uid and (with `enosys`) what
    `mount_setattr` answered under the extra filter. Skips only where nothing can be
    mounted."""
    setup = host_setup(host, language, sandbox)
    filters = {}
    if "enosys" in variants:
        filters["enosys"] = extra_filter(refuse_remounts=False).hex()
    if "refused" in variants:
        filters["refused"] = extra_filter(refuse_remounts=True).hex()
    job = {"language": language, "sandbox": sandbox, "variants": variants, "filters": filters}
    job["options"] = setup.pop("options")
    config = {**setup, "folder": library_folder(), "name": PLANTED, "host": HOST, "job": job}
    driver = subprocess.Popen(
        [sys.executable, "-I", "-c", DRIVER, json.dumps(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the driver, its host and their sandboxes end together
    )
    try:
        out, err = driver.communicate(timeout=900)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
    assert driver.returncode == 0, err[-3000:]
    said = json.loads(out)
    if "impossible" in said:
        pytest.skip(said["impossible"])
    assert said["status"] == 0, said["stderr"]
    report: dict[str, Any] = json.loads(said["stdout"])
    return report


def mount_table(text: str) -> dict[str, set[str]]:
    """Mount point -> its per-mount options, from /proc/self/mountinfo (the last mount on a
    point is the one a path reaches)."""
    table: dict[str, set[str]] = {}
    for line in text.splitlines():
        fields = line.split(" ")
        table[fields[4]] = set(fields[5].split(","))
    return table


def sealed_problems(result: dict[str, Any], folder: str, sandbox: str) -> list[str]:
    """What is wrong with a sandboxed program's view: it must see the planted mount and
    fail to write there with EROFS; `/tmp` and `/dev/null` take writes; every mount is
    nosuid, every one but `/tmp`, `/proc` and device nodes read-only and nodev (in the
    `namespaces` sandbox device nodes read-only and noexec too); the planted tmpfs keeps
    its noexec."""
    problems = []
    if "marker" not in result["seen"]:
        problems.append(f"the planted mount is not in the sandbox: {result['seen']}")
    if result["beneath"] != "EROFS":
        problems.append(f"writing beneath {folder}: {result['beneath']}")
    for place in ("tmp", "null"):
        if result[place] != "written":
            problems.append(f"writing to {place}: {result[place]}")
    table = mount_table(result["mounts"])
    for point, options in table.items():
        wanted = {"nosuid"}
        if point.startswith("/dev/"):
            wanted |= {"ro", "noexec"} if sandbox == "namespaces" else set()
        elif point == "/tmp":
            wanted |= {"rw", "nodev"}
        elif point != "/proc":
            wanted |= {"ro", "nodev"}
        if not wanted <= options:
            problems.append(f"{point} is {','.join(sorted(options))}, not {sorted(wanted)}")
    if "noexec" not in table.get(folder, set()):
        problems.append(f"{folder} lost its noexec: {table.get(folder)}")
    return problems


HOSTS = ("this", "unprivileged")
"""The test process's own uid (root on CI), and an unprivileged one: `PROBE_ID` started by a
root test process, else the test process's uid again."""


def planted_folder() -> str:
    return os.path.join(library_folder(), PLANTED)


def expected_uid(host: str) -> int:
    return PROBE_ID if host == "unprivileged" and os.geteuid() == 0 else os.geteuid()


@pytest.mark.parametrize("language", ["python", "typescript"])
@pytest.mark.parametrize("host", HOSTS)
def test_namespaces_seals_a_writable_mount_beneath_a_bound_folder(host: str, language: str) -> None:
    """With `mount_setattr`, and with it answering ENOSYS (the fallback over mountinfo)."""
    report = run_host(host, language, "namespaces", ["plain", "enosys"])
    assert report["uid"] == expected_uid(host)
    assert report["probe"] == str(errno.ENOSYS), "the extra filter did not refuse mount_setattr"
    for variant in ("plain", "enosys"):
        outcome = report["outcomes"][variant]
        assert outcome["ok"], (variant, outcome["text"])
        problems = sealed_problems(outcome["result"], planted_folder(), "namespaces")
        assert not problems, (variant, problems)


@pytest.mark.parametrize("language", ["python", "typescript"])
@pytest.mark.parametrize("host", HOSTS)
def test_bubblewrap_seals_it_too(host: str, language: str) -> None:
    report = run_host(host, language, "bubblewrap", ["plain"])
    assert report["uid"] == expected_uid(host)
    outcome = report["outcomes"]["plain"]
    assert outcome["ok"], outcome["text"]
    problems = sealed_problems(outcome["result"], planted_folder(), "bubblewrap")
    assert not problems, problems


@pytest.mark.parametrize("host", HOSTS)
def test_a_mount_that_cannot_be_sealed_stops_the_namespaces_sandbox(host: str) -> None:
    """`mount_setattr` missing and every remount refused: the sandbox does not start, and
    says which mount it could not make read-only."""
    if architecture() is None:
        pytest.skip(f"no system-call numbers known for {os.uname().machine}")
    report = run_host(host, "python", "namespaces", ["refused"])
    outcome = report["outcomes"]["refused"]
    assert not outcome["ok"], "the sandbox started with a mount it could not seal"
    text = outcome["text"]
    assert "read-only: Operation not permitted" in text, text
    assert "mount_setattr: Function not implemented" in text, text


@pytest.mark.parametrize("host", HOSTS)
def test_without_a_sandbox_the_same_write_succeeds(host: str) -> None:
    """The control: the planted mount is writable to the host's uid, so the refusals above
    are the sandboxes'."""
    report = run_host(host, "python", "none", ["plain"])
    assert report["uid"] == expected_uid(host)
    outcome = report["outcomes"]["plain"]
    assert outcome["ok"], outcome["text"]
    assert "marker" in outcome["result"]["seen"], outcome["result"]["seen"]
    assert outcome["result"]["beneath"] == "written", outcome["result"]["beneath"]


def test_the_fallback_reaches_every_mount_a_path_reaches(tmp_path: Path) -> None:
    """nsboot's fallback alone, over a tree with a stack of mounts on one point, a mount
    covered by a sibling on a folder above it, a nested mount and a space in a name: it
    remounts each mount a path reaches, once, read-only, nosuid and nodev, keeping the
    noexec the kernel locked; the covered ones it leaves (no path reaches them)."""
    tree = str(tmp_path / "tree")
    done = subprocess.run(
        [sys.executable, "-I", "-c", TREE, str(Path(codegen.__file__).parent.parent), tree],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    said = json.loads(done.stdout)
    if "impossible" in said:
        pytest.skip(said["impossible"])
    expected = [tree, f"{tree}/a b", f"{tree}/stack", f"{tree}/deep", f"{tree}/a b/inner"]
    assert sorted(said["found"]) == sorted(expected)
    for point, became in said["after"].items():
        noexec = point.endswith(("a b", "inner", "stack"))
        wanted = {"write": "EROFS", "ro": True, "nosuid": True, "nodev": True, "noexec": noexec}
        assert became == wanted, point
