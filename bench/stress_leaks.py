"""Stress: do run_code workers outlive their runs on a loaded machine?

Run by hand from the repository root:

    .venv/bin/python bench/stress_leaks.py [--load N] [--rounds N] [--sandbox MODE]
        [--scenario cancel|hostile|spawn-kill] [--language python|typescript]

`--load N` starts N busy loops under `nice` for the duration (the symptom this hunts showed
at a load average of about 10 on 2 cores). Each round runs one scenario:
- `cancel`: runs cancelled at many points (right after they start, after a few loop steps,
  after short sleeps), each run's spare worker included, then `aclose()`, on a fresh loop;
- `hostile`: a run that floods logs and one that floods stderr (TypeScript) or their Python
  counterparts, each on its own loop as a host calling `asyncio.run` per run would;
- `spawn-kill`: a worker started and cancelled after a random short delay, many times.
After each round it counts this script's processes left: every process whose command line
carries the round's marker (an environment variable the sandbox launcher passes on its
command line, so `bwrap`, `nsboot` and their children show it) or descends from one, and
prints the leftovers' name, parent and state. The exit status is 1 if any round left one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import subprocess
import sys
import time
from typing import Any

import psutil

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.run_code.code_runtime import Bindings, CodeRunFailed
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes import python as python_runtime
from codegen.codemode.runtimes import typescript as typescript_runtime
from codegen.codemode.runtimes.worker_host import WorkerRuntime

MARK_VARIABLE = "CODEGEN_STRESS_MARK"


async def answer(name: str, arguments: Any) -> Any:
    return {"ok": True}


BINDINGS = Bindings(("noop",), answer)

HANG = {"python": "import time\ntime.sleep(600)", "typescript": "await new Promise(() => {})"}
HOSTILE = {
    "python": (
        "for i in range(10_000_000):\n    print(i)",
        "import os\nblock = b'x' * 65536\nwhile True:\n    os.write(2, block)",
    ),
    "typescript": (
        "for (let i = 0; i < 10_000_000; i++) console.log(i);",
        "const fs = await import('node:fs');\nconst block = 'x'.repeat(65536);"
        "\nwhile (true) fs.writeSync(2, block);",
    ),
}


def marked(mark: str) -> None:
    """Every worker environment of this process carries `mark` from now on."""
    for module in (python_runtime, typescript_runtime):
        plain = module.worker_environment

        def environment(plain: Any = plain) -> dict[str, str]:
            return {**plain(), MARK_VARIABLE: mark}

        module.worker_environment = environment  # type: ignore[assignment]


def make_runtime(language: str, sandbox: str, limits: RuntimeLimits) -> WorkerRuntime:
    if language == "python":
        return python_runtime.PythonRuntime(limits, sandbox=sandbox)
    return typescript_runtime.TypeScriptRuntime(limits, sandbox=sandbox)


async def cancel_round(language: str, sandbox: str, runs: int) -> None:
    mounted = make_runtime(language, sandbox, RuntimeLimits(timeout=30))
    for index in range(runs):
        task = asyncio.ensure_future(
            mounted.run(HANG[language], BINDINGS, AbortController().signal)
        )
        if index % 2 == 0:
            for _ in range(index // 2 % 12):
                await asyncio.sleep(0)
        else:
            await asyncio.sleep(0.0005 * (index // 2 % 10))
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, CodeRunFailed):
            await task
    await mounted.aclose()


def hostile_round(language: str, sandbox: str) -> None:
    for program, timeout in zip(HOSTILE[language], (20, 3), strict=True):
        mounted = make_runtime(language, sandbox, RuntimeLimits(timeout=timeout))

        async def one(mounted: WorkerRuntime = mounted, program: str = program) -> None:
            with contextlib.suppress(CodeRunFailed):
                await mounted.run(program, BINDINGS, AbortController().signal)
            await mounted.run("return 1", BINDINGS, AbortController().signal)

        asyncio.run(one())  # the runtime is closed by the loop's shutdown, spare included


async def spawn_kill_round(language: str, sandbox: str, runs: int) -> None:
    mounted = make_runtime(language, sandbox, RuntimeLimits(timeout=30))
    chosen = await mounted.launcher()
    for _ in range(runs):
        task = asyncio.ensure_future(mounted._start(chosen))
        await asyncio.sleep(random.random() * 0.01)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, OSError):
            started = await task
            started.dispose()
            await started.process.wait()
    await mounted.aclose()


def leftovers(mark: str) -> list[psutil.Process]:
    """Processes carrying `mark`, and their descendants, still running (not zombies)."""
    found: dict[int, psutil.Process] = {}
    for process in psutil.process_iter(["cmdline", "status"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if mark in " ".join(process.info["cmdline"] or ()):
                for one in [process, *process.children(recursive=True)]:
                    if one.status() != psutil.STATUS_ZOMBIE:
                        found[one.pid] = one
    return list(found.values())


def describe(process: psutil.Process) -> str:
    try:
        return f"{process.pid} {process.name()} ppid={process.ppid()} {process.status()}"
    except psutil.Error:
        return f"{process.pid} (gone)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--runs", type=int, default=80, help="runs per cancel/spawn-kill round")
    parser.add_argument("--sandbox", default="bubblewrap")
    parser.add_argument("--language", choices=("python", "typescript"), default="typescript")
    parser.add_argument("--scenario", choices=("cancel", "hostile", "spawn-kill"), default="cancel")
    parser.add_argument("--grace", type=float, default=3.0, help="seconds before counting")
    options = parser.parse_args()
    busy = [
        subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", "while 1: pass"])
        for _ in range(options.load)
    ]
    total = 0
    try:
        for round_index in range(options.rounds):
            mark = f"stress-{os.getpid()}-{round_index}"
            marked(mark)
            if options.scenario == "cancel":
                asyncio.run(cancel_round(options.language, options.sandbox, options.runs))
            elif options.scenario == "hostile":
                hostile_round(options.language, options.sandbox)
            else:
                asyncio.run(spawn_kill_round(options.language, options.sandbox, options.runs))
            time.sleep(options.grace)  # killed processes get a moment to finish dying
            left = leftovers(mark)
            total += len(left)
            print(
                f"round {round_index}: {len(left)} left; load {os.getloadavg()[0]:.1f}",
                *(f"\n  {describe(process)}" for process in left),
                flush=True,
            )
            for process in left:
                with contextlib.suppress(psutil.Error):
                    process.kill()
    finally:
        for process in busy:
            process.kill()
            process.wait()
    print(
        f"{options.scenario} {options.language} {options.sandbox}: {total} left in "
        f"{options.rounds} rounds"
    )
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
