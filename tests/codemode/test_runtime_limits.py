"""Host work a program can inflate stays bounded: runs beyond `max_concurrent_runs` wait
(within their timeout, and a cancelled wait gives nothing away), copying a big value is
linear and happens off the event loop, a copy is never copied again, and every text a run
returns is cut to the output limit with a note. The sandbox is not what these test (see
`test_escape_probes.py`): most runs here are unsandboxed, for speed."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from typing import Any

import pytest

from codegen.codemode.calls import jsonvalue
from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.calls.execution import ToolCall
from codegen.codemode.calls.jsonvalue import snapshot
from codegen.codemode.calls.offload import is_large
from codegen.codemode.registry import ToolRegistry, ToolSpec
from codegen.codemode.run_code.bridge import ProgramRun
from codegen.codemode.run_code.code_runtime import (
    Bindings,
    CodeRunFailed,
    RunOutput,
    ToolCallFailed,
)
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes.messages import bounded_text
from codegen.codemode.runtimes.python import PythonRuntime


def runtime(**limits: Any) -> PythonRuntime:
    return PythonRuntime(RuntimeLimits(**{"timeout": 30, **limits}), sandbox="none", spare=False)


def test_no_more_runs_at_once_than_allowed() -> None:
    async def scenario() -> tuple[int, list[Any]]:
        mounted = runtime(max_concurrent_runs=2)
        inside = 0
        most = 0
        gate = asyncio.Event()

        async def call(name: str, arguments: Any) -> Any:
            nonlocal inside, most
            inside += 1
            most = max(most, inside)
            await gate.wait()
            inside -= 1
            return None

        async def one() -> Any:
            bindings = Bindings(("gate",), call)
            return await mounted.run(
                "await tools.gate({})\nreturn 1", bindings, AbortController().signal
            )

        runs = [asyncio.ensure_future(one()) for _ in range(6)]
        for _ in range(200):
            await asyncio.sleep(0.02)
            if inside == 2:
                break
        await asyncio.sleep(0.2)
        seen = most
        gate.set()
        outcomes = await asyncio.gather(*runs)
        await mounted.aclose()
        return seen, [o.result for o in outcomes]

    most, results = asyncio.run(scenario())
    assert most == 2 and results == [1] * 6


def test_a_run_that_finds_no_slot_times_out_and_a_cancelled_wait_takes_none() -> None:
    async def scenario() -> tuple[str, Any]:
        mounted = runtime(max_concurrent_runs=1, timeout=60)
        gate, holds = asyncio.Event(), asyncio.Event()

        async def call(name: str, arguments: Any) -> Any:
            holds.set()
            await gate.wait()

        bindings = Bindings(("gate",), call)
        holding = asyncio.ensure_future(
            mounted.run("await tools.gate({})", bindings, AbortController().signal)
        )
        await holds.wait()  # the one slot is taken
        patient = mounted.limits
        mounted.limits = dataclasses.replace(patient, timeout=1.5)  # for the next run only
        with pytest.raises(CodeRunFailed) as waited:
            await mounted.run("return 2", bindings, AbortController().signal)
        mounted.limits = patient
        cancelled = [
            asyncio.ensure_future(mounted.run("return 3", bindings, AbortController().signal))
            for _ in range(5)
        ]
        await asyncio.sleep(0.05)
        for task in cancelled:
            task.cancel()
        gate.set()
        with contextlib.suppress(CodeRunFailed):
            await holding
        for task in cancelled:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        after = await mounted.run("return 4", bindings, AbortController().signal)
        await mounted.aclose()
        return str(waited.value), after.result

    waited, after = asyncio.run(scenario())
    assert waited.startswith("code run failed (timeout): no run could start within 1.5 seconds")
    assert after == 4


def test_copying_a_big_value_is_linear_and_done_once(monkeypatch: pytest.MonkeyPatch) -> None:
    spelled: list[Any] = []
    original = jsonvalue.value_path
    monkeypatch.setattr(
        jsonvalue, "value_path", lambda where: spelled.append(where) or original(where)
    )
    value = {"a": [0] * 200_000, "b": [{"c": 1.5, "d": [None, "x"]}] * 20_000}
    frozen = snapshot(value)
    assert frozen == value and spelled == []  # no path spelled for a valid value
    assert snapshot(frozen) is frozen  # frozen by snapshot: never copied again
    with pytest.raises(jsonvalue.NotJsonError, match=r"\$\.b\[3\]\.c: nan"):
        snapshot({"b": [{"c": 1.0}] * 3 + [{"c": float("nan")}]})
    assert len(spelled) == 1
    assert is_large(value) and not is_large({"a": [1, 2, 3]})
    assert snapshot(frozen, freeze=False) is not frozen


def test_big_arguments_are_copied_and_checked_off_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    moved: list[str] = []
    original = asyncio.to_thread

    async def recording(function: Any, *args: Any) -> Any:
        moved.append(getattr(function, "__name__", repr(function)))
        return await original(function, *args)

    monkeypatch.setattr(asyncio, "to_thread", recording)
    registry = ToolRegistry(mode="code")
    registry.mount_runtime(runtime(argument_bytes=8 * 1024 * 1024))

    async def total(arguments: Any, context: Any) -> Any:
        return sum(arguments["numbers"])

    registry.register(
        ToolSpec(
            name="total",
            description="Add numbers.",
            input_schema={
                "type": "object",
                "properties": {"numbers": {"type": "array", "items": {"type": "integer"}}},
            },
            handler=total,
        )
    )
    program = "return await tools.total({'numbers': [1] * 300_000})"
    call = ToolCall("run_code", {"code": program, "description": "Add"}, "run")
    result = asyncio.run(registry.execute(call))
    assert result.value == {"logs": [], "result": 300_000}, result.content
    assert {"decode_message", "snapshot", "argument_problems"} <= set(moved), moved
    assert isinstance(ProgramRun, type)


def test_every_text_a_run_returns_is_cut() -> None:
    asked: list[str] = []

    async def scenario() -> tuple[CodeRunFailed, RunOutput, CodeRunFailed]:
        mounted = runtime(output_bytes=10_000)

        async def call(name: str, arguments: Any) -> Any:
            asked.append(name)
            raise ToolCallFailed(name, "B" * 5_000_000)

        bindings = Bindings(tuple(f"tool_{n:03}" for n in range(100)), call)
        try:
            with pytest.raises(CodeRunFailed) as raised:
                await mounted.run(
                    'raise Exception("A" * 5_000_000)', bindings, AbortController().signal
                )
            said = await mounted.run(
                "try:\n    await tools.tool_000({})\nexcept ToolCallError as e:\n    return len(str(e))",
                bindings,
                AbortController().signal,
            )
            with pytest.raises(CodeRunFailed) as unknown:
                await mounted.run("await tools.nope({})", bindings, AbortController().signal)
        finally:
            await mounted.aclose()
        return raised.value, said, unknown.value

    big, said, unknown = asyncio.run(scenario())
    assert len(str(big).encode()) < 10_200 and "[cut: " in big.message
    assert said.result < 10_100
    # a name no tool has is the host's to answer (with search hits), and cut like the rest
    assert asked[-1] == "nope"
    assert len(str(unknown).encode()) < 10_200 and "[cut: " in unknown.message


def test_bounded_text() -> None:
    assert bounded_text("short", 100) == "short"
    cut = bounded_text("é" * 1000, 500)
    assert len(cut.encode()) <= 500 and cut.endswith("more bytes]")
    assert "[cut: 1,564 more bytes]" in cut
