"""Benchmark: a 5,000-tool catalog to both SDKs, time and peak memory, in a fresh process.

Run by hand from the repository root:

    .venv/bin/python bench/bench_scale.py [--runs N]

The catalog is BFCL's function docs plus ToolUniverse's tool configs (5,004 tools) as one
catalog. Each run is a new Python process pinned to one core (`taskset -c 0` where
available) that loads the definitions (not timed), then validates, normalizes, builds and
renders the Python SDK and the TypeScript declarations (timed, with the cyclic garbage
collector paused as the CLI runs), and reports its peak resident memory. Targets: under 2 s, under 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {bench!r})
from catalogs import large_catalogs
from codegen.engine import compile_definitions
from codegen.render.python.sdk import render_python_sdk
from codegen.render.typescript.sdk import render_typescript_sdk
from codegen._support.gc_pause import paused_gc
from codegen._support.run_memos import run_memos
tools = [t for c in large_catalogs() for t in c.tools]
with paused_gc(), run_memos():  # as the CLI runs
    start = time.perf_counter()
    compiled = compile_definitions(tools)
    assert compiled.catalog is not None, compiled.errors[:3]
    compiled_at = time.perf_counter()
    python = render_python_sdk(compiled.catalog)
    python_at = time.perf_counter()
    typescript = render_typescript_sdk(compiled.catalog)
    end = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"tools": len(tools), "seconds": end - start, "peak_mb": peak,
                  "compile": compiled_at - start, "python": python_at - compiled_at,
                  "typescript": end - python_at,
                  "python_kb": len(python) // 1024, "typescript_kb": len(typescript) // 1024}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    code = CHILD.format(bench=str(ROOT / "bench"))
    prefix = ["taskset", "-c", os.environ.get("BENCH_CPU", "0")] if shutil.which("taskset") else []
    results = []
    for _ in range(args.runs):
        out = subprocess.run(
            [*prefix, sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    seconds = statistics.median(r["seconds"] for r in results)
    peak = max(r["peak_mb"] for r in results)
    first = results[0]
    print(
        f"{first['tools']} tools -> Python SDK {first['python_kb']} KB, TypeScript "
        f"{first['typescript_kb']} KB"
    )
    print(
        f"validate+normalize+build+render both: {seconds:.2f} s median of {args.runs} "
        f"(target < 2 s: {'met' if seconds < 2 else 'MISSED'})"
    )
    for stage in ("compile", "python", "typescript"):
        print(f"  {stage}: {statistics.median(r[stage] for r in results):.2f} s")
    print(
        f"peak resident memory (whole process, loading included): {peak:.0f} MB "
        f"(target < 300 MB: {'met' if peak < 300 else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
