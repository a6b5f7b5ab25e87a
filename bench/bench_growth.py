"""Benchmark: how time and memory grow with the size of hostile inputs.

Run by hand from the repository root:

    .venv/bin/python bench/bench_growth.py [--runs N] [--shapes NAME,...]

For every tripwire shape of `tests/support/hostile.py` (nesting through properties, items and anyOf,
a `$ref` chain, a union, an enum, a description, a catalog) at 1k, 10k and 100k (levels,
arms, members or tools; a description has 100 characters per unit, so 100 KB to 10 MB),
each run is a new Python process pinned to one core (`taskset -c 0` where available) that
builds the tool data (not timed), then validates, normalizes, builds and renders both SDKs
(timed). Nested documents past 512 levels are rejected, so their rows time the rejection.
The table shows the median time, the peak resident memory above the interpreter's own (the
input is included), and the ratio to the previous size: linear growth is about 10x per
10x step.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.hostile import SHAPES  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
DESCRIPTION_UNIT = 100
"""Characters of description per size unit."""

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {tests!r})
from support import hostile
from codegen.engine import compile_value
from codegen.render.python.sdk import render_python_sdk
from codegen.render.typescript.sdk import render_typescript_sdk

def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

base = rss()
value = hostile.shape({shape!r}, {size})
start = time.perf_counter()
compiled = compile_value(value, "hostile.json")
outputs = 0
if compiled.catalog is not None:
    outputs = len(render_python_sdk(compiled.catalog)) + len(render_typescript_sdk(compiled.catalog))
seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "peak_mb": rss() - base, "ok": compiled.ok,
                  "diagnostics": len(compiled.diagnostics), "output_kb": outputs // 1024}}))
"""


def measure(shape: str, size: int, runs: int) -> dict[str, float]:
    """Median seconds and largest memory over `runs` fresh processes."""
    code = CHILD.format(tests=str(ROOT / "tests"), shape=shape, size=size)
    prefix = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    results = []
    for _ in range(runs):
        out = subprocess.run(
            [*prefix, sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT
        )
        if out.returncode != 0:
            raise SystemExit(f"{shape} {size} failed:\n{out.stderr}")
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {
        "seconds": statistics.median(r["seconds"] for r in results),
        "peak_mb": max(r["peak_mb"] for r in results),
        "ok": all(r["ok"] for r in results),
        "output_kb": results[0]["output_kb"],
    }


def ratio(now: float, before: float | None) -> str:
    if before is None:
        return ""
    return f"{now / before:.1f}x" if before > 0 else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes")
    args = parser.parse_args()
    print(
        f"{'shape':<12} {'size':>11} {'result':<9} {'seconds':>8} {'x':>6} "
        f"{'peak MB':>8} {'x':>6} {'output KB':>10}"
    )
    for shape in args.shapes.split(","):
        previous: dict[str, float] | None = None
        for size in SIZES:
            units = size * DESCRIPTION_UNIT if shape == "description" else size
            row = measure(shape, units, args.runs)
            print(
                f"{shape:<12} {units:>11,} {'rendered' if row['ok'] else 'rejected':<9} "
                f"{row['seconds']:>8.3f} "
                f"{ratio(row['seconds'], previous and previous['seconds']):>6} "
                f"{row['peak_mb']:>8.1f} "
                f"{ratio(row['peak_mb'], previous and previous['peak_mb']):>6} "
                f"{row['output_kb']:>10,}",
                flush=True,
            )
            previous = row


if __name__ == "__main__":
    main()
