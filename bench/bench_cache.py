"""Benchmark: re-rendering a catalog in which one tool changed, with the per-tool cache,
against a cold render.

Run by hand from the repository root:

    .venv/bin/python bench/bench_cache.py [--rounds N]

Catalog: BFCL's function docs plus ToolUniverse's tool configs (5,004 tools), loaded once
(loading is not timed). Every figure is compile + the Python SDK + the TypeScript
declarations, median of `--rounds`:

- cold: no cache, every in-process memo emptied first (what a fresh process does);
- in memory: one `ToolCache` kept across rounds; each round changes one tool's description
  (a different tool each time) and renders again;
- on disk: a fresh process per round that opens the cache directory a previous run wrote,
  changes one tool, renders both SDKs as `codegen sdk --cache` does (`Engine.render`
  through the cache: unchanged tools come back as text, their IR is never loaded) and saves;
  timed inside the process from opening the cache to the saved file, against the same work
  without a cache in a fresh process.

Target: a one-tool change costs at most a tenth of a cold render.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from catalogs import large_catalogs  # noqa: E402

from codegen.engine import compile_definitions  # noqa: E402
from codegen.incremental.cache import ToolCache  # noqa: E402
from codegen.load.definitions import ToolDefinition  # noqa: E402
from codegen.render.python.sdk import render_python_sdk  # noqa: E402
from codegen.render.typescript.sdk import render_typescript_sdk  # noqa: E402

CHILD = """
import json, sys, time
sys.path.insert(0, {bench!r})
from dataclasses import replace
from catalogs import large_catalogs
from codegen.incremental.cache import ToolCache
from codegen.engine import compile_definitions
from codegen.render.python.sdk import render_python_sdk
from codegen.render.typescript.sdk import render_typescript_sdk
tools = [t for c in large_catalogs() for t in c.tools]
changed = {changed}
tools[changed] = replace(tools[changed], description=f"changed in round {{changed}}")
from codegen._support.gc_pause import paused_gc
from codegen._support.run_memos import run_memos
from codegen.engine import Engine
with paused_gc(), run_memos():  # as the CLI runs
    start = time.perf_counter()
    if {directory!r}:
        cache = ToolCache({directory!r})
        rendered = Engine(cache).render(tools, (), ["python", "typescript"])
        assert rendered.texts is not None
        cache.save()
    else:
        compiled = compile_definitions(tools)
        render_python_sdk(compiled.catalog)
        render_typescript_sdk(compiled.catalog)
    seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds}}))
"""


def render(tools: list[ToolDefinition], cache: ToolCache | None) -> None:
    compiled = compile_definitions(tools, cache=cache)
    assert compiled.catalog is not None, compiled.errors[:3]
    render_python_sdk(compiled.catalog, cache)
    render_typescript_sdk(compiled.catalog, cache)


def cold(tools: list[ToolDefinition]) -> float:
    start = time.perf_counter()
    render(tools, None)
    return time.perf_counter() - start


def child(changed: int, directory: str) -> float:
    code = CHILD.format(bench=str(ROOT / "bench"), changed=changed, directory=directory)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    tools = [t for c in large_catalogs() for t in c.tools]
    memo = ToolCache()
    render(tools, memo)  # fill it
    colds, warms = [], []
    for round_number in range(args.rounds):
        colds.append(cold(tools))
        changed = list(tools)
        index = 100 + round_number
        changed[index] = replace(changed[index], description=f"changed in round {round_number}")
        start = time.perf_counter()
        render(changed, memo)
        warms.append(time.perf_counter() - start)
    cold_s, warm_s = statistics.median(colds), statistics.median(warms)
    print(f"{len(tools)} tools, compile + Python SDK + TypeScript declarations\n")
    print("| run | seconds | of cold |")
    print("| --- | ---: | ---: |")
    print(f"| cold, in process | {cold_s:.3f} | 1.000 |")
    print(f"| one tool changed, in-memory cache | {warm_s:.3f} | {warm_s / cold_s:.3f} |")
    with tempfile.TemporaryDirectory() as directory:
        child(0, directory)  # write the cache file
        disk = [child(1 + r, directory) for r in range(args.rounds)]
        fresh = [child(1 + r, "") for r in range(args.rounds)]
    disk_s, fresh_s = statistics.median(disk), statistics.median(fresh)
    print(f"| cold, fresh process | {fresh_s:.3f} | 1.000 |")
    print(
        f"| one tool changed, disk cache, fresh process | {disk_s:.3f} | {disk_s / fresh_s:.3f} |"
    )
    print(
        f"\ntarget <= 0.1 of cold: in memory {'met' if warm_s <= 0.1 * cold_s else 'MISSED'}, "
        f"on disk {'met' if disk_s <= 0.1 * fresh_s else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
