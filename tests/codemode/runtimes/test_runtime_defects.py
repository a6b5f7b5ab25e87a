"""Regression tests for defects of the Python runtime and the run_code bridge: stderr that is
never drained, quadratic reading, per-call scans, forged protocol messages, orphaned workers,
never-started calls reported as aborted, and cancellation that leaks descriptors, workers or
unretrieved task exceptions. Every bound here is a count or a generous limit, never a tight
timing."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from typing import Any

import psutil
import pytest

from codegen.codemode.calls.cancellation import AbortController, AbortSignal
from codegen.codemode.calls.execution import ToolCall
from codegen.codemode.calls.hooks import ApprovalService, Ask
from codegen.codemode.calls.results import ErrorCode, ToolResult
from codegen.codemode.registry import ToolRegistry, ToolSpec
from codegen.codemode.run_code.code_runtime import Bindings, RunOutput
from codegen.codemode.runtimes import python as python_runtime
from codegen.codemode.runtimes.python import PythonRuntime, RuntimeLimits, worker_source
from conftest import ROOT
from support.cancel_points import cancel_at_every_point, quiesce
from support.codemode_helpers import Recorder, ScriptedRuntime, echo_tool, registry_with, run
from support.descriptors import leaked_since
from support.processes import process_group_gone

# --- helpers ---------------------------------------------------------------------------------


async def echo(args: Any, context: Any) -> Any:
    return {"echo": args}


def code_registry(
    limits: RuntimeLimits | None = None, *specs: ToolSpec
) -> tuple[ToolRegistry, PythonRuntime]:
    registry = ToolRegistry(mode="code")
    registry.register(
        ToolSpec(
            "echo", "Echo.", {"type": "object"}, handler=echo, is_concurrency_safe=lambda a: True
        )
    )
    for spec in specs:
        registry.register(spec)
    runtime = PythonRuntime(limits or RuntimeLimits(timeout=30))
    registry.mount_runtime(runtime)
    return registry, runtime


def execute(registry: ToolRegistry, program: str, **options: Any) -> ToolResult:
    call = ToolCall(
        "run_code", {"code": program, "description": "Run a test program"}, "run", **options
    )
    return run(registry.execute(call))  # type: ignore[no-any-return]


def process_gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_until(condition: Any, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def live_children() -> list[psutil.Process]:
    alive = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.append(child)
    return alive


def assert_no_worker_left(runtime: PythonRuntime) -> None:
    assert runtime.spawned, "no worker was started"
    for pid in runtime.spawned:
        assert wait_until(lambda pid=pid: process_group_gone(pid), 60), (
            f"worker group {pid} is alive"
        )


def forge(line: bytes, then: str = "import time\ntime.sleep(3)\nreturn 'survived'") -> str:
    """A program that writes `line` on the channel to the host as if the worker sent it."""
    return f"import os, sys\nos.write(int(sys.argv[2]), {line!r})\n{then}"


# --- 1. stderr is drained during the run -----------------------------------------------------


def test_raw_writes_to_stderr_do_not_block_the_program() -> None:
    tools, runtime = code_registry(RuntimeLimits(timeout=60))
    result = execute(
        tools,
        "import os\nfor _ in range(10):\n    os.write(2, b'x' * 300_000)\nreturn 'after'",
    )
    assert result.value == {"logs": [], "result": "after"}, result.content
    assert_no_worker_left(runtime)


def test_the_stderr_tail_explains_a_worker_exit_after_a_flood() -> None:
    tools, runtime = code_registry(RuntimeLimits(timeout=60))
    result = execute(
        tools,
        "import os\nos.write(2, b'x' * 3_000_000 + b'\\nlast words\\n')\nos._exit(3)",
    )
    assert result.error is not None and result.error.kind == "worker-exit", result.content
    assert "exited with code 3" in result.content and "last words" in result.content
    assert len(result.content) < 2000, "only a tail of stderr is kept"
    assert_no_worker_left(runtime)


def test_stderr_writes_are_not_logs_and_do_not_count_as_output() -> None:
    tools, _ = code_registry(RuntimeLimits(timeout=60, output_bytes=1000))
    result = execute(tools, "import os\nos.write(2, b'y' * 200_000)\nprint('ok')\nreturn 1")
    assert result.value == {"logs": ["ok"], "result": 1}, result.content


# --- 2. reading large messages is linear ----------------------------------------------------


def load_worker() -> dict[str, Any]:
    """The worker's module namespace, loaded in this process (its `main` does not run)."""
    namespace: dict[str, Any] = {"__name__": "codegen_worker_under_test"}
    exec(compile(worker_source(), "worker.py", "exec"), namespace)
    return namespace


class ChunkedPipe:
    """Stands in for `os` in the worker: `read` hands out prepared chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.reads = 0

    def read(self, fd: int, size: int) -> bytes:
        chunk = self.chunks[self.reads]
        self.reads += 1
        return chunk


@pytest.mark.slow
def test_the_worker_reads_a_long_message_in_linear_time() -> None:
    # A 16 MB result arriving in 32-byte pieces: 524,288 reads. Appending each piece to one
    # growing buffer and searching all of it again touches about 4 TB (many minutes); a
    # linear reader needs about a second, so the bound below has a wide margin.
    worker = load_worker()
    channel = worker["_Channel"](-1, -1)
    value = "v" * (16 * 1024 * 1024)
    data = (json.dumps({"type": "result", "id": 1, "ok": True, "value": value}) + "\n").encode()
    chunks = [data[i : i + 32] for i in range(0, len(data), 32)]
    pipe = ChunkedPipe(chunks)
    worker["os"] = pipe
    loop = asyncio.new_event_loop()
    try:
        future = loop.create_future()
        channel.pending[1] = future
        budget = time.process_time() + 60  # CPU seconds: a busy machine does not use them up
        while pipe.reads < len(chunks):
            channel.on_readable()
            assert time.process_time() < budget, f"read {pipe.reads} of {len(chunks)} pieces"
        assert future.result() == value
    finally:
        loop.close()


def test_the_worker_channel_splits_lines_across_chunks() -> None:
    worker = load_worker()
    answers = [
        b'{"type": "result", "id": 1, "ok": true, "value": "a\\nb"}\n{"type": "res',
        b'ult", "id": 2, "ok": false, "name": "t", "message": "no"}\n{"type": "result", ',
        b'"id": 3, "ok": true, "value": 3}',
        b"\n",
    ]
    pipe = ChunkedPipe(answers)
    worker["os"] = pipe
    channel = worker["_Channel"](-1, -1)
    loop = asyncio.new_event_loop()
    try:
        futures = [loop.create_future() for _ in range(3)]
        channel.pending.update(enumerate(futures, start=1))
        channel.on_readable()
        assert futures[0].result() == "a\nb" and not futures[1].done()
        channel.on_readable()
        assert futures[1].exception().message == "no" and not futures[2].done()
        channel.on_readable()
        assert not futures[2].done()
        channel.on_readable()
        assert futures[2].result() == 3
    finally:
        loop.close()


def test_a_large_tool_result_reaches_the_program() -> None:
    size = 16 * 1024 * 1024

    async def big(args: Any, context: Any) -> Any:
        return "z" * size

    tools, runtime = code_registry(
        RuntimeLimits(timeout=60), ToolSpec("big", "Big.", {"type": "object"}, handler=big)
    )
    result = execute(tools, "value = await tools.big({})\nreturn [len(value), value[:3]]")
    assert result.value == {"logs": [], "result": [size, "zzz"]}, result.content[:500]
    assert_no_worker_left(runtime)


# --- 3. and 4. pending calls: a live count, and a reused id is a protocol violation ----------


@pytest.mark.slow
def test_the_pending_call_table_holds_only_pending_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    original = python_runtime._WorkerRun._call

    def recording(self: Any, message: dict[str, Any], size: int) -> None:
        sizes.append(len(self.calls))
        original(self, message, size)

    monkeypatch.setattr(python_runtime._WorkerRun, "_call", recording)
    tools, _ = code_registry(RuntimeLimits(timeout=60, max_pending_calls=3))
    result = execute(
        tools, "for i in range(2000):\n    await tools.echo({'i': i})\nreturn 'all answered'"
    )
    assert result.value == {"logs": [], "result": "all answered"}, result.content
    assert len(sizes) == 2000
    assert max(sizes) <= 1, "answered calls must leave the table: each call costs O(1)"


@pytest.mark.parametrize(
    "message",
    [
        {"type": "call", "id": 10_000, "name": "wait", "args": {}},
        {"type": "call", "id": True, "name": "wait", "args": {}},
    ],
    ids=["same id ten times", "boolean id"],
)
def test_a_reused_or_boolean_call_id_is_invalid_output(message: dict[str, Any]) -> None:
    async def wait(args: Any, context: Any) -> Any:
        await asyncio.sleep(30)

    tools, runtime = code_registry(
        RuntimeLimits(timeout=30, max_pending_calls=3),
        ToolSpec(
            "wait", "Wait.", {"type": "object"}, handler=wait, is_concurrency_safe=lambda a: True
        ),
    )
    line = (json.dumps(message) + "\n").encode() * 10
    result = execute(tools, forge(line))
    assert result.code == ErrorCode.CODE_RUN_FAILED, result.content
    assert result.error is not None and result.error.kind == "invalid-output", result.content
    assert_no_worker_left(runtime)


def test_distinct_pending_calls_still_hit_the_limit() -> None:
    tools, _ = code_registry(RuntimeLimits(timeout=30, max_pending_calls=4))
    lines = b"".join(
        (json.dumps({"type": "call", "id": 10_000 + i, "name": "echo", "args": {}}) + "\n").encode()
        for i in range(5)
    )
    # the answers cannot arrive before the host has read all five lines from one write
    result = execute(tools, forge(lines))
    assert result.error is not None and result.error.kind in ("exception", "invalid-output")
    assert "pending" in result.content


# --- 5. the worker dies with its host --------------------------------------------------------

HOST = """
import asyncio, sys
from codegen.codemode.runtimes.python import PythonRuntime, RuntimeLimits
from codegen.codemode.run_code.code_runtime import Bindings
from codegen.codemode.calls.cancellation import AbortController

async def main():
    runtime = PythonRuntime(RuntimeLimits(timeout=600))

    async def call(name, args):
        print(runtime.spawned[0], flush=True)
        return None

    program = "await tools.ready({})\\nimport time\\ntime.sleep(300)"
    await runtime.run(program, Bindings(("ready",), call), AbortController().signal)

asyncio.run(main())
"""


def test_a_killed_host_leaves_no_worker() -> None:
    host = subprocess.Popen(
        [sys.executable, "-c", HOST],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    worker = 0
    try:
        assert host.stdout is not None
        worker = int(host.stdout.readline())
        assert not process_gone(worker), "the worker runs its program"
        host.send_signal(signal.SIGKILL)
        host.wait(30)
        assert wait_until(lambda: process_gone(worker), 60), f"worker {worker} outlived its host"
    finally:
        host.kill()
        host.wait(30)
        if worker:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(worker, signal.SIGKILL)


def test_a_worker_whose_host_is_already_gone_exits_at_once() -> None:
    read_fd, write_fd = os.pipe()
    reply_read, reply_write = os.pipe()
    try:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-c",
                worker_source(),
                str(read_fd),
                str(reply_write),
                str(os.getpid() + 1),  # not its parent
            ],
            pass_fds=(read_fd, reply_write),
            stderr=subprocess.DEVNULL,
        )
        try:
            # the host it was told about is not its parent: that host is gone, so the worker
            # must not wait for a start message (the write end stays open here)
            assert worker.wait(30) == 0
        finally:
            worker.kill()
            worker.wait()
    finally:
        for fd in (read_fd, write_fd, reply_read, reply_write):
            os.close(fd)


# --- 6. forged messages that JSON decoding or later encoding would choke on ----------------

DEEP = "[" * 100_000 + "]" * 100_000
OVER_LIMIT = "[" * 300 + "]" * 300

FORGED = [
    ("done NaN", '{"type": "done", "result": NaN}'),
    ("done Infinity", '{"type": "done", "result": [-Infinity]}'),
    ("done overflowing float", '{"type": "done", "result": 1e400}'),
    ("done deep", '{"type": "done", "result": ' + DEEP + "}"),
    ("done over the limit", '{"type": "done", "result": ' + OVER_LIMIT + "}"),
    ("call NaN", '{"type": "call", "id": 10000, "name": "echo", "args": {"x": NaN}}'),
    ("call deep", '{"type": "call", "id": 10000, "name": "echo", "args": ' + DEEP + "}"),
    (
        "call over the limit",
        '{"type": "call", "id": 10000, "name": "echo", "args": ' + OVER_LIMIT + "}",
    ),
    ("log deep", '{"type": "log", "text": ' + DEEP + "}"),
    ("log NaN beside the text", '{"type": "log", "text": "x", "at": NaN}'),
    ("log lone surrogate", '{"type": "log", "text": "\\ud800"}'),
    ("error deep", '{"type": "error", "kind": "exception", "message": ' + DEEP + "}"),
    ("invalid UTF-8", b'{"type": "log", "text": "\xff"}'),
]


@pytest.mark.slow
@pytest.mark.parametrize("line", [f[1] for f in FORGED], ids=[f[0] for f in FORGED])
def test_forged_messages_are_invalid_output(line: str | bytes) -> None:
    tools, runtime = code_registry(RuntimeLimits(timeout=30))
    data = line if isinstance(line, bytes) else line.encode()
    result = execute(tools, forge(data + b"\n"))
    assert result.code == ErrorCode.CODE_RUN_FAILED, ascii(result.content[:500])
    assert result.error is not None, ascii(result.content[:500])
    assert result.error.kind == "invalid-output", ascii(result.content[:500])
    assert_no_worker_left(runtime)


def test_values_at_the_depth_limit_still_travel() -> None:
    tools, _ = code_registry(RuntimeLimits(timeout=30))
    program = (
        "def nest(levels):\n    value = 1\n    for _ in range(levels):\n        value = [value]\n"
        "    return value\n"
        "back = await tools.echo({'v': nest(255)})\n"  # the arguments nest 256 levels
        "assert back == {'echo': {'v': nest(255)}}\n"
        "return nest(256)"
    )
    result = execute(tools, program)
    assert not result.is_error, result.content[:500]
    depth, value = 0, result.value["result"]
    while isinstance(value, list):
        depth, value = depth + 1, value[0]
    assert (depth, value) == (256, 1)
    nest = "value = {}\nfor _ in range({}):\n    value = [value]\nreturn value"
    for innermost, levels in [("1", 257), ("[]", 256)]:
        refused = execute(tools, nest.format(innermost, levels))
        assert refused.error is not None, refused.content[:200]
        assert refused.error.kind == "invalid-output", refused.content[:200]
        assert "nested too deeply" in refused.content


# --- 7. a call that never started is abandoned, not aborted ----------------------------------


def never_started_registry(second_safe: bool, recorder: Recorder) -> tuple[ToolRegistry, list[Any]]:
    futures: list[Any] = []
    gate = asyncio.Event()

    async def first(args: Any, context: Any) -> Any:
        recorder.add("first started")
        gate.set()
        await asyncio.sleep(0.2)
        return "first done"

    async def second(args: Any, context: Any) -> Any:
        recorder.add("second started")
        return "second done"

    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        futures.append(asyncio.ensure_future(bindings.call("first", {})))
        await gate.wait()  # the first call is in flight
        futures.append(asyncio.ensure_future(bindings.call("second", {})))
        for _ in range(20):  # the second call is taken off the queue and waits for its turn
            await asyncio.sleep(0)
        return RunOutput(result="left early")

    registry = registry_with(
        "code",
        ToolSpec("first", "", handler=first, is_concurrency_safe=lambda a: True),
        ToolSpec("second", "", handler=second, is_concurrency_safe=lambda a: second_safe),
        runtime=ScriptedRuntime(script),
        max_parallel_sub_calls=1,
    )
    registry.add_observer(
        lambda e, r: recorder.add(f"result {r.call_id} {r.code} {r.error and r.error.message}")
    )
    return registry, futures


def outcomes(futures: list[Any]) -> list[str]:
    """What each call's await raised (retrieving every exception)."""
    return [str(f.exception()) if not f.cancelled() else "cancelled" for f in futures]


@pytest.mark.parametrize(
    "second_safe", [True, False], ids=["waiting for a slot", "waiting to run alone"]
)
def test_a_call_waiting_for_its_turn_when_the_run_ends_is_abandoned(second_safe: bool) -> None:
    recorder = Recorder()
    registry, futures = never_started_registry(second_safe, recorder)
    result = run(registry.execute(ToolCall("run_code", {"code": "p", "description": "d"}, "outer")))
    assert result.value == {"logs": [], "result": "left early"}
    assert outcomes(futures) == [
        "tool call aborted",
        "run_code settled; second tool call abandoned",
    ]
    assert recorder.events == [
        "first started",
        "result outer:code:1 ABORTED tool call aborted",  # it had started: aborted, drained
        "result outer:code:2 ABORTED_BEFORE_DISPATCH run_code settled; second tool call abandoned",
        "result outer None None",
    ]


def test_a_call_waiting_behind_a_commit_when_the_run_ends_is_abandoned() -> None:
    recorder = Recorder()
    futures: list[Any] = []
    committing = asyncio.Event()

    async def post(execution: Any, result: Any) -> None:
        if execution.call_id == "outer:code:1":
            committing.set()
            await asyncio.sleep(0.2)

    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        futures.append(asyncio.ensure_future(bindings.call("echo", {})))
        await committing.wait()  # the first call's commit holds the ordered stages
        futures.append(asyncio.ensure_future(bindings.call("echo", {})))
        for _ in range(20):
            await asyncio.sleep(0)
        return RunOutput(result="left early")

    registry = registry_with(
        "code", echo_tool(recorder=recorder, safe=True), runtime=ScriptedRuntime(script)
    )
    registry.add_post_execute(post)
    registry.add_dispatch_observer(lambda e: recorder.add(f"event {e.kind} {e.sub_call_id}"))
    result = run(registry.execute(ToolCall("run_code", {"code": "p", "description": "d"}, "outer")))
    assert result.value == {"logs": [], "result": "left early"}
    assert "event start outer:code:2" not in recorder.events
    assert "start echo outer:code:2" not in recorder.events
    assert outcomes(futures)[1] == "run_code settled; echo tool call abandoned"


class WaitingApproval(ApprovalService):
    """Answers only when the call is aborted, with "cancelled"."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()

    async def request(self, execution: Any, reason: str | None) -> Any:
        self.asked.set()
        await execution.signal.wait()
        return "cancelled"


def test_a_call_in_policy_when_the_run_ends_is_abandoned() -> None:
    recorder = Recorder()
    futures: list[Any] = []
    approval = WaitingApproval()

    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        futures.append(asyncio.ensure_future(bindings.call("echo", {})))
        await approval.asked.wait()
        return RunOutput(result="left early")

    registry = registry_with("code", echo_tool(recorder=recorder), runtime=ScriptedRuntime(script))
    registry.set_approval_service(approval)
    registry.add_pre_execute(lambda e: Ask("check") if e.nested else None)
    registry.add_observer(lambda e, r: recorder.add(f"result {r.call_id} {r.code}"))
    result = run(registry.execute(ToolCall("run_code", {"code": "p", "description": "d"}, "outer")))
    assert result.value == {"logs": [], "result": "left early"}
    assert outcomes(futures) == ["run_code settled; echo tool call abandoned"]
    assert recorder.events == [
        "result outer:code:1 ABORTED_BEFORE_DISPATCH",
        "result outer None",
    ]


# --- 8. cancellation leaks nothing ------------------------------------------------------------


@pytest.mark.slow
def test_cancelling_runs_at_any_point_leaks_nothing(caplog: pytest.LogCaptureFixture) -> None:
    # Every run is cancelled within milliseconds of its start: none may end by its timeout
    # (a cancellation lost as the worker's `ready` line arrived once let runs go on until
    # it); 5 s still lets the first run make the launcher and start a worker on a loaded
    # machine.
    runtime = PythonRuntime(RuntimeLimits(timeout=5))
    problems: list[dict[str, Any]] = []

    async def call(name: str, args: Any) -> Any:
        return None

    async def scenario() -> tuple[dict[str, str], list[int]]:
        asyncio.get_running_loop().set_exception_handler(
            lambda _, context: problems.append(context)
        )
        program = "import time\ntime.sleep(30)"
        return await cancel_at_every_point(runtime, Bindings((), call), program, 200, 0.0002)

    gc.collect()  # what earlier tests left behind is not this test's
    with caplog.at_level("ERROR", logger="asyncio"):
        before, timed_out = run(scenario())
        gc.collect()
    leaked = leaked_since(before)
    assert not leaked, leaked
    assert timed_out == [], "cancelled runs went on until their timeout"
    assert wait_until(lambda: not live_children(), 60), f"workers left: {live_children()}"
    messages = [str(p.get("message")) for p in problems] + [r.getMessage() for r in caplog.records]
    assert messages == []


@pytest.mark.slow
def test_an_aborted_run_leaves_no_unretrieved_task_exception() -> None:
    tools, runtime = code_registry(RuntimeLimits(timeout=30))
    problems: list[dict[str, Any]] = []
    controller = AbortController()

    async def scenario() -> ToolResult:
        asyncio.get_running_loop().set_exception_handler(
            lambda _, context: problems.append(context)
        )
        call = ToolCall(
            "run_code",
            {"code": "await tools.echo({})\nimport time\ntime.sleep(30)", "description": "Sleep"},
            "run",
            signal=controller.signal,
        )
        task = asyncio.ensure_future(tools.execute(call))
        while not runtime.spawned:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)
        controller.abort("user stopped it")
        result = await task
        await quiesce()
        return result

    gc.collect()
    result = run(scenario())
    gc.collect()
    assert result.code == ErrorCode.ABORTED
    assert [str(p.get("message")) for p in problems] == []
    assert_no_worker_left(runtime)


def test_the_worker_holds_exactly_its_channel_and_standard_descriptors() -> None:
    tools, _ = code_registry()
    result = execute(
        tools,
        textwrap.dedent(
            """
            import os, sys
            seen = {}
            for fd in os.listdir("/proc/self/fd"):
                try:
                    seen[fd] = os.readlink(f"/proc/self/fd/{fd}")
                except OSError:
                    pass
            return {"fds": seen, "channel": [int(sys.argv[1]), int(sys.argv[2])]}
            """
        ),
    )
    assert not result.is_error, result.content
    info = result.value["result"]
    fds = {int(fd): target for fd, target in info["fds"].items()}
    pipes = {fd for fd, target in fds.items() if target.startswith("pipe:")}
    assert pipes == {2, *info["channel"]}, fds
    assert fds[0] == fds[1] == "/dev/null"
    others = {fd: t for fd, t in fds.items() if fd not in pipes and fd not in (0, 1)}
    # the worker's own event loop (epoll, self-pipe socket pair) and the listing itself
    assert all(
        t.startswith(("anon_inode:", "socket:")) or t.startswith("/proc/") for t in others.values()
    ), others
