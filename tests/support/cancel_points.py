"""Runs cancelled at every point of their start: before, in and after spawning the worker,
connecting its pipes, and while the program runs. Shared by the Python and TypeScript
runtimes' leak tests."""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.run_code.code_runtime import CodeRunFailed
from support.descriptors import open_descriptors


async def quiesce() -> None:
    """Let deferred closes and reaping run."""
    current = asyncio.current_task()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not [t for t in asyncio.all_tasks() if t is not current and not t.done()]:
            break
        await asyncio.sleep(0.05)
    for _ in range(20):
        await asyncio.sleep(0)
    gc.collect()
    await asyncio.sleep(0.05)


async def cancel_at_every_point(
    runtime: Any, bindings: Any, program: str, runs: int, sleep_unit: float
) -> tuple[dict[str, str], list[int]]:
    """Warm `runtime`, then start `runs` runs of `program` and cancel each after 0-11 turns
    of the loop (even runs) or a sleep of 0-9 `sleep_unit`s (odd runs). The descriptors
    open before the runs (the spare worker closed), and the runs that ended by their
    timeout instead of the cancel."""
    warm = await runtime.run("return 1", bindings, AbortController().signal)
    assert warm.result == 1
    await runtime.aclose()  # the spare worker is counted neither before nor after
    await quiesce()
    before = open_descriptors()
    timed_out: list[int] = []
    for index in range(runs):
        task = asyncio.ensure_future(runtime.run(program, bindings, AbortController().signal))
        if index % 2 == 0:
            for _ in range(index // 2 % 12):
                await asyncio.sleep(0)
        else:
            await asyncio.sleep(sleep_unit * (index // 2 % 10))
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        except CodeRunFailed as failure:
            if failure.kind == "timeout":
                timed_out.append(index)
    await runtime.aclose()
    await quiesce()
    return before, timed_out
