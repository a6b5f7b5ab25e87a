"""TypeScript programs are contained like Python ones: under each sandbox they see only Node,
its libraries and a private /tmp; the host's environment, processes, descriptors, files and
network are out of reach; and the defects fixed for the Python runtime stay fixed on the
shared host (no leftover process after a killed host, no leaked descriptor after cancelling
at any point, a drained stderr that explains an early exit, forged messages refused).

A sandbox that cannot start here fails these tests (nothing is skipped), as in
`test_sandbox.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from sandbox_checks import (
    BINDINGS,
    SANDBOXES,
    SECRET,
    assert_no_process_left,
    host_secret,  # noqa: F401  (an autouse fixture: it must be in the module)
    staged,
    text_of,
)

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.run_code.code_runtime import Bindings, CodeRunFailed, RunOutput
from codegen.codemode.run_code.run_limits import RuntimeLimits
from processes import TS_WORKER_MARK, left_processes
from typescript_nodes import ROOT, SETUPS, WHEEL_NODE, runtime


async def run_program(
    program: str, sandbox: str, limits: RuntimeLimits | None, setup: str
) -> RunOutput | CodeRunFailed:
    mounted = runtime(setup, limits or RuntimeLimits(timeout=30), sandbox=sandbox, spare=False)
    try:
        return await mounted.run(program, BINDINGS, AbortController().signal)
    except CodeRunFailed as failure:
        return failure
    finally:
        await mounted.aclose()


def run(
    program: str,
    sandbox: str = "auto",
    limits: RuntimeLimits | None = None,
    setup: str = "transpile",
) -> Any:
    outcome = asyncio.run(run_program(program, sandbox, limits, setup))
    assert_no_process_left()
    return outcome


@pytest.mark.parametrize("setup", list(SETUPS))
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_every_sandbox_starts_here(sandbox: str, setup: str) -> None:
    program = """
const fs = await import("node:fs");
const etc = fs.existsSync("/etc") ? fs.readdirSync("/etc") : [];
return [process.getuid(), fs.readdirSync("/").sort(), etc, process.cwd(), process.pid];
"""
    outcome = run(program, sandbox, setup=setup)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    uid, top, etc, cwd, pid = outcome.result
    assert uid == 65534 and cwd == "/tmp" and pid == 2
    # only the folders the set-up's own programs live in (Node under /root with pyenv)
    needed = {
        os.path.realpath(path).split("/")[1]
        for key, path in SETUPS[setup].items()
        if key in ("node", "typescript") and path and sandbox != "bubblewrap"
    }
    forbidden = {"home", "var", "bin", "sbin", "srv", "opt", "boot", "root"} - needed
    assert not forbidden & set(top), top
    assert set(etc) <= {"ld.so.cache"}, etc


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_shell_and_no_programs(sandbox: str) -> None:
    program = """
const fs = await import("node:fs");
return ["/bin/sh", "/usr/bin/env", "/usr/bin/python3"].filter((path) => fs.existsSync(path));
"""
    outcome = run(program, sandbox)
    assert isinstance(outcome, RunOutput) and outcome.result == [], text_of(outcome)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_host_environment_and_processes_are_unreachable(sandbox: str) -> None:
    program = f"""
const fs = await import("node:fs");
const seen: string[] = [];
const pids = fs.readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name)).map(Number);
for (const pid of [...pids, {os.getpid()}, process.ppid]) {{
  try {{
    seen.push(fs.readFileSync(`/proc/${{pid}}/environ`, "latin1"));
  }} catch (error) {{
    seen.push(String(error));
  }}
}}
return [seen, pids.sort((a, b) => a - b), {{ ...process.env }}];
"""
    outcome = run(program, sandbox)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    assert SECRET not in text_of(outcome)
    _, pids, environment = outcome.result
    assert max(pids) < 10, pids  # only the sandbox's own processes
    assert "CODEGEN_HOST_SECRET" not in environment


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_host_file_descriptors_are_unreachable(sandbox: str) -> None:
    program = f"""
const fs = await import("node:fs");
const opened: number[] = [];
for (let fd = 0; fd < 64; fd++) {{
  try {{
    fs.closeSync(fs.openSync(`/proc/{os.getpid()}/fd/${{fd}}`, "w"));
    opened.push(fd);
  }} catch {{}}
}}
return opened;
"""
    outcome = run(program, sandbox)
    assert isinstance(outcome, RunOutput) and outcome.result == [], text_of(outcome)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_network_to_the_host(sandbox: str) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    program = f"""
const net = await import("node:net");
return await new Promise((resolve) => {{
  const socket = net.connect({port}, "127.0.0.1", () => resolve("connected"));
  socket.on("error", (error: any) => resolve(error.code));
  setTimeout(() => resolve("timed out"), 3000);
}});
"""
    try:
        outcome = run(program, sandbox)
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    assert isinstance(outcome, RunOutput) and outcome.result != "connected", text_of(outcome)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_host_files_are_out_of_reach(sandbox: str, tmp_path: Path) -> None:
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(SECRET)
    target = tmp_path / "written.txt"
    library = ROOT / "node_modules" / "typescript" / "codegen-sandbox-write-test"
    program = f"""
const fs = await import("node:fs");
const results: Record<string, string> = {{}};
for (const path of [{json.dumps(str(target))}, {json.dumps(str(library))}, "/usr/lib/x", "/x"]) {{
  try {{
    fs.writeFileSync(path, "escaped");
    results[path] = "written";
  }} catch (error: any) {{
    results[path] = error.code;
  }}
}}
try {{
  results.read = fs.readFileSync({json.dumps(str(secret_file))}, "utf8");
}} catch (error: any) {{
  results.read = error.code;
}}
fs.writeFileSync("/tmp/scratch", "ok");
results.tmp = fs.readFileSync("/tmp/scratch", "utf8");
return results;
"""
    outcome = run(program, sandbox)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    results = outcome.result
    assert results.pop("tmp") == "ok"  # the private working directory is writable
    assert "written" not in results.values() and SECRET not in text_of(outcome), results
    assert not target.exists() and not library.exists()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_file_size_is_limited(sandbox: str) -> None:
    program = """
const fs = await import("node:fs");
const block = Buffer.alloc(1 << 20, 120);
const fd = fs.openSync("/tmp/big", "w");
for (let i = 0; i < 200; i++) fs.writeSync(fd, block);
return "wrote 200 MB";
"""
    outcome = run(program, sandbox)
    assert isinstance(outcome, CodeRunFailed), text_of(outcome)
    assert outcome.kind in ("exception", "worker-exit"), text_of(outcome)


def test_a_sandbox_that_cannot_start_fails_the_run_clearly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from codegen.codemode.sandbox import launchers as module

    node = SETUPS["transpile"]["node"]
    monkeypatch.setenv("PATH", "/nonexistent")
    module._launcher.cache_clear()
    try:
        outcome = asyncio.run(
            runtime("transpile", node=node, sandbox="bubblewrap", spare=False).run(
                "return 1", BINDINGS, AbortController().signal
            )
        )
    except CodeRunFailed as failure:
        outcome = failure
    finally:
        module._launcher.cache_clear()
    assert isinstance(outcome, CodeRunFailed) and outcome.kind == "worker-exit"
    assert "apt-get install bubblewrap" in str(outcome)


@pytest.mark.slow
def test_many_runs_leave_no_descriptor_and_no_process() -> None:
    async def many() -> list[Any]:
        mounted = runtime("strip", RuntimeLimits(timeout=30))
        try:
            await mounted.run("return 0", BINDINGS, AbortController().signal)
            await mounted.aclose()
            before = len(os.listdir("/proc/self/fd"))
            outcomes = [
                await mounted.run(f"return {index}", BINDINGS, AbortController().signal)
                for index in range(60)
            ]
            await mounted.aclose()
            assert len(os.listdir("/proc/self/fd")) == before
            return outcomes
        finally:
            await mounted.aclose()

    outcomes = asyncio.run(many())
    assert [o.result for o in outcomes] == list(range(60))
    assert_no_process_left()


def test_concurrent_sandboxed_runs() -> None:
    async def together() -> list[Any]:
        mounted = runtime("strip", RuntimeLimits(timeout=120))
        before = len(os.listdir("/proc/self/fd"))
        try:
            program = "const r = await tools.echo({ x: 1 });\nreturn r.args.x;"
            outcomes = await asyncio.gather(
                *(mounted.run(program, BINDINGS, AbortController().signal) for _ in range(12)),
                return_exceptions=True,
            )
        finally:
            await mounted.aclose()
        assert len(os.listdir("/proc/self/fd")) == before
        return outcomes

    outcomes = asyncio.run(together())
    assert all(isinstance(o, RunOutput) and o.result == 1 for o in outcomes), outcomes[:3]
    assert_no_process_left()


# --- defects of the shared host, checked with the TypeScript worker -------------------------


def test_the_stderr_tail_explains_a_worker_exit_after_a_flood() -> None:
    program = (
        "const fs = await import('node:fs');\nfs.writeSync(2, 'x'.repeat(3_000_000));"
        "\nfs.writeSync(2, '\\nlast words\\n');\nprocess.exit(3);"
    )
    outcome = run(program, "none")
    assert isinstance(outcome, CodeRunFailed) and outcome.kind == "worker-exit", text_of(outcome)
    assert "exited with code 3" in outcome.message and "last words" in outcome.message
    assert len(outcome.message) < 2000, "only a tail of stderr is kept"


@pytest.mark.parametrize(
    "line",
    [
        '{"type": "done", "result": NaN}',
        '{"type": "call", "id": 10000, "name": "echo", "args": ' + "[" * 300 + "]" * 300 + "}",
        '{"type": "log", "text": "\\ud800"}',
        '{"type": "call", "id": 1, "name": "echo", "args": {}}',  # the id of a pending call
    ],
    ids=["NaN", "too deep", "lone surrogate", "reused id"],
)
def test_forged_messages_are_invalid_output(line: str) -> None:
    program = (
        "tools.echo({});\nconst fs = await import('node:fs');"
        f"\nfs.writeSync(Number(process.argv[3]), {json.dumps(line + chr(10))});"
        "\nawait new Promise((resolve) => setTimeout(resolve, 3000));\nreturn 'survived';"
    )

    async def slow(name: str, arguments: Any) -> Any:
        await asyncio.sleep(10)

    async def attempt() -> Any:
        mounted = runtime("strip", RuntimeLimits(timeout=30), sandbox="none", spare=False)
        try:
            return await mounted.run(program, Bindings(("echo",), slow), AbortController().signal)
        except CodeRunFailed as failure:
            return failure
        finally:
            await mounted.aclose()

    outcome = asyncio.run(attempt())
    assert isinstance(outcome, CodeRunFailed) and outcome.kind == "invalid-output", text_of(outcome)
    assert_no_process_left()


def test_the_worker_holds_exactly_its_channel_and_standard_descriptors() -> None:
    program = """
const fs = await import("node:fs");
const seen: Record<string, string> = {};
for (const fd of fs.readdirSync("/proc/self/fd")) {
  try {
    seen[fd] = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {}
}
return { fds: seen, channel: [Number(process.argv[2]), Number(process.argv[3])] };
"""
    outcome = run(program, "none")
    assert isinstance(outcome, RunOutput), text_of(outcome)
    fds = {int(fd): target for fd, target in outcome.result["fds"].items()}
    pipes = {fd for fd, target in fds.items() if target.startswith("pipe:")}
    channel = set(outcome.result["channel"])
    # Node's own event loop adds pipes, eventfds and epoll; none of them is the host's
    assert {2, *channel} <= pipes, fds
    assert fds[0] == fds[1] == "/dev/null"
    host = {
        os.readlink(f"/proc/self/fd/{fd}")
        for fd in os.listdir("/proc/self/fd")
        if os.path.exists(f"/proc/self/fd/{fd}")
    }
    ours = (0, 1, 2, *channel)
    leaked = {fd: t for fd, t in fds.items() if t in host - {"/dev/null"} and fd not in ours}
    assert not leaked, leaked


HOST = """
import asyncio, sys
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.run_code.code_runtime import Bindings
from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.runtimes.typescript import TypeScriptRuntime

async def main():
    runtime = TypeScriptRuntime(
        RuntimeLimits(timeout=600), node=sys.argv[1], stripper="node", sandbox=sys.argv[2]
    )

    async def call(name, args):
        print("running", flush=True)
        return None

    program = sys.argv[3]
    await runtime.run(program, Bindings(("ready",), call), AbortController().signal)

asyncio.run(main())
"""


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "auto"])
@pytest.mark.parametrize(
    "program",
    [
        "await tools.ready({});\nAtomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);",
        "await tools.ready({});\nwhile (true) {}",
    ],
    ids=["blocked", "busy"],
)
def test_a_killed_host_leaves_no_worker(sandbox: str, program: str) -> None:
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, staged(SETUPS["strip"]["node"]), sandbox, program],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert host.stdout is not None
        assert host.stdout.readline() == b"running\n"
        workers = left_processes((TS_WORKER_MARK,))
        assert workers, "the worker runs its program"
        host.send_signal(signal.SIGKILL)
        host.wait(30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(p.is_running() for p in workers):
            psutil.wait_procs(workers, timeout=0.2)
        alive = [p for p in workers if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert not alive, f"workers outlived their host: {alive}"
    finally:
        host.kill()
        host.wait(30)
        for process in left_processes((TS_WORKER_MARK,)):
            with contextlib.suppress(psutil.Error):
                process.kill()


@pytest.mark.slow
def test_cancelling_runs_at_any_point_leaks_nothing(caplog: pytest.LogCaptureFixture) -> None:
    mounted = runtime("strip", RuntimeLimits(timeout=30))
    problems: list[dict[str, Any]] = []

    async def scenario() -> tuple[int, int]:
        asyncio.get_running_loop().set_exception_handler(
            lambda _, context: problems.append(context)
        )
        warm = await mounted.run("return 1", BINDINGS, AbortController().signal)
        assert warm.result == 1
        await mounted.aclose()
        await quiesce()
        before = len(os.listdir("/proc/self/fd"))
        for index in range(80):
            task = asyncio.ensure_future(
                mounted.run("await new Promise(() => {})", BINDINGS, AbortController().signal)
            )
            if index % 2 == 0:
                for _ in range(index // 2 % 12):
                    await asyncio.sleep(0)
            else:
                await asyncio.sleep(0.0005 * (index // 2 % 10))
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, CodeRunFailed):
                await task
        await mounted.aclose()
        await quiesce()
        return before, len(os.listdir("/proc/self/fd"))

    gc.collect()
    with caplog.at_level("ERROR", logger="asyncio"):
        before, after = asyncio.run(scenario())
        gc.collect()
    assert after == before, f"{after - before} descriptors leaked"
    assert_no_process_left()
    messages = [str(p.get("message")) for p in problems] + [r.getMessage() for r in caplog.records]
    assert messages == []


async def quiesce() -> None:
    current = asyncio.current_task()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not [t for t in asyncio.all_tasks() if t is not current and not t.done()]:
            break
        await asyncio.sleep(0.05)
    for _ in range(20):
        await asyncio.sleep(0)
    gc.collect()
    await asyncio.sleep(0.05)


@pytest.mark.parametrize("sandbox", ("bubblewrap", "namespaces"))
def test_a_node_under_the_hosts_tmp_runs_sandboxed(sandbox: str) -> None:
    """The sandbox mounts a private `/tmp`; a Node (or checkout, or virtual environment)
    that lives under the host's `/tmp` is still bound into it, not hidden by it."""
    # a folder of its own right under /tmp: the sandbox's uid on a root host must reach it
    folder = Path(tempfile.mkdtemp(prefix="codegen-node-", dir="/tmp"))
    os.chmod(folder, 0o755)
    node = folder / "node"
    try:
        os.link(WHEEL_NODE, node)  # a hard link: a real file under /tmp, no 100 MB copy
    except OSError:
        shutil.copy2(WHEEL_NODE, node)
    mounted = runtime("strip", RuntimeLimits(timeout=30), node=str(node), sandbox=sandbox)

    async def scenario() -> RunOutput | CodeRunFailed:
        try:
            return await mounted.run("return process.cwd()", BINDINGS, AbortController().signal)
        except CodeRunFailed as failure:
            return failure
        finally:
            await mounted.aclose()

    try:
        outcome = asyncio.run(scenario())
    finally:
        shutil.rmtree(folder)
    assert isinstance(outcome, RunOutput), text_of(outcome)
    assert outcome.result == "/tmp"
