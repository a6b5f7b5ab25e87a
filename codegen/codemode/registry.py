"""`ToolRegistry`: the tools, the presentation mode, and the views each consumer reads.

Modes: `native` (the model calls tools directly), `code` (the model is offered only
`run_code` and reaches every other tool from a program), `both`. The mode is set on the
registry and may be overridden per scope; the nearest declaration wins. `run_code` is
reserved in every mode: it cannot be registered, shadowed or restricted.

Views (all in code-point order of names, `run_code` last):
- `get(name, scope)`: presentation-agnostic lookup over the visible set (plus `run_code`
  when the scope's mode is not native);
- `schemas(scope)`: every visible definition (plus `run_code` when not native) — works with
  no code runtime, for offline harvesting;
- `wire_schemas(scope)`: what the model is offered: native = the visible tools, code =
  `[run_code]`, both = both;
- `sdk_schemas(scope)`: the visible tools without `run_code`, the SDK renderers' input.

Execution goes through `resolve`, the one collapse-aware lookup: under `code`, a model-direct
call may only name `run_code`; a nested call (parent token set) may name every visible tool.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .. import ir
from ..render.text import truncate
from .approval.hints import ToolHints
from .approval.rules import DEFAULT_POLICY, Policy, Verdict
from .calls.execution import Execution, ToolCall
from .calls.executor import execute
from .calls.hooks import ApprovalService, AroundDispatch, Guard, Observer, PostExecuteListener
from .calls.hooks import PreExecuteListener as PreExecute
from .calls.results import ToolResult
from .calls.scopes import MODES, Mode, Scope
from .calls.specs import CodeModeError, Handler, ToolSpec
from .checks.cache import CheckerCache
from .checks.outcome import CHECK_MODES, CheckLimits, CheckMode, CheckOutcome, ProgramChecker
from .presentation.discovery import Discovery, server_of
from .presentation.fitting import DEFAULT_RESULT_TOKENS
from .presentation.languages import run_code_flavor, sdk_renderer
from .presentation.prompt import PromptAssembler, PromptSection
from .presentation.tiers import (
    DEFAULT_BUDGET,
    KEEP,
    ListedTool,
    Tiered,
    choose,
    listing_text,
    search_text,
    utf16_units,
)
from .run_code.bridge import present_run_output, run_code_handler
from .run_code.code_runtime import CodeRuntime
from .run_code.definition import RUN_CODE, run_code_tool

__all__ = ["CodeModeError", "Handler", "ToolRegistry", "ToolSpec"]

DISCOVERIES_KEPT = 4
"""Tool sets whose discovery answers are kept (scopes that see different tools)."""
SUMMARY_LIMIT = 100
"""Longest server summary (characters) in the index and `catalog.servers()`."""


def _checked_check(mode: Any) -> CheckMode:
    for known in CHECK_MODES:
        if mode == known and type(mode) is str:
            return known
    raise ValueError(f"check must be one of {', '.join(CHECK_MODES)}, not {mode!r}")


def _checked_budget(budget: Any) -> int | None:
    if budget is None:
        return None
    if type(budget) is not int or budget < 1:
        raise ValueError(f"budget must be a positive number of UTF-16 code units, not {budget!r}")
    return budget


def listed_tool(spec: ToolSpec) -> ListedTool:
    """What the listing tier shows of a tool: its name and its top-level arguments."""
    schema = spec.input_schema if isinstance(spec.input_schema, dict) else {}
    properties = schema.get("properties")
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    arguments = (
        tuple((str(key), key in needed) for key in properties)
        if isinstance(properties, dict)
        else ()
    )
    return ListedTool(spec.name, arguments)


class ToolRegistry:
    def __init__(
        self,
        mode: Mode = "native",
        max_parallel_sub_calls: int = 10,
        budget: int | None = DEFAULT_BUDGET,
        check: CheckMode = "refuse",
        policy: Policy = DEFAULT_POLICY,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        if (
            not isinstance(max_parallel_sub_calls, int)
            or isinstance(max_parallel_sub_calls, bool)
            or max_parallel_sub_calls < 1
        ):
            raise ValueError("max_parallel_sub_calls must be a positive integer")
        self.root = Scope("root", mode=mode)
        self.max_parallel_sub_calls = max_parallel_sub_calls
        self.runtime: CodeRuntime | None = None
        self.around_dispatch: list[AroundDispatch] = []
        self.observers: list[Observer] = []
        self.dispatch_observers: list[Callable[[Any], Any]] = []
        self.approval: ApprovalService | None = None
        self.policy = policy
        """The user's rules for calls (`approval/rules.py`): by default a program's call to
        a tool that says `destructiveHint: true` is asked about through `approval`."""
        self.prompt = PromptAssembler(self)
        self._run_code_specs: dict[str, ToolSpec] = {}
        self.budget = _checked_budget(budget)
        """The longest SDK text a model is given up front, in UTF-16 code units (`tiers`):
        past it, the discovery API stands in for the SDK. None: no budget."""
        self.server_summaries: dict[str, str] = {}
        """One line per server (tool-name prefix) for the server index and
        `catalog.servers()`."""
        self._discoveries: list[Discovery] = []
        self.result_tokens = DEFAULT_RESULT_TOKENS
        """The most a run's result may cost a model, in `o200k_base` tokens: past it, the
        logs and the result are cut cleanly, with a note (Claude Code rejects results over
        25,000 tokens; `serve --result-tokens`)."""
        self.check: CheckMode = _checked_check(check)
        """What a run_code program's check before it runs does (`checks/verdict.py`):
        `refuse` a definite mistake, only `warn` of it in the result, or `off`."""
        self.check_limits = CheckLimits()
        """The checker's limits; its sandbox is the mounted runtime's."""
        self.checkers = CheckerCache()

    # --- scopes, modes, registration -----------------------------------------------------

    def scope(self, name: str, parent: Scope | None = None) -> Scope:
        """A new scope under `parent` (the root by default)."""
        return (parent or self.root).child(name)

    def set_mode(self, mode: Mode | None, scope: Scope | None = None) -> None:
        """The mode of a scope and its descendants (`None` inherits again)."""
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        target = scope or self.root
        if target is self.root and mode is None:
            raise ValueError("the root scope needs a mode")
        target.mode = mode

    def mode_for(self, scope: Scope | None) -> Mode:
        for each in (scope or self.root).walk_up():
            if each.mode is not None:
                return each.mode
        return "native"

    def register(self, spec: ToolSpec, scope: Scope | None = None) -> Callable[[], None]:
        """Register a tool in a scope (the root by default); returns an unregister function."""
        if spec.name == RUN_CODE:
            raise CodeModeError("run_code is reserved and cannot be registered or shadowed")
        if not isinstance(spec.name, str) or not spec.name:
            raise CodeModeError("a tool needs a non-empty name")
        for label, schema in (("input", spec.input_schema), ("output", spec.output_schema)):
            if schema is None and label == "output":
                continue
            from ..validate.checks import check_schema

            errors = [d for d in check_schema(schema, spec.name, f"/{label}Schema") if d.is_error]
            if errors:
                raise CodeModeError(
                    f"tool {spec.name!r}: invalid {label} schema: "
                    + "; ".join(f"{d.pointer}: {d.message}" for d in errors)
                )
        target = scope or self.root
        if spec.name in target.tools:
            raise CodeModeError(f"tool {spec.name!r} is already registered in {target.name}")
        target.tools[spec.name] = spec

        def unregister() -> None:
            if target.tools.get(spec.name) is spec:
                del target.tools[spec.name]

        return unregister

    def restrict(
        self, scope: Scope, allow: list[str] | None = None, deny: list[str] | None = None
    ) -> None:
        """Limit what a scope inherits; its own tools are exempt. run_code cannot be named."""
        for names in (allow or [], deny or []):
            if RUN_CODE in names:
                raise CodeModeError("run_code is reserved and cannot be restricted")
        scope.allow = frozenset(allow) if allow is not None else None
        scope.deny = frozenset(deny or ())

    def mount_runtime(self, runtime: CodeRuntime) -> None:
        """Mount the code runtime (anything with a `language` and an async `run`)."""
        self.runtime = runtime

    # --- hooks ---------------------------------------------------------------------------

    def add_pre_execute(self, listener: PreExecute, scope: Scope | None = None) -> None:
        (scope or self.root).pre_execute.append(listener)

    def add_guard(self, guard: Guard, scope: Scope | None = None) -> None:
        (scope or self.root).guards.append(guard)

    def add_post_execute(self, listener: PostExecuteListener, scope: Scope | None = None) -> None:
        (scope or self.root).post_execute.append(listener)

    def add_around_dispatch(self, wrapper: AroundDispatch) -> None:
        self.around_dispatch.append(wrapper)

    def add_observer(self, observer: Observer) -> None:
        self.observers.append(observer)

    def add_dispatch_observer(self, observer: Callable[[Any], Any]) -> None:
        """Observers of nested dispatch: a start and a settle `DispatchEvent` per call a
        program makes."""
        self.dispatch_observers.append(observer)

    def set_approval_service(self, service: ApprovalService | None) -> None:
        """Who is asked when the policy (or a listener) says `ask`; without one, such a
        call is refused with a message saying so."""
        self.approval = service

    def set_policy(self, policy: Policy) -> None:
        self.policy = policy

    def policy_verdict(self, execution: Execution) -> Verdict | None:
        """The policy's verdict on a call of a registered tool (None for run_code itself
        and for a name no tool has: that call fails on its own)."""
        if execution.name == RUN_CODE and not execution.nested:
            return None
        spec = self.get(execution.name, execution.scope)
        if spec is None:
            return None
        return self.policy.decide(execution.name, ToolHints.of(spec.annotations))

    def add_section(self, section: PromptSection, scope: Scope | None = None) -> None:
        self.prompt.add(section, scope or self.root)

    # --- views ---------------------------------------------------------------------------

    def visible(self, scope: Scope | None = None) -> dict[str, ToolSpec]:
        """The tools a scope sees, by name in code-point order (without `run_code`):
        inherited tools (the nearest definition shadows) that every scope below their
        definition admits, plus the scope's own tools."""
        chain = (scope or self.root).chain()
        found: dict[str, tuple[ToolSpec, int]] = {}
        for depth, each in enumerate(chain):
            for name, spec in each.tools.items():
                found[name] = (spec, depth)
        return {
            name: spec
            for name, (spec, depth) in sorted(found.items())
            if all(below.admits(name) for below in chain[depth + 1 :])
        }

    def run_code_spec(self) -> ToolSpec:
        """The transport in the flavor of the mounted runtime's language (TypeScript when
        none is mounted); an unknown mounted language fails loudly."""
        language = getattr(self.runtime, "language", None) if self.runtime else None
        flavor = run_code_flavor(language)
        checked = self.check != "off"
        key = flavor.described(checked)
        if key not in self._run_code_specs:
            definition = run_code_tool(language, checked)
            self._run_code_specs[key] = ToolSpec(
                name=RUN_CODE,
                description=definition["description"],
                input_schema=definition["inputSchema"],
                output_schema=definition["outputSchema"],
                handler=run_code_handler,
                present=present_run_output,
            )
        return self._run_code_specs[key]

    def get(self, name: str, scope: Scope | None = None) -> ToolSpec | None:
        if name == RUN_CODE:
            return self.run_code_spec() if self.mode_for(scope) != "native" else None
        return self.visible(scope).get(name)

    def schemas(self, scope: Scope | None = None) -> list[dict[str, Any]]:
        result = [spec.definition() for spec in self.visible(scope).values()]
        if self.mode_for(scope) != "native":
            result.append(self.run_code_spec().definition())
        return result

    def require_runtime(self, scope: Scope | None = None) -> Any:
        """The mounted runtime, checked: its language must have an SDK renderer."""
        mode = self.mode_for(scope)
        if self.runtime is None:
            raise CodeModeError(
                f'mode "{mode}" requires a code runtime: mount one with '
                'mount_runtime() or use mode "native"'
            )
        sdk_renderer(self.runtime.language)
        run_code_flavor(self.runtime.language)
        return self.runtime

    def wire_schemas(self, scope: Scope | None = None) -> list[dict[str, Any]]:
        mode = self.mode_for(scope)
        if mode == "native":
            return [spec.definition() for spec in self.visible(scope).values()]
        self.require_runtime(scope)
        run_code = self.run_code_spec().definition()
        if mode == "code":
            return [run_code]
        return [*(spec.definition() for spec in self.visible(scope).values()), run_code]

    def sdk_schemas(self, scope: Scope | None = None) -> list[dict[str, Any]]:
        return [spec.definition() for spec in self.visible(scope).values()]

    def sdk_catalog(self, scope: Scope | None = None) -> ir.Catalog:
        """The IR of the SDK tools; invalid registered schemas are a host error."""
        return self._compile(tuple(self.visible(scope).values()))

    def _compile(self, specs: tuple[ToolSpec, ...]) -> ir.Catalog:
        from ..engine import compile_value

        definitions = [spec.read_definition() for spec in specs]  # the pipeline only reads
        compiled = compile_value({"tools": definitions}, source="<registry>")
        if compiled.catalog is None:
            problems = "; ".join(d.format() for d in compiled.errors[:5])
            raise CodeModeError(f"registered tool schemas are invalid: {problems}")
        return compiled.catalog

    def assemble_prompt(self, scope: Scope | None = None, budget: Any = KEEP) -> str:
        """The system prompt; `budget` (UTF-16 units, None for none) overrides the
        registry's for the SDK section."""
        return self.prompt.assemble(scope or self.root, budget)

    # --- tiers and discovery ---------------------------------------------------------------

    def set_budget(self, budget: int | None) -> None:
        self.budget = _checked_budget(budget)

    def set_server_summary(self, server: str, summary: str) -> None:
        """The one-line summary of a server (a tool-name prefix); "" removes it."""
        line = truncate(" ".join(summary.split()), SUMMARY_LIMIT)
        if line:
            self.server_summaries[server] = line
        else:
            self.server_summaries.pop(server, None)

    def sdk_tier(
        self,
        scope: Scope | None = None,
        budget: Any = KEEP,
        frame: Callable[[str], str] | None = None,
    ) -> Tiered:
        """The SDK section of the runtime's language, in `frame` when given (the text that
        carries it), when that fits `budget` (`KEEP`: the registry's), else the discovery
        text. Every tool's name is in the section: past the budget by the names alone,
        nothing is compiled or rendered."""
        budget = self.budget if budget is KEEP else _checked_budget(budget)
        language = self.require_runtime(scope).language
        visible = self.visible(scope)

        def full() -> str:
            section = sdk_renderer(language)(self._compile(tuple(visible.values())))
            return section if frame is None else frame(section)

        floor = sum(map(len, visible)) + (0 if frame is None else utf16_units(frame("")))
        prefixes = sorted({server_of(name) for name in visible} - {""})
        servers = [(prefix, self.server_summaries.get(prefix, "")) for prefix in prefixes]
        flavor = run_code_flavor(language)
        checked = self.check != "off"

        def listing(room: int) -> Tiered | None:
            tools = [listed_tool(spec) for spec in visible.values()]
            return listing_text(flavor.listing_paragraphs(checked), tools, room)

        paragraphs = flavor.search_paragraphs(checked)
        return choose(
            full, floor, lambda room: search_text(paragraphs, servers, room), budget, listing
        )

    def discovery(self, scope: Scope | None = None) -> Discovery:
        """The catalog's answers over the tools `scope` sees, shared by every run that sees
        the same tools (built lazily; the last few tool sets are kept)."""
        language = self.require_runtime(scope).language
        specs = tuple(self.visible(scope).values())
        for found in self._discoveries:
            if (
                found.language == language
                and found.summaries == self.server_summaries
                and len(found.specs) == len(specs)
                and all(a is b for a, b in zip(found.specs, specs, strict=True))
            ):
                return found
        earlier = self._discoveries[0] if self._discoveries else None
        made = Discovery(specs, language, self.server_summaries, self._compile, earlier)
        self._discoveries = [made, *self._discoveries[: DISCOVERIES_KEPT - 1]]
        return made

    async def unknown_tool_message(self, name: str, scope: Scope | None = None) -> str:
        """What a program's call to a tool its scope does not see is told: the closest
        tools by search ("" for the plain message). The tool set is read here, on the
        loop that changes it; only the search (which may build the index) runs in a
        thread."""
        if name == RUN_CODE:
            return 'unknown tool "run_code": a program cannot start another program'
        try:
            discovery = self.discovery(scope)
        except CodeModeError:  # no runtime mounted: no language to spell hits in
            return ""
        nearest = await asyncio.to_thread(discovery.nearest, name)
        return f"unknown tool {json.dumps(name[:100], ensure_ascii=False)}{nearest}"

    # --- checking programs before they run ---------------------------------------------------

    def set_check(self, mode: CheckMode, limits: CheckLimits | None = None) -> None:
        """How programs are checked before they run: `refuse` (the default), `warn`, `off`;
        `limits` bound the checker (time, memory)."""
        self.check = _checked_check(mode)
        if limits is not None:
            self.check_limits = limits

    def _checker_limits(self) -> CheckLimits:
        """The limits, with the mounted runtime's sandbox and programs (its `node` and
        `typescript`: the checker runs what the run would)."""
        limits = self.check_limits
        sandbox = getattr(self.runtime, "sandbox", None)
        if isinstance(sandbox, str):
            limits = replace(limits, sandbox=sandbox)
        programs = tuple(
            (name, value)
            for name in ("node", "typescript")
            if isinstance(value := getattr(self.runtime, name, None), str) and value
        )
        return replace(limits, programs=programs) if programs else limits

    def _checker_request(self, scope: Scope | None) -> tuple[str, tuple[ToolSpec, ...]]:
        """The runtime's language and the visible tools, read on the loop that changes them."""
        language = self.require_runtime(scope).language
        return language, tuple(self.visible(scope).values())

    def _warm_checker(
        self, language: str, specs: tuple[ToolSpec, ...]
    ) -> tuple[ProgramChecker | None, list[ProgramChecker]]:
        """Blocking (a thread): the checker of this tool set, made and kept."""
        return self.checkers.checker(
            language, specs, lambda: self._compile(specs), self._checker_limits()
        )

    async def check_program(self, code: str, scope: Scope | None = None) -> CheckOutcome | None:
        """The program checked against the declarations of the tools `scope` sees, by the
        runtime's language's warm checker; None when nothing checks it (`off`, or no
        checker for the language here)."""
        if self.check == "off":
            return None
        language, specs = self._checker_request(scope)
        checker, evicted = await asyncio.to_thread(self._warm_checker, language, specs)
        for old in evicted:
            await old.aclose()
        if checker is None:
            return None
        return await checker.check(code)

    def check_warmer(self, scope: Scope | None = None) -> Callable[[], None] | None:
        """What makes the checker of the tools `scope` sees and starts it, off the path of
        the first run: the tools are read here (on the loop that changes them), the returned
        function blocks (call it in a thread, as `serve` does when the tools change). None
        when programs are not checked."""
        if self.check == "off" or self.mode_for(scope) == "native":
            return None
        try:
            language, specs = self._checker_request(scope)
        except CodeModeError:
            return None

        def warm() -> None:
            checker, evicted = self._warm_checker(language, specs)
            for old in evicted:
                asyncio.run(old.aclose())
            start = getattr(checker, "warm", None)
            if callable(start):
                start()

        return warm

    def warm_check(self, scope: Scope | None = None) -> None:
        """`check_warmer(scope)`, called now (blocking)."""
        warm = self.check_warmer(scope)
        if warm is not None:
            warm()

    async def close_checkers(self) -> None:
        """Stop every warm checker (a host that is done; a later check starts one again)."""
        for checker in self.checkers.drain():
            await checker.aclose()

    # --- execution -----------------------------------------------------------------------

    def collapses(self, name: str, scope: Scope | None, nested: bool) -> bool:
        """A model-direct call under `code` naming anything but run_code."""
        return not nested and self.mode_for(scope) == "code" and name != RUN_CODE

    def resolve(self, name: str, scope: Scope | None, nested: bool) -> ToolSpec | None:
        """The one lookup the execution path uses: the wire and the executor always agree.
        Programs never reach run_code itself."""
        if self.collapses(name, scope, nested):
            return None
        if name == RUN_CODE:
            return None if nested else self.get(name, scope)
        return self.visible(scope).get(name)

    async def execute(self, call: ToolCall) -> ToolResult:
        return await execute(self, call)
