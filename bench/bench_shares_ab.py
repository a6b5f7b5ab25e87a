"""Benchmark: the home-made fork pool (`incremental.shares.map_in_shares`) against the
standard library's `ProcessPoolExecutor` (fork context) for the same work, A/B.

Run by hand from the repository root:

    .venv/bin/python bench/bench_shares_ab.py [--runs N] [--jobs N] [--catalog NAME ...]
        [--variant NAME ...] [--revision REV | --tree PATH]

The work is what `codegen sdk` does on a large catalog (`pipeline.tool_entries` without
`keep_ir`): each tool validated, normalized, built alone and laid out as its chunk of text
for one language (`pipeline._entries_of`, stage by stage over a block). Variants, all on
the same loaded definitions:

- `one`: one process (`map_in_shares(work, definitions, 1)`, the work called directly);
- `A shares`: `map_in_shares(work, definitions, jobs)` exactly as `tool_entries` calls it
  (renderer preloaded before the fork; `jobs - 1` forked children plus this process);
- `B pool guided`: `ProcessPoolExecutor(max_workers=jobs, mp_context=fork)`,
  `executor.map(work_on_block, blocks)` over the very blocks `map_in_shares` cuts
  (`shares._blocks`: largest first, the last ones of 8 tools);
- `B pool 4/worker`: the same executor over `4 * jobs` equal blocks (what
  `multiprocessing.Pool.map`'s default chunking would make);
- `B pool tool cs=K`: `executor.map(work_on_tool, range(n), chunksize=K)`, one tool per
  call (no staging over a block), K tools per task message.

Workers get block bounds (or tool indices), never definitions: like `map_in_shares`'s
children they read the definitions they inherited through `fork`. Each measurement is a
fresh Python process (`--child`) that imports the same modules (the executor's included)
and loads the catalog untimed, then times the map alone, pool start and shutdown
included, inside the CLI's scopes (cyclic GC paused, deep recursion, one memo scope).
Runs are interleaved (every variant once per round, the order rotated round by round).
Every run's results are digested (each entry's chunks, problems, claims and warnings, in
order): all runs of a catalog and language, whatever the variant, must agree.

The code measured is `codegen/` as committed at `--revision` (default HEAD), unpacked into
a temporary folder with `git archive`, so edits to the working tree during a run cannot
split the measurements; `--tree` runs a checkout as it is instead.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

CATALOGS = ("bfcl", "tooluniverse")
LANGUAGES = ("python", "typescript")
VARIANTS = (
    "one",
    "A shares",
    "B pool guided",
    "B pool 4/worker",
    "B pool tool cs=16",
    "B pool tool cs=auto",
)
"""`cs=auto`: n / (4 * jobs) tools per task, `multiprocessing.Pool`'s default chunksize."""

# State of a measuring child, inherited by the executor's forked workers.
_definitions: tuple = ()
_work = None


def work_on_block(bounds: tuple[int, int]) -> list:
    start, stop = bounds
    return _work(_definitions[start:stop])


def work_on_tool(index: int):
    return _work(_definitions[index : index + 1])[0]


def digest(entries: list) -> str:
    """The entries' texts and findings, in order: equal digests, equal outputs."""
    hasher = hashlib.sha256()
    for entry in entries:
        text = repr((sorted(entry.chunks.items()), entry.problems, entry.claims, entry.warnings))
        hasher.update(text.encode("utf-8"))
    return hasher.hexdigest()


def child(catalog: str, language: str, variant: str, jobs: int) -> None:
    """One measurement in this fresh process: print its JSON line."""
    global _definitions, _work
    import multiprocessing
    import resource
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    from catalogs import bfcl_catalog, tooluniverse_catalog

    import codegen
    from codegen._support.gc_pause import paused_gc
    from codegen._support.recursion_limit import deep_recursion
    from codegen._support.run_memos import run_memos
    from codegen.incremental.shares import _blocks, map_in_shares
    from codegen.render.targets import preload

    try:  # where `tool_entries` lives: the pipeline, or `incremental.entries` after issue 27
        from codegen.incremental.entries import _entries_of
    except ImportError:
        from codegen.pipeline import _entries_of

    loaded = {"bfcl": bfcl_catalog, "tooluniverse": tooluniverse_catalog}[catalog]()
    _definitions = loaded.tools
    count = len(_definitions)
    work = partial(_entries_of, languages=(language,), keep_ir=False)
    _work = work
    fork = multiprocessing.get_context("fork")
    with paused_gc(), deep_recursion(), run_memos():  # as `codegen sdk` runs
        cpu_before = cpu_seconds(resource)
        start = time.perf_counter()
        if variant == "one":
            entries = map_in_shares(work, _definitions, 1)
        elif variant == "A shares":
            preload(language)  # as tool_entries does before the fork
            entries = map_in_shares(work, _definitions, jobs)
        else:
            preload(language)  # the same for the pool: imported once, before the fork
            with ProcessPoolExecutor(max_workers=jobs, mp_context=fork) as executor:
                if variant == "B pool guided":
                    blocks = _blocks(count, jobs)
                    entries = [e for block in executor.map(work_on_block, blocks) for e in block]
                elif variant == "B pool 4/worker":
                    cuts = [count * i // (4 * jobs) for i in range(4 * jobs + 1)]
                    blocks = list(itertools.pairwise(cuts))
                    entries = [e for block in executor.map(work_on_block, blocks) for e in block]
                else:
                    size = variant.rpartition("=")[2]
                    chunksize = max(1, count // (4 * jobs)) if size == "auto" else int(size)
                    entries = list(executor.map(work_on_tool, range(count), chunksize=chunksize))
        seconds = time.perf_counter() - start
        cpu = cpu_seconds(resource) - cpu_before  # the workers are reaped by now
    assert len(entries) == count
    print(
        json.dumps(
            {
                "seconds": seconds,
                "tools": count,
                "digest": digest(entries),
                "codegen": codegen.__file__,
                "cpu": cpu,
            }
        )
    )


def cpu_seconds(resource) -> float:
    """User + system CPU of this process and of its children reaped so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def busy_seconds() -> float | None:
    """CPU seconds every core of the machine has spent busy since boot (`/proc/stat`)."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(field) for field in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def settle(limit: float, quiet: float) -> float | None:
    """Wait (at most `limit` seconds) until other processes keep fewer than `quiet` cores
    busy over a second; the last reading (None without `/proc/stat`)."""
    deadline = time.perf_counter() + limit
    while True:
        before = busy_seconds()
        if before is None:
            return None
        time.sleep(1.0)
        after = busy_seconds()
        reading = (after or before) - before
        if reading < quiet or time.perf_counter() >= deadline:
            return reading


def print_table(
    cases: list[tuple[str, str]],
    variants: list[str],
    tools: dict[str, int],
    times: dict[tuple[str, str, str], list[float]],
    cpus: dict[tuple[str, str, str], list[float]],
    rounds: Iterable[int],
    header: bool = True,
) -> None:
    """One row per case and variant over `rounds` (indices of rounds)."""
    kept = list(rounds)
    if header:
        print(
            "| catalog | language | variant | runs | median s | min-max s | spread "
            "| ratio to A | per-round ratio | CPU s |"
        )
        print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for catalog, language in cases:
        base = [times[(catalog, language, "A shares")][r] for r in kept]
        base_median = statistics.median(base)
        for variant in variants:
            found = [times[(catalog, language, variant)][r] for r in kept]
            cpu = statistics.median(cpus[(catalog, language, variant)][r] for r in kept)
            median = statistics.median(found)
            spread = (max(found) - min(found)) / median
            per_round = [b / a for a, b in zip(base, found, strict=True)]
            print(
                f"| {catalog} ({tools[catalog]}) | {language} | {variant} | {len(kept)} "
                f"| {median:.3f} | {min(found):.3f}-{max(found):.3f} | {spread:.0%} "
                f"| {median / base_median:.3f} "
                f"| {statistics.median(per_round):.2f} [{min(per_round):.2f}-{max(per_round):.2f}] "
                f"| {cpu:.2f} |"
            )


def snapshot(revision: str) -> Path:
    """`codegen/` as committed at `revision`, in a temporary folder: every measurement
    runs the same code even while someone edits the working tree."""
    folder = Path(tempfile.mkdtemp(prefix="bench-shares-ab-"))
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "codegen"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def measure(tree: Path, catalog: str, language: str, variant: str, jobs: int) -> dict:
    """One fresh process's figures, with `others`: the cores other processes of the
    machine kept busy meanwhile (busy CPU time not ours / wall time)."""
    import resource

    busy_before, ours_before = busy_seconds(), cpu_seconds(resource)
    wall_before = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--child", catalog, language, variant, "--jobs", str(jobs)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(tree)},
    )
    wall = time.perf_counter() - wall_before
    busy_after, ours = busy_seconds(), cpu_seconds(resource) - ours_before
    if out.returncode != 0:
        raise SystemExit(f"{catalog} {language} {variant} failed:\n{out.stderr}")
    found = json.loads(out.stdout.strip().splitlines()[-1])
    if busy_before is not None and busy_after is not None:
        found["others"] = max(0.0, busy_after - busy_before - ours) / wall
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12, help="rounds (every variant once each)")
    parser.add_argument(
        "--minutes",
        type=float,
        default=9.0,
        help="start no round that would end past this (at least 5 rounds run)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="processes per variant")
    parser.add_argument("--catalog", action="append", choices=CATALOGS)
    parser.add_argument("--variant", action="append", choices=VARIANTS)
    parser.add_argument(
        "--settle",
        type=float,
        default=10.0,
        help="before each round, wait up to this many seconds for a quiet machine",
    )
    parser.add_argument(
        "--quiet", type=float, default=0.3, help="busy cores below which the machine is quiet"
    )
    parser.add_argument(
        "--tree", type=Path, help="a source checkout to run as it is (default: --revision)"
    )
    parser.add_argument(
        "--revision", default="HEAD", help="the commit whose codegen/ is measured (default HEAD)"
    )
    parser.add_argument("--child", nargs=3, metavar=("CATALOG", "LANGUAGE", "VARIANT"))
    args = parser.parse_args()
    if args.child:
        child(*args.child, args.jobs)
        return
    if args.tree:
        tree, label = args.tree.resolve(), str(args.tree)
    else:
        tree = snapshot(args.revision)
        revision = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", args.revision],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        label = f"codegen/ at {revision}"
    print(f"measuring {label} ({tree}), {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    catalogs = args.catalog or list(CATALOGS)
    variants = args.variant or list(VARIANTS)
    if "A shares" not in variants:
        variants.insert(0, "A shares")
    cases = [(catalog, language) for catalog in catalogs for language in LANGUAGES]
    times: dict[tuple[str, str, str], list[float]] = {}
    cpus: dict[tuple[str, str, str], list[float]] = {}
    others: list[float] = []
    loads: dict[tuple[str, str, str], list[float]] = {}  # others, run by run
    starts: list[float] = []  # busy cores just before each round
    digests: dict[tuple[str, str], set[str]] = {}
    tools: dict[str, int] = {}
    began = time.perf_counter()
    rounds = 0
    for round_number in range(args.runs):
        elapsed = time.perf_counter() - began
        if rounds >= 5 and elapsed + elapsed / rounds > args.minutes * 60:
            print(f"stopping after {rounds} rounds: the next would end past {args.minutes} min")
            break
        reading = settle(args.settle, args.quiet) if args.settle > 0 else None
        if reading is not None:
            starts.append(reading)
        for case_number, (catalog, language) in enumerate(cases):
            turn = (round_number + case_number) % len(variants)
            for variant in variants[turn:] + variants[:turn]:
                found = measure(tree, catalog, language, variant, args.jobs)
                times.setdefault((catalog, language, variant), []).append(found["seconds"])
                cpus.setdefault((catalog, language, variant), []).append(found["cpu"])
                digests.setdefault((catalog, language), set()).add(found["digest"])
                tools[catalog] = found["tools"]
                others.append(found.get("others", 0.0))
                loads.setdefault((catalog, language, variant), []).append(others[-1])
        rounds += 1
        print(f"round {round_number + 1}/{args.runs} done, {time.perf_counter() - began:.0f} s")
    for case, found in digests.items():
        assert len(found) == 1, f"{case}: the variants' results differ ({len(found)} digests)"
    print(
        f"\nwall s of the map, median and min-max of {rounds} fresh processes each, "
        f"jobs={args.jobs}; spread = (max-min)/median; ratio = median / A's median; "
        "per-round = median [min-max] of each round's ratio to A (paired runs); "
        "CPU = user+system of the map, workers included, median"
    )
    if others:
        print(
            "other processes kept busy meanwhile (cores, over all runs): median "
            f"{statistics.median(others):.2f}, min-max {min(others):.2f}-{max(others):.2f} "
            f"of {os.cpu_count()}"
        )
    if starts:
        quiet = sum(reading < args.quiet for reading in starts)
        print(
            f"rounds started on a quiet machine (< {args.quiet} busy cores after waiting up to "
            f"{args.settle:.0f} s): {quiet} of {len(starts)}"
        )
    print("results equal across variants (digest of every entry's chunks and findings): yes\n")
    print_table(cases, variants, tools, times, cpus, range(rounds))
    quiet_rounds = {
        case: [
            r
            for r in range(rounds)
            if all(loads[(*case, variant)][r] < args.quiet for variant in variants)
        ]
        for case in cases
    }
    dropped = any(len(kept) < rounds for kept in quiet_rounds.values())
    if dropped and any(len(kept) >= 3 for kept in quiet_rounds.values()):
        print(
            f"\nthe same, only the rounds in which no run of the case saw other processes keep "
            f"{args.quiet} cores busy or more (rounds kept per case: "
            + ", ".join(f"{c} {lang} {len(k)}" for (c, lang), k in quiet_rounds.items())
            + ")\n"
        )
        for case, kept in quiet_rounds.items():
            if len(kept) >= 3:
                print_table([case], variants, tools, times, cpus, kept, header=case == cases[0])
    print(f"\ntotal {time.perf_counter() - began:.0f} s")
    if not args.tree:
        shutil.rmtree(tree, ignore_errors=True)


if __name__ == "__main__":
    main()
