"""Load and faults: `codegen serve` under many clients, one hostile client and a dying upstream.

Run by hand from the repository root (after `./scripts/test` has installed everything):

    python bench/bench_serve_load.py [--seconds 60] [--http-clients 4] [--stdio-clients 2]

Two phases of `--seconds` each, on the same machine:

- calm: `--http-clients` clients on one `codegen serve --http` and `--stdio-clients` clients
  each with its own `codegen serve` over stdio, every client running `run_code` programs one
  after another; each program makes three nested calls to real upstreams (`mcp-server-time`,
  `@modelcontextprotocol/server-everything`, and a ledger that counts each run's id) and a
  fourth to an upstream that may be dying (`fixtures/serve/hostile_server.py`);
- hostile: the same, while one more HTTP client sends hostile programs in a loop (a tool
  call with 2,000,000 elements, a 16 MiB frame written around the worker, a 50 MB error
  message), and the HTTP serve's dying upstream is killed every 10 seconds (serve restarts
  it).

Reported per phase: runs per second of the well-behaved clients, their p50 and p99 latency,
the serve process's resident memory over time (HTTP serve: sampled every half second), and
the ledger check: every run that answered has its id counted exactly once upstream, and no
run was lost (every request got exactly one answer) or answered twice.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import psutil
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"
HOSTILE = ROOT / "tests" / "fixtures" / "serve" / "hostile_server.py"
TIME = shutil.which("mcp-server-time") or str(Path(sys.executable).parent / "mcp-server-time")
TOKEN = "bench-serve-load-token-0123456789"

WELL_BEHAVED = """\
zone = (await tools.time__get_current_time({{"timezone": "UTC"}}))["timezone"]
total = await tools["everything__get-sum"]({{"a": 2, "b": 3}})
count = await tools.ledger__tally({{"id": "{run_id}"}})
try:
    await tools.dying__small({{}})
    dying = "ok"
except (ToolCallError, AttributeError):  # failing, or gone from the SDK while it restarts
    dying = "down"
return {{"id": "{run_id}", "zone": zone, "count": count, "dying": dying}}
"""

HOSTILE_PROGRAMS = [
    'await tools.ledger__sum({"numbers": [0] * 2_000_000})',
    "import os, sys, time\n"
    'os.write(int(sys.argv[2]), b\'{"type": "call", "id": 1, "name": "ledger__sum", "args": \' '
    'b\'{"numbers": [\' + b"0," * (8 * 1024 * 1024) + b"0]}}\\n")\n'
    "time.sleep(30)",
    'raise Exception("A" * 50_000_000)',
]


def config(folder: Path) -> Path:
    path = folder / "servers.json"
    servers = {
        "time": {"command": TIME},
        "everything": {"command": str(EVERYTHING)},
        "ledger": {"command": sys.executable, "args": [str(HOSTILE)]},
        "dying": {"command": sys.executable, "args": [str(HOSTILE)]},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


TREE = ROOT
"""The checkout whose `codegen serve` runs (`--tree`: another one, such as an older main)."""


def serve_command() -> list[str]:
    """`codegen serve` of `TREE`: another tree runs without site (`-S`), its packages on
    PYTHONPATH, so an editable install of this one cannot take its place."""
    if TREE == ROOT:
        return [sys.executable, "-m", "codegen", "serve"]
    return [sys.executable, "-S", "-m", "codegen", "serve"]


def environment() -> dict[str, str]:
    import site

    path = [str(TREE)] + ([] if TREE == ROOT else site.getsitepackages())
    return {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(path),
        "CODEGEN_SERVE_TOKEN": TOKEN,
        "HOME": tempfile.gettempdir(),
    }


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.asked = 0
        self.answered = 0
        self.ids: dict[str, int] = {}
        """run id -> the count the ledger answered (1 when counted once)."""


async def client_loop(client: Any, stats: Stats, until: float, tag: str) -> None:
    while time.monotonic() < until:
        run_id = f"{tag}-{uuid.uuid4().hex[:12]}"
        program = WELL_BEHAVED.format(run_id=run_id)
        stats.asked += 1
        started = time.perf_counter()
        result = await client.call_tool("run_code", {"code": program, "description": "Load"})
        stats.latencies.append(time.perf_counter() - started)
        stats.answered += 1
        value = (result.structured_content or {}).get("result")
        if result.is_error or not isinstance(value, dict) or value.get("id") != run_id:
            text = " ".join(getattr(b, "text", "") for b in result.content)
            stats.errors.append(text[:200])
            continue
        stats.ids[run_id] = int(value["count"])


async def ledger_counts(client: Any) -> dict[str, int]:
    result = await client.call_tool(
        "run_code", {"code": "return await tools.ledger__tallies({})", "description": "Ledger"}
    )
    value = (result.structured_content or {}).get("result")
    return json.loads(value) if isinstance(value, str) else {}


async def hostile_loop(url: str, until: float, counts: dict[str, int]) -> None:
    async with http_client(url) as client:
        index = 0
        while time.monotonic() < until:
            program = HOSTILE_PROGRAMS[index % len(HOSTILE_PROGRAMS)]
            index += 1
            started = time.perf_counter()
            result = await client.call_tool("run_code", {"code": program, "description": "Hostile"})
            took = time.perf_counter() - started
            counts["hostile runs"] = counts.get("hostile runs", 0) + 1
            counts["hostile run max s"] = max(counts.get("hostile run max s", 0), round(took, 1))
            if os.environ.get("BENCH_VERBOSE"):
                text = " ".join(getattr(b, "text", "") for b in result.content)
                print(f"hostile {index}: {took:.1f} s: {text[:120]!r}", file=sys.stderr)
            if not result.is_error:
                counts["hostile runs not refused"] = counts.get("hostile runs not refused", 0) + 1


def http_client(url: str) -> Any:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    return Client(streamable_http_client(url, http_client=http), cache=None)


def dying_pid(serve: psutil.Process) -> int | None:
    for child in serve.children(recursive=True):
        try:
            line = child.cmdline()
        except psutil.Error:
            continue
        if any("hostile_server.py" in part for part in line):
            # the dying upstream is the second one started from that script
            return child.pid
    return None


async def killer(serve: psutil.Process, until: float, killed: list[float]) -> None:
    while time.monotonic() + 10 < until:
        await anyio.sleep(10)
        pids = [
            child.pid
            for child in serve.children(recursive=True)
            if any("hostile_server.py" in part for part in _cmdline(child))
        ]
        if len(pids) >= 2:
            os.kill(max(pids), signal.SIGKILL)  # the later-started one: dying, not ledger
            killed.append(time.monotonic())


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


async def sampler(serve: psutil.Process, until: float, samples: list[int]) -> None:
    while time.monotonic() < until:
        try:
            samples.append(serve.memory_info().rss)
        except psutil.Error:
            return
        await anyio.sleep(0.5)


async def phase(args: argparse.Namespace, hostile: bool, folder: Path) -> dict[str, Any]:
    path = config(folder)
    serve = subprocess.Popen(
        [*serve_command(), "--config", str(path), "--http", "127.0.0.1:0"],
        cwd=folder,  # not this checkout: `-m codegen` looks in the working folder first
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=environment(),
        text=True,
    )
    assert serve.stderr is not None
    url = None
    while url is None:
        line = serve.stderr.readline()
        if not line:
            raise RuntimeError("serve ended before listening")
        found = re.search(r"listening on (http://\S+)", line)
        url = found.group(1) if found else None
    process = psutil.Process(serve.pid)
    stats = {f"http-{n}": Stats() for n in range(args.http_clients)}
    stats.update({f"stdio-{n}": Stats() for n in range(args.stdio_clients)})
    samples: list[int] = []
    killed: list[float] = []
    hostile_counts: dict[str, int] = {}
    ledgers: dict[str, dict[str, int]] = {}
    started = time.monotonic()
    until = started + args.seconds
    try:
        async with anyio.create_task_group() as group:

            async def http_one(tag: str) -> None:
                async with http_client(url) as client:
                    await client_loop(client, stats[tag], until, tag)
                    ledgers[tag] = await ledger_counts(client)

            async def stdio_one(tag: str) -> None:
                command = serve_command()
                parameters = StdioServerParameters(
                    command=command[0],
                    args=[*command[1:], "--config", str(path)],
                    env=environment(),
                    cwd=folder,
                )
                with open(os.devnull, "w") as errlog:
                    transport = stdio_client(parameters, errlog=errlog)
                    async with Client(transport, cache=None) as client:
                        await client_loop(client, stats[tag], until, tag)
                        ledgers[tag] = await ledger_counts(client)

            group.start_soon(sampler, process, until + 5, samples)
            for tag in stats:
                group.start_soon(http_one if tag.startswith("http") else stdio_one, tag)
            if hostile:
                group.start_soon(hostile_loop, url, until, hostile_counts)
                group.start_soon(killer, process, until, killed)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)
    elapsed = time.monotonic() - started
    latencies = [x for s in stats.values() for x in s.latencies]
    by_transport = {}
    for kind in ("http", "stdio"):
        each = [x for tag, s in stats.items() if tag.startswith(kind) for x in s.latencies]
        if each:
            by_transport[kind] = {
                "runs_per_second": round(len(each) / args.seconds, 2),
                "p50_ms": round(statistics.median(each) * 1000, 1),
                "p99_ms": round(_quantile(each, 0.99) * 1000, 1),
                "max_ms": round(max(each) * 1000, 1),
            }
    asked = sum(s.asked for s in stats.values())
    answered = sum(s.answered for s in stats.values())
    http_ledger: dict[str, int] = {}
    for tag, counts in ledgers.items():
        if tag.startswith("http"):
            http_ledger = counts  # one ledger for every HTTP client
    miscounted = 0
    for tag, each in stats.items():
        ledger = http_ledger if tag.startswith("http") else ledgers.get(tag, {})
        for run_id in each.ids:
            if ledger.get(run_id) != 1 or each.ids[run_id] != 1:
                miscounted += 1
    return {
        "phase": "hostile" if hostile else "calm",
        "seconds": round(elapsed, 1),
        "runs": len(latencies),
        "runs_per_second": round(len(latencies) / args.seconds, 2),
        "p50_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "p99_ms": round(_quantile(latencies, 0.99) * 1000, 1) if latencies else None,
        "max_ms": round(max(latencies) * 1000, 1) if latencies else None,
        "by_transport": by_transport,
        "failed_runs": sum(len(s.errors) for s in stats.values()),
        "failures": sorted({e for s in stats.values() for e in s.errors})[:5],
        "asked": asked,
        "answered": answered,
        "ledger_miscounted": miscounted,
        "rss_mib_start_median_max": [
            round(samples[0] / 2**20) if samples else None,
            round(statistics.median(samples) / 2**20) if samples else None,
            round(max(samples) / 2**20) if samples else None,
        ],
        "upstream_kills": len(killed),
        **hostile_counts,
    }


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(args: argparse.Namespace) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for hostile in (False, True):
            rows.append(await phase(args, hostile, Path(folder)))
    for row in rows:
        print(json.dumps(row, indent=1))
    calm, rough = rows
    for kind in calm["by_transport"]:
        before, after = calm["by_transport"][kind], rough["by_transport"][kind]
        print(
            f"{kind} clients, hostile / calm: p50 {after['p50_ms'] / before['p50_ms']:.2f}x, "
            f"p99 {after['p99_ms'] / before['p99_ms']:.2f}x, "
            f"runs/s {after['runs_per_second'] / before['runs_per_second']:.2f}x"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--http-clients", type=int, default=4)
    parser.add_argument("--stdio-clients", type=int, default=2)
    parser.add_argument("--tree", type=Path, help="run the serve of another checkout")
    options = parser.parse_args()
    if options.tree is not None:
        TREE = options.tree.resolve()
    anyio.run(main, options)
