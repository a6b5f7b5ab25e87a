"""The real Python runtime: programs in a fresh worker process, their calls through the
registry, and hostile programs that must end with the right failure kind and leave no
process behind."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import pytest

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.calls.execution import ToolCall
from codegen.codemode.calls.results import ErrorCode, ToolResult
from codegen.codemode.registry import ToolRegistry, ToolSpec
from codegen.codemode.runtimes.python import PythonRuntime, RuntimeLimits
from codemode_helpers import run
from processes import WORKER_MARK, left_processes, process_group_gone


async def read_file(args: Any, context: Any) -> Any:
    return {"path": args["path"], "content": f"contents of {args['path']}"}


async def get_user(args: Any, context: Any) -> Any:
    if args["id"] == "404":
        raise LookupError("no such user")
    return {"id": args["id"], "name": "Ada"}


def tools_registry(check: str = "off") -> ToolRegistry:
    """A Code Mode registry of `read_file` (concurrency-safe, closed arguments) and
    `get-user` (a name that is not an identifier), which the runtime tests call. Programs
    are not checked before they run unless `check` says so: these tests are about what the
    runtime does with a mistake (test_codemode_check.py covers the check)."""
    registry = ToolRegistry(mode="code", check=check)  # type: ignore[arg-type]
    registry.register(
        ToolSpec(
            "read_file",
            "Read a file.",
            {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
                "additionalProperties": False,
            },
            handler=read_file,
            is_concurrency_safe=lambda args: True,
        )
    )
    registry.register(
        ToolSpec(
            "get-user",
            "Fetch a user.",
            {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            handler=get_user,
        )
    )
    return registry


def registry(limits: RuntimeLimits | None = None) -> tuple[ToolRegistry, PythonRuntime]:
    registry = tools_registry()
    runtime = PythonRuntime(limits or RuntimeLimits(timeout=20))
    registry.mount_runtime(runtime)
    return registry, runtime


def execute(registry: ToolRegistry, program: str, **options: Any) -> ToolResult:
    call = ToolCall(
        "run_code", {"code": program, "description": "Run a test program"}, "run", **options
    )
    return run(registry.execute(call))


async def abort_once_running(
    tools: ToolRegistry, runtime: Any, program: str, hang_guard: float
) -> ToolResult:
    """`run_code` of `program`, aborted by its caller once the runtime has started a worker;
    `hang_guard` seconds bound the wait for the result (not a speed bound)."""
    controller = AbortController()
    call = ToolCall(
        "run_code", {"code": program, "description": "Wait"}, "run", signal=controller.signal
    )
    task = asyncio.ensure_future(tools.execute(call))
    for _ in range(800):  # until the program runs (a loaded machine starts slowly)
        if runtime.spawned:
            break
        await asyncio.sleep(0.025)
    await asyncio.sleep(0.2)
    controller.abort("user stopped it")
    return await asyncio.wait_for(task, hang_guard)


def assert_no_worker_left(runtime: PythonRuntime) -> None:
    """Every worker's group is gone (reaped after the run returned, within seconds)."""
    assert runtime.spawned, "no worker was started"
    deadline = time.monotonic() + 60
    for pid in runtime.spawned:
        while not process_group_gone(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process_group_gone(pid), f"worker group {pid} is still alive"


def test_a_program_calls_tools_prints_and_returns() -> None:
    tools, runtime = registry()
    result = execute(
        tools,
        """
import asyncio
print("reading two files")
a, b = await asyncio.gather(tools.read_file({"path": "a.txt"}), tools.read_file(path="b.txt"))
user = await tools["get-user"]({"id": "7"})
try:
    await tools["get-user"]({"id": "404"})
except ToolCallError as error:
    print("caught", error.tool_name, error)
return {"a": a["content"], "b": b["content"], "user": user["name"]}
""",
    )
    assert not result.is_error, result.content
    assert result.value == {
        "logs": ["reading two files", "caught get-user no such user"],
        "result": {"a": "contents of a.txt", "b": "contents of b.txt", "user": "Ada"},
    }
    assert result.content.startswith("reading two files\ncaught get-user no such user\n{")
    assert_no_worker_left(runtime)


def test_exactly_three_names_are_bound() -> None:
    tools, _ = registry()
    result = execute(tools, "return sorted(k for k in globals() if not k.startswith('__'))")
    assert result.value["result"] == ["ToolCallError", "catalog", "tools"]


def test_unknown_tools_and_run_code_fail_clearly() -> None:
    tools, _ = registry()
    result = execute(tools, "await tools.delete_everything({})")
    assert result.code == ErrorCode.CODE_RUN_FAILED
    assert 'ToolCallError: unknown tool "delete_everything"' in result.content
    assert "available:" not in result.content  # never the list of every tool
    result = execute(tools, "await tools.read_files(path='x')")
    assert 'unknown tool "read_files"; closest by search:\n' in result.content
    assert "tools.read_file(" in result.content
    assert "run_code cannot be called" in execute(tools, "await tools.run_code({})").content
    result = execute(tools, "return ['read_file' in tools, 'nope' in tools]")
    assert result.value["result"] == [True, False]
    checked = tools_registry(check="refuse")
    checked.mount_runtime(tools.runtime)
    result = execute(checked, "await tools.delete_everything({})")
    assert result.error is not None and result.error.kind == "check", result.content
    assert "has no tool `delete_everything`" in result.content


def test_runs_share_no_state() -> None:
    tools, runtime = registry()
    execute(tools, "import builtins\nbuiltins.leftover = 1\nglobal marker\nmarker = 2")
    result = execute(
        tools, "import builtins\nreturn [hasattr(builtins, 'leftover'), 'marker' in globals()]"
    )
    assert result.value["result"] == [False, False]
    assert len(set(runtime.spawned)) == 2


def test_the_worker_is_isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("CODEGEN_TEST_SECRET", "hunter2")
    sentinel = tmp_path / "host-only.txt"
    sentinel.write_text("the host's open file")
    held = os.open(sentinel, os.O_RDONLY)
    os.set_inheritable(held, True)  # even an inheritable descriptor must not reach the worker
    try:
        tools, _ = registry()
        result = execute(
            tools,
            """
import os, sys
targets = []
for fd in os.listdir("/proc/self/fd"):
    try:
        targets.append(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
return {
    "env": sorted(os.environ),
    "targets": targets,
    "own_group": os.getpgrp() == os.getpid(),
    "pid": os.getpid(),
    "isolated": sys.flags.isolated,
}
""",
        )
    finally:
        os.close(held)
    info = result.value["result"]
    assert "CODEGEN_TEST_SECRET" not in info["env"]
    assert set(info["env"]) <= {
        "PATH",
        "LANG",
        "LC_ALL",
        "PYTHONIOENCODING",
        "PYTHONDONTWRITEBYTECODE",
        "LC_CTYPE",
        "PWD",  # bubblewrap's, after entering the sandbox's /tmp
    }
    assert str(sentinel) not in info["targets"]
    # its own process group, or (sandboxed) its own pid namespace, where it is pid 2
    assert (info["own_group"] is True or info["pid"] == 2) and info["isolated"] == 1


def test_multi_line_strings_keep_their_text() -> None:
    tools, _ = registry()
    result = execute(tools, 'text = """first\nsecond\n  third"""\nreturn text')
    assert result.value["result"] == "first\nsecond\n  third"


@pytest.mark.parametrize(
    "program, fragment",
    [
        ("def f(:\n    pass", "SyntaxError"),
        ("return (1, 2)", "not JSON"),
        ("return {'when': float('nan')}", "not a finite number"),
        ("raise ValueError('boom')", "ValueError: boom"),
    ],
)
def test_program_errors_are_code_run_failed(program: str, fragment: str) -> None:
    tools, runtime = registry()
    result = execute(tools, program)
    assert result.code == ErrorCode.CODE_RUN_FAILED and fragment in result.content
    assert_no_worker_left(runtime)


def test_logs_captured_before_a_failure_are_kept() -> None:
    tools, _ = registry()
    result = execute(tools, "print('step 1')\nprint('step 2')\n1 / 0")
    assert result.content.endswith("Captured output:\nstep 1\nstep 2")
    assert "ZeroDivisionError" in result.content


def test_arguments_that_are_not_json_are_refused_in_the_program() -> None:
    tools, _ = registry()
    result = execute(
        tools,
        """
try:
    await tools.read_file({"path": ("a", "b")})
except TypeError as error:
    return str(error)
""",
    )
    assert result.value["result"] == "$.path: tuple is not a JSON value"


def test_lone_surrogates_reach_the_host_as_replacement_characters() -> None:
    """What `json.dumps` writes for an emoji, decoded half by half: a lone surrogate is sent
    as U+FFFD (UTF-8 cannot carry it), a high and a low one side by side as their character,
    in logs, arguments, keys, tool names and the result alike."""
    tools, _ = registry()
    result = execute(
        tools,
        """
import json
lone = json.loads('"\\\\ud83d"')
print(lone, "\\ud83d\\ude00")
got = await tools.read_file({"path": "x" + lone})
try:
    await tools["get" + lone]({})
except ToolCallError as error:
    print(error.tool_name)
return {"lone": lone, "pair": "\\ud83d" + "\\ude00", "got": got["path"], "key" + lone: 1}
""",
    )
    assert not result.is_error, result.content
    assert result.value == {
        "logs": ["\ufffd \U0001f600", "get\ufffd"],
        "result": {"lone": "\ufffd", "pair": "\U0001f600", "got": "x\ufffd", "key\ufffd": 1},
    }


# --- hostile programs ------------------------------------------------------------------------

HOSTILE = [
    ("infinite loop", "while True:\n    pass", RuntimeLimits(timeout=2), "timeout"),
    ("cpu limit", "while True:\n    pass", RuntimeLimits(timeout=30, cpu_seconds=1), "timeout"),
    (
        "memory bomb",
        "blocks = []\nwhile True:\n    blocks.append(bytearray(50_000_000))",
        RuntimeLimits(timeout=20, memory_bytes=512 * 1024 * 1024),
        "exception",
    ),
    ("fork", "import os\nos.fork()", RuntimeLimits(timeout=10), "exception"),
    (
        "subprocess",
        "import subprocess\nsubprocess.Popen(['sleep', '100'])",
        RuntimeLimits(timeout=10),
        "exception",
    ),
    ("huge print", "print('x' * 100_000_000)", RuntimeLimits(timeout=20), "output-limit"),
    (
        "many prints",
        "for i in range(10_000_000):\n    print(i)",
        RuntimeLimits(timeout=20),
        "output-limit",
    ),
    (
        "garbage on the pipe",
        "import os, sys\nos.write(int(sys.argv[2]), b'garbage\\n')\n"
        "await tools.read_file({'path': 'x'})",
        RuntimeLimits(timeout=10),
        "invalid-output",
    ),
    (
        "closes its pipes",
        "import os, sys\nos.close(int(sys.argv[1]))\nos.close(int(sys.argv[2]))"
        "\nimport time\ntime.sleep(30)",
        RuntimeLimits(timeout=10),
        "worker-exit|invalid-output",
    ),
    ("exits", "import os\nos._exit(3)", RuntimeLimits(timeout=10), "worker-exit"),
    (
        "floods stderr",
        "import os\nwhile True:\n    os.write(2, b'x' * 65536)",
        RuntimeLimits(timeout=3),
        "timeout",
    ),
    (
        "kills itself",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
        RuntimeLimits(timeout=10),
        "worker-exit",
    ),
    (
        "too many pending calls",
        "for i in range(50):\n    tools.read_file({'path': str(i)})\n"
        "import asyncio\nawait asyncio.sleep(5)",
        RuntimeLimits(timeout=20, max_pending_calls=5),
        "exception",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "program, limits, kinds", [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE]
)
def test_hostile_programs(program: str, limits: RuntimeLimits, kinds: str) -> None:
    tools, runtime = registry(limits)
    result = execute(tools, program)
    assert result.code == ErrorCode.CODE_RUN_FAILED, result.content
    assert result.error is not None and result.error.kind in kinds.split("|"), result.content
    assert_no_worker_left(runtime)
    healthy = execute(tools, "return 1 + 1")
    assert healthy.value == {"logs": [], "result": 2}, "the host stays healthy"


def test_a_forked_child_that_escapes_the_patch_is_killed_with_the_group() -> None:
    tools, runtime = registry(RuntimeLimits(timeout=10))
    result = execute(
        tools,
        """
import ctypes, os, time
pid = ctypes.CDLL(None).fork()
if pid == 0:
    time.sleep(60)
    os._exit(0)
return pid
""",
    )
    child = result.value["result"]
    assert isinstance(child, int) and child > 0
    # The pid is the sandbox's own (a pid namespace) or the host's (no sandbox): look for
    # any process still running the worker's code instead.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and worker_processes():
        time.sleep(0.05)
    assert not worker_processes(), "the forked child outlived the run"
    assert_no_worker_left(runtime)


def worker_processes() -> list[int]:
    return [process.pid for process in left_processes((WORKER_MARK,))]


def test_calls_never_awaited_still_reach_the_host_and_settle() -> None:
    calls: list[str] = []

    async def slow(args: Any, context: Any) -> Any:
        calls.append(args["path"])
        await asyncio.sleep(0.2)
        return "done"

    tools, runtime = registry()
    tools.register(ToolSpec("slow", "Slow.", {"type": "object"}, handler=slow))
    result = execute(tools, "tools.slow({'path': 'a'})\ntools.slow({'path': 'b'})\nreturn 'left'")
    assert result.value == {"logs": [], "result": "left"}
    assert_no_worker_left(runtime)


def test_cancelling_the_outer_call_kills_the_worker() -> None:
    """The program would sleep for an hour: only killing the worker ends the run within the
    ten minutes `wait_for` allows (a hang guard, not a speed bound)."""
    tools, runtime = registry(RuntimeLimits(timeout=3600, cpu_seconds=3600))
    result = run(abort_once_running(tools, runtime, "import time\ntime.sleep(3600)", 600))
    assert result.code == ErrorCode.ABORTED
    assert_no_worker_left(runtime)
