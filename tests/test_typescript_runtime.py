"""The real TypeScript runtime: programs in a fresh Node worker, their calls through the
registry, and the hostile programs of the Python runtime's list ported to TypeScript, each
ending with the right failure kind and leaving no process behind. Every behaviour is checked
with every way of stripping types (`typescript_nodes.SETUPS`: TypeScript 5 and 7 on Node 20,
Node 24's own)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from codegen.codemode.calls.results import ErrorCode
from codegen.codemode.registry import ToolRegistry, ToolSpec
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes.typescript import TypeScriptRuntime
from codemode_helpers import run
from processes import TS_WORKER_MARK, TSC_MARK, left_processes, process_group_gone
from test_python_runtime import abort_once_running, execute, tools_registry
from typescript_nodes import SETUPS, runtime

pytestmark = pytest.mark.parametrize("setup", list(SETUPS))


def registry(
    setup: str, limits: RuntimeLimits | None = None
) -> tuple[ToolRegistry, TypeScriptRuntime]:
    registry = tools_registry()
    mounted = runtime(setup, limits or RuntimeLimits(timeout=30))
    registry.mount_runtime(mounted)
    return registry, mounted


def assert_no_worker_left(runtime: TypeScriptRuntime, started: bool = True) -> None:
    """Every worker's group is gone (reaped after the run returned, within seconds), and no
    TypeScript worker or TypeScript 7 compiler of this test process is left anywhere."""
    assert bool(runtime.spawned) == started, runtime.spawned
    deadline = time.monotonic() + 60
    for pid in runtime.spawned:
        while not process_group_gone(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process_group_gone(pid), f"worker group {pid} is still alive"
    marks = (TS_WORKER_MARK, TSC_MARK)
    while left_processes(marks) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left_processes(marks), "a TypeScript worker or compiler outlived its run"


def test_a_program_calls_tools_logs_and_returns(setup: str) -> None:
    tools, runtime = registry(setup)
    result = execute(
        tools,
        """
interface FileResult { path: string; content: string }
console.log("reading two files");
const [a, b] = await Promise.all([
  tools.read_file({ path: "a.txt" }) as Promise<FileResult>,
  tools["read_file"]({ path: "b.txt" }),
]);
const user = await tools["get-user"]({ id: "7" });
try {
  await tools["get-user"]({ id: "404" });
} catch (error) {
  if (error instanceof ToolCallError) console.log("caught", error.toolName, error.message);
}
const pick = <T,>(value: T): T => value;
return { a: a.content, b: pick<string>(b.content), user: user.name };
""",
    )
    assert not result.is_error, result.content
    assert result.value == {
        "logs": ["reading two files", "caught get-user no such user"],
        "result": {"a": "contents of a.txt", "b": "contents of b.txt", "user": "Ada"},
    }
    assert result.content.startswith("reading two files\ncaught get-user no such user\n{")
    assert_no_worker_left(runtime)


def test_only_tools_and_tool_call_error_are_added_to_the_scope(setup: str) -> None:
    tools, _ = registry(setup)
    result = execute(
        tools,
        """
const names = ["require", "module", "exports", "send", "fs", "child_process", "load"];
return {
  missing: names.filter((name) => (globalThis as any)[name] !== undefined),
  bound: [typeof tools, typeof ToolCallError],
  error: [new ToolCallError("read_file", "x").name, new ToolCallError("read_file", "x").toolName],
  listed: Object.keys(tools),
  has: ["read_file" in tools, "write_file" in tools],
};
""",
    )
    assert result.value["result"] == {
        "missing": [],
        "bound": ["object", "function"],
        "error": ["ToolCallError", "read_file"],
        "listed": ["get-user", "read_file"],
        "has": [True, False],
    }, result.content


def test_unknown_tools_and_run_code_fail_clearly(setup: str) -> None:
    tools, _ = registry(setup)
    result = execute(tools, "await tools.delete_everything({})")
    assert result.code == ErrorCode.CODE_RUN_FAILED
    assert 'unknown tool "delete_everything"' in result.content
    assert "available:" not in result.content  # never the list of every tool
    assert "at line 1 of the program" in result.content
    result = execute(tools, "await tools.read_files({ path: 'x' })")
    assert 'unknown tool "read_files"; closest by search:\n' in result.content
    assert "tools.read_file(" in result.content
    assert "run_code cannot be called" in execute(tools, "await tools.run_code({})").content
    result = execute(tools, "(tools as any).extra = 1")
    assert "tools is read-only" in result.content
    checked = tools_registry(check="refuse")
    checked.mount_runtime(tools.runtime)
    result = execute(checked, "await tools.delete_everything({})")
    assert result.error is not None
    if "typescript" in SETUPS[setup]:  # the checker is the runtime's TypeScript
        assert result.error.kind == "check", result.content
        assert "has no tool `delete_everything`" in result.content
    else:  # none to check with: the program runs and fails as it would unchecked
        assert result.error.kind == "exception", result.content


def test_runs_share_no_state(setup: str) -> None:
    tools, runtime = registry(setup)
    execute(tools, "(globalThis as any).leftover = 1")
    result = execute(tools, "return 'leftover' in globalThis")
    assert result.value["result"] is False
    assert len(set(runtime.spawned)) == 2


def test_the_worker_gets_a_minimal_environment(setup: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEGEN_TEST_SECRET", "hunter2")
    monkeypatch.setenv("NODE_OPTIONS", "--max-old-space-size=1")
    tools, _ = registry(setup)
    result = execute(tools, "return Object.keys(process.env).sort()")
    assert set(result.value["result"]) <= {"PATH", "LANG", "LC_ALL", "PWD"}, result.content


@pytest.mark.slow
@pytest.mark.parametrize(
    "program, fragment",
    [
        ("const x: = 1", "SyntaxError"),
        ("let a = 1;\nlet b = ;", "(line 2"),
        ("return new Map()", "$: Map is not a JSON value"),
        ("return { when: NaN }", "$.when: NaN is not a finite number"),
        ("return [1, undefined]", "$[1]: undefined is not a JSON value"),
        ("return 10n", "$: BigInt is not a JSON value"),
        (
            "let x = 1;\nthrow new RangeError('boom')",
            "RangeError: boom\n  at line 2 of the program",
        ),
        ("throw 'a string'", "Uncaught 'a string'"),
        (
            "setTimeout(() => { throw new Error('later') }, 0);\nawait new Promise(() => {})",
            "later",
        ),
        ("Promise.reject(new Error('unhandled'));\nawait new Promise(() => {})", "unhandled"),
    ],
)
def test_program_errors_are_code_run_failed(setup: str, program: str, fragment: str) -> None:
    tools, runtime = registry(setup)
    result = execute(tools, program)
    assert result.code == ErrorCode.CODE_RUN_FAILED and fragment in result.content, result.content
    # TypeScript 7's tsc finds a syntax error before the worker: no worker is started for it
    assert_no_worker_left(
        runtime, started=not (setup == "emit" and "SyntaxError" in result.content)
    )


def test_line_numbers_are_the_programs_after_types_are_removed(setup: str) -> None:
    tools, _ = registry(setup)
    program = (
        "interface Big {\n  a: string;\n  b: number;\n}\n\n"
        "type Alias = Big | null;\n"
        "const value: Alias = null;\n"
        "function fail(reason: string): never {\n"
        "  throw new Error(reason);\n"
        "}\n"
        "fail('on line 9');\n"
    )
    result = execute(tools, program)
    assert "Error: on line 9\n  at line 9 of the program\n  at line 11 of the program" in (
        result.content
    ), result.content


def test_undefined_properties_are_left_out_and_null_is_a_result(setup: str) -> None:
    tools, _ = registry(setup)
    result = execute(
        tools, "const r = await tools.read_file({ path: 'a', mode: undefined });\nreturn null"
    )
    assert result.value == {"logs": [], "result": None}, result.content
    assert execute(tools, "const x = 1").value == {"logs": []}


def test_logs_captured_before_a_failure_are_kept(setup: str) -> None:
    tools, _ = registry(setup)
    result = execute(
        tools,
        "console.log('step 1');\nconsole.error('step', 2);\nprocess.stdout.write('a');"
        "\nprocess.stdout.write('b\\nc');\nnull.x",
    )
    assert result.content.endswith("Captured output:\nstep 1\nstep 2\nab\nc"), result.content
    assert "TypeError" in result.content


def test_arguments_that_are_not_json_are_refused_in_the_program(setup: str) -> None:
    tools, _ = registry(setup)
    result = execute(
        tools,
        """
try {
  await tools.read_file({ path: new Set(["a"]) } as any);
} catch (error) {
  return (error as Error).message;
}
""",
    )
    assert result.value["result"] == "$.path: Set is not a JSON value"


def test_lone_surrogates_reach_the_host_as_replacement_characters(setup: str) -> None:
    """A lone surrogate (`JSON.parse('"\\ud83d"')`) is sent as U+FFFD, in logs, arguments,
    keys and the result; a pair stays its character, a backslash before `ud83d` text."""
    tools, _ = registry(setup)
    result = execute(
        tools,
        """
const lone: string = JSON.parse('"\\\\ud83d"');
console.log(lone, "\\ud83d\\ude00");
const got = (await tools.read_file({ path: "x" + lone })) as { path: string };
return { lone, pair: "\\ud83d" + "\\ude00", got: got.path, ["key" + lone]: 1, text: "\\\\ud83d" };
""",
    )
    assert not result.is_error, result.content
    assert result.value == {
        "logs": ["\ufffd \U0001f600"],
        "result": {
            "lone": "\ufffd",
            "pair": "\U0001f600",
            "got": "x\ufffd",
            "key\ufffd": 1,
            "text": "\\ud83d",
        },
    }


def test_built_in_modules_are_imported_dynamically(setup: str) -> None:
    tools, _ = registry(setup)
    result = execute(
        tools, "const path = await import('node:path');\nreturn path.join('a', 'b', '..', 'c')"
    )
    assert result.value["result"] == "a/c", result.content


# --- hostile programs ------------------------------------------------------------------------

HOSTILE = [
    ("infinite loop", "while (true) {}", RuntimeLimits(timeout=2), "timeout"),
    ("cpu limit", "while (true) {}", RuntimeLimits(timeout=30, cpu_seconds=1), "timeout"),
    (
        "memory bomb",
        "const blocks = [];\nwhile (true) blocks.push(new Array(1e6).fill(1.5));",
        RuntimeLimits(timeout=30, memory_bytes=512 * 1024 * 1024),
        "exception",
    ),
    (
        "buffer bomb",
        "const blocks = [];\nwhile (true) blocks.push(Buffer.alloc(50_000_000, 1));",
        RuntimeLimits(timeout=30, memory_bytes=512 * 1024 * 1024),
        "exception",
    ),
    (
        "child_process",
        "const cp = await import('node:child_process');\ncp.spawn('sleep', ['100']);",
        RuntimeLimits(timeout=10),
        "exception",
    ),
    (
        "child_process, synchronously",
        "const cp = await import('node:child_process');\ncp.execSync('sleep 100');",
        RuntimeLimits(timeout=10),
        "exception",
    ),
    (
        "worker thread",
        "const { Worker } = await import('node:worker_threads');\n"
        "new Worker('while (true) {}', { eval: true });\nawait new Promise(() => {});",
        RuntimeLimits(timeout=10),
        "exception",
    ),
    ("huge log", "console.log('x'.repeat(100_000_000))", RuntimeLimits(timeout=20), "output-limit"),
    (
        "many logs",
        "for (let i = 0; i < 10_000_000; i++) console.log(i);",
        RuntimeLimits(timeout=20),
        "output-limit",
    ),
    (
        "garbage on the pipe",
        "const fs = await import('node:fs');\nfs.writeSync(Number(process.argv[3]), 'garbage\\n');"
        "\nawait tools.read_file({ path: 'x' });",
        RuntimeLimits(timeout=10),
        "invalid-output",
    ),
    (
        "closes its pipes",
        "const fs = await import('node:fs');\nfs.closeSync(Number(process.argv[3]));"
        "\nawait new Promise((resolve) => setTimeout(resolve, 30_000));",
        RuntimeLimits(timeout=10),
        "worker-exit|invalid-output",
    ),
    ("process.exit", "process.exit(3)", RuntimeLimits(timeout=10), "worker-exit"),
    (
        "floods stderr",
        "const fs = await import('node:fs');\nconst block = 'x'.repeat(65536);"
        "\nwhile (true) fs.writeSync(2, block);",
        RuntimeLimits(timeout=3),
        "timeout",
    ),
    (
        "kills itself",
        "process.kill(process.pid, 'SIGKILL')",
        RuntimeLimits(timeout=10),
        "worker-exit",
    ),
    (
        "blocks without using the CPU",
        "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);",
        RuntimeLimits(timeout=2),
        "timeout",
    ),
    (
        "too many pending calls",
        "for (let i = 0; i < 50; i++) tools.read_file({ path: String(i) });\n"
        "await new Promise((resolve) => setTimeout(resolve, 5000));",
        RuntimeLimits(timeout=20, max_pending_calls=5),
        "exception",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "program, limits, kinds", [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE]
)
def test_hostile_programs(setup: str, program: str, limits: RuntimeLimits, kinds: str) -> None:
    tools, runtime = registry(setup, limits)
    result = execute(tools, program)
    assert result.code == ErrorCode.CODE_RUN_FAILED, result.content
    assert result.error is not None and result.error.kind in kinds.split("|"), result.content
    assert_no_worker_left(runtime)
    healthy = execute(tools, "return 1 + 1")
    assert healthy.value == {"logs": [], "result": 2}, "the host stays healthy"


def test_a_memory_bomb_names_the_heap_limit(setup: str) -> None:
    tools, _ = registry(setup, RuntimeLimits(timeout=30, memory_bytes=256 * 1024 * 1024))
    result = execute(tools, "const a = [];\nwhile (true) a.push(new Array(1e6).fill(1.5));")
    assert result.error is not None and result.error.kind == "exception", result.content
    assert "ran out of memory (its JavaScript heap is limited to 192 MB)" in result.content


def test_a_refused_api_says_why(setup: str) -> None:
    tools, _ = registry(setup)
    result = execute(tools, "(await import('node:child_process')).spawnSync('true')")
    assert "may not start processes" in result.content, result.content


def test_calls_never_awaited_still_reach_the_host_and_settle(setup: str) -> None:
    calls: list[str] = []

    async def slow(args: Any, context: Any) -> Any:
        calls.append(args["path"])
        await asyncio.sleep(0.2)
        raise RuntimeError("failed later")

    tools, runtime = registry(setup)
    tools.register(ToolSpec("slow", "Slow.", {"type": "object"}, handler=slow))
    result = execute(tools, "tools.slow({ path: 'a' });\ntools.slow({ path: 'b' });\nreturn 'left'")
    assert result.value == {"logs": [], "result": "left"}, result.content
    assert_no_worker_left(runtime)


def test_cancelling_the_outer_call_kills_the_worker(setup: str) -> None:
    tools, runtime = registry(setup, RuntimeLimits(timeout=30))
    result = run(abort_once_running(tools, runtime, "await new Promise(() => {})", 10))
    assert result.code == ErrorCode.ABORTED
    assert_no_worker_left(runtime)
