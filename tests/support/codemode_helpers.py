"""Fakes shared by the Code Mode tests: tools that record what happened, a scripted runtime
whose "program" is a Python coroutine, and an approval service with a fixed answer."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from codegen.codemode.calls.cancellation import AbortSignal
from codegen.codemode.calls.hooks import ApprovalService
from codegen.codemode.registry import ToolRegistry, ToolSpec
from codegen.codemode.run_code.code_runtime import Bindings, RunOutput


def run(coroutine: Awaitable[Any]) -> Any:
    return asyncio.run(coroutine)  # type: ignore[arg-type]


@dataclass
class Recorder:
    """Collects what every hook saw, in order."""

    events: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.events.append(text)


def echo_tool(
    name: str = "echo",
    recorder: Recorder | None = None,
    *,
    safe: bool | None = None,
    delay: float = 0.0,
    output_schema: Any = None,
    **extra: Any,
) -> ToolSpec:
    async def handler(args: Any, context: Any) -> Any:
        if recorder is not None:
            recorder.add(f"start {name} {context.call_id}")
        if delay:
            await asyncio.sleep(delay)
        if recorder is not None:
            recorder.add(f"end {name} {context.call_id}")
        return {"tool": name, "args": args}

    extra.setdefault("description", f"The {name} tool.")
    return ToolSpec(
        name=name,
        input_schema={"type": "object", "properties": {"x": {"type": "integer"}}},
        output_schema=output_schema,
        handler=handler,
        is_concurrency_safe=(lambda args: safe) if safe is not None else None,
        **extra,
    )


Script = Callable[[Bindings, AbortSignal], Awaitable[RunOutput]]


class ScriptedRuntime:
    """A code runtime whose program is a coroutine function of (bindings, signal)."""

    def __init__(self, script: Script | None = None, language: str = "python") -> None:
        self.language = language
        self.script = script
        self.runs = 0

    async def run(self, program: str, bindings: Bindings, signal: AbortSignal) -> RunOutput:
        self.runs += 1
        if self.script is None:
            return RunOutput(logs=[program])
        return await self.script(bindings, signal)


def call_tool_script(name: str, arguments: Any) -> Script:
    async def script(bindings: Bindings, signal: AbortSignal) -> RunOutput:
        return RunOutput(result=await bindings.call(name, arguments))

    return script


class FixedApproval(ApprovalService):
    def __init__(self, outcome: str, recorder: Recorder | None = None, abort: Any = None) -> None:
        self.outcome = outcome
        self.recorder = recorder
        self.abort = abort

    async def request(self, execution: Any, reason: str | None) -> Any:
        if self.recorder is not None:
            self.recorder.add(f"approval {execution.name} {reason}")
        if self.abort is not None:
            self.abort()
        return self.outcome


def registry_with(
    mode: str = "native", *specs: ToolSpec, runtime: Any = None, **options: Any
) -> ToolRegistry:
    options.setdefault("check", "off")  # these registries' runtimes run scripts, not programs
    registry = ToolRegistry(mode=mode, **options)  # type: ignore[arg-type]
    for spec in specs:
        registry.register(spec)
    if runtime is not None:
        registry.mount_runtime(runtime)
    return registry
