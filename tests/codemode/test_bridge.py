"""The run_code bridge with a scripted runtime: ids, scheduling, ordering, settlement,
events and the result text."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from codegen.codemode.calls.cancellation import AbortController, AbortSignal
from codegen.codemode.calls.execution import ToolCall
from codegen.codemode.calls.hooks import Accept
from codegen.codemode.calls.results import ErrorCode
from codegen.codemode.registry import ToolRegistry
from codegen.codemode.run_code.bridge import NO_OUTPUT, DispatchEvent, present_run_output
from codegen.codemode.run_code.code_runtime import (
    Bindings,
    CodeRunFailed,
    RunOutput,
    ToolCallFailed,
)
from support.codemode_helpers import Recorder, ScriptedRuntime, echo_tool, registry_with, run


def run_code(registry: ToolRegistry, call_id: str = "outer", **options: Any) -> Any:
    call = ToolCall("run_code", {"code": "program", "description": "Do things"}, call_id, **options)
    return run(registry.execute(call))


def scripted(script: Any, *specs: Any, mode: str = "code", **options: Any) -> ToolRegistry:
    return registry_with(mode, *specs, runtime=ScriptedRuntime(script), **options)


def test_sub_call_ids_count_accepted_calls_from_one() -> None:
    seen: list[str] = []
    registry_box: list[ToolRegistry] = []

    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        await bindings.call("echo", {"x": 1})
        with pytest.raises(ToolCallFailed, match="lossless JSON"):
            await bindings.call("echo", {"x": {1, 2}})
        await bindings.call("echo", {"x": 2})
        return RunOutput()

    registry = scripted(script, echo_tool())
    registry_box.append(registry)
    registry.add_observer(lambda e, r: seen.append(r.call_id))
    result = run_code(registry)
    assert not result.is_error
    assert seen == ["outer:code:1", "outer:code:2", "outer"]


def test_tool_failures_reach_the_program_as_tool_call_failed() -> None:
    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        try:
            await bindings.call("echo", {"x": "not an integer"})
        except ToolCallFailed as failure:
            return RunOutput(result={"tool": failure.tool_name, "message": failure.message})
        return RunOutput()

    result = run_code(scripted(script, echo_tool()))
    assert result.value["result"]["tool"] == "echo"
    assert "is not of type 'integer'" in result.value["result"]["message"]


def test_nested_calls_go_through_policy() -> None:
    recorder = Recorder()

    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        try:
            await bindings.call("echo", {})
        except ToolCallFailed as failure:
            return RunOutput(logs=[failure.message])
        return RunOutput()

    registry = scripted(script, echo_tool(recorder=recorder))
    registry.add_guard(lambda e: "no echo in programs" if e.nested else None)
    result = run_code(registry)
    assert result.content == "no echo in programs"
    assert recorder.events == []


def timed_tool(name: str, recorder: Recorder, delay: float, safe: bool | None) -> Any:
    return echo_tool(name, recorder, safe=safe, delay=delay)


def overlap_script(calls: list[tuple[str, dict[str, Any]]]) -> Any:
    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        values = await asyncio.gather(*(bindings.call(n, a) for n, a in calls))
        return RunOutput(result=[v["tool"] for v in values])

    return script


def peak(events: list[str]) -> int:
    running = best = 0
    for event in events:
        running += 1 if event.startswith("start") else -1 if event.startswith("end") else 0
        best = max(best, running)
    return best


def test_safe_calls_overlap_and_starts_stay_in_submission_order() -> None:
    recorder = Recorder()
    calls = [("fast", {"x": i}) for i in range(3)]
    registry = scripted(overlap_script(calls), timed_tool("fast", recorder, 0.05, True))
    result = run_code(registry)
    assert result.value["result"] == ["fast"] * 3
    starts = [e for e in recorder.events if e.startswith("start")]
    assert starts == [f"start fast outer:code:{i}" for i in (1, 2, 3)]
    assert peak(recorder.events) == 3


def test_the_cap_limits_overlap() -> None:
    recorder = Recorder()
    calls = [("fast", {"x": i}) for i in range(5)]
    registry = scripted(
        overlap_script(calls), timed_tool("fast", recorder, 0.05, True), max_parallel_sub_calls=2
    )
    run_code(registry)
    assert peak(recorder.events) == 2


def test_an_exclusive_call_is_a_barrier_and_runs_alone() -> None:
    recorder = Recorder()
    calls = [("fast", {}), ("fast", {}), ("slow", {}), ("fast", {})]
    registry = scripted(
        overlap_script(calls),
        timed_tool("fast", recorder, 0.03, True),
        timed_tool("slow", recorder, 0.03, None),
    )
    run_code(registry)
    events = recorder.events
    slow_start = events.index("start slow outer:code:3")
    slow_end = events.index("end slow outer:code:3")
    assert events[slow_start + 1] == "end slow outer:code:3", "the exclusive call ran alone"
    assert all(e.startswith("end fast") or e.startswith("start fast") for e in events[:slow_start])
    assert len([e for e in events[:slow_start] if e.startswith("end")]) == 2
    assert events[slow_end + 1] == "start fast outer:code:4"


def test_tools_without_a_classifier_run_one_at_a_time() -> None:
    recorder = Recorder()
    calls = [("plain", {}) for _ in range(3)]
    registry = scripted(overlap_script(calls), timed_tool("plain", recorder, 0.02, None))
    run_code(registry)
    assert peak(recorder.events) == 1


def test_commits_happen_in_submission_order() -> None:
    recorder = Recorder()
    calls = [("slow", {}), ("quick", {})]
    registry = scripted(
        overlap_script(calls),
        timed_tool("slow", Recorder(), 0.08, True),
        timed_tool("quick", Recorder(), 0.0, True),
    )
    registry.add_post_execute(lambda e, r: recorder.add(f"post {e.call_id}") if e.nested else None)
    registry.add_dispatch_observer(lambda event: recorder.add(f"{event.kind} {event.sub_call_id}"))
    run_code(registry)
    assert recorder.events == [
        "start outer:code:1",
        "start outer:code:2",
        "post outer:code:1",
        "settle outer:code:1",
        "post outer:code:2",
        "settle outer:code:2",
    ]


def test_dispatch_events_carry_the_call() -> None:
    events: list[DispatchEvent] = []

    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        await bindings.call("echo", {"x": 1})
        return RunOutput()

    registry = scripted(script, echo_tool())
    registry.add_dispatch_observer(events.append)

    def broken(event: DispatchEvent) -> None:
        raise RuntimeError("observer broke")

    registry.add_dispatch_observer(broken)
    run_code(registry, "r1")
    start, settle = events
    assert (
        start.kind,
        start.root_call_id,
        start.parent_call_id,
        start.sub_call_id,
        start.name,
        start.arguments,
    ) == ("start", "r1", "r1", "r1:code:1", "echo", {"x": 1})
    assert settle.kind == "settle" and settle.is_error is False
    assert '"tool": "echo"' in (settle.content or "")


def test_calls_never_awaited_are_abandoned_or_drained() -> None:
    recorder = Recorder()
    futures: list[Any] = []

    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        for _ in range(3):
            futures.append(asyncio.ensure_future(bindings.call("slow", {})))
        await asyncio.sleep(0.01)  # the first call is in flight, the others are queued
        return RunOutput(result="left early")

    registry = scripted(script, timed_tool("slow", recorder, 0.05, None))
    registry.add_dispatch_observer(lambda e: recorder.add(f"event {e.kind} {e.sub_call_id}"))
    result = run_code(registry)
    assert result.value == {"logs": [], "result": "left early"}
    outcomes = [f.exception() for f in futures]
    assert isinstance(outcomes[1], ToolCallFailed) and "abandoned" in outcomes[1].message
    assert isinstance(outcomes[2], ToolCallFailed)
    assert "event start outer:code:2" not in recorder.events
    assert "event settle outer:code:1" in recorder.events, "the in-flight call drained"


def test_calls_after_the_program_ended_are_refused() -> None:
    kept: list[Any] = []

    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        kept.append(bindings)
        return RunOutput()

    registry = scripted(script, echo_tool())
    run_code(registry)

    async def late() -> None:
        with pytest.raises(ToolCallFailed, match="settled"):
            await kept[0].call("echo", {})

    run(late())


def test_outer_abort_aborts_in_flight_calls_and_the_run() -> None:
    controller = AbortController()
    recorder = Recorder()

    async def slow(args: Any, context: Any) -> Any:
        recorder.add("slow started")
        try:
            await asyncio.sleep(10)
        finally:
            recorder.add(f"slow stopped, signal aborted: {context.signal.aborted}")
        return "never"

    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        task = asyncio.ensure_future(bindings.call("wait", {}))
        await asyncio.sleep(0.02)
        controller.abort("stop")
        await signal.wait()
        task.cancel()
        raise CodeRunFailed("abort", "the run was cancelled")

    from codegen.codemode.registry import ToolSpec

    registry = scripted(script, ToolSpec("wait", "", handler=slow))
    result = run_code(registry, signal=controller.signal)
    assert result.code == ErrorCode.ABORTED
    assert recorder.events == ["slow started", "slow stopped, signal aborted: True"]


def test_pre_aborted_run_code_never_starts_the_runtime() -> None:
    runtime = ScriptedRuntime()
    registry = registry_with("code", echo_tool(), runtime=runtime)
    controller = AbortController()
    controller.abort()
    result = run_code(registry, signal=controller.signal)
    assert result.code == ErrorCode.ABORTED_BEFORE_DISPATCH and runtime.runs == 0


def test_run_code_without_a_runtime_is_an_error_result() -> None:
    registry = ToolRegistry(mode="code")
    result = run_code(registry)
    assert result.is_error and "needs a code runtime" in result.content


@pytest.mark.parametrize("description", ["", "   ", None, 3])
def test_a_blank_description_is_invalid(description: Any) -> None:
    registry = registry_with("code", echo_tool(), runtime=ScriptedRuntime())
    arguments = {"code": "x", "description": description}
    result = run(registry.execute(ToolCall("run_code", arguments, "c")))
    assert result.code == ErrorCode.INVALID_ARGS
    assert "description" in result.content


def test_code_run_failures_carry_kind_message_and_logs() -> None:
    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        raise CodeRunFailed("exception", "ValueError: boom", ["before the error"])

    result = run_code(scripted(script, echo_tool()))
    assert result.code == ErrorCode.CODE_RUN_FAILED
    assert result.error is not None and result.error.kind == "exception"
    assert result.content == (
        "Error: code run failed (exception): ValueError: boom\nCaptured output:\nbefore the error"
    )


@pytest.mark.parametrize(
    "value, text",
    [
        ({"logs": ["a", "b"]}, "a\nb"),
        ({"logs": ["a"], "result": "raw text"}, "a\nraw text"),
        ({"logs": [], "result": {"k": [1, None]}}, '{\n  "k": [\n    1,\n    null\n  ]\n}'),
        ({"logs": [], "result": None}, "null"),
        ({"logs": []}, NO_OUTPUT),
        ({"logs": [""], "result": ""}, NO_OUTPUT),
    ],
)
def test_result_text(value: dict[str, Any], text: str) -> None:
    assert present_run_output(value) == text


def test_nested_post_execute_replacement_reaches_the_program() -> None:
    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        return RunOutput(result=await bindings.call("echo", {"x": 1}))

    registry = scripted(script, echo_tool())
    registry.add_post_execute(lambda e, r: Accept(value={"tool": "policy"}) if e.nested else None)
    assert run_code(registry).value["result"] == {"tool": "policy"}


def test_programs_never_see_run_code() -> None:
    names: list[tuple[str, ...]] = []

    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        names.append(bindings.names)
        try:
            await bindings.call("run_code", {"code": "x", "description": "y"})
        except ToolCallFailed as failure:
            return RunOutput(result=failure.message)
        return RunOutput()

    result = run_code(scripted(script, echo_tool(), mode="both"))
    assert names == [("echo",)]
    assert "unknown tool" in result.value["result"]
