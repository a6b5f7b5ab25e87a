"""The executor: one call through every stage, in this order.

1. Create the execution: capture the visible tool's `finalize_content`, snapshot and freeze
   the arguments (anything that is not lossless JSON fails here, before anything else), then
   apply the collapse: a model-direct call under `code` naming anything but `run_code` is
   `UNKNOWN_TOOL` (or `ABORTED_BEFORE_DISPATCH` when its signal is already aborted). No
   listener, approval request or guard ever sees a collapsed call.
2. Abort check.
3. The user's policy (`approval/rules.py`): `deny` refuses any call, `ask` sends a
   program's call to the approval service; then the pre-execute listeners (`Allow` / `Deny`
   / `Ask`, `Ask` going to the approval service). What was decided is kept on the
   execution (`Execution.decided`) for the audit log.
4. Guards: the registry's first, then each scope from the farthest to the nearest.
5. Abort check, then dispatch: around-dispatch wrappers around the handler, argument
   validation against the input schema, output validation against the output schema; a
   cancellation after the handler started makes the result `ABORTED`.
6. Post-execute listeners (accept, replace the content or the value, or block).
7. `finalize_content` exactly once, then the result goes to every observer.

Every lookup goes through `ToolRegistry.resolve`, so what runs is what the wire announced.
"""

from __future__ import annotations

import asyncio
import logging
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from ..approval.pausing import user_time
from ..approval.rules import Verdict
from .cancellation import AbortController
from .cancellation import aborted as is_aborted
from .execution import Execution, ToolCall, ToolContext
from .hooks import (
    APPROVED,
    Accept,
    Allow,
    Answer,
    ApprovalService,
    AroundDispatch,
    Ask,
    Block,
    Deny,
    Observer,
    maybe_await,
)
from .jsonvalue import NotJsonError, snapshot
from .offload import off_loop
from .results import (
    ErrorCode,
    ToolResult,
    aborted,
    aborted_before_dispatch,
    failure,
    render_value,
    success,
    unknown_tool,
)
from .specs import ToolSpec

if TYPE_CHECKING:
    from .scopes import Scope

log = logging.getLogger("codegen.codemode")


class RegistryView(Protocol):
    """What the executor reads from the registry (`registry.ToolRegistry` is the one): the
    lookups that decide what runs, and the hooks that wrap and observe it."""

    root: Scope
    approval: ApprovalService | None
    around_dispatch: list[AroundDispatch]
    observers: list[Observer]

    def policy_verdict(self, execution: Execution) -> Verdict | None: ...

    def get(self, name: str, scope: Scope | None = None) -> ToolSpec | None: ...

    def resolve(self, name: str, scope: Scope | None, nested: bool) -> ToolSpec | None: ...

    def collapses(self, name: str, scope: Scope | None, nested: bool) -> bool: ...

    async def unknown_tool_message(self, name: str, scope: Scope | None) -> str: ...


class _Final(Exception):
    """A result that skips the remaining stages (post-execute included)."""

    def __init__(self, result: ToolResult) -> None:
        self.result = result


class Pending:
    """One call split into its stages, so the run_code bridge can order them: `prepare`
    (stages 1-4), `dispatch` (5: the only stage calls may overlap in) and `commit` (6-7)."""

    def __init__(self, registry: RegistryView, call: ToolCall) -> None:
        self.registry = registry
        self.call = call
        self.scope = call.scope or registry.root
        visible = registry.get(call.name, self.scope)
        self.finalize = visible.finalize_content if visible is not None else None
        self.execution: Execution | None = None
        self.started = False

    async def prepare(self) -> tuple[ToolResult | None, bool]:
        """(None, False) to dispatch, or an early result and whether it is final (final
        results skip post-execute)."""
        call, registry = self.call, self.registry
        try:
            arguments = await off_loop(snapshot, call.arguments, weight=call.arguments)
        except NotJsonError as problem:
            hint = " (pass {} for no arguments)" if problem.path == "$" else ""
            return failure(
                call.call_id,
                call.name,
                ErrorCode.INVALID_ARGS,
                f"tool arguments must be lossless JSON: {problem}{hint}",
            ), True
        self.execution = Execution(
            call_id=call.call_id,
            root_call_id=call.parent.root_call_id if call.parent else call.call_id,
            name=call.name,
            arguments=arguments,
            scope=self.scope,
            parent=call.parent,
            signal=call.signal,
        )
        if registry.collapses(call.name, self.scope, call.parent is not None):
            if is_aborted(call.signal):
                return aborted_before_dispatch(call.call_id, call.name), True
            return unknown_tool(call.call_id, call.name, collapsed=True), True
        if is_aborted(call.signal):
            return aborted_before_dispatch(call.call_id, call.name), True
        try:
            denial = await _policy(registry, self.execution)
        except _Final as final:
            return final.result, True
        if denial is None and is_aborted(call.signal):
            denial = aborted_before_dispatch(call.call_id, call.name)
        return denial, False

    async def dispatch(self) -> tuple[ToolResult, bool]:
        """The handler's result, and whether it is final (a wrapper threw)."""
        assert self.execution is not None
        self.started = True
        try:
            return await _dispatch(self.registry, self.execution), False
        except _Final as final:
            return final.result, True

    async def commit(self, result: ToolResult, final: bool = False) -> ToolResult:
        if not final and self.execution is not None:
            result = await _post_execute(self.registry, self.execution, result)
            if self.started and is_aborted(self.call.signal) and not result.is_error:
                result = aborted(self.call.call_id, self.call.name)
        return await _finish(self.registry, self.execution, self.finalize, result)


async def execute(registry: RegistryView, call: ToolCall) -> ToolResult:
    pending = Pending(registry, call)
    early, final = await pending.prepare()
    if early is not None:
        return await pending.commit(early, final)
    result, final = await pending.dispatch()
    return await pending.commit(result, final)


# --- policy ------------------------------------------------------------------------------


async def _policy(registry: RegistryView, execution: Execution) -> ToolResult | None:
    """None to go on, or the result of a denial."""
    assert execution.scope is not None
    verdict = registry.policy_verdict(execution)
    if verdict is not None:
        execution.decided.because = verdict.because
        if verdict.action == "deny":
            execution.decided.decision = "denied"
            return _denied(
                execution,
                f'the policy denies calls to "{execution.name}" ({verdict.because})',
            )
        if verdict.action == "ask" and execution.nested:
            outcome = await _approve(registry, execution, verdict.because, from_policy=True)
            if outcome is not None:
                return outcome
    for scope in execution.scope.chain():
        for listener in scope.pre_execute:
            try:
                decision = await maybe_await(listener(execution))
            except Exception as error:
                raise _Final(
                    failure(
                        execution.call_id,
                        execution.name,
                        ErrorCode.TOOL_FAILED,
                        f"pre-execute listener failed: {_text(error)}",
                    )
                ) from None
            if isinstance(decision, Deny):
                execution.decided.decision = "denied"
                return _denied(execution, decision.reason)
            if isinstance(decision, Ask):
                outcome = await _approve(registry, execution, decision.reason)
                if outcome is not None:
                    return outcome
            elif not isinstance(decision, Allow) and decision is not None:
                return _denied(execution, f"pre-execute listener returned {decision!r}")
    for scope in execution.scope.chain():
        for guard in scope.guards:
            try:
                refusal = await maybe_await(guard(execution))
            except Exception as error:
                refusal = f"guard failed: {_text(error)}"
            if refusal:
                execution.decided.decision = "denied"
                return _denied(execution, str(refusal))
    return None


async def _approve(
    registry: RegistryView, execution: Execution, reason: str | None, from_policy: bool = False
) -> ToolResult | None:
    """None when the approval service allows the call, else the refusal (and what was
    asked and answered, on `execution.decided`)."""
    name = execution.name
    decided = execution.decided
    why = f" (asked because of {reason})" if reason else ""
    if registry.approval is None:
        decided.decision, decided.answer = "denied", "no approval service"
        if not from_policy:  # a listener's own words
            return _denied(
                execution,
                reason or f'tool "{name}" requires approval and no approval service is available',
            )
        return _denied(
            execution,
            f'the call to "{name}" needs approval{why} and no approval service is set; '
            "allow it with a policy rule, or set one",
        )
    try:
        with user_time():  # the run's clock stops while the user decides
            answer = await registry.approval.request(execution, reason)
    except Exception as error:
        decided.decision, decided.answer = "denied", "approval failed"
        return _denied(execution, f'approval of "{name}" failed: {_text(error)}')
    outcome, message = (
        (answer.outcome, answer.message) if isinstance(answer, Answer) else (answer, None)
    )
    decided.answer = str(outcome)
    if outcome in APPROVED:
        decided.decision = "asked-accepted"
        return None
    decided.decision = "denied" if outcome == "unavailable" else "asked-declined"
    if outcome == "cancelled" and is_aborted(execution.signal):
        return aborted_before_dispatch(execution.call_id, name)
    if message is not None:
        return _denied(execution, message)
    reasons = {
        "rejected": f'the user rejected the call to "{name}"{why}',
        "cancelled": f'the user cancelled the request to approve "{name}"{why}',
        "timed-out": f'nobody answered the request to approve "{name}" in time{why}',
        "unavailable": f'tool "{name}" requires approval{why}, which is unavailable right now',
    }
    return _denied(execution, reasons.get(str(outcome), f"approval answered {outcome!r}"))


def _denied(execution: Execution, reason: str) -> ToolResult:
    return failure(execution.call_id, execution.name, ErrorCode.DENIED, reason)


# --- dispatch ----------------------------------------------------------------------------


async def _dispatch(registry: RegistryView, execution: Execution) -> ToolResult:
    spec = registry.resolve(execution.name, execution.scope, execution.nested)
    if spec is None or spec.handler is None:
        message = ""
        if spec is None and execution.nested:
            message = await registry.unknown_tool_message(execution.name, execution.scope)
        return unknown_tool(execution.call_id, execution.name, False, message)
    problems = await off_loop(
        argument_problems, spec, execution.arguments, weight=execution.arguments
    )
    if problems:
        return failure(
            execution.call_id,
            execution.name,
            ErrorCode.INVALID_ARGS,
            f'invalid arguments for "{execution.name}": ' + "; ".join(problems),
            tuple(problems),
        )
    controller = AbortController(follow=execution.signal)
    context = ToolContext(execution, controller.signal, registry)
    handler = spec.handler
    body_errors: list[BaseException] = []

    async def body() -> Any:
        try:
            return await handler(execution.arguments, context)
        except Exception as error:
            body_errors.append(error)
            raise

    proceed = body
    for wrapper in reversed(registry.around_dispatch):
        proceed = _wrap(wrapper, execution, proceed)
    try:
        value = await _run_cancellable(proceed(), controller)
    except asyncio.CancelledError:
        if is_aborted(controller.signal):
            return aborted(execution.call_id, execution.name)
        raise
    except Exception as error:
        if is_aborted(execution.signal):  # the caller cancelled: whatever failed, it aborted
            return aborted(execution.call_id, execution.name)
        result = _error_result(execution, error)
        if body_errors and body_errors[-1] is error:
            return result
        raise _Final(result) from None  # a wrapper threw: final, no post-execute
    if is_aborted(execution.signal):
        return aborted(execution.call_id, execution.name)
    return await off_loop(checked_output, spec, execution, value, weight=value)


def _wrap(wrapper: Any, execution: Execution, inner: Any) -> Any:
    async def wrapped() -> Any:
        return await wrapper(execution, inner)

    return wrapped


async def _run_cancellable(work: Any, controller: AbortController) -> Any:
    """Run the handler; when the call's signal aborts, cancel it and wait for it to stop."""
    task = asyncio.ensure_future(work)
    remove = controller.signal.on_abort(task.cancel)
    try:
        return await task
    finally:
        remove()


def _error_result(execution: Execution, error: BaseException) -> ToolResult:
    code = getattr(error, "code", None)
    known = code if isinstance(code, str) and code in ErrorCode.__members__ else None
    return failure(
        execution.call_id,
        execution.name,
        ErrorCode(known) if known else ErrorCode.TOOL_FAILED,
        _text(error),
        kind=getattr(error, "kind", None),
    )


def _text(error: BaseException) -> str:
    try:
        text = str(error)
    except Exception:
        return "<unprintable error>"
    return text or type(error).__name__


@lru_cache(maxsize=1024)
def _validator(schema_json: str) -> Any:
    import json

    from jsonschema.validators import validator_for

    schema = json.loads(schema_json)
    cls = validator_for(schema)
    return cls(schema)


def _validate(schema: Any, value: Any) -> list[str]:
    """Every violation of `schema` by `value`, as `$.path: message`, sorted."""
    import json

    if schema is None or schema is True or schema == {}:
        return []
    validator = _validator(json.dumps(schema, sort_keys=True))
    found = []
    for error in validator.iter_errors(value):
        path = "$" + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path
        )
        found.append(f"{path}: {error.message}")
    return sorted(set(found))


def argument_problems(spec: ToolSpec, arguments: Any) -> list[str]:
    return _validate(spec.input_schema, arguments)


def checked_output(spec: ToolSpec, execution: Execution, value: Any) -> ToolResult:
    """A successful value, or `INVALID_TOOL_OUTPUT` when it is not JSON or not valid."""
    try:
        frozen = snapshot(value)
    except NotJsonError as problem:
        return failure(
            execution.call_id,
            execution.name,
            ErrorCode.INVALID_TOOL_OUTPUT,
            f'tool "{execution.name}" returned invalid output: {problem}',
        )
    problems = _validate(spec.output_schema, frozen)
    if problems:
        return failure(
            execution.call_id,
            execution.name,
            ErrorCode.INVALID_TOOL_OUTPUT,
            f'tool "{execution.name}" returned invalid output: ' + "; ".join(problems),
            tuple(problems),
        )
    if spec.present is not None:
        return ToolResult(execution.call_id, execution.name, spec.present(frozen), frozen)
    return success(execution.call_id, execution.name, frozen)


# --- post-execute and finish -------------------------------------------------------------


async def _post_execute(
    registry: RegistryView, execution: Execution, result: ToolResult
) -> ToolResult:
    assert execution.scope is not None
    for scope in execution.scope.chain():
        for listener in scope.post_execute:
            try:
                decision = await maybe_await(listener(execution, result))
            except Exception as error:
                return failure(
                    execution.call_id,
                    execution.name,
                    ErrorCode.TOOL_FAILED,
                    f"post-execute listener failed: {_text(error)}",
                )
            if isinstance(decision, Block):
                result = failure(
                    execution.call_id, execution.name, ErrorCode.DENIED, decision.feedback
                )
            elif isinstance(decision, Accept) and decision.replaces_value:
                spec = registry.resolve(execution.name, execution.scope, execution.nested)
                result = (
                    checked_output(spec, execution, decision.value)
                    if spec is not None
                    else success(execution.call_id, execution.name, decision.value)
                )
            elif isinstance(decision, Accept) and decision.content is not None:
                result = _replace_content(result, decision.content)
    return result


def _replace_content(result: ToolResult, content: str) -> ToolResult:
    return ToolResult(
        result.call_id, result.name, content, result.value, result.error, result.metadata
    )


async def _finish(
    registry: RegistryView, execution: Execution | None, finalize: Any, result: ToolResult
) -> ToolResult:
    """`finalize_content` once, then every observer; their failures are contained."""
    if finalize is not None:
        try:
            result = _replace_content(result, str(finalize(result.content)))
        except Exception:
            log.exception("finalize_content of %s failed", result.name)
    for observer in registry.observers:
        try:
            await maybe_await(observer(execution, result))
        except Exception:
            log.exception("result observer failed for %s", result.name)
    return result


__all__ = ["argument_problems", "checked_output", "execute", "render_value"]
