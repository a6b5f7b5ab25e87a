"""Programs checked before they run (Python): a definite mistake refuses the run before its
first call, what a checker cannot know never does, and a checker that times out or fails lets
the run go on with a note.

The suites (`program_suites.py`: a natural program per corpus tool, and wrong programs of
every kind on the same tools) run through a registry whose runtime records whether it was
started; a few cases run the real sandboxed runtime, to see no tool handler was called."""

from __future__ import annotations

import asyncio
import collections
import json
from typing import Any

import pytest
import ty  # noqa: F401  (the test extra installs the checker; never skipped)

from codegen.codemode import PythonRuntime, RuntimeLimits, ToolCall, ToolRegistry, ToolSpec
from codegen.codemode.calls.cancellation import AbortSignal
from codegen.codemode.checks import verdict
from codegen.codemode.checks.outcome import CheckLimits, CheckOutcome, ProgramDiagnostic
from codegen.codemode.presentation.languages import RUN_CODE_FLAVORS
from codegen.codemode.run_code.code_runtime import Bindings, RunOutput
from support.codemode_helpers import registry_with
from support.program_suites import (
    WRONG_KINDS,
    corpus_catalog,
    natural_programs,
    wrong_programs,
)

CHECKED = RUN_CODE_FLAVORS["python"].checked


class RecordingRuntime:
    """A Python runtime that runs nothing: it records that a program got past the check."""

    language = "python"

    def __init__(self, sandbox: str = "auto") -> None:
        self.sandbox = sandbox
        self.programs: list[str] = []

    async def run(self, program: str, bindings: Bindings, signal: AbortSignal) -> RunOutput:
        self.programs.append(program)
        return RunOutput(logs=["ran"])


ITEM = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "size": {"type": "number"}},
    "required": ["id"],
    "additionalProperties": False,
}
NOTE_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "mode": {"enum": ["fast", "slow"]},
        "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
        "items": {"type": "array", "items": ITEM},
    },
    "required": ["title"],
    "additionalProperties": False,
}


def notes_registry(runtime: Any, calls: list[Any], **options: Any) -> ToolRegistry:
    async def handler(args: Any, context: Any) -> Any:
        calls.append(args)
        return {"id": "n1"}

    output = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    registry = ToolRegistry(mode="code", **options)
    registry.register(ToolSpec("make_note", "Make a note.", NOTE_SCHEMA, output, handler=handler))
    registry.register(ToolSpec("get-note", "One note.", NOTE_SCHEMA, handler=handler))
    registry.mount_runtime(runtime)
    return registry


async def run_code(registry: ToolRegistry, code: str) -> Any:
    call = ToolCall("run_code", {"description": "test", "code": code}, "call-1")
    return await registry.execute(call)


def execute(registry: ToolRegistry, *codes: str) -> list[Any]:
    async def main() -> list[Any]:
        try:
            return [await run_code(registry, code) for code in codes]
        finally:
            await registry.close_checkers()

    return asyncio.run(main())


# --- each kind of mistake ---------------------------------------------------------------------

FIRST = 'await tools.make_note(title="first")\n'
MISTAKES = [
    ("unknown-tool", 'await tools.make_nots(title="x")', "closest: tools.make_note"),
    ("unknown-tool", 'await tools["get-nope"](title="x")', 'closest: tools["get-note"]'),
    ("missing-argument", "await tools.make_note(count=1)", "async def make_note("),
    ("unknown-argument", 'await tools.make_note(title="x", colour="red")', "async def make_note("),
    ("wrong-type", "await tools.make_note(title=42)", "title: str"),
    ("wrong-type", 'await tools.make_note(title="x", count="many")', "count: int"),
    ("wrong-type", 'await tools.make_note(title="x", items=[{"id": 5}])', "items:"),
    ("not-allowed-value", 'await tools.make_note(title="x", mode="medium")', "mode:"),
    ("not-allowed-value", 'await tools["get-note"](title="x", mode="medium")', '@tool("get-note")'),
    ("arity", 'await tools.make_note("x")', "async def make_note("),
]


@pytest.mark.parametrize(("kind", "line", "help_text"), MISTAKES)
def test_each_kind_of_mistake_refuses_the_run_before_its_first_call(
    kind: str, line: str, help_text: str
) -> None:
    runtime = RecordingRuntime()
    calls: list[Any] = []
    registry = notes_registry(runtime, calls)
    (result,) = execute(registry, FIRST + line + "\n")
    assert result.is_error and result.error.kind == "check", result.content
    assert runtime.programs == [] and calls == []
    assert "line 2: " in result.error.message
    assert help_text in result.error.message
    outcome = asyncio.run(_checked(registry, FIRST + line))
    assert [d.kind for d in outcome.refusing] == [kind] or kind in {
        d.kind for d in outcome.refusing
    }


async def _checked(registry: ToolRegistry, code: str) -> CheckOutcome:
    try:
        outcome = await registry.check_program(code)
        assert outcome is not None
        return outcome
    finally:
        await registry.close_checkers()


def test_the_real_runtime_never_calls_a_tool_of_a_refused_program() -> None:
    calls: list[Any] = []
    runtime = PythonRuntime(RuntimeLimits(timeout=30), spare=False)
    registry = notes_registry(runtime, calls)
    refused, ran = execute(
        registry, FIRST + "await tools.make_note(titel='x')\n", FIRST + "return 1\n"
    )
    asyncio.run(runtime.aclose())
    assert refused.error.kind == "check"
    assert "titel" in refused.error.message
    assert not ran.is_error, ran.content
    assert calls == [{"title": "first"}]  # the second program's only call; none of the first


# --- what is never refused --------------------------------------------------------------------

NEVER_REFUSED = [
    'name = "make_note"\nawait tools[name](title="x")',
    'found = await catalog.search("note")\nawait tools[found.names[0]](title=1)',
    'note = await tools.make_note(title="x")\nawait tools.make_note(title=note["id"])',
    'note: Any = await tools["get-note"](title="x")\nawait tools.make_note(title=note["t"])',
    'await tools.make_note({"title": "x", "count": 1})',
    'args = {"title": "x"}\nawait tools.make_note(args)',
    'await tools.make_note(title="x", point=[1, 2], ratio=1, items=[{"id": "a", "size": 3}])',
    'await tools.make_note(title="x", point=(1.5, 2))',
    "import asyncio\nawait asyncio.gather(*(tools.make_note(title=t) for t in ('a', 'b')))",
    "async def make(title):\n    return await tools.make_note(title=title)\nawait make(3)",
    'try:\n    await tools.make_note(title="x")\nexcept ToolCallError as error:\n'
    "    print(error.tool_name, error.message)",
    'text = """\nline\n"""\nawait tools.make_note(title=text)',
    "this is not Python",
]


@pytest.mark.parametrize("code", NEVER_REFUSED)
def test_what_a_checker_cannot_know_never_refuses(code: str) -> None:
    runtime = RecordingRuntime()
    registry = notes_registry(runtime, [])
    (result,) = execute(registry, code)
    assert not result.is_error, result.content
    assert runtime.programs == [code]


def test_a_value_read_from_a_result_only_warns() -> None:
    """A typed result's field of the wrong type is a possible mistake: never refused, and
    reported in the result under `warn`."""
    runtime = RecordingRuntime()
    registry = notes_registry(runtime, [])
    code = 'note = await tools.make_note(title="x")\nawait tools.make_note(title="y", count=note["id"])'
    (result,) = execute(registry, code)
    assert not result.is_error and "check" not in result.value
    registry.set_check("warn")
    (result,) = execute(registry, code)
    assert "line 2:" in result.value["check"] and "possible mistake" in result.value["check"]


def test_lines_are_the_programs_own_after_multiline_strings_and_rewrites() -> None:
    runtime = RecordingRuntime()
    registry = notes_registry(runtime, [])
    code = 'text = """\nabc\n"""\nx = tools["get-note"]\nawait tools["get-note"](title=text, mode="no")'
    outcome = asyncio.run(_checked(registry, code))
    (mistake,) = outcome.refusing
    assert (mistake.line, mistake.kind) == (5, "not-allowed-value")
    assert mistake.column == len('await tools["get-note"](title=text, ') + 1
    assert "`get-note`" in mistake.message and "__tool" not in mistake.message


# --- the modes ------------------------------------------------------------------------------


def test_warn_runs_the_program_and_says_what_the_check_found() -> None:
    runtime = RecordingRuntime()
    registry = notes_registry(runtime, [], check="warn")
    (result,) = execute(registry, "await tools.make_nots(title='x')")
    assert not result.is_error
    assert runtime.programs
    check = result.value["check"]
    assert check.startswith("the check before the run found 1 possible mistake:")
    assert (
        "line 1: `tools` has no tool `make_nots`" in check and "closest: tools.make_note" in check
    )
    assert check in result.content


def test_off_checks_nothing_and_the_description_says_nothing_of_it() -> None:
    runtime = RecordingRuntime()
    registry = notes_registry(runtime, [], check="off")
    (result,) = execute(registry, "await tools.make_nots(title='x')")
    assert not result.is_error and "check" not in result.value
    (run_code_definition,) = registry.wire_schemas()
    assert CHECKED not in run_code_definition["description"]
    registry.set_check("refuse")
    (run_code_definition,) = registry.wire_schemas()
    assert run_code_definition["description"].endswith(CHECKED)
    with pytest.raises(ValueError, match="check must be one of refuse, warn, off"):
        registry.set_check("strict")  # type: ignore[arg-type]


def test_the_search_tier_says_programs_are_checked_too() -> None:
    registry = notes_registry(RecordingRuntime(), [])
    for number in range(80):
        registry.register(ToolSpec(f"note_{number}", "A note.", NOTE_SCHEMA, handler=None))
    assert registry.sdk_tier().tier == "search"
    assert CHECKED in registry.sdk_tier().text
    registry.set_check("off")
    assert CHECKED not in registry.sdk_tier().text


# --- a checker that fails -----------------------------------------------------------------------

LOOP_BOMB = (
    "x = 0\nfor i in range(5):\n"
    + "\n".join(f"    if i == {k}:\n        x = [x, {k}]" for k in range(300))
    + "\nawait tools.make_nots(title=x)\n"
)
"""Branches in a loop that nest a list type each time: ty's inference takes minutes."""


def test_a_checker_that_times_out_lets_the_run_go_on_with_a_note() -> None:
    runtime = RecordingRuntime()
    registry = notes_registry(runtime, [])
    registry.set_check("refuse", CheckLimits(timeout=1.0))
    first, second = execute(registry, LOOP_BOMB, "await tools.make_nots(title='x')")
    assert not first.is_error, first.content
    assert runtime.programs == [LOOP_BOMB]
    assert "the checker took longer than 1 s" in first.value["check"]
    assert second.error.kind == "check"  # the next check starts a new checker


def test_a_checker_that_crashes_lets_the_run_go_on_with_a_note(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runtime = RecordingRuntime()
    registry = notes_registry(runtime, [])
    registry.set_check("refuse", CheckLimits(memory_bytes=8 * 1024 * 1024))
    (result,) = execute(registry, "await tools.make_nots(title='x')")
    assert not result.is_error, result.content
    assert result.value["check"].startswith("the program was not checked: the checker failed")
    assert "the checker failed" in caplog.text


def test_no_checker_here_means_no_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from codegen.codemode.checkers import python_checker

    def missing() -> str:
        raise python_checker.CheckerUnavailable("ty is not installed")

    monkeypatch.setattr(python_checker, "ty_program", missing)
    runtime = RecordingRuntime()
    registry = notes_registry(runtime, [])
    (result,) = execute(registry, "await tools.make_nots(title='x')")
    assert not result.is_error and "check" not in result.value
    assert registry.checkers.unavailable("python") == "ty is not installed"


def test_one_warm_checker_per_sdk_text() -> None:
    """Scopes that see the same tools share a checker; a tool set whose SDK bytes change
    gets a new one."""
    runtime = RecordingRuntime()
    registry = notes_registry(runtime, [])
    other = registry.scope("other")

    async def main() -> list[Any]:
        await registry.check_program("pass")
        await registry.check_program("pass", other)
        first = list(registry.checkers._checkers.values())
        registry.register(ToolSpec("extra", "More.", {"type": "object"}, handler=None))
        await registry.check_program("pass")
        second = list(registry.checkers._checkers.values())
        await registry.close_checkers()
        return [first, second]

    first, second = asyncio.run(main())
    assert len(first) == 1 and len(second) == 2


# --- the suites -----------------------------------------------------------------------------


def corpus_registry(runtime: Any, calls: list[Any]) -> ToolRegistry:
    from codegen.load.sources import load_sources
    from support.program_suites import CORPUS

    async def handler(args: Any, context: Any) -> Any:
        calls.append((context.execution.name, args))
        return None

    registry = ToolRegistry(mode="code")
    files = sorted(str(path) for path in CORPUS.glob("*.json"))
    for tool in load_sources(files, namespace=True).tools:
        registry.register(ToolSpec(tool.name, tool.description, tool.input_schema, handler=handler))
    registry.mount_runtime(runtime)
    return registry


def test_the_natural_suite_is_never_refused() -> None:
    programs = natural_programs(corpus_catalog())
    assert len(programs) >= 300
    runtime = RecordingRuntime()
    registry = corpus_registry(runtime, [])
    results = execute(registry, *(p.python for p in programs if p.python))
    refused = [p.label for p, r in zip(programs, results, strict=True) if r.is_error]
    assert refused == []
    assert len(runtime.programs) == len(programs)


def test_the_wrong_suite_is_refused_before_any_call() -> None:
    programs = [p for p in wrong_programs(corpus_catalog()) if p.python]
    runtime = RecordingRuntime()
    calls: list[Any] = []
    registry = corpus_registry(runtime, calls)
    results = execute(registry, *(p.python for p in programs))  # type: ignore[misc]
    caught: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    for program, result in zip(programs, results, strict=True):
        total[program.kind] += 1
        if result.is_error and result.error.kind == "check" and "line 2: " in result.content:
            caught[program.kind] += 1
    assert set(total) == set(WRONG_KINDS)
    for kind in WRONG_KINDS:
        assert caught[kind] >= 0.95 * total[kind], (kind, caught[kind], total[kind])
    assert calls == [] and len(runtime.programs) == len(programs) - sum(caught.values())


# --- the texts ------------------------------------------------------------------------------


def test_a_refusal_lists_at_most_ten_mistakes_and_shows_each_help_once() -> None:
    found = tuple(
        ProgramDiagnostic(n, 1, "wrong-type", f"mistake {n}", True, "async def f(*, x: int)")
        for n in range(1, 13)
    )
    text = verdict.refusal(CheckOutcome("checked", found), "refuse")
    assert text is not None
    assert text.count("async def f") == 1 and "line 10: mistake 10" in text
    assert "line 11" not in text and "(and 2 more)" in text
    assert verdict.refusal(CheckOutcome("checked", found), "warn") is None
    assert verdict.note(CheckOutcome("timeout", note="slow"), "warn") == "slow"


def test_serve_takes_the_mode_from_its_flag_over_its_config(tmp_path: Any) -> None:
    from codegen.cli import build_parser
    from codegen.errors import InvalidInputError
    from codegen.mcp.config import load_servers_file
    from codegen.serve.command import plan

    config = tmp_path / "serve.json"
    servers = {"time": {"command": "mcp-server-time"}}
    config.write_text(json.dumps({"codegen": {"check_programs": "warn"}, "mcpServers": servers}))

    def planned(*flags: str) -> str:
        argv = ["serve", "--config", str(config), *flags]
        return plan(build_parser(argv).parse_args(argv)).check_programs

    assert planned() == "warn"
    assert planned("--check-programs", "off") == "off"
    config.write_text(json.dumps({"codegen": {"check_programs": "no"}, "mcpServers": servers}))
    with pytest.raises(InvalidInputError, match="check_programs"):
        load_servers_file(config, "serve.json")
    config.write_text(json.dumps({"mcpServers": servers}))
    assert planned() == "refuse"


def test_registry_refuses_an_unknown_mode() -> None:
    with pytest.raises(ValueError, match="check must be one of"):
        registry_with("code", check="sometimes")
