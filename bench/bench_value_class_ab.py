"""A/B: is `ir._value_class` worth its machinery? The same tree with and without it.

Run by hand from the repository root:

    python bench/bench_value_class_ab.py [--runs N] [--rev REV | --worktree] [--markdown FILE]

Two copies of the toolkit are made in a temporary directory, both from one source so that
nothing else differs: `codegen/` and `templates/` of the commit `--rev` (default `HEAD`,
through `git archive`, so edits in progress in the working tree are left out), or of the
working tree with `--worktree`.

- A: the copy as is (the IR classes made by `ir._value_class`);
- B: the same copy with one line added to its `ir.py` before the first IR class,
  `from dataclasses import dataclass as _value_class`, so every IR class is made by the
  standard `dataclass(frozen=True, slots=True)`. Nothing else changes (`_pickled_by_fields`
  still sets each class's `__reduce__`).

Both copies are compiled to bytecode first (as a wheel install leaves them) and the
children never write any. BFCL's function docs (1,998 tools) are written to a temporary
JSON file as a list of `{"name", "description", "parameters"}` records (read with
`--input-format bfcl`), ToolUniverse's tool configs (3,005 tools) as
`{"tools": [{"name", "description", "inputSchema", "outputSchema"?}]}`. Every measurement
is a fresh child process pinned to one core (`taskset -c $BENCH_CPU`, default 0, where
available) with the copy first on `PYTHONPATH` (and `PYTHONSAFEPATH`); within a round A and
B run back to back, in alternating order from round to round:

- `codegen sdk FILE --lang python|typescript --jobs 1`, the whole command as the installed
  `codegen` script runs it, output to /dev/null: wall time and CPU time (user + system,
  from the child's resource usage);
- the compile alone: a child loads the definitions (not timed), then times
  `codegen.pipeline.compile_definitions` with the cyclic collector paused and the run
  memos on, as the command line runs it (wall and CPU time in the child);
- `python -X importtime -c "import codegen.ir"`: the cumulative and self microseconds of
  `codegen.ir`.

Before timing, one run of each command per variant checks that the SDKs are byte-identical,
and one compile per variant that the IR (`ir.dump`) is. The table shows each variant's
median and range (min-max) over the rounds, and what A saves: B's median minus A's, as a
share of B's median, and the median of the per-round paired savings.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogs import ROOT, catalog_files

CONSOLE_SCRIPT = "import sys; from codegen.cli import main; sys.exit(main())"
"""What the installed `codegen` script runs (`python -m codegen` would add `runpy`)."""

VARIANT_B_LINE = (
    "from dataclasses import dataclass as _value_class  # A/B variant B: the standard decorator"
)

COMPILE_CHILD = """
import hashlib, json, sys, time
from codegen import ir, pipeline
from codegen.load.sources import load_sources
from codegen._support.gc_pause import paused_gc
from codegen._support.run_memos import run_memos
compile_definitions = getattr(pipeline, "compile_definitions", None) or pipeline.compile_catalog
sources, fmt, check = json.loads(sys.argv[1])
loaded = load_sources(sources, fmt=fmt)
with paused_gc(), run_memos():  # as the command line runs
    wall, cpu = time.perf_counter(), time.process_time()
    compiled = compile_definitions(loaded.tools, loaded.diagnostics)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
assert compiled.catalog is not None, compiled.errors[:3]
digest = hashlib.sha256(ir.dump(compiled.catalog).encode()).hexdigest() if check else None
print(json.dumps({"wall": wall, "cpu": cpu, "tools": len(compiled.catalog.tools),
                  "digest": digest}))
"""

Sample = dict[str, float]


def snapshot(dest: Path, rev: str | None) -> Path:
    """`codegen/` and `templates/` of `rev` (the working tree when None) under `dest`."""
    dest.mkdir(parents=True)
    if rev is None:
        for name in ("codegen", "templates"):
            shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        archive = subprocess.run(
            ["git", "archive", "--format=tar", rev, "codegen", "templates"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def make_variant_b(tree: Path) -> None:
    """Make every IR class of `tree` with the standard decorator."""
    path = tree / "codegen" / "ir.py"
    text = path.read_text(encoding="utf-8")
    first = text.find("\n@_value_class(")
    if "def _value_class(" not in text or first < 0:
        raise SystemExit(
            f"{path} has no `_value_class` machinery to compare against: "
            "pass --rev with a commit that still has it"
        )
    path.write_text(f"{text[: first + 1]}{VARIANT_B_LINE}\n\n{text[first + 1 :]}", "utf-8")


def write_inputs(folder: Path) -> dict[str, list[str]]:
    """The catalogs as files; the source arguments of each."""
    return catalog_files(folder)


def environment(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def pinned() -> list[str]:
    if shutil.which("taskset"):
        return ["taskset", "-c", os.environ.get("BENCH_CPU", "0")]
    return []


def run_child(tree: Path, argv: list[str], capture: bool = False) -> tuple[Sample, bytes]:
    """Wall and CPU seconds of one child process, and its stdout when `capture` (its stderr
    otherwise)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [*pinned(), sys.executable, *argv],
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=environment(tree),
        cwd=tree,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {' '.join(argv)} failed:\n{done.stderr.decode()[-3000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall": wall, "cpu": cpu}, done.stdout if capture else done.stderr


def sdk(
    tree: Path, sources: list[str], language: str, capture: bool = False
) -> tuple[Sample, bytes]:
    argv = ["-c", CONSOLE_SCRIPT, "sdk", *sources, "--lang", language, "--jobs", "1", "-q"]
    return run_child(tree, argv, capture)


def compile_only(tree: Path, sources: list[str], check: bool = False) -> Sample:
    fmt = sources[2] if len(sources) > 1 else "auto"
    argv = ["-c", COMPILE_CHILD, json.dumps([sources[:1], fmt, check])]
    _, stdout = run_child(tree, argv, capture=True)
    found = json.loads(stdout.decode().strip().splitlines()[-1])
    return found


def importtime(tree: Path) -> Sample:
    _, stderr = run_child(tree, ["-X", "importtime", "-c", "import codegen.ir"])
    for line in stderr.decode().splitlines():
        parts = [part.strip() for part in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[2] == "codegen.ir":
            return {"cumulative": int(parts[1]) / 1e6, "self": int(parts[0]) / 1e6}
    raise SystemExit(f"{tree}: no `codegen.ir` line in -X importtime's output")


def check_identical(trees: dict[str, Path], inputs: dict[str, list[str]]) -> list[str]:
    """One run of each command per variant; the lines saying what was compared."""
    lines = []
    for catalog, sources in inputs.items():
        for language in ("python", "typescript"):
            outputs = {
                name: sdk(tree, sources, language, capture=True)[1] for name, tree in trees.items()
            }
            if len(set(outputs.values())) != 1:
                raise SystemExit(f"sdk {catalog} {language}: the variants' outputs differ")
            data = outputs["A"]
            digest = hashlib.sha256(data).hexdigest()[:16]
            lines.append(
                f"sdk {catalog} {language}: identical, {len(data):,} bytes, sha256 {digest}..."
            )
        digests = {name: compile_only(tree, sources, check=True) for name, tree in trees.items()}
        if len({found["digest"] for found in digests.values()}) != 1:
            raise SystemExit(f"compile {catalog}: the variants' IR differs")
        found = digests["A"]
        lines.append(
            f"compile {catalog}: identical IR (`ir.dump`), {found['tools']:,} tools, "
            f"sha256 {str(found['digest'])[:16]}..."
        )
    return lines


def measure(
    trees: dict[str, Path], inputs: dict[str, list[str]], runs: int
) -> dict[str, dict[str, list[Sample]]]:
    """label -> variant -> one sample per round, A and B interleaved."""
    plan: list[tuple[str, Callable[[Path], Sample]]] = []
    for catalog, sources in inputs.items():
        for language in ("python", "typescript"):
            plan.append(
                (
                    f"`codegen sdk` {catalog} {language} --jobs 1",
                    lambda tree, s=sources, lang=language: sdk(tree, s, lang)[0],
                )
            )
    for catalog, sources in inputs.items():
        plan.append(
            (f"compile_definitions {catalog}", lambda tree, s=sources: compile_only(tree, s))
        )
    plan.append(("`import codegen.ir` (-X importtime)", importtime))
    results: dict[str, dict[str, list[Sample]]] = {
        label: {name: [] for name in trees} for label, _ in plan
    }
    for index in range(runs):
        order = list(trees) if index % 2 == 0 else list(reversed(trees))
        for label, work in plan:
            for name in order:
                results[label][name].append(work(trees[name]))
        print(f"round {index + 1}/{runs} done", file=sys.stderr)
    return results


def table(results: dict[str, dict[str, list[Sample]]], runs: int) -> list[str]:
    lines = [
        "| measurement | metric | A `_value_class`: median (min-max) | B `dataclass`: median "
        "(min-max) | A saves (of B's median) | paired, median (min-max) |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for label, variants in results.items():
        metrics = ("cumulative", "self") if "importtime" in label else ("cpu", "wall")
        for metric in metrics:
            a = [sample[metric] for sample in variants["A"]]
            b = [sample[metric] for sample in variants["B"]]
            scale, unit = (1e3, "ms") if max(b) < 0.1 else (1.0, "s")
            digits = 1 if unit == "ms" else 3

            def cell(values: list[float], scale: float = scale, digits: int = digits) -> str:
                return (
                    f"{statistics.median(values) * scale:.{digits}f} "
                    f"({min(values) * scale:.{digits}f}-{max(values) * scale:.{digits}f})"
                )

            saved = (statistics.median(b) - statistics.median(a)) / statistics.median(b)
            paired = [(y - x) / y for x, y in zip(a, b, strict=True)]
            lines.append(
                f"| {label} | {metric} {unit} | {cell(a)} | {cell(b)} | {saved:+.1%} | "
                f"{statistics.median(paired):+.1%} ({min(paired):+.1%} to {max(paired):+.1%}) |"
            )
    lines.append("")
    lines.append(f"{runs} rounds; each cell from fresh child processes, A and B interleaved.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rev", default="HEAD", help="the commit to copy (default: HEAD)")
    parser.add_argument("--worktree", action="store_true", help="copy the working tree instead")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    if args.runs < 5:
        parser.error("--runs must be at least 5")
    with tempfile.TemporaryDirectory(prefix="value-class-ab-") as scratch:
        base = Path(scratch)
        source = None if args.worktree else args.rev
        trees = {"A": snapshot(base / "a", source), "B": snapshot(base / "b", source)}
        make_variant_b(trees["B"])
        for tree in trees.values():
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", str(tree / "codegen")], check=True
            )
        folder = base / "inputs"
        folder.mkdir()
        inputs = write_inputs(folder)
        checked = check_identical(trees, inputs)
        results = measure(trees, inputs, args.runs)
    described = "the working tree" if args.worktree else f"`{args.rev}`"
    text = [
        f"Source: {described}. Python {sys.version.split()[0]}, "
        f"{'pinned to CPU ' + os.environ.get('BENCH_CPU', '0') if pinned() else 'not pinned'}.",
        "",
        *table(results, args.runs),
        "",
        "Outputs:",
        "",
        *(f"- {line}" for line in checked),
    ]
    print("\n".join(text))
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text("\n".join(text) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
