"""Benchmark: what drawing progress costs, `--progress` against `--no-progress`.

Run by hand from the repository root:

    .venv/bin/python bench/bench_progress.py [--runs N] [--copies K] [--cores N]

Writes ToolUniverse's tool configs (3,006 tools) once into `bench/.cache/cli/`, and `K`
renamed copies of them as one catalog (default 5: about 15,000 tools), then runs `codegen
sdk` (Python), `validate` and `catalog --format json` on each with progress forced on and
off, stderr to a pipe (the line is drawn as on a terminal: `--progress` draws anywhere).
Each run is a fresh process on `--cores` cores (`taskset`; default 1, where `sdk` works in
one go; 2 puts the large catalog's `sdk` in shares); the figure is the minimum CPU time
(user + system, forked children included) over interleaved runs, and the ratio on / off.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogs import CACHE, ROOT, catalog_files

FILES = CACHE / "cli"


def copies_file(count: int) -> Path:
    """ToolUniverse's tools `count` times over, each copy's names suffixed."""
    target = FILES / f"tooluniverse_x{count}.json"
    if not target.is_file():
        source = Path(catalog_files(FILES)["tooluniverse"][0])
        tools = json.loads(source.read_text(encoding="utf-8"))["tools"]
        copied = [{**tool, "name": f"{tool['name']}_{n}"} for n in range(count) for tool in tools]
        target.write_text(json.dumps({"tools": copied}), encoding="utf-8")
    return target


def cpu_seconds(argv: list[str], cores: int) -> float:
    """User + system CPU seconds of one `codegen` process and the children it reaped."""
    pinned = ",".join(str(core) for core in range(cores))
    prefix = ["taskset", "-c", pinned] if shutil.which("taskset") else []
    with subprocess.Popen(
        [*prefix, sys.executable, "-m", "codegen", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    ) as process:
        assert process.stderr is not None
        drawn = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"codegen {' '.join(argv)} failed:\n{drawn.decode()[-2000:]}")
    if "--progress" in argv and b"\x1b[K" not in drawn:
        raise SystemExit(f"codegen {' '.join(argv)} drew no progress")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--cores", type=int, default=1)
    args = parser.parse_args()
    sources = {
        "tooluniverse": Path(catalog_files(FILES)["tooluniverse"][0]),
        f"tooluniverse x{args.copies}": copies_file(args.copies),
    }
    plan = [
        (f"{verb} {name}", [*command[:1], str(path), *command[1:]])
        for name, path in sources.items()
        for verb, command in (
            ("sdk", ["sdk", "--lang", "python"]),
            ("validate", ["validate"]),
            ("catalog", ["catalog", "--format", "json"]),
        )
    ]
    best: dict[tuple[str, str], float] = {}
    for _ in range(args.runs):
        for label, argv in plan:
            for flag in ("--no-progress", "--progress"):
                seconds = cpu_seconds([*argv, flag], args.cores)
                best[label, flag] = min(best.get((label, flag), seconds), seconds)
    width = max(len(label) for label, _ in plan)
    print(f"{'command':<{width}} | {'off':>8} | {'on':>8} | ratio   (min CPU s of {args.runs})")
    for label, _ in plan:
        off, on = best[label, "--no-progress"], best[label, "--progress"]
        print(f"{label:<{width}} | {off:8.3f} | {on:8.3f} | {on / off:.3f}")


if __name__ == "__main__":
    main()
