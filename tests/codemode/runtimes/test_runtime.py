"""The real runtimes, Python and TypeScript, one suite: programs in a fresh worker process
(Python) or Node worker (TypeScript), their calls through the registry, and hostile programs
that must end with the right failure kind and leave no process behind.

Each behaviour both languages share is one test, parametrized by `language`: Python, and
TypeScript with every way of stripping types (`typescript_nodes.SETUPS`: TypeScript 5 and 7
on Node 20, Node 24's own); the program, and what its result must show, are that language's.
The hostile programs are each language's own list (the Python one ported to TypeScript, and
what only Node can do). What only one language has (a forked child escaping the patch, a
worker's descriptors and flags; line numbers after types are removed, `undefined`, Node's
modules, the heap limit's message) is tested for that language alone, at the end."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from typing import Any

import pytest

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.calls.execution import ToolCall
from codegen.codemode.calls.results import ErrorCode, ToolResult
from codegen.codemode.registry import ToolRegistry, ToolSpec
from codegen.codemode.run_code.code_runtime import CodeRuntime
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes.python import PythonRuntime
from support.codemode_helpers import run
from support.processes import (
    TS_WORKER_MARK,
    TSC_MARK,
    WORKER_MARK,
    left_processes,
    process_group_gone,
)
from support.typescript_nodes import SETUPS
from support.typescript_nodes import runtime as typescript_runtime

# --- the tools, the registry and the runtime of each language --------------------------------


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
    runtime does with a mistake (test_program_check_python.py and
    test_program_check_typescript.py cover the check)."""
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


@dataclass(frozen=True)
class Language:
    """One runtime the suite runs on: Python, or TypeScript with one of `SETUPS`."""

    name: str
    """"python" or "typescript"."""
    setup: str | None = None
    """The TypeScript set-up (how types are stripped, on which Node)."""

    @property
    def id(self) -> str:
        return self.name if self.setup is None else f"{self.name}-{self.setup}"

    def pick(self, python: Any, typescript: Any) -> Any:
        """This language's one of two values."""
        return python if self.name == "python" else typescript

    def runtime(self, limits: RuntimeLimits | None = None) -> Any:
        if self.setup is None:
            return PythonRuntime(limits or RuntimeLimits(timeout=20))
        return typescript_runtime(self.setup, limits or RuntimeLimits(timeout=30))

    def registry(self, limits: RuntimeLimits | None = None) -> tuple[ToolRegistry, Any]:
        registry = tools_registry()
        runtime = self.runtime(limits)
        registry.mount_runtime(runtime)
        return registry, runtime

    @property
    def checks_programs(self) -> bool:
        """Whether a program is checked before it runs when asked: always in Python (ty);
        in TypeScript with the runtime's `typescript` package, which Node's own stripping
        lacks."""
        return self.setup is None or "typescript" in SETUPS[self.setup]


PYTHON = Language("python")
TYPESCRIPTS = [Language("typescript", setup) for setup in SETUPS]
LANGUAGES = [PYTHON, *TYPESCRIPTS]


@pytest.fixture(params=LANGUAGES, ids=lambda language: language.id)
def language(request: pytest.FixtureRequest) -> Language:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=TYPESCRIPTS, ids=lambda language: language.id)
def typescript(request: pytest.FixtureRequest) -> Language:
    return request.param  # type: ignore[no-any-return]


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


def assert_no_worker_left(runtime: CodeRuntime | Any, started: bool = True) -> None:
    """Every worker's group is gone (reaped after the run returned, within seconds); for
    TypeScript, no worker or TypeScript 7 compiler of this test process is left anywhere."""
    assert bool(runtime.spawned) == started, runtime.spawned
    deadline = time.monotonic() + 60
    for pid in runtime.spawned:
        while not process_group_gone(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process_group_gone(pid), f"worker group {pid} is still alive"
    if isinstance(runtime, PythonRuntime):
        return
    marks = (TS_WORKER_MARK, TSC_MARK)
    while left_processes(marks) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left_processes(marks), "a TypeScript worker or compiler outlived its run"


# --- what both languages do ------------------------------------------------------------------

CALLS_PRINTS_AND_RETURNS = {
    "python": """
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
    "typescript": """
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
}


def test_a_program_calls_tools_prints_and_returns(language: Language) -> None:
    tools, runtime = language.registry()
    result = execute(tools, CALLS_PRINTS_AND_RETURNS[language.name])
    assert not result.is_error, result.content
    assert result.value == {
        "logs": ["reading two files", "caught get-user no such user"],
        "result": {"a": "contents of a.txt", "b": "contents of b.txt", "user": "Ada"},
    }
    assert result.content.startswith("reading two files\ncaught get-user no such user\n{")
    assert_no_worker_left(runtime)


SCOPE = {
    "python": (
        "return sorted(k for k in globals() if not k.startswith('__'))",
        ["ToolCallError", "catalog", "tools"],
    ),
    "typescript": (
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
        {
            "missing": [],
            "bound": ["object", "function"],
            "error": ["ToolCallError", "read_file"],
            "listed": ["get-user", "read_file"],
            "has": [True, False],
        },
    ),
}


def test_only_the_documented_names_are_bound(language: Language) -> None:
    """Python: exactly `tools`, `catalog` and `ToolCallError`; TypeScript: `tools` and
    `ToolCallError` added, none of Node's module names."""
    tools, _ = language.registry()
    program, expected = SCOPE[language.name]
    result = execute(tools, program)
    assert result.value["result"] == expected, result.content


def test_unknown_tools_and_run_code_fail_clearly(language: Language) -> None:
    tools, _ = language.registry()
    result = execute(tools, "await tools.delete_everything({})")
    assert result.code == ErrorCode.CODE_RUN_FAILED
    unknown = language.pick(
        'ToolCallError: unknown tool "delete_everything"', 'unknown tool "delete_everything"'
    )
    assert unknown in result.content
    assert "available:" not in result.content  # never the list of every tool
    if language.name == "typescript":
        assert "at line 1 of the program" in result.content
    result = execute(
        tools,
        language.pick("await tools.read_files(path='x')", "await tools.read_files({ path: 'x' })"),
    )
    assert 'unknown tool "read_files"; closest by search:\n' in result.content
    assert "tools.read_file(" in result.content
    assert "run_code cannot be called" in execute(tools, "await tools.run_code({})").content
    if language.name == "python":
        result = execute(tools, "return ['read_file' in tools, 'nope' in tools]")
        assert result.value["result"] == [True, False]
    else:
        result = execute(tools, "(tools as any).extra = 1")
        assert "tools is read-only" in result.content
    checked = tools_registry(check="refuse")
    checked.mount_runtime(tools.runtime)
    result = execute(checked, "await tools.delete_everything({})")
    assert result.error is not None
    if language.checks_programs:
        assert result.error.kind == "check", result.content
        assert "has no tool `delete_everything`" in result.content
    else:  # none to check with: the program runs and fails as it would unchecked
        assert result.error.kind == "exception", result.content


SHARED_STATE = {
    "python": (
        "import builtins\nbuiltins.leftover = 1\nglobal marker\nmarker = 2",
        "import builtins\nreturn [hasattr(builtins, 'leftover'), 'marker' in globals()]",
        [False, False],
    ),
    "typescript": (
        "(globalThis as any).leftover = 1",
        "return 'leftover' in globalThis",
        False,
    ),
}


def test_runs_share_no_state(language: Language) -> None:
    tools, runtime = language.registry()
    leave, look, expected = SHARED_STATE[language.name]
    execute(tools, leave)
    result = execute(tools, look)
    assert result.value["result"] == expected
    assert len(set(runtime.spawned)) == 2


ENVIRONMENT = {
    "python": (
        "import os\nreturn sorted(os.environ)",
        {
            "PATH",
            "LANG",
            "LC_ALL",
            "PYTHONIOENCODING",
            "PYTHONDONTWRITEBYTECODE",
            "LC_CTYPE",
            "PWD",  # bubblewrap's, after entering the sandbox's /tmp
        },
    ),
    "typescript": ("return Object.keys(process.env).sort()", {"PATH", "LANG", "LC_ALL", "PWD"}),
}


def test_the_worker_gets_a_minimal_environment(
    language: Language, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEGEN_TEST_SECRET", "hunter2")
    monkeypatch.setenv("NODE_OPTIONS", "--max-old-space-size=1")
    tools, _ = language.registry()
    program, allowed = ENVIRONMENT[language.name]
    result = execute(tools, program)
    assert "CODEGEN_TEST_SECRET" not in result.value["result"], result.content
    assert set(result.value["result"]) <= allowed, result.content


PROGRAM_ERRORS = {
    "python": [
        ("def f(:\n    pass", "SyntaxError"),
        ("return (1, 2)", "not JSON"),
        ("return {'when': float('nan')}", "not a finite number"),
        ("raise ValueError('boom')", "ValueError: boom"),
    ],
    "typescript": [
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
}


def each_language(cases: dict[str, list[Any]], slow: tuple[str, ...] = ()) -> list[Any]:
    """(language, *case) for every case of each language's list, marked slow for the
    languages in `slow`."""
    return [
        pytest.param(
            language,
            *case,
            id=f"{language.id}-{index}",
            marks=[pytest.mark.slow] if language.name in slow else [],
        )
        for language in LANGUAGES
        for index, case in enumerate(cases[language.name])
    ]


@pytest.mark.parametrize(
    "language, program, fragment", each_language(PROGRAM_ERRORS, slow=("typescript",))
)
def test_program_errors_are_code_run_failed(
    language: Language, program: str, fragment: str
) -> None:
    tools, runtime = language.registry()
    result = execute(tools, program)
    assert result.code == ErrorCode.CODE_RUN_FAILED and fragment in result.content, result.content
    # TypeScript 7's tsc finds a syntax error before the worker: no worker is started for it
    assert_no_worker_left(
        runtime, started=not (language.setup == "emit" and "SyntaxError" in result.content)
    )


LOGS_BEFORE_A_FAILURE = {
    "python": (
        "print('step 1')\nprint('step 2')\n1 / 0",
        "Captured output:\nstep 1\nstep 2",
        "ZeroDivisionError",
    ),
    "typescript": (
        "console.log('step 1');\nconsole.error('step', 2);\nprocess.stdout.write('a');"
        "\nprocess.stdout.write('b\\nc');\nnull.x",
        "Captured output:\nstep 1\nstep 2\nab\nc",
        "TypeError",
    ),
}


def test_logs_captured_before_a_failure_are_kept(language: Language) -> None:
    tools, _ = language.registry()
    program, ending, error = LOGS_BEFORE_A_FAILURE[language.name]
    result = execute(tools, program)
    assert result.content.endswith(ending), result.content
    assert error in result.content


NOT_JSON_ARGUMENTS = {
    "python": (
        """
try:
    await tools.read_file({"path": ("a", "b")})
except TypeError as error:
    return str(error)
""",
        "$.path: tuple is not a JSON value",
    ),
    "typescript": (
        """
try {
  await tools.read_file({ path: new Set(["a"]) } as any);
} catch (error) {
  return (error as Error).message;
}
""",
        "$.path: Set is not a JSON value",
    ),
}


def test_arguments_that_are_not_json_are_refused_in_the_program(language: Language) -> None:
    tools, _ = language.registry()
    program, message = NOT_JSON_ARGUMENTS[language.name]
    result = execute(tools, program)
    assert result.value["result"] == message


LONE_SURROGATES = {
    "python": (
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
        {
            "logs": ["\ufffd \U0001f600", "get\ufffd"],
            "result": {"lone": "\ufffd", "pair": "\U0001f600", "got": "x\ufffd", "key\ufffd": 1},
        },
    ),
    "typescript": (
        """
const lone: string = JSON.parse('"\\\\ud83d"');
console.log(lone, "\\ud83d\\ude00");
const got = (await tools.read_file({ path: "x" + lone })) as { path: string };
return { lone, pair: "\\ud83d" + "\\ude00", got: got.path, ["key" + lone]: 1, text: "\\\\ud83d" };
""",
        {
            "logs": ["\ufffd \U0001f600"],
            "result": {
                "lone": "\ufffd",
                "pair": "\U0001f600",
                "got": "x\ufffd",
                "key\ufffd": 1,
                "text": "\\ud83d",
            },
        },
    ),
}


def test_lone_surrogates_reach_the_host_as_replacement_characters(language: Language) -> None:
    """What `json.dumps` writes for an emoji, decoded half by half (`JSON.parse('"\\ud83d"')`
    in TypeScript): a lone surrogate is sent as U+FFFD (UTF-8 cannot carry it), a high and a
    low one side by side as their character, in logs, arguments, keys, tool names and the
    result alike; in TypeScript a backslash before `ud83d` text stays text."""
    tools, _ = language.registry()
    program, expected = LONE_SURROGATES[language.name]
    result = execute(tools, program)
    assert not result.is_error, result.content
    assert result.value == expected


NEVER_AWAITED = {
    "python": "tools.slow({'path': 'a'})\ntools.slow({'path': 'b'})\nreturn 'left'",
    "typescript": "tools.slow({ path: 'a' });\ntools.slow({ path: 'b' });\nreturn 'left'",
}


def test_calls_never_awaited_still_reach_the_host_and_settle(language: Language) -> None:
    """In TypeScript the calls fail once the program has returned, and that changes
    nothing either."""
    calls: list[str] = []

    async def slow(args: Any, context: Any) -> Any:
        calls.append(args["path"])
        await asyncio.sleep(0.2)
        if language.name == "typescript":
            raise RuntimeError("failed later")
        return "done"

    tools, runtime = language.registry()
    tools.register(ToolSpec("slow", "Slow.", {"type": "object"}, handler=slow))
    result = execute(tools, NEVER_AWAITED[language.name])
    assert result.value == {"logs": [], "result": "left"}, result.content
    assert_no_worker_left(runtime)


def test_cancelling_the_outer_call_kills_the_worker(language: Language) -> None:
    """Python's program would sleep for an hour: only killing the worker ends the run within
    the ten minutes `wait_for` allows (a hang guard, not a speed bound)."""
    limits, program, hang_guard = language.pick(
        (RuntimeLimits(timeout=3600, cpu_seconds=3600), "import time\ntime.sleep(3600)", 600),
        (RuntimeLimits(timeout=30), "await new Promise(() => {})", 10),
    )
    tools, runtime = language.registry(limits)
    result = run(abort_once_running(tools, runtime, program, hang_guard))
    assert result.code == ErrorCode.ABORTED
    assert_no_worker_left(runtime)


# --- hostile programs ------------------------------------------------------------------------

HOSTILE = {
    "python": [
        ("infinite loop", "while True:\n    pass", RuntimeLimits(timeout=2), "timeout"),
        (
            "cpu limit",
            "while True:\n    pass",
            RuntimeLimits(timeout=30, cpu_seconds=1),
            "timeout",
        ),
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
    ],
    "typescript": [
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
        (
            "huge log",
            "console.log('x'.repeat(100_000_000))",
            RuntimeLimits(timeout=20),
            "output-limit",
        ),
        (
            "many logs",
            "for (let i = 0; i < 10_000_000; i++) console.log(i);",
            RuntimeLimits(timeout=20),
            "output-limit",
        ),
        (
            "garbage on the pipe",
            "const fs = await import('node:fs');\n"
            "fs.writeSync(Number(process.argv[3]), 'garbage\\n');"
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
    ],
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "language, program, limits, kinds",
    [
        pytest.param(language, *hostile[1:], id=f"{language.id}-{hostile[0]}")
        for language in LANGUAGES
        for hostile in HOSTILE[language.name]
    ],
)
def test_hostile_programs(
    language: Language, program: str, limits: RuntimeLimits, kinds: str
) -> None:
    tools, runtime = language.registry(limits)
    result = execute(tools, program)
    assert result.code == ErrorCode.CODE_RUN_FAILED, result.content
    assert result.error is not None and result.error.kind in kinds.split("|"), result.content
    assert_no_worker_left(runtime)
    healthy = execute(tools, "return 1 + 1")
    assert healthy.value == {"logs": [], "result": 2}, "the host stays healthy"


# --- Python alone ----------------------------------------------------------------------------


def test_the_python_worker_holds_no_host_descriptor_and_runs_isolated(
    tmp_path: Any,
) -> None:
    """Even an inheritable descriptor of the host does not reach the worker; the worker is
    in its own process group, or (sandboxed) its own pid namespace, and runs `python -I`.
    (Its environment is `test_the_worker_gets_a_minimal_environment`.)"""
    sentinel = tmp_path / "host-only.txt"
    sentinel.write_text("the host's open file")
    held = os.open(sentinel, os.O_RDONLY)
    os.set_inheritable(held, True)
    try:
        tools, _ = PYTHON.registry()
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
    assert str(sentinel) not in info["targets"]
    # its own process group, or (sandboxed) its own pid namespace, where it is pid 2
    assert (info["own_group"] is True or info["pid"] == 2) and info["isolated"] == 1


def test_multi_line_strings_keep_their_text() -> None:
    tools, _ = PYTHON.registry()
    result = execute(tools, 'text = """first\nsecond\n  third"""\nreturn text')
    assert result.value["result"] == "first\nsecond\n  third"


def test_a_forked_child_that_escapes_the_patch_is_killed_with_the_group() -> None:
    tools, runtime = PYTHON.registry(RuntimeLimits(timeout=10))
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


# --- TypeScript alone ------------------------------------------------------------------------


def test_line_numbers_are_the_programs_after_types_are_removed(typescript: Language) -> None:
    tools, _ = typescript.registry()
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


def test_undefined_properties_are_left_out_and_null_is_a_result(typescript: Language) -> None:
    tools, _ = typescript.registry()
    result = execute(
        tools, "const r = await tools.read_file({ path: 'a', mode: undefined });\nreturn null"
    )
    assert result.value == {"logs": [], "result": None}, result.content
    assert execute(tools, "const x = 1").value == {"logs": []}


def test_built_in_modules_are_imported_dynamically(typescript: Language) -> None:
    tools, _ = typescript.registry()
    result = execute(
        tools, "const path = await import('node:path');\nreturn path.join('a', 'b', '..', 'c')"
    )
    assert result.value["result"] == "a/c", result.content


def test_a_memory_bomb_names_the_heap_limit(typescript: Language) -> None:
    tools, _ = typescript.registry(RuntimeLimits(timeout=30, memory_bytes=256 * 1024 * 1024))
    result = execute(tools, "const a = [];\nwhile (true) a.push(new Array(1e6).fill(1.5));")
    assert result.error is not None and result.error.kind == "exception", result.content
    assert "ran out of memory (its JavaScript heap is limited to 192 MB)" in result.content


def test_a_refused_api_says_why(typescript: Language) -> None:
    tools, _ = typescript.registry()
    result = execute(tools, "(await import('node:child_process')).spawnSync('true')")
    assert "may not start processes" in result.content, result.content
