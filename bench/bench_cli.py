"""Benchmark: the `codegen` command line on the large catalogs, whole process, CPU time.

Run by hand from the repository root:

    .venv/bin/python bench/bench_cli.py [--runs N] [--tree PATH ...]

Writes BFCL's function docs (1,998 tools, BFCL dialect, JSON Lines) and ToolUniverse's tool
configs (3,006 tools, MCP shape) once into `bench/.cache/cli/`, then runs `codegen sdk` for
each language on each file and `codegen build` on the ToolUniverse file, each as a fresh
process pinned to one core. Each `--tree` is a source checkout whose `codegen` package is
put first on `PYTHONPATH` (default: this one), so two versions of the toolkit compare side by
side; runs are interleaved tree by tree, and the figure is the minimum CPU time (user +
system, from the child's resource usage) over the runs, which a busy machine inflates least.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogs import CACHE, ROOT, catalog_files

FILES = CACHE / "cli"


def inputs() -> dict[str, list[str]]:
    """The source arguments of each catalog, writing the files on first use."""
    return catalog_files(FILES)


def commands() -> list[tuple[str, list[str]]]:
    found = inputs()
    plan = []
    for catalog, sources in found.items():
        for language in ("python", "typescript"):
            plan.append((f"sdk {catalog} {language}", ["sdk", *sources, "--lang", language]))
    out = tempfile.mkdtemp(prefix="bench-cli-")
    plan.append(("build tooluniverse", ["build", *found["tooluniverse"], "-o", out, "-q"]))
    return plan


def cpu_seconds(tree: Path, argv: list[str]) -> float:
    """User + system CPU seconds of one `codegen` process."""
    prefix = ["taskset", "-c", os.environ.get("BENCH_CPU", "0")] if shutil.which("taskset") else []
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with subprocess.Popen(
        [*prefix, sys.executable, "-m", "codegen", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tree,
    ) as process:
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr = process.stderr.read() if process.stderr else b""
    if process.returncode not in (0, 1):
        raise SystemExit(f"{tree}: codegen {' '.join(argv)} failed:\n{stderr.decode()}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", action="append", type=Path, help="a source checkout")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in (args.tree or [ROOT])]
    plan = commands()
    best: dict[tuple[str, Path], float] = {}
    for _ in range(args.runs):
        for label, argv in plan:
            for tree in trees:
                seconds = cpu_seconds(tree, argv)
                key = (label, tree)
                best[key] = min(best.get(key, seconds), seconds)
    width = max(len(label) for label, _ in plan)
    header = " | ".join(f"{tree.name:>12}" for tree in trees)
    ratio = " | ratio" if len(trees) == 2 else ""
    print(f"{'command':<{width}} | {header}{ratio}   (min CPU s of {args.runs})")
    for label, _ in plan:
        cells = [best[(label, tree)] for tree in trees]
        row = " | ".join(f"{cell:>12.3f}" for cell in cells)
        extra = f" | {cells[1] / cells[0]:.3f}" if len(trees) == 2 else ""
        print(f"{label:<{width}} | {row}{extra}")


if __name__ == "__main__":
    main()
