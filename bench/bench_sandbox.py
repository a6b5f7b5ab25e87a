"""Benchmark: sandboxed run_code start-up, with and without the spare worker, against a bare
interpreter spawn in the same run; and the per-nested-call overhead inside the sandbox.

Run by hand from the repository root:

    .venv/bin/python bench/bench_sandbox.py [--runs N] [--calls N]

For each sandbox that works here (`none`, `bubblewrap`, `namespaces`):
- a trivial run (`return 1`) through `PythonRuntime.run`, median of N, with the spare worker
  (the next run's worker is started and sandboxed while the previous result is handled, as
  in a host that answers a model between runs: the benchmark waits for the spare to be
  ready between runs) and without it (`spare=False`);
- per nested call: N calls awaited one by one, minus the trivial run, divided by N.
The baseline is `python -I -c pass` spawned and reaped with asyncio, median of N, in the
same process and run.

Targets: with the spare, a trivial run in less time than the bare spawn; without it, within
4x of it; under 0.5 ms per nested call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Any

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.run_code.code_runtime import Bindings
from codegen.codemode.runtimes.python import PythonRuntime, RuntimeLimits
from codegen.codemode.sandbox.launchers import SandboxUnavailable, launcher


async def answer(name: str, arguments: Any) -> Any:
    return {"ok": True}


NOOP = Bindings(("noop",), answer)
"""Every tool answers at once."""


async def bare_spawn() -> float:
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(sys.executable, "-I", "-c", "pass")
    await process.wait()
    return time.perf_counter() - start


async def one_run(runtime: PythonRuntime, program: str) -> float:
    start = time.perf_counter()
    await runtime.run(program, NOOP, AbortController().signal)
    return time.perf_counter() - start


async def measure(mode: str, spare: bool, runs: int, calls: int) -> tuple[float, float]:
    runtime = PythonRuntime(RuntimeLimits(max_pending_calls=10_000), sandbox=mode, spare=spare)
    try:
        await one_run(runtime, "return 1")  # probe the sandbox, warm caches
        trivial = []
        for _ in range(runs):
            await runtime.wait_spare()
            trivial.append(await one_run(runtime, "return 1"))
        serial = f"for i in range({calls}):\n    await tools.noop({{'i': i}})"
        looped = []
        for _ in range(max(3, runs // 4)):
            await runtime.wait_spare()
            looped.append(await one_run(runtime, serial))
    finally:
        await runtime.aclose()
    base = statistics.median(trivial)
    return base, (statistics.median(looped) - base) / calls


async def main_async(runs: int, calls: int) -> None:
    await bare_spawn()
    bare = statistics.median([await bare_spawn() for _ in range(runs)])
    print(f"bare `python -I -c pass` spawn (median of {runs}): {bare * 1e3:.1f} ms")
    print("| sandbox | spare | trivial run | vs bare spawn | per nested call |")
    print("| --- | --- | ---: | ---: | ---: |")
    for mode in ("none", "bubblewrap", "namespaces"):
        try:
            launcher(mode, sys.executable)  # type: ignore[arg-type]
        except SandboxUnavailable as error:
            print(f"| {mode} | | unavailable: {error} | | |")
            continue
        for spare in (True, False):
            base, per_call = await measure(mode, spare, runs, calls)
            print(
                f"| {mode} | {'yes' if spare else 'no'} | {base * 1e3:.1f} ms | "
                f"{base / bare:.2f}x | {per_call * 1e3:.3f} ms |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    asyncio.run(main_async(args.runs, args.calls))


if __name__ == "__main__":
    main()
