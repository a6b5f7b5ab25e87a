"""Benchmark: the Python run_code runtime's start-up cost and per-nested-call overhead.

Run by hand from the repository root:

    .venv/bin/python bench/bench_runtime.py [--runs N] [--calls N]

- start-up: a `code`-mode registry executes `run_code` with an empty program; the whole run
  (worker spawn, handshake, teardown, the executor around it), median of N runs;
- per nested call: a program that awaits N calls to a trivial tool one after another, minus
  the empty program's time, divided by N: the round trip through the pipe, the bridge and
  every executor stage (snapshot, policy, validation, post-execute, events);
- the same per call for calls overlapped with `asyncio.gather` on a concurrency-safe tool.

Targets: under 60 ms start-up, under 1 ms per nested call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from codegen.codemode.calls.execution import ToolCall
from codegen.codemode.registry import ToolRegistry, ToolSpec
from codegen.codemode.runtimes.python import PythonRuntime, RuntimeLimits


async def noop(args: Any, context: Any) -> Any:
    return {"ok": True}


def make_registry() -> ToolRegistry:
    registry = ToolRegistry(mode="code")
    schema = {"type": "object", "properties": {"i": {"type": "integer"}}}
    registry.register(ToolSpec("noop", "Do nothing.", schema, handler=noop))
    registry.register(
        ToolSpec(
            "noop_safe",
            "Do nothing, safely.",
            schema,
            handler=noop,
            is_concurrency_safe=lambda args: True,
        )
    )
    registry.mount_runtime(PythonRuntime(RuntimeLimits(max_pending_calls=10_000)))
    return registry


async def timed(registry: ToolRegistry, program: str) -> float:
    start = time.perf_counter()
    result = await registry.execute(
        ToolCall("run_code", {"code": program, "description": "Benchmark"}, "b")
    )
    elapsed = time.perf_counter() - start
    assert not result.is_error, result.content
    return elapsed


async def main_async(runs: int, calls: int) -> None:
    registry = make_registry()
    await timed(registry, "pass")  # warm caches (worker source, validators)
    empty = [await timed(registry, "pass") for _ in range(runs)]
    serial_program = f"for i in range({calls}):\n    await tools.noop({{'i': i}})"
    serial = [await timed(registry, serial_program) for _ in range(max(3, runs // 4))]
    gather_program = (
        "import asyncio\nawait asyncio.gather(*(tools.noop_safe({'i': i}) "
        f"for i in range({calls})))"
    )
    gathered = [await timed(registry, gather_program) for _ in range(max(3, runs // 4))]
    base = statistics.median(empty)
    per_call = (statistics.median(serial) - base) / calls
    per_gathered = (statistics.median(gathered) - base) / calls
    print(
        f"start-up (empty program, median of {runs}): {base * 1e3:.1f} ms "
        f"(target < 60 ms: {'met' if base < 0.060 else 'MISSED'})"
    )
    print(
        f"per nested call, awaited one by one ({calls} calls): {per_call * 1e3:.3f} ms "
        f"(target < 1 ms: {'met' if per_call < 0.001 else 'MISSED'})"
    )
    print(f"per nested call, overlapped with asyncio.gather: {per_gathered * 1e3:.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    asyncio.run(main_async(args.runs, args.calls))


if __name__ == "__main__":
    main()
