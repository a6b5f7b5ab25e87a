"""The executor, pinned through `registry.execute`: the collapse, then every stage."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.calls.execution import ParentToken, ToolCall, mint_parent
from codegen.codemode.calls.hooks import Accept, Allow, Ask, Block, Deny
from codegen.codemode.calls.results import ErrorCode
from codegen.codemode.registry import ToolRegistry, ToolSpec
from support.codemode_helpers import (
    FixedApproval,
    Recorder,
    ScriptedRuntime,
    call_tool_script,
    echo_tool,
    registry_with,
    run,
)


def policy_spy(registry: ToolRegistry, recorder: Recorder) -> None:
    """Listeners, a guard and an approval service that record being consulted."""

    def listener(execution: Any) -> Any:
        recorder.add(f"pre {execution.name}")
        return Allow()

    def guard(execution: Any) -> None:
        recorder.add(f"guard {execution.name}")

    registry.add_pre_execute(listener)
    registry.add_guard(guard)
    registry.set_approval_service(FixedApproval("allowed-once", recorder))


def direct(name: str, arguments: Any = None, call_id: str = "c1", **options: Any) -> ToolCall:
    return ToolCall(name, {} if arguments is None else arguments, call_id, **options)


# --- the collapse ---------------------------------------------------------------------------


def test_model_direct_native_call_under_code_is_unknown_before_any_policy() -> None:
    recorder = Recorder()
    registry = registry_with("code", echo_tool(recorder=recorder), runtime=ScriptedRuntime())
    policy_spy(registry, recorder)
    result = run(registry.execute(direct("echo", {"x": 1})))
    assert result.code == ErrorCode.UNKNOWN_TOOL
    assert "only run_code can be called directly" in result.content
    assert "tools.echo" in result.content and result.content.startswith("Error: ")
    assert recorder.events == []


def test_the_same_tool_through_a_nested_call_succeeds() -> None:
    recorder = Recorder()
    runtime = ScriptedRuntime(call_tool_script("echo", {"x": 2}))
    registry = registry_with("code", echo_tool(recorder=recorder), runtime=runtime)
    policy_spy(registry, recorder)
    result = run(registry.execute(direct("run_code", {"code": "...", "description": "Echo"})))
    assert not result.is_error, result.content
    assert result.value["result"] == {"tool": "echo", "args": {"x": 2}}
    assert "pre echo" in recorder.events and "guard echo" in recorder.events
    assert "start echo c1:code:1" in recorder.events


@pytest.mark.parametrize("mode", ["native", "both"])
def test_direct_calls_run_under_native_and_both(mode: str) -> None:
    registry = registry_with(mode, echo_tool(), runtime=ScriptedRuntime())
    result = run(registry.execute(direct("echo", {"x": 3})))
    assert not result.is_error and result.value == {"tool": "echo", "args": {"x": 3}}


@pytest.mark.parametrize("mode", ["code", "both"])
def test_run_code_itself_runs_directly(mode: str) -> None:
    registry = registry_with(mode, echo_tool(), runtime=ScriptedRuntime())
    result = run(registry.execute(direct("run_code", {"code": "print", "description": "X"})))
    assert not result.is_error and result.content == "print"


def test_run_code_is_unknown_under_native() -> None:
    registry = registry_with("native", echo_tool(), runtime=ScriptedRuntime())
    result = run(registry.execute(direct("run_code", {"code": "x", "description": "X"})))
    assert result.code == ErrorCode.UNKNOWN_TOOL


def test_pre_aborted_collapsed_call_is_aborted_before_dispatch_and_finalized() -> None:
    recorder = Recorder()
    spec = echo_tool(finalize_content=lambda text: f"[{text}]")
    registry = registry_with("code", spec, runtime=ScriptedRuntime())
    policy_spy(registry, recorder)
    controller = AbortController()
    controller.abort("user pressed stop")
    result = run(registry.execute(direct("echo", {"x": 1}, signal=controller.signal)))
    assert result.code == ErrorCode.ABORTED_BEFORE_DISPATCH
    assert result.content == "[Error: tool call aborted before it started]"
    assert recorder.events == []


def test_non_json_arguments_fail_first_even_when_the_name_would_collapse() -> None:
    recorder = Recorder()
    registry = registry_with("code", echo_tool(), runtime=ScriptedRuntime())
    policy_spy(registry, recorder)
    controller = AbortController()
    controller.abort()
    for arguments in ({"x": (1, 2)}, {"x": float("nan")}, {1: "a"}, object()):
        result = run(registry.execute(ToolCall("echo", arguments, "c", signal=controller.signal)))
        assert result.code == ErrorCode.INVALID_ARGS, arguments
        assert "lossless JSON" in result.content
    root = run(registry.execute(ToolCall("echo", object(), "c")))
    assert "pass {} for no arguments" in root.content
    assert recorder.events == []


def test_unknown_name_under_native_reaches_pre_execute_and_fails_at_dispatch() -> None:
    recorder = Recorder()
    registry = registry_with("native", echo_tool())
    policy_spy(registry, recorder)
    result = run(registry.execute(direct("nope")))
    assert result.code == ErrorCode.UNKNOWN_TOOL
    assert result.content == 'Error: unknown tool "nope"'
    assert recorder.events == ["pre nope", "guard nope"]


def test_parent_tokens_cannot_be_forged() -> None:
    with pytest.raises(TypeError, match="minted by the run_code bridge"):
        ParentToken(object(), "x", "x", None)


def test_a_minted_parent_reaches_every_visible_tool_but_never_run_code() -> None:
    registry = registry_with("code", echo_tool(), runtime=ScriptedRuntime())
    parent = mint_parent("outer", "outer", registry.root)
    ok = run(registry.execute(ToolCall("echo", {}, "outer:code:1", parent=parent)))
    assert not ok.is_error
    nested_run_code = run(
        registry.execute(
            ToolCall("run_code", {"code": "", "description": "x"}, "outer:code:2", parent=parent)
        )
    )
    assert nested_run_code.code == ErrorCode.UNKNOWN_TOOL


MODES = st.sampled_from(["native", "code", "both"])
NAMES = st.sampled_from(["echo", "other", "run_code", "missing"])


@settings(max_examples=200, deadline=None)
@given(
    MODES,
    st.lists(st.tuples(st.text(max_size=3), st.one_of(st.none(), MODES)), max_size=3),
    NAMES,
    st.booleans(),
    st.booleans(),
)
def test_collapse_invariant(
    root_mode: str, chain: list[tuple[str, Any]], name: str, nested: bool, pre_aborted: bool
) -> None:
    """Whatever the modes on the scope chain, a model-direct call runs a non-run_code tool
    only when the effective mode is not `code`, and a collapsed call never reaches policy."""
    recorder = Recorder()
    registry = registry_with(root_mode, echo_tool(), echo_tool("other"), runtime=ScriptedRuntime())
    policy_spy(registry, recorder)
    scope = registry.root
    for label, mode in chain:
        scope = registry.scope(label or "s", scope)
        if mode is not None:
            registry.set_mode(mode, scope)
    effective = registry.mode_for(scope)
    controller = AbortController()
    if pre_aborted:
        controller.abort()
    parent = mint_parent("outer", "outer", scope) if nested else None
    arguments = {"code": "x", "description": "d"} if name == "run_code" else {}
    result = run(
        registry.execute(
            ToolCall(name, arguments, "c", scope=scope, signal=controller.signal, parent=parent)
        )
    )
    collapsed = not nested and effective == "code" and name != "run_code"
    if collapsed:
        assert recorder.events == []
        assert result.code == (
            ErrorCode.ABORTED_BEFORE_DISPATCH if pre_aborted else ErrorCode.UNKNOWN_TOOL
        )
    elif pre_aborted:
        assert result.code == ErrorCode.ABORTED_BEFORE_DISPATCH
    elif name in ("echo", "other"):
        assert not result.is_error
    if not nested and effective == "code" and not result.is_error:
        assert name == "run_code"


# --- policy -----------------------------------------------------------------------------------


def test_deny_stops_before_guards_and_still_runs_post_execute() -> None:
    recorder = Recorder()
    registry = registry_with("native", echo_tool(recorder=recorder))
    registry.add_pre_execute(lambda e: Deny("not today"))
    registry.add_guard(lambda e: recorder.add("guard"))
    registry.add_post_execute(lambda e, r: recorder.add(f"post {r.code}"))
    result = run(registry.execute(direct("echo")))
    assert result.code == ErrorCode.DENIED and result.content == "Error: not today"
    assert recorder.events == ["post DENIED"]


@pytest.mark.parametrize(
    "outcome, code, fragment",
    [
        ("allowed-once", None, None),
        ("rejected", ErrorCode.DENIED, "rejected"),
        ("cancelled", ErrorCode.DENIED, "cancelled"),
        ("unavailable", ErrorCode.DENIED, "unavailable"),
    ],
)
def test_ask_goes_to_the_approval_service(outcome: str, code: Any, fragment: Any) -> None:
    recorder = Recorder()
    registry = registry_with("native", echo_tool())
    registry.add_pre_execute(lambda e: Ask("writes files"))
    registry.set_approval_service(FixedApproval(outcome, recorder))
    result = run(registry.execute(direct("echo")))
    assert recorder.events == ["approval echo writes files"]
    assert result.code == code
    if fragment:
        assert fragment in result.content


def test_ask_without_a_service_is_a_denial() -> None:
    registry = registry_with("native", echo_tool())
    registry.add_pre_execute(lambda e: Ask("needs a human"))
    assert run(registry.execute(direct("echo"))).content == "Error: needs a human"
    registry.add_pre_execute(lambda e: Ask())
    other = registry_with("native", echo_tool())
    other.add_pre_execute(lambda e: Ask())
    result = run(other.execute(direct("echo")))
    assert result.code == ErrorCode.DENIED and "requires approval" in result.content


def test_cancelled_approval_of_an_aborted_call_is_aborted_before_dispatch() -> None:
    controller = AbortController()
    registry = registry_with("native", echo_tool())
    registry.add_pre_execute(lambda e: Ask())
    registry.set_approval_service(FixedApproval("cancelled", abort=controller.abort))
    result = run(registry.execute(direct("echo", signal=controller.signal)))
    assert result.code == ErrorCode.ABORTED_BEFORE_DISPATCH


def test_guards_run_global_first_then_farthest_to_nearest_first_refusal_wins() -> None:
    recorder = Recorder()
    registry = registry_with("native", echo_tool())
    agent = registry.scope("agent")
    session = registry.scope("session", agent)

    def guard(label: str, refuse: bool) -> Any:
        def check(execution: Any) -> str | None:
            recorder.add(label)
            return f"{label} says no" if refuse else None

        return check

    registry.add_guard(guard("global", False))
    registry.add_guard(guard("session", True), session)
    registry.add_guard(guard("agent", True), agent)
    result = run(registry.execute(direct("echo", scope=session)))
    assert recorder.events == ["global", "agent"]
    assert result.content == "Error: agent says no"


def test_abort_during_policy_is_aborted_before_dispatch() -> None:
    controller = AbortController()
    recorder = Recorder()
    registry = registry_with("native", echo_tool(recorder=recorder))

    def listener(execution: Any) -> Any:
        controller.abort()
        return Allow()

    registry.add_pre_execute(listener)
    registry.add_post_execute(lambda e, r: recorder.add(f"post {r.code}"))
    result = run(registry.execute(direct("echo", signal=controller.signal)))
    assert result.code == ErrorCode.ABORTED_BEFORE_DISPATCH
    assert recorder.events == ["post ABORTED_BEFORE_DISPATCH"]


def test_a_throwing_pre_execute_listener_is_final() -> None:
    recorder = Recorder()
    registry = registry_with("native", echo_tool())

    def broken(execution: Any) -> Any:
        raise RuntimeError("listener broke")

    registry.add_pre_execute(broken)
    registry.add_post_execute(lambda e, r: recorder.add("post"))
    result = run(registry.execute(direct("echo")))
    assert result.code == ErrorCode.TOOL_FAILED and "listener broke" in result.content
    assert recorder.events == []


# --- dispatch ---------------------------------------------------------------------------------


def test_arguments_are_validated_with_every_violation_and_path() -> None:
    spec = ToolSpec(
        "strict",
        "x",
        {
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["n", "mode"],
            "additionalProperties": False,
        },
        handler=lambda a, c: asyncio.sleep(0, result=a),
    )
    registry = registry_with("native", spec)
    result = run(registry.execute(direct("strict", {"n": "one", "tags": ["a", 2], "extra": 1})))
    assert result.code == ErrorCode.INVALID_ARGS
    assert result.error is not None
    assert list(result.error.details) == sorted(
        [
            "$.n: 'one' is not of type 'integer'",
            "$.tags[1]: 2 is not of type 'string'",
            "$: 'mode' is a required property",
            "$: Additional properties are not allowed ('extra' was unexpected)",
        ]
    )


def test_output_is_validated_against_the_output_schema() -> None:
    async def wrong(args: Any, context: Any) -> Any:
        return {"count": "many"}

    async def not_json(args: Any, context: Any) -> Any:
        return {"when": object()}

    schema = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    registry = registry_with(
        "native",
        ToolSpec("w", "", output_schema=schema, handler=wrong),
        ToolSpec("j", "", handler=not_json),
    )
    result = run(registry.execute(direct("w")))
    assert result.code == ErrorCode.INVALID_TOOL_OUTPUT
    assert "$.count: 'many' is not of type 'integer'" in result.content
    assert run(registry.execute(direct("j"))).code == ErrorCode.INVALID_TOOL_OUTPUT


def test_handler_exceptions_become_error_results() -> None:
    async def broken(args: Any, context: Any) -> Any:
        raise ValueError("disk full")

    registry = registry_with("native", ToolSpec("b", "", handler=broken))
    result = run(registry.execute(direct("b")))
    assert result.code == ErrorCode.TOOL_FAILED and result.content == "Error: disk full"


def test_arguments_are_frozen_snapshots() -> None:
    seen: list[Any] = []

    async def handler(args: Any, context: Any) -> Any:
        seen.append(args)
        with pytest.raises(TypeError):
            args["x"] = 2
        return "ok"

    registry = registry_with("native", ToolSpec("f", "", handler=handler))
    original = {"x": 1, "nested": {"y": [1]}}
    run(registry.execute(direct("f", original)))
    original["nested"]["y"].append(2)
    assert seen[0] == {"x": 1, "nested": {"y": [1]}}


def test_around_dispatch_wrappers_nest_in_registration_order() -> None:
    recorder = Recorder()
    registry = registry_with("native", echo_tool(recorder=recorder))

    def wrapper(label: str) -> Any:
        async def wrap(execution: Any, proceed: Any) -> Any:
            recorder.add(f"{label} in")
            value = await proceed()
            recorder.add(f"{label} out")
            return value

        return wrap

    registry.add_around_dispatch(wrapper("outer"))
    registry.add_around_dispatch(wrapper("inner"))
    assert not run(registry.execute(direct("echo"))).is_error
    assert recorder.events == [
        "outer in",
        "inner in",
        "start echo c1",
        "end echo c1",
        "inner out",
        "outer out",
    ]


def test_a_throwing_wrapper_is_final_and_skips_post_execute() -> None:
    recorder = Recorder()
    registry = registry_with("native", echo_tool())

    async def wrap(execution: Any, proceed: Any) -> Any:
        raise RuntimeError("wrapper broke")

    registry.add_around_dispatch(wrap)
    registry.add_post_execute(lambda e, r: recorder.add("post"))
    result = run(registry.execute(direct("echo")))
    assert result.code == ErrorCode.TOOL_FAILED and recorder.events == []


def test_cancellation_after_start_is_aborted() -> None:
    controller = AbortController()
    started = asyncio.Event() if False else None  # noqa: F841 - created inside the loop below
    recorder = Recorder()

    async def slow(args: Any, context: Any) -> Any:
        recorder.add("started")
        try:
            await asyncio.sleep(10)
        finally:
            recorder.add("stopped")
        return "never"

    registry = registry_with("native", ToolSpec("slow", "", handler=slow))
    registry.add_post_execute(lambda e, r: recorder.add(f"post {r.code}"))

    async def scenario() -> Any:
        task = asyncio.ensure_future(registry.execute(direct("slow", signal=controller.signal)))
        await asyncio.sleep(0.05)
        controller.abort("stop")
        return await asyncio.wait_for(task, 5)

    result = run(scenario())
    assert result.code == ErrorCode.ABORTED
    assert recorder.events == ["started", "stopped", "post ABORTED"]


def test_a_success_after_cancel_is_replaced_by_aborted() -> None:
    controller = AbortController()

    async def stubborn(args: Any, context: Any) -> Any:
        controller.abort()
        return "done anyway"

    registry = registry_with("native", ToolSpec("s", "", handler=stubborn))
    result = run(registry.execute(direct("s", signal=controller.signal)))
    assert result.code == ErrorCode.ABORTED and result.content == "Error: tool call aborted"


# --- post-execute, finalize, observers ---------------------------------------------------------


def test_post_execute_can_replace_content_or_value_or_block() -> None:
    schema = {"type": "object", "properties": {"tool": {"type": "string"}}}
    registry = registry_with("native", echo_tool(output_schema=schema))
    registry.add_post_execute(lambda e, r: Accept(content="short"))
    assert run(registry.execute(direct("echo"))).content == "short"

    registry = registry_with("native", echo_tool(output_schema=schema))
    registry.add_post_execute(lambda e, r: Accept(value={"tool": "replaced"}))
    result = run(registry.execute(direct("echo")))
    assert result.value == {"tool": "replaced"} and '"replaced"' in result.content

    registry = registry_with("native", echo_tool(output_schema=schema))
    registry.add_post_execute(lambda e, r: Accept(value={"tool": 5}))
    assert run(registry.execute(direct("echo"))).code == ErrorCode.INVALID_TOOL_OUTPUT

    registry = registry_with("native", echo_tool())
    registry.add_post_execute(lambda e, r: Block("too much output"))
    result = run(registry.execute(direct("echo")))
    assert result.code == ErrorCode.DENIED and result.content == "Error: too much output"
    with pytest.raises(ValueError):
        Accept(content="a", value=1)


def test_finalize_runs_exactly_once_and_observers_are_contained(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []

    def finalize(text: str) -> str:
        calls.append(text)
        return text.upper()

    seen: list[Any] = []
    registry = registry_with("native", echo_tool(finalize_content=finalize))

    def broken(execution: Any, result: Any) -> None:
        raise RuntimeError("observer broke")

    registry.add_observer(broken)
    registry.add_observer(lambda e, r: seen.append(r.content))
    result = run(registry.execute(direct("echo", {"x": 1})))
    assert len(calls) == 1 and result.content == calls[0].upper()
    assert seen == [result.content]
    assert "observer broke" in caplog.text


def test_model_sees_every_failure_as_error_text() -> None:
    registry = registry_with("native", echo_tool())
    for call in (direct("missing"), direct("echo", {"x": "not int"})):
        result = run(registry.execute(call))
        assert result.is_error and result.content == f"Error: {result.error.message}"  # type: ignore[union-attr]
