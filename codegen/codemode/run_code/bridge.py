"""The run_code bridge: runs a program and dispatches its tool calls as nested calls.

Each call a program makes becomes a `ToolCall` with the run's parent token, so every policy,
guard, validation and post-execute step of the executor applies to it. Sub-call ids are
`<outer id>:code:<n>`, numbered from 1 in submission order; a call whose arguments are not
lossless JSON is refused inside the program and takes no number.

Scheduling (one driver per run): calls start strictly in submission order. A call whose tool
declares itself concurrency-safe for those arguments (`is_concurrency_safe(args)` returning
exactly True) may overlap other such calls, up to `max_parallel_sub_calls`; any other call
waits for the running ones to finish and runs alone through its commit. The ordered stages
(the start event, prepare = pre-execute and guards, commit = post-execute, finalize and the
settle event) never overlap, and commits happen in submission order even when calls finish
out of order. When the program ends, the run's signal is aborted: calls whose handler has not
started are abandoned (their awaits fail with "tool call abandoned"): with no events when
they had not reached their start event, and as `ABORTED_BEFORE_DISPATCH` through commit and
settle when they had (were in policy, or waited for a parallel slot or to run alone). Calls
in flight are aborted and drain before run_code returns.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from ..approval.pausing import PAUSER, Pausable
from ..calls.cancellation import AbortController
from ..calls.execution import Execution, ToolCall, ToolContext, mint_parent
from ..calls.executor import Pending
from ..calls.hooks import maybe_await
from ..calls.jsonvalue import NotJsonError, snapshot
from ..calls.offload import off_loop
from ..calls.results import ErrorCode, ToolResult, aborted_before_dispatch, failure
from ..checks import verdict
from ..checks.outcome import CheckMode, CheckOutcome
from ..presentation.fitting import (
    DEFAULT_RESULT_TOKENS,
    MIN_BUDGET,
    estimate_tokens,
    fit_run_output,
    fit_text,
    run_text,
)
from .code_runtime import MISSING, Bindings, CodeRunFailed, RunOutput, ToolCallFailed
from .definition import RUN_CODE

log = logging.getLogger("codegen.codemode")

NO_OUTPUT = "The program printed nothing and returned no value."


class InvalidRunArguments(ValueError):
    code = "INVALID_ARGS"


class NoRuntime(RuntimeError):
    code = "TOOL_FAILED"


@dataclass(frozen=True)
class DispatchEvent:
    """What observers of nested dispatch see: a `start` when a call starts, a `settle`
    when it is committed."""

    kind: str
    root_call_id: str
    parent_call_id: str
    sub_call_id: str
    name: str
    arguments: Any
    is_error: bool | None = None
    content: str | None = None


def present_run_output(value: Any) -> str:
    """The text of a run (`fitting.run_text`: the logs, then the result), then what was cut
    to fit and what the check before the run found, or a fixed line when there is nothing."""
    text = run_text(value)
    if "cut" in value:
        text = f"{text}\n[{value['cut']}]" if text else f"[{value['cut']}]"
    if value.get("check"):
        text = f"{text}\n[{value['check']}]" if text else f"[{value['check']}]"
    return text if text else NO_OUTPUT


async def run_code_handler(arguments: Any, context: ToolContext) -> Any:
    """The run_code tool's handler: check the arguments, check the program against the
    declarations of the tools its scope sees (`checks/`: under `refuse`, a definite mistake
    fails the run before it starts), run it, return `{logs, result?, cut?, check?}`."""
    description = arguments.get("description")
    if not isinstance(description, str) or not description.strip():
        raise InvalidRunArguments("invalid description: expected a non-empty string")
    code = arguments.get("code")
    if not isinstance(code, str):
        raise InvalidRunArguments("invalid code: expected a string")
    registry = context.registry
    runtime = registry.runtime
    if runtime is None:
        raise NoRuntime("run_code needs a code runtime, and none is mounted")
    budget = getattr(registry, "result_tokens", DEFAULT_RESULT_TOKENS)
    mode: CheckMode = getattr(registry, "check", "off")
    outcome = await _checked(registry, context.execution.scope, code, mode)
    refused = verdict.refusal(outcome, mode)
    if refused is not None:  # before the runtime starts: no call of the program runs
        raise fitted_failure(CodeRunFailed("check", refused), budget) from None
    note = verdict.note(outcome, mode)
    run = ProgramRun(registry, context.execution, context)
    try:
        output = await run.run(runtime, code)
    except CodeRunFailed as failed:
        if note:
            failed = CodeRunFailed(failed.kind, f"{failed.message}\n{note}", failed.logs)
        raise await off_loop(fitted_failure, failed, budget, weight=failed.logs) from None
    value: dict[str, Any] = {"logs": list(output.logs)}
    if output.result is not MISSING:
        value["result"] = output.result
    room = max(MIN_BUDGET, budget - estimate_tokens(note)) if note else budget
    fitted = await off_loop(fit_run_output, value, room, weight=value)
    kept = fitted.value if fitted.note is None else {**fitted.value, "cut": fitted.note}
    return {**kept, "check": note} if note else kept


async def _checked(registry: Any, scope: Any, code: str, mode: str) -> CheckOutcome | None:
    """The program's check (None when it is not checked); a checker that fails in a way
    of its own never stops the run: the outcome says so."""
    if mode == "off" or not hasattr(registry, "check_program"):
        return None
    try:
        outcome: CheckOutcome | None = await registry.check_program(code, scope)
    except Exception as error:
        log.exception("run_code: the program check failed")
        return CheckOutcome(
            "crashed", note=f"the program was not checked: the check failed ({error})"
        )
    return outcome


def fitted_failure(failed: CodeRunFailed, budget: int) -> CodeRunFailed:
    """A failed run's message and logs cut to fit `budget` tokens between them (clients
    reject larger results), with a note of what was cut."""
    message, _ = fit_text(failed.message, max(MIN_BUDGET, budget // 4))
    logs = "\n".join(failed.logs)
    if not logs:
        return CodeRunFailed(failed.kind, message)
    kept, note = fit_text(logs, max(MIN_BUDGET, budget - budget // 4))
    lines = kept.split("\n") if note is not None else list(failed.logs)
    return CodeRunFailed(failed.kind, message, lines)


@dataclass(eq=False)
class _SubCall:
    number: int
    call_id: str
    name: str
    arguments: Any
    future: asyncio.Future[Any]
    committed: asyncio.Event = field(default_factory=asyncio.Event)
    clock: Pausable | None = None
    """The run's clock (`approval.pausing`), read where the runtime made the call: the
    driver asks for approvals in a task of its own."""


class ProgramRun:
    def __init__(self, registry: Any, outer: Execution, context: ToolContext) -> None:
        self.registry = registry
        self.outer = outer
        self.controller = AbortController(follow=context.signal)
        self.parent = mint_parent(outer.call_id, outer.root_call_id, outer.scope)
        self.queue: list[_SubCall] = []
        self.wakeup = asyncio.Event()
        self.ordered = asyncio.Lock()
        self.slots = asyncio.Condition()
        self.in_flight: set[asyncio.Task[None]] = set()
        self.parallel = 0
        self.count = 0
        self.closed = False
        self.tail = asyncio.Event()
        self.tail.set()
        self.driver: asyncio.Task[None] | None = None

    # --- the program side ------------------------------------------------------------------

    async def run(self, runtime: Any, code: str) -> RunOutput:
        names = tuple(self.registry.visible(self.outer.scope))
        bindings = Bindings(
            names=tuple(n for n in names if n != RUN_CODE), call=self.submit, discover=self.discover
        )
        self.driver = asyncio.ensure_future(self._drive())
        try:
            output: RunOutput = await runtime.run(code, bindings, self.controller.signal)
        except CodeRunFailed:
            raise
        finally:
            await self._settle()
        return output

    async def submit(self, name: str, arguments: Any) -> Any:
        """Called by the runtime for every tool call the program makes."""
        if self.closed:
            raise ToolCallFailed(name, f"run_code settled; {name} not dispatched")
        try:
            frozen = await off_loop(snapshot, arguments, weight=arguments)
        except NotJsonError as problem:
            hint = " (pass {} for no arguments)" if problem.path == "$" else ""
            raise ToolCallFailed(
                name, f"tool arguments must be lossless JSON: {problem}{hint}"
            ) from None
        self.count += 1
        sub = _SubCall(
            self.count,
            f"{self.outer.call_id}:code:{self.count}",
            name,
            frozen,
            asyncio.get_running_loop().create_future(),
            clock=PAUSER.get(),
        )
        self.queue.append(sub)
        self.wakeup.set()
        return await sub.future

    async def discover(self, op: str, arguments: Any) -> Any:
        """A program's question to `catalog`, answered over the tools its scope sees (in a
        thread: the first question may build the index and the section)."""
        from ..presentation.discovery import DiscoveryError

        discovery = self.registry.discovery(self.outer.scope)
        try:
            return await asyncio.to_thread(discovery.answer, op, arguments)
        except DiscoveryError as error:
            raise ToolCallFailed(f"catalog.{op}", str(error)) from None

    # --- the driver --------------------------------------------------------------------------

    async def _drive(self) -> None:
        while True:
            while not self.queue:
                if self.closed:
                    return
                self.wakeup.clear()
                await self.wakeup.wait()
            if self.closed:
                return
            sub = self.queue.pop(0)
            await self._start(sub)

    async def _start(self, sub: _SubCall) -> None:
        call = ToolCall(
            sub.name,
            sub.arguments,
            sub.call_id,
            self.outer.scope,
            self.controller.signal,
            self.parent,
        )
        pending = Pending(self.registry, call)
        previous, self.tail = self.tail, sub.committed
        async with self.ordered:
            if self.closed:  # the program ended while this call waited for a commit
                self._abandon(sub)
                return
            await self._event("start", sub)
            clock = PAUSER.set(sub.clock)  # the policy's wait for the user stops the run's clock
            try:
                early, final = await pending.prepare()
            finally:
                PAUSER.reset(clock)
        if early is not None:
            if self.closed and early.code == ErrorCode.ABORTED_BEFORE_DISPATCH:
                early = self._abandoned(sub)  # the run settled while policy decided
            await self._commit(sub, pending, previous, early, final)
            return
        if self._concurrency_safe(sub):
            async with self.slots:
                await self.slots.wait_for(
                    lambda: self.parallel < self.registry.max_parallel_sub_calls
                )
                self.parallel += 1
            task = asyncio.ensure_future(self._parallel(sub, pending, previous))
            self.in_flight.add(task)
            task.add_done_callback(self.in_flight.discard)
            return
        await self._drain()  # an exclusive call runs alone, through its commit
        result, final = await self._dispatch(sub, pending)
        await self._commit(sub, pending, previous, result, final)

    async def _parallel(self, sub: _SubCall, pending: Any, previous: asyncio.Event) -> None:
        try:
            result, final = await self._dispatch(sub, pending)
        finally:
            async with self.slots:
                self.parallel -= 1
                self.slots.notify_all()
        await self._commit(sub, pending, previous, result, final)

    async def _dispatch(self, sub: _SubCall, pending: Any) -> tuple[ToolResult, bool]:
        """Run the handler, unless the run ended or was aborted while the call waited for its
        turn: then it never started, and its result says so (post-execute still runs, as for
        an abort noticed after policy)."""
        if self.closed:
            return self._abandoned(sub), False
        if self.controller.signal.aborted:
            return aborted_before_dispatch(sub.call_id, sub.name), False
        result: tuple[ToolResult, bool] = await pending.dispatch()
        return result

    async def _drain(self) -> None:
        while self.in_flight:
            await asyncio.gather(*list(self.in_flight), return_exceptions=True)

    async def _commit(
        self, sub: _SubCall, pending: Any, previous: asyncio.Event, result: ToolResult, final: bool
    ) -> None:
        """Post-execute and settle, after every earlier call has committed."""
        try:
            await previous.wait()
            async with self.ordered:
                result = await pending.commit(result, final)
                await self._event("settle", sub, result)
        except Exception as error:  # keep the run alive: the program sees a failure
            log.exception("committing %s failed", sub.call_id)
            result = ToolResult(sub.call_id, sub.name, f"Error: {error}")
        finally:
            sub.committed.set()
        if not sub.future.done():
            if result.error is not None:
                sub.future.set_exception(ToolCallFailed(sub.name, result.error.message))
            else:
                sub.future.set_result(result.value)

    def _concurrency_safe(self, sub: _SubCall) -> bool:
        """Parallel only for an exact True from the tool's classifier; anything else
        (no classifier, an unknown tool, False, an error) runs exclusively."""
        spec = self.registry.resolve(sub.name, self.outer.scope, True)
        if spec is None or spec.is_concurrency_safe is None:
            return False
        try:
            return spec.is_concurrency_safe(sub.arguments) is True
        except Exception:
            return False

    async def _settle(self) -> None:
        """The program is over: abort the run, abandon what never started, drain the rest."""
        self.closed = True
        self.controller.abort("run_code settled")
        abandoned, self.queue = self.queue, []
        for sub in abandoned:
            self._abandon(sub)
        self.wakeup.set()
        if self.driver is not None:
            await asyncio.gather(self.driver, return_exceptions=True)
        await self._drain()

    def _abandoned(self, sub: _SubCall) -> ToolResult:
        """The result of a call that reached its start event but whose handler never
        started before the run settled."""
        message = f"run_code settled; {sub.name} tool call abandoned"
        return failure(sub.call_id, sub.name, ErrorCode.ABORTED_BEFORE_DISPATCH, message)

    def _abandon(self, sub: _SubCall) -> None:
        """A call that never reached its start event: its await fails, nothing else sees it."""
        if not sub.future.done():
            sub.future.set_exception(
                ToolCallFailed(sub.name, f"run_code settled; {sub.name} tool call abandoned")
            )
        sub.committed.set()

    async def _event(self, kind: str, sub: _SubCall, result: ToolResult | None = None) -> None:
        event = DispatchEvent(
            kind,
            self.outer.root_call_id,
            self.outer.call_id,
            sub.call_id,
            sub.name,
            sub.arguments,
            None if result is None else result.is_error,
            None if result is None else result.content,
        )
        for observer in getattr(self.registry, "dispatch_observers", []):
            try:
                await maybe_await(observer(event))
            except Exception:
                log.exception("dispatch observer failed for %s", sub.call_id)
