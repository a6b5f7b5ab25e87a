"""The escape probes of the Code Mode audit: hostile programs in both languages, and what
each must show.

`run_all(language, sandbox, options)` runs every probe through a real runtime and returns
plain JSON outcomes, so a host that runs as another uid (`unprivileged.py`) can report them;
`problems(name, outcome, context)` says what is wrong with one outcome. The probes:

- `sysctl`: the kernel's settings (`/proc/sys/kernel/core_pattern`, which runs a program as
  root on a crash) and every other non-process `/proc` file, opened for writing (and closed
  without writing: the hole is open if the open succeeds);
- `identity`: the program's credentials, capabilities, no-new-privileges bit, system-call
  filter, and whether it can open another process's descriptors, root, memory or
  environment (pid 1 is the sandbox's own launcher);
- `host_view`: from the host, during a tool call, every process of the sandbox: none runs as
  the host's uid 0 or in its group 0 (see also the end of this list);
- `seccomp` (Python): each denied system call answers the filter's errno, clone with a
  namespace flag and unshare are refused, fork and threads still work;
- `fill`: writes to `/dev/shm`, `/dev`, `/`, `/proc` and `/tmp`: only `/tmp` takes data,
  at most its size;
- `memory`: several processes (Python) or buffers (TypeScript) each holding memory: what the
  run holds at once stays within its stated bound;
- `big_error`: an exception with a 50 MB message: the run's error text is cut to the output
  limit, with a note;
- `big_arguments`: a tool call with 2,000,000 elements: refused in the program with the limit
  named, the host's tool never called;
- `raw_frame`: 16 MiB written straight to the channel, around the worker: the run ends at
  once with the message size named, the host's tool never called;
- `families`: sockets of every address family: only AF_UNIX opens (vsock, which no network
  namespace isolates, IP, netlink and packet fail with EAFNOSUPPORT);
- `unbounded_memory` (Python): memory that no address-space limit counts is refused:
  anonymous files (memfd, and memfd_secret), System V shared memory, message queues and
  semaphores, POSIX message queues;
- `kernel_buffers`: pipes and local sockets filled to the brim (as many as the program can
  open) hold no more than the stated kernel-buffer bound, or the run's memory cgroup kills
  the run;
- `quotas`: the per-user kernel quotas a host may share with its sandboxes: inotify and
  fanotify are refused (and epoll, to the Python worker); while the program holds every
  watch and descriptor it can, the host still makes epoll and inotify watches and answers a
  call;
- `host_view` also checks, on a root host, that a sandbox runs as a host uid of its own
  (no other process has it) and that nobody's processes cannot read a worker's memory.

TypeScript 7's compile step (the family `typescript7`: its native `tsc` parses each program
before the worker gets it) has probes of its own, aimed at the compiler rather than the
worker. While each runs, the host watches every `tsc` it starts (`CompilerWatch`, from
/proc) and records how it runs: its ids, namespaces, filter, capabilities, rlimits, command
line, and which host paths it could open (through `/proc/<pid>/root`). Each program starts
with a long sum (`SLOW`) so the compiler lives long enough to be seen. A secret file only
the host's user may read is planted for the run (`{secret}` in the programs):

- `compile_identity`: a plain program; every compiler seen runs in its own user, pid, mount
  and network namespaces, under the filter, without capabilities or the host's uid 0 (on a
  root host, as a uid of its own), held to the run's rlimits (data, CPU, processes, open
  files), and sees neither the secret nor the host's `/etc/passwd`. The probe fails if no
  compiler is seen;
- `compile_reads`: the secret named as a triple-slash reference, an `import`, an `import =
  require` after closing the wrapper the program is compiled in, and a `require`; the
  secret's text appears in no output or error. (The compiler resolves none of them,
  `--noResolve`, so this holds without a sandbox too: what shows the boundary is the
  identity checks above, applied to this probe's compilers as well);
- `compile_options`: text that reads as compiler options (`--outDir /`, `-p /`); every
  compiler's command line is exactly the fixed one (the program is never an argument, so
  this too holds without a sandbox);
- `compile_huge`: a program that nests a million levels deep (a gigabyte of the compiler's
  stack): the run fails as an `exception` naming the memory bound, not a crash, a hang or a
  host out of memory;
- every compile probe: no compiler of the run is left once it returns.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any

MIB = 1024 * 1024
PROBE_LIMITS = {
    "timeout": 60.0,
    "memory_bytes": 256 * MIB,
    "output_bytes": MIB,
    "argument_bytes": MIB,
}
"""The limits every probe runs with (the audit's 256 MB memory limit)."""
HOLD_MIB = 160
"""Memory each process of the `memory` probe holds."""

_WALK_PROC_PY = """
def writable_proc():
    import os
    found = []
    for entry in sorted(os.listdir("/proc")):
        if entry.isdigit() or entry in ("self", "thread-self"):
            continue
        top = "/proc/" + entry
        paths = [top]
        if os.path.isdir(top) and not os.path.islink(top):
            paths = []
            for root, folders, files in os.walk(top):
                paths += [os.path.join(root, name) for name in files]
        for path in paths:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            os.close(fd)
            found.append(path)
    return found
"""

_WALK_PROC_TS = """
function writableProc(fs: any): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    let stat;
    try { stat = fs.lstatSync(path); } catch { return; }
    if (stat.isSymbolicLink()) return;
    if (stat.isDirectory()) {
      let names: string[] = [];
      try { names = fs.readdirSync(path); } catch { return; }
      for (const name of names) visit(`${path}/${name}`);
      return;
    }
    try {
      const fd = fs.openSync(path, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
      fs.closeSync(fd);
      found.push(path);
    } catch {}
  };
  for (const entry of fs.readdirSync("/proc").sort()) {
    if (/^[0-9]+$/.test(entry) || entry === "self" || entry === "thread-self") continue;
    visit(`/proc/${entry}`);
  }
  return found;
}
"""

SETTINGS = (
    "/proc/sys/kernel/core_pattern",
    "/proc/sys/kernel/modprobe",
    "/proc/sys/vm/drop_caches",
    "/proc/sysrq-trigger",
)


def _programs() -> dict[str, dict[str, str]]:
    settings = json.dumps(list(SETTINGS))
    return {
        "sysctl": {
            "python": _WALK_PROC_PY
            + f"""
import os
opened = {{}}
for path in {settings}:
    try:
        os.close(os.open(path, os.O_WRONLY))
        opened[path] = "writable"
    except OSError as error:
        opened[path] = error.errno
return {{"settings": opened, "writable": writable_proc()}}
""",
            "typescript": _WALK_PROC_TS
            + f"""
const fs = await import("node:fs");
const opened: Record<string, string | number> = {{}};
for (const path of {settings}) {{
  try {{ fs.closeSync(fs.openSync(path, "w")); opened[path] = "writable"; }}
  catch (error: any) {{ opened[path] = error.errno ?? String(error); }}
}}
return {{ settings: opened, writable: writableProc(fs) }};
""",
        },
        "identity": {
            "python": """
import os
status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
reach = {}
for what in ("fd", "root", "environ", "mem"):
    path = "/proc/1/" + what
    try:
        os.listdir(path) if what in ("fd", "root") else open(path, "rb").read(1)
        reach[what] = "open"
    except OSError as error:
        reach[what] = type(error).__name__
return {"status": status, "pid1": reach}
""",
            "typescript": """
const fs = await import("node:fs");
const status: Record<string, string> = {};
for (const line of fs.readFileSync("/proc/self/status", "utf8").split("\\n")) {
  const at = line.indexOf(":\\t");
  if (at > 0) status[line.slice(0, at)] = line.slice(at + 2);
}
const reach: Record<string, string> = {};
for (const what of ["fd", "root", "environ", "mem"]) {
  const path = `/proc/1/${what}`;
  try {
    if (what === "fd" || what === "root") fs.readdirSync(path);
    else { const fd = fs.openSync(path, "r"); fs.readSync(fd, Buffer.alloc(1)); fs.closeSync(fd); }
    reach[what] = "open";
  } catch (error: any) { reach[what] = error.code ?? String(error); }
}
return { status, pid1: reach };
""",
        },
        "host_view": {
            "python": "return await tools.host_view({})",
            "typescript": "return await tools.host_view({});",
        },
        "fill": {
            "python": f"""
import os
written = {{}}
chunk = b"x" * {MIB}
for path in ("/dev/shm/fill", "/dev/fill", "/fill", "/proc/fill", "/tmp/fill"):
    total = 0
    try:
        with open(path, "wb", buffering=0) as file:
            for _ in range(128):
                total += file.write(chunk)
    except OSError:
        pass
    written[path] = total
    try:
        os.remove(path)
    except OSError:
        pass
return written
""",
            "typescript": f"""
const fs = await import("node:fs");
const written: Record<string, number> = {{}};
const chunk = Buffer.alloc({MIB}, 120);
for (const path of ["/dev/shm/fill", "/dev/fill", "/fill", "/proc/fill", "/tmp/fill"]) {{
  let total = 0;
  try {{
    const fd = fs.openSync(path, "w");
    try {{ for (let i = 0; i < 128; i++) total += fs.writeSync(fd, chunk); }}
    finally {{ fs.closeSync(fd); }}
  }} catch {{}}
  written[path] = total;
  try {{ fs.unlinkSync(path); }} catch {{}}
}}
return written;
""",
        },
        "memory": {
            "python": f"""
import os, posix, select, signal, time
read, write = os.pipe()
children = []
for _ in range(5):
    pid = posix.fork()
    if pid == 0:
        try:
            held = b"x" * ({HOLD_MIB} * 1024 * 1024)
            os.write(write, b"1")
            time.sleep(30)
        finally:
            os._exit(0)
    children.append(pid)
os.close(write)
holding = 0
deadline = time.monotonic() + 8
while time.monotonic() < deadline and holding < len(children):
    if select.select([read], [], [], 0.2)[0]:
        got = os.read(read, 16)
        if not got:
            break
        holding += len(got)
    alive = 0
    for pid in children:
        try:
            os.kill(pid, 0)
            alive += 1
        except OSError:
            pass
    if alive == 0:
        break
time.sleep(1)
living = 0
for pid in children:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        living += done == 0
    except ChildProcessError:
        pass
for pid in children:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
return {{"reported": holding, "living": living, "each_mib": {HOLD_MIB}}}
""",
            "typescript": """
const held: Buffer[] = [];
try {
  for (let i = 0; i < 40; i++) held.push(Buffer.alloc(64 * 1024 * 1024, 1));
} catch (error) {}
return { held_mib: held.length * 64 };
""",
        },
        "big_error": {
            "python": 'raise Exception("A" * 50_000_000)',
            "typescript": 'throw new Error("A".repeat(50_000_000));',
        },
        "big_arguments": {
            "python": """
try:
    await tools.echo({"a": [0] * 2_000_000})
except ToolCallError as error:
    return str(error)
return "sent"
""",
            "typescript": """
try {
  await tools.echo({ a: new Array(2_000_000).fill(0) });
} catch (error) {
  return (error as Error).message;
}
return "sent";
""",
        },
        "raw_frame": {
            "python": """
import os, sys, time
frame = b'{"type": "call", "id": 1, "name": "echo", "args": [' + b"0," * (8 * 1024 * 1024) + b"0]}\\n"
os.write(int(sys.argv[2]), frame)
time.sleep(50)
""",
            "typescript": """
const fs = await import("node:fs");
const body = "0,".repeat(8 * 1024 * 1024);
const frame = Buffer.from(`{"type":"call","id":1,"name":"echo","args":[${body}0]}\\n`);
let offset = 0;
const fd = Number(process.argv[3]);
while (offset < frame.length) {
  try { offset += fs.writeSync(fd, frame, offset); } catch (error: any) { if (error.code !== "EAGAIN") break; }
}
await new Promise((resolve) => setTimeout(resolve, 50000));
""",
        },
        "families": {
            "python": """
import errno, socket
opened = {}
for name, family in (("AF_UNIX", 1), ("AF_INET", 2), ("AF_INET6", 10), ("AF_NETLINK", 16),
                     ("AF_PACKET", 17), ("AF_VSOCK", 40), ("AF_ALG", 38), ("AF_BLUETOOTH", 31)):
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        try:
            socket.socket(family, kind).close()
            opened[f"{name}/{kind}"] = "opened"
        except OSError as error:
            opened[f"{name}/{kind}"] = error.errno
try:
    vsock = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    vsock.bind((socket.VMADDR_CID_ANY, 7777))
    vsock.listen()
    opened["vsock_listen"] = "listening"
except OSError as error:
    opened["vsock_listen"] = error.errno
try:
    socket.socketpair(socket.AF_UNIX)[0].close()
    opened["unix_pair"] = "opened"
except OSError as error:
    opened["unix_pair"] = error.errno
return opened
""",
            "typescript": """
const net = await import("node:net");
const opened: Record<string, string> = {};
const listen = (options: any) => new Promise<string>((resolve) => {
  const server = net.createServer();
  server.on("error", (error: any) => resolve(String(error.code)));
  server.listen(options, () => { server.close(); resolve("opened"); });
});
opened["AF_INET"] = await listen({ port: 0, host: "127.0.0.1" });
opened["AF_INET6"] = await listen({ port: 0, host: "::1" });
opened["AF_UNIX"] = await listen({ path: "/tmp/probe.sock" });
return opened;
""",
        },
        "unbounded_memory": {
            "python": f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
refused = {{}}
def ask(name, call):
    ctypes.set_errno(0)
    try:
        result = call()
    except OSError as error:
        refused[name] = error.errno
        return None
    if result == -1:
        refused[name] = ctypes.get_errno()
        return None
    refused[name] = "allowed"
    return result
anonymous = ask("memfd_create", lambda: os.memfd_create("probe"))
if anonymous is not None:  # held past every address-space limit: 512 MiB of it
    for _ in range(512):
        os.write(anonymous, b"x" * {MIB})
ask("memfd_secret", lambda: libc.syscall(447, 0))
ask("shmget", lambda: libc.shmget(0, {MIB}, 0o1600))
ask("msgget", lambda: libc.msgget(0, 0o1600))
ask("semget", lambda: libc.semget(0, 1, 0o1600))
ask("mq_open", lambda: libc.mq_open(b"/probe", os.O_CREAT | os.O_RDWR, 0o600, None))
return refused
""",
        },
        "kernel_buffers": {
            "python": """
import fcntl, os, socket
buffered = 0
descriptors = 0
kept = []
chunk = b"x" * 65536
def fill(write):
    total = 0
    while True:
        try:
            total += write(chunk)
        except (BlockingIOError, InterruptedError):
            return total
while True:
    try:
        left, right = socket.socketpair(socket.AF_UNIX)
    except OSError:
        break
    kept += [left, right]
    descriptors += 2
    for end in (left, right):
        end.setblocking(False)
        end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
        buffered += fill(end.send)
    try:
        read, write = os.pipe()
    except OSError:
        break
    kept += [read, write]
    descriptors += 2
    try:
        fcntl.fcntl(write, 1031, 1 << 30)  # F_SETPIPE_SZ: as large as allowed
    except OSError:
        pass
    os.set_blocking(write, False)
    buffered += fill(lambda data: os.write(write, data))
return {"buffered": buffered, "descriptors": descriptors}
""",
            "typescript": """
const fs = await import("node:fs");
const net = await import("node:net");
const server = net.createServer({ pauseOnConnect: true }, () => {});
await new Promise<void>((resolve) => server.listen("/tmp/fill.sock", resolve));
const chunk = Buffer.alloc(65536, 120);
const clients: any[] = [];
for (let i = 0; i < 400; i++) {
  const client = net.connect("/tmp/fill.sock");
  const ok = await new Promise<boolean>((resolve) => {
    client.on("connect", () => resolve(true));
    client.on("error", () => resolve(false));
  });
  if (!ok) break;
  clients.push(client);
  for (let j = 0; j < 256 && client.write(chunk); j++);
}
await new Promise((resolve) => setTimeout(resolve, 100));
let buffered = 0;
for (const client of clients) buffered += client.bytesWritten - client.writableLength;
clients.pop()?.destroy();
server.close();
await new Promise((resolve) => setTimeout(resolve, 100));
const descriptors = fs.readdirSync("/proc/self/fd").length;
return { buffered, descriptors };
""",
        },
        "quotas": {
            "python": """
import ctypes, os, select, time
libc = ctypes.CDLL(None, use_errno=True)
refused = {}
def ask(name, call):
    ctypes.set_errno(0)
    try:
        result = call()
    except OSError as error:
        refused[name] = error.errno
        return None
    if result == -1:
        refused[name] = ctypes.get_errno()
        return None
    refused[name] = "allowed"
    return result
ask("inotify_init1", lambda: libc.inotify_init1(0))
ask("fanotify_init", lambda: libc.fanotify_init(0, 0))
hog = ask("epoll", lambda: select.epoll())
held = 0
if hog is not None:  # take every watch there is, a few seconds long
    read, write = os.pipe()
    copies = [read]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            copy = os.dup(read)
            hog.register(copy, select.EPOLLIN)
            os.close(copy)  # the watch stays: the file is still open through `read`
            held += 1
        except OSError:
            break
answer = await tools.host_check({})
return {"refused": refused, "held": held, "host": answer}
""",
            "typescript": """
const fs = await import("node:fs");
const net = await import("node:net");
const refused: Record<string, string> = {};
try { fs.watch("/tmp").close(); refused["inotify"] = "allowed"; }
catch (error: any) { refused["inotify"] = String(error.code); }
const sockets: any[] = [];
const server = net.createServer((socket) => sockets.push(socket));
await new Promise<void>((resolve) => server.listen("/tmp/hog.sock", resolve));
let held = 0;
for (let i = 0; i < 1000; i++) {
  const client = net.connect("/tmp/hog.sock");
  const ok = await new Promise<boolean>((resolve) => {
    client.on("connect", () => resolve(true));
    client.on("error", () => resolve(false));
  });
  if (!ok) break;
  sockets.push(client);
  held += 1;
}
const host = await tools.host_check({});
return { refused, held, host };
""",
        },
    }


SLOW = "const slow: number = " + "+".join(["1"] * 6000) + ";\n"
"""A first line TypeScript 7's tsc takes a few tenths of a second over (its time grows with
the square of the sum's length), so the host sees each compiler while it runs."""


def _compile_programs() -> dict[str, dict[str, str]]:
    """The compile step's probes (`{secret}` is the planted file's path)."""
    return {
        "compile_identity": {"typescript7": SLOW + "return slow;"},
        "compile_reads": {
            "typescript7": SLOW
            + """/// <reference path="{secret}" />
/// <reference types="{secret}" />
import planted from "{secret}";
const required: string = require("{secret}");
});
/// <reference path="{secret}" />
import again = require("{secret}");
(async function () {
return [planted, required, again];""",
        },
        "compile_options": {
            "typescript7": SLOW + "--outDir /\n--listFiles --declaration\n-p /\nreturn 1;"
        },
        "compile_huge": {
            "typescript7": "const deep = " + "[" * 1_000_000 + "]" * 1_000_000 + ";\nreturn 1;"
        },
    }


PROGRAMS = {**_programs(), **_compile_programs()}
SECCOMP_PROGRAM = """
import ctypes, errno, os, threading
libc = ctypes.CDLL(None, use_errno=True)
answers = {}
def ask(number, *arguments):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in arguments])
    return ctypes.get_errno() if result == -1 else "returned"
for name, (number, _) in DENIED.items():
    if name in ("clone", "reboot", "vhangup", "syslog", "acct"):
        continue  # asked below with arguments that cannot do harm
    arguments = {
        "ptrace": (16, 999999, 0, 0),
        "unshare": (0x10000000,),
        "setns": (-1, 0x10000000),
        "pidfd_getfd": (-1, 0, 0),
        "io_uring_setup": (0, 0),
        "userfaultfd": (0,),
    }.get(name, (-1, 0, 0, 0, 0))
    answers[name] = ask(number, *arguments)
answers["reboot"] = ask(DENIED["reboot"][0], 0, 0, 0, 0)
answers["syslog"] = ask(DENIED["syslog"][0], 3, 0, 0)
answers["clone_newuser"] = ask(CLONE, 0x10000000 | 17, 0, 0, 0, 0)
answers["newest_plus_one"] = ask(NEWEST + 1, 0, 0)
import posix
pid = posix.fork()
if pid == 0:
    os._exit(7)
_, status = os.waitpid(pid, 0)
answers["fork"] = os.WEXITSTATUS(status)
box = []
thread = threading.Thread(target=lambda: box.append("ran"))
thread.start(); thread.join()
answers["thread"] = box
return answers
"""


def seccomp_program() -> str:
    """The `seccomp` probe with this machine's numbers (`codegen.codemode.sandbox.seccomp`)."""
    from codegen.codemode.sandbox.seccomp import NEWEST, architecture, denied_numbers

    arch = architecture()
    clone = arch.numbers["clone"] if arch is not None else -1
    denied = json.dumps(denied_numbers(epoll=False))  # the Python worker waits without epoll
    head = f"DENIED = {denied}\nCLONE = {clone}\nNEWEST = {NEWEST}\n"
    return head + SECCOMP_PROGRAM


def probe_names(language: str) -> list[str]:
    names = [name for name, programs in PROGRAMS.items() if language in programs]
    return [*names, "seccomp"] if language == "python" else names


def _host_view() -> dict[str, Any]:
    """Every descendant of this process that runs in another pid namespace (inside a
    sandbox), or is bubblewrap itself, with its ids as the host sees them; and, on a root
    host, which other processes share a sandbox process's uid and whether a process of
    nobody's uid (65534) could open a sandbox process's memory."""
    from codegen.codemode.runtimes.worker_pool import descendants

    found: dict[str, Any] = {}
    ours = set(descendants(os.getpid()))
    for pid in ours:
        status = _status(pid)
        if status is None:
            continue
        inside = len(status.get("NSpid", "").split()) > 1
        if inside or status.get("Name") == "bwrap":
            found[str(pid)] = {
                "name": status.get("Name"),
                "uid": status.get("Uid", "").split(),
                "gid": status.get("Gid", "").split(),
                "groups": status.get("Groups", "").split(),
                "inside": inside,
            }
    if os.geteuid() != 0:
        return {"processes": found}
    uids = {each["uid"][0] for each in found.values() if each["inside"]}
    neighbours = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in ours:
            status = _status(int(entry))
            if status is not None and uids & set(status.get("Uid", "").split()):
                neighbours.append(f"{status.get('Name')} ({entry})")
    inside = [int(pid) for pid, each in found.items() if each["inside"]]
    return {
        "processes": found,
        "neighbours": neighbours,
        "nobody_reads": _opened_as(65534, inside),
    }


def _status(pid: int) -> dict[str, str] | None:
    try:
        with open(f"/proc/{pid}/status") as file:
            lines = file.read().splitlines()
    except OSError:
        return None
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


def _opened_as(uid: int, pids: list[int]) -> list[int]:
    """Which of `pids` a process of `uid` (and the same gid, no other group) can open the
    memory of, read-only, as a process outside the sandbox would."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        opened = []
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            for pid in pids:
                try:
                    os.close(os.open(f"/proc/{pid}/mem", os.O_RDONLY))
                    opened.append(pid)
                except OSError:
                    pass
            os.write(write, json.dumps(opened).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        said = answer.read()
    os.waitpid(child, 0)
    return json.loads(said or "[]")


def _host_check() -> dict[str, Any]:
    """What the host can still do while a program holds every watch it can: make an epoll
    instance with watches on fresh pipes, and an inotify watch (each needs the per-user
    quotas a program might take)."""
    import ctypes
    import select

    answer: dict[str, Any] = {}
    pipes = []
    try:
        poller = select.epoll()
        try:
            for _ in range(32):
                read, write = os.pipe()
                pipes += [read, write]
                poller.register(read, select.EPOLLIN)
            answer["epoll"] = "ok"
        finally:
            poller.close()
    except OSError as error:
        answer["epoll"] = error.errno
    finally:
        for fd in pipes:
            os.close(fd)
    libc = ctypes.CDLL(None, use_errno=True)
    watcher = libc.inotify_init1(0)
    if watcher < 0:
        answer["inotify"] = ctypes.get_errno()
    else:
        added = libc.inotify_add_watch(watcher, b"/", 0x100)  # IN_CREATE
        answer["inotify"] = "ok" if added >= 0 else ctypes.get_errno()
        os.close(watcher)
    return answer


async def _run_one(
    runtime: Any, program: str, watch: CompilerWatch | None = None
) -> dict[str, Any]:
    """The probe's outcome; with `watch`, what it saw of the compilers too."""
    outcome = await _outcome(runtime, program, watch)
    if watch is not None:
        outcome.update(watch.report())
    return outcome


async def _outcome(runtime: Any, program: str, watch: CompilerWatch | None) -> dict[str, Any]:
    import contextlib

    with watch or contextlib.nullcontext():
        return await _run_program(runtime, program)


async def _run_program(runtime: Any, program: str) -> dict[str, Any]:
    from codegen.codemode.calls.cancellation import AbortController
    from codegen.codemode.run_code.code_runtime import Bindings, CodeRunFailed

    echoed: list[int] = []

    async def call(name: str, arguments: Any) -> Any:
        if name == "host_view":
            return _host_view()
        if name == "host_check":
            return _host_check()
        echoed.append(len(json.dumps(arguments)))
        return {"echoed": True}

    bindings = Bindings(("echo", "host_view", "host_check"), call)
    try:
        output = await runtime.run(program, bindings, AbortController().signal)
    except CodeRunFailed as failure:
        return {
            "ok": False,
            "kind": failure.kind,
            "message": failure.message,
            "text": str(failure),
            "echoed": echoed,
        }
    result = output.result
    return {"ok": True, "result": None if result is _missing() else result, "echoed": echoed}


def _missing() -> Any:
    from codegen.codemode.run_code.code_runtime import MISSING

    return MISSING


RUNTIME_LANGUAGE = {"typescript7": "typescript"}
"""The runtime a family of probes runs in, where it is not named after it (the compile
step's probes run TypeScript, with TypeScript 7's compiler)."""


def make_runtime(language: str, sandbox: str, options: dict[str, Any]) -> Any:
    from codegen.codemode.run_code.run_limits import RuntimeLimits
    from codegen.codemode.runtimes.by_language import runtime_for

    return runtime_for(
        RUNTIME_LANGUAGE.get(language, language),
        RuntimeLimits(**PROBE_LIMITS),
        sandbox=sandbox,
        spare=False,
        **options,
    )


def run_all(
    language: str, sandbox: str, options: dict[str, Any], names: list[str] | None = None
) -> dict[str, Any]:
    """Every probe's outcome, and the context the checks need (what this host states as the
    bound of a run's memory; for the compile step, the planted secret)."""
    import shutil
    import tempfile

    from codegen.codemode.run_code.run_limits import RuntimeLimits
    from codegen.codemode.sandbox.cgroups import run_memory_bound

    folder = tempfile.mkdtemp(prefix="codegen-probe-secret-")  # 0700, the host's user's
    secret = os.path.join(folder, "secret.ts")
    token = f"probe-secret-{os.urandom(8).hex()}"
    with open(os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
        file.write(f"export const planted = '{token}';\n")
    watched = language == "typescript7"

    async def all_probes() -> dict[str, Any]:
        outcomes: dict[str, Any] = {}
        runtime = make_runtime(language, sandbox, options)
        try:
            if watched:
                await runtime.launcher()  # its sandbox probe (`tsc --version`) is not watched
            for name in names or probe_names(language):
                program = seccomp_program() if name == "seccomp" else PROGRAMS[name][language]
                program = program.replace("{secret}", secret)
                watch = CompilerWatch([secret, "/etc/passwd"]) if watched else None
                outcomes[name] = await _run_one(runtime, program, watch)
        finally:
            await runtime.aclose()
        return outcomes

    bound, how = run_memory_bound(RuntimeLimits(**PROBE_LIMITS))
    try:
        outcomes = asyncio.run(all_probes())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "outcomes": outcomes,
        "context": {
            "language": language,
            "sandbox": sandbox,
            "memory_bound": bound,
            "memory_how": how,
            "host_uid": os.geteuid(),
            "secret": token,
        },
    }


class CompilerWatch:
    """From the host, every TypeScript 7 compiler this process starts while a probe runs
    (sampled every millisecond from /proc): how it runs, and which of `host_paths` it could
    open. After the run, `left` lists the compilers still running."""

    def __init__(self, host_paths: list[str]) -> None:
        import threading

        self.host_paths = host_paths
        self.seen: dict[int, dict[str, Any]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> CompilerWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def report(self) -> dict[str, Any]:
        left = [pid for pid in _compilers() if _status(pid) is not None]
        return {"compilers": list(self.seen.values()), "left": left}

    def _watch(self) -> None:
        while not self.stop.wait(0.001):
            for pid in _compilers():
                if pid not in self.seen:
                    seen = _compiler_view(pid, self.host_paths)
                    if seen is not None:
                        self.seen[pid] = seen


def _compilers() -> list[int]:
    from codegen.codemode.runtimes.worker_pool import descendants

    found = []
    for pid in descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip() == "tsc":
                    found.append(pid)
        except OSError:
            pass
    return found


def _compiler_view(pid: int, host_paths: list[str]) -> dict[str, Any] | None:
    """How the host sees one compiler, or None if it is gone (or not yet the compiler)."""
    status = _status(pid)
    try:
        with open(f"/proc/{pid}/limits") as file:
            limits = file.read()
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            argv = [part.decode() for part in file.read().split(b"\0")[:-1]]
        namespaces = {
            kind: os.readlink(f"/proc/{pid}/ns/{kind}") == os.readlink(f"/proc/self/ns/{kind}")
            for kind in ("user", "pid", "mnt", "net")
        }
        sees = [path for path in host_paths if os.path.lexists(f"/proc/{pid}/root{path}")]
    except OSError:
        return None
    if status is None or status.get("Name") != "tsc" or not argv:
        return None  # gone, not yet the compiler, or on its way out
    return {
        "pid": pid,
        "uid": status.get("Uid", "").split(),
        "gid": status.get("Gid", "").split(),
        "nspid": status.get("NSpid", "").split(),
        "seccomp": status.get("Seccomp", "").strip(),
        "no_new_privs": status.get("NoNewPrivs", "").strip(),
        "cap_eff": status.get("CapEff", "").strip(),
        "limits": _limits(limits),
        "host_namespaces": [kind for kind, same in namespaces.items() if same],
        "sees": sees,
        "argv": argv,
    }


def _limits(text: str) -> dict[str, str]:
    """The soft limits of /proc/<pid>/limits that matter here."""
    wanted = {
        "Max cpu time": "cpu",
        "Max data size": "data",
        "Max processes": "processes",
        "Max open files": "files",
    }
    found = {}
    for line in text.splitlines():
        for label, key in wanted.items():
            if line.startswith(label):
                found[key] = line[len(label) :].split()[0]
    return found


# --- what each outcome must show --------------------------------------------------------


Checker = Callable[[dict[str, Any], dict[str, Any]], list[str]]


def _on_result(check: Callable[[Any, dict[str, Any], dict[str, Any]], list[str]]) -> Checker:
    """A check of a probe that must run to its end: a failed run is the problem, else
    `check(result, outcome, context)` says what is wrong with its result."""

    def checked(outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
        if not outcome["ok"]:
            return [f"the probe failed: {outcome.get('text', '')[:500]}"]
        return check(outcome["result"], outcome, context)

    return checked


def _on_failure(check: Checker) -> Checker:
    """A check of a probe whose run must fail: a run that ended well is the problem, else
    `check(outcome, context)` says what is wrong with how it failed."""

    def checked(outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
        return ["the run did not fail"] if outcome["ok"] else check(outcome, context)

    return checked


@_on_result
def _sysctl(result: Any, outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    opened = [path for path, said in result["settings"].items() if said == "writable"]
    return [f"writable: {path}" for path in opened + result["writable"]]


@_on_result
def _identity(result: Any, outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    status = result["status"]
    expected = {"NoNewPrivs": "1", "Seccomp": "2", "Groups": ""}
    for key, value in expected.items():
        if status.get(key, "").strip() != value:
            problems.append(f"{key} is {status.get(key)!r}, expected {value!r}")
    for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        if int(status.get(key, "1"), 16) != 0:
            problems.append(f"{key} is {status.get(key)}")
    if set(status.get("Uid", "").split()) != {"65534"}:
        problems.append(f"uid {status.get('Uid')}")
    opened = [what for what, said in result["pid1"].items() if said == "open"]
    # bubblewrap's pid 1 is dumpable by design; it holds nothing of the host
    if context["sandbox"] == "namespaces" and opened:
        problems.append(f"pid 1's {opened} open to the program")
    if "mem" in opened:
        problems.append("pid 1's memory open to the program")
    return problems


@_on_result
def _host_view_check(result: Any, outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    from codegen.codemode.sandbox.identities import RANGE

    problems: list[str] = []
    processes = result["processes"]
    if not any(each["inside"] for each in processes.values()):
        return ["no sandboxed process seen from the host"]
    for pid, each in processes.items():
        if "0" in each["uid"] or "0" in each["gid"] or "0" in each["groups"]:
            problems.append(f"{each['name']} ({pid}) runs as {each['uid']}/{each['gid']}")
        if context["host_uid"] == 0 and not all(int(uid) in RANGE for uid in each["uid"]):
            problems.append(f"{each['name']} ({pid}) runs as {each['uid']}, not a uid of its own")
    if result.get("neighbours"):
        problems.append(f"processes outside the sandbox share its uid: {result['neighbours']}")
    if result.get("nobody_reads"):
        problems.append(f"nobody's processes can read the memory of {result['nobody_reads']}")
    return problems


@_on_result
def _seccomp(result: Any, outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    import errno

    from codegen.codemode.sandbox.seccomp import denied_numbers

    problems: list[str] = []
    for name, (_, wanted) in denied_numbers(epoll=False).items():
        if name in result and result[name] != wanted:
            problems.append(f"{name} answered {result[name]}, expected errno {wanted}")
    for name, wanted in (("clone_newuser", errno.EPERM), ("newest_plus_one", errno.ENOSYS)):
        if result[name] != wanted:
            problems.append(f"{name} answered {result[name]}, expected errno {wanted}")
    if result["fork"] != 7 or result["thread"] != ["ran"]:
        problems.append(f"fork or threads broken: {result['fork']}, {result['thread']}")
    return problems


@_on_result
def _fill(result: Any, outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    from codegen.codemode.sandbox.launchers import TMP_BYTES

    problems: list[str] = []
    for path, written in result.items():
        bound = TMP_BYTES if path.startswith("/tmp/") else 0
        if written > bound:
            problems.append(f"{path} took {written} bytes (at most {bound})")
    return problems


def _memory(outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    if not outcome["ok"]:
        text = outcome.get("message", "")
        return [] if "out of memory" in text else [f"the probe failed: {text[:300]}"]
    result = outcome["result"]
    held = (
        result["held_mib"]
        if "held_mib" in result
        else min(result["reported"], result["living"]) * result["each_mib"]
    )
    if held * MIB > context["memory_bound"]:
        return [f"held {held} MiB at once, over the stated bound ({context['memory_how']})"]
    return []


@_on_failure
def _big_error(outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    size = len(outcome["text"].encode())
    problems = []
    if size > PROBE_LIMITS["output_bytes"] + 4096:
        problems.append(f"the error text is {size} bytes")
    if "cut" not in outcome["message"]:
        problems.append("no note of what was cut")
    return problems


@_on_result
def _big_arguments(result: Any, outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if outcome["echoed"]:
        problems.append(f"the tool was called with {outcome['echoed']} bytes")
    if f"at most {PROBE_LIMITS['argument_bytes']}" not in str(result):
        problems.append(f"the program was not told the limit: {str(result)[:200]}")
    return problems


@_on_failure
def _raw_frame(outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    problems = []
    if outcome["echoed"]:
        problems.append(f"the tool was called with {outcome['echoed']} bytes")
    if outcome["kind"] != "invalid-output" or "larger than" not in outcome["message"]:
        problems.append(f"ended as {outcome['kind']}: {outcome['message'][:200]}")
    return problems


@_on_result
def _families(result: Any, outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    import errno

    problems: list[str] = []
    for what, said in result.items():
        local = what.startswith(("AF_UNIX", "unix_pair"))
        if local and said != "opened":
            problems.append(f"{what}: {said}, expected a local socket to open")
        wanted = (errno.EAFNOSUPPORT, "EAFNOSUPPORT")
        if not local and said not in wanted:
            problems.append(f"{what}: {said}, expected EAFNOSUPPORT")
    return problems


@_on_result
def _unbounded_memory(result: Any, outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    import errno

    return [
        f"{name}: {said}, expected EPERM" for name, said in result.items() if said != errno.EPERM
    ]


def _kernel_buffers(outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    """Killed for want of memory (the run's memory cgroup counts kernel buffers) is
    contained; else what the program parked in kernel buffers stays within its share of
    the stated bound (`cgroups.run_memory_bound`)."""
    from codegen.codemode.run_code.run_limits import DESCRIPTORS
    from codegen.codemode.sandbox.cgroups import descriptor_buffer_bytes

    if not outcome["ok"]:
        text = outcome.get("message", "")
        return [] if "out of memory" in text else [f"the probe failed: {text[:300]}"]
    result = outcome["result"]
    problems = []
    if result["descriptors"] > DESCRIPTORS:
        problems.append(f"{result['descriptors']} descriptors open, at most {DESCRIPTORS}")
    bound = DESCRIPTORS * descriptor_buffer_bytes()
    if result["buffered"] > bound:
        problems.append(f"{result['buffered']} bytes in kernel buffers, over {bound}")
    return problems


@_on_result
def _quotas(result: Any, outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    import errno

    from codegen.codemode.run_code.run_limits import DESCRIPTORS

    problems = [
        f"{name}: {said}, expected EPERM"
        for name, said in result["refused"].items()
        if said not in (errno.EPERM, "EPERM")
    ]
    if result["held"] > DESCRIPTORS:
        problems.append(f"the program held {result['held']} watches or sockets")
    problems += [
        f"the host could not make {what} watches while the program ran: {said}"
        for what, said in result["host"].items()
        if said != "ok"
    ]
    return problems


def _contained(outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    """What is wrong with how the compilers of a compile probe ran, and with what is left."""
    from codegen.codemode.run_code.run_limits import DESCRIPTORS, RuntimeLimits
    from codegen.codemode.runtimes.native_emit import GLOBALS, OPTIONS, SOURCE
    from codegen.codemode.sandbox.identities import RANGE

    problems: list[str] = []
    if context["secret"] in json.dumps(outcome):
        problems.append("the planted secret's text is in the run's outcome")
    if outcome["left"]:
        problems.append(f"compilers left running: {outcome['left']}")
    limits = RuntimeLimits(**PROBE_LIMITS)
    wanted = {
        "data": str(limits.memory_bytes),
        "processes": str(limits.processes),
        "files": str(DESCRIPTORS),
    }
    for each in outcome["compilers"]:
        name = f"tsc ({each['pid']})"
        if each["host_namespaces"]:
            problems.append(f"{name} shares the host's {each['host_namespaces']} namespaces")
        if len(each["nspid"]) < 2:
            problems.append(f"{name} runs in the host's pid namespace")
        if each["seccomp"] != "2" or each["no_new_privs"] != "1":
            problems.append(f"{name}: Seccomp {each['seccomp']}, NoNewPrivs {each['no_new_privs']}")
        if int(each["cap_eff"] or "0", 16) != 0:
            problems.append(f"{name} holds capabilities {each['cap_eff']}")
        if "0" in each["uid"] or "0" in each["gid"]:
            problems.append(f"{name} runs as {each['uid']}/{each['gid']}")
        if context["host_uid"] == 0 and not all(int(uid) in RANGE for uid in each["uid"]):
            problems.append(f"{name} runs as {each['uid']}, not a uid of its own")
        if each["sees"]:
            problems.append(f"{name} can open the host's {each['sees']}")
        seen = each["limits"]
        for key, value in wanted.items():
            if seen.get(key) != value:
                problems.append(f"{name}: {key} limit {seen.get(key)}, expected {value}")
        cpu = seen.get("cpu", "unlimited")
        if not cpu.isdigit() or int(cpu) > limits.cpu_seconds + 1:
            problems.append(f"{name}: CPU limit {cpu}, expected {limits.cpu_seconds}")
        if each["argv"][1:] != [*OPTIONS, GLOBALS, SOURCE]:
            problems.append(f"{name} was started as {each['argv'][1:]}")
    return problems


def _compile_identity(outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    problems = _contained(outcome, context)
    if not outcome["compilers"]:
        problems.append("no compiler seen from the host")
    if not outcome["ok"]:
        problems.append(f"the probe failed: {outcome.get('text', '')[:300]}")
    return problems


def _compile_huge(outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    problems = _contained(outcome, context)
    memory = f"{PROBE_LIMITS['memory_bytes'] // MIB} MB"
    if outcome["ok"] or outcome["kind"] != "exception" or memory not in outcome["message"]:
        problems.append(f"not stopped at the memory bound: {outcome.get('text', '')[:300]}")
    return problems


CHECKS: dict[str, Checker] = {
    "compile_identity": _compile_identity,
    "compile_reads": _contained,
    "compile_options": _contained,
    "compile_huge": _compile_huge,
    "sysctl": _sysctl,
    "identity": _identity,
    "host_view": _host_view_check,
    "seccomp": _seccomp,
    "fill": _fill,
    "memory": _memory,
    "big_error": _big_error,
    "big_arguments": _big_arguments,
    "raw_frame": _raw_frame,
    "families": _families,
    "unbounded_memory": _unbounded_memory,
    "kernel_buffers": _kernel_buffers,
    "quotas": _quotas,
}


def problems(name: str, outcome: dict[str, Any], context: dict[str, Any]) -> list[str]:
    return CHECKS[name](outcome, context)
