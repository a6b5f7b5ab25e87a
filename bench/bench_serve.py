"""Benchmark: a tool call through `codegen serve` against the same call made directly.

Run by hand from the repository root (after `npm ci`):

    .venv/bin/python bench/bench_serve.py [--runs N] [--calls N]

In one run, with the same upstream (`@modelcontextprotocol/server-everything`, its `echo`
tool), two official `mcp` clients:

- direct: `client.call_tool("echo", ...)` against the upstream itself, N calls one after
  another; the median of `--runs` batches, per call;
- nested through serve: a `codegen serve` (stdio, `code` mode, the default sandbox) in front
  of the same upstream; a `run_code` program awaits N `tools.everything__echo` calls one
  after another; its time minus an empty program's time (median of `--runs` each), divided
  by N: what a call from a program costs, worker pipe, bridge, executor stages and the hop to
  the upstream included;
- run_code start-up: the empty program alone (worker start-up, the request to serve).

Prints each figure and the ratio nested / direct.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"


async def direct_batch(client: Any, calls: int) -> float:
    started = time.perf_counter()
    for index in range(calls):
        await client.call_tool("echo", {"message": f"m{index}"})
    return time.perf_counter() - started


async def program(client: Any, code: str) -> float:
    started = time.perf_counter()
    result = await client.call_tool("run_code", {"code": code, "description": "Benchmark"})
    elapsed = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(f"run_code failed: {result.content}")
    return elapsed


async def main(runs: int, calls: int) -> None:
    loop = (
        f"for index in range({calls}):\n"
        '    await tools.everything__echo({"message": f"m{index}"})\n'
    )
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "servers.json"
        config.write_text(json.dumps({"mcpServers": {"everything": {"command": str(EVERYTHING)}}}))
        serve = StdioServerParameters(
            command=sys.executable,
            args=["-m", "codegen", "serve", "--config", str(config)],
            env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)},
        )
        upstream = StdioServerParameters(command=str(EVERYTHING))
        with open(os.devnull, "w") as quiet:
            async with (
                Client(stdio_client(upstream, errlog=quiet), cache=None) as direct,
                Client(stdio_client(serve, errlog=quiet), cache=None) as served,
            ):
                await direct_batch(direct, 20)  # warm-up, both sides
                await program(served, loop)
                direct_times, empty_times, loop_times = [], [], []
                for _ in range(runs):
                    direct_times.append(await direct_batch(direct, calls))
                    empty_times.append(await program(served, "return None"))
                    loop_times.append(await program(served, loop))
    per_direct = statistics.median(direct_times) / calls
    empty = statistics.median(empty_times)
    per_nested = (statistics.median(loop_times) - empty) / calls
    print(f"upstream: server-everything echo; {runs} runs of {calls} sequential calls")
    print(f"direct mcp client call:        {per_direct * 1000:7.3f} ms per call")
    print(f"nested call through serve:     {per_nested * 1000:7.3f} ms per call")
    print(f"ratio nested / direct:         {per_nested / per_direct:7.2f}")
    print(f"overhead per nested call:      {(per_nested - per_direct) * 1000:7.3f} ms")
    print(f"run_code with an empty program: {empty * 1000:6.1f} ms (median)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--calls", type=int, default=200)
    arguments = parser.parse_args()
    anyio.run(main, arguments.runs, arguments.calls)
