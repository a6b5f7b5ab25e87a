"""Fuzz the robustness properties for as long as asked.

    .venv/bin/python bench/fuzz.py --minutes 10
    .venv/bin/python bench/fuzz.py --examples 5000 --strategy meta

Runs the Hypothesis strategies of `tests/support/robustness_strategies.py` through the checks of
`tests/support/sdk_checks.py` (the ones `tests/test_robustness_properties.py` runs in CI on a few
hundred examples), plus the `black` fixed point of every Python SDK, in rounds with fresh
random seeds until the budget is spent. After each round the declarations files collected
go through `tsc --strict` in one Node run and a few inputs through `codegen sdk` in a fresh
interpreter with another `PYTHONHASHSEED`.

The first failure stops the run (exit status 1): Hypothesis shrinks it, and the minimal
input is written to `OUT/failure-N.json` (JSON text, as `codegen sdk` reads it) with the
error in `OUT/failure-N.txt`. A tsc or hash-seed failure writes the failing input as found.
Prints the number of examples run.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.errors import HypothesisWarning  # noqa: E402

from support.robustness_strategies import catalogs, marked_text, meta_catalogs, to_json  # noqa: E402
from support.sdk_checks import (  # noqa: E402
    Rendered,
    check_black,
    check_value,
    expected_renders,
    subprocess_renders,
    tsc_failures,
)

STRATEGIES: dict[str, Callable[[], st.SearchStrategy[Any]]] = {
    "catalogs": catalogs,
    "marked": lambda: catalogs(text=marked_text()),
    "meta": meta_catalogs,
}
ROUND = 100
"""Examples per Hypothesis run; the time budget is checked between runs."""
SEED_CHECKS = 3
"""Inputs per round also rendered in a fresh interpreter with another hash seed."""


@dataclass
class Fuzzer:
    out: Path
    tsc: bool
    examples: int = 0
    failures: int = 0
    last_failure: tuple[Any, str] | None = None
    collected: list[tuple[Any, Rendered]] = field(default_factory=list)

    def check(self, value: Any, shuffle_seed: int) -> None:
        """One example; remembers the input of the latest failure (Hypothesis replays the
        minimal one last)."""
        self.examples += 1
        try:
            rendered = check_value(value, shuffle_seed=shuffle_seed)
            if rendered.python is not None:
                check_black(rendered.python)
        except Exception:
            self.last_failure = (value, traceback.format_exc())
            raise
        self.collected.append((value, rendered))

    def run_round(self, name: str, rng: random.Random) -> bool:
        """One Hypothesis run of `ROUND` examples, then the batched checks. False after a
        failure (already written to `out`)."""
        self.collected = []
        self.last_failure = None
        strategy = STRATEGIES[name]()

        @seed(rng.getrandbits(64))
        @settings(
            max_examples=ROUND,
            deadline=None,
            database=None,
            phases=[Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
        )
        @given(value=strategy, shuffle_seed=st.integers(0, 2**32 - 1))
        def run(value: Any, shuffle_seed: int) -> None:
            self.check(value, shuffle_seed)

        try:
            run()
        except Exception as error:
            value, problem = self.last_failure or (None, "".join(traceback.format_exception(error)))
            self.report(name, value, problem)
            return False
        return self.batched(name)

    def batched(self, name: str) -> bool:
        """tsc over this round's declarations files; another hash seed for a few inputs."""
        with tempfile.TemporaryDirectory() as scratch:
            directory = Path(scratch)
            rendered = [(v, r) for v, r in self.collected if r.typescript is not None]
            if self.tsc and rendered:
                files = {f"{i}": (r.typescript, r.catalog) for i, (_, r) in enumerate(rendered)}
                failures = tsc_failures(files, directory)  # type: ignore[arg-type]
                if failures:
                    first, problem = sorted(failures.items())[0]
                    self.report(name, rendered[int(first)][0], f"tsc:\n{problem}")
                    return False
            chosen = self.collected[:SEED_CHECKS]
            paths = []
            expected: dict[tuple[str, str], tuple[int, str]] = {}
            for index, (value, result) in enumerate(chosen):
                path = directory / f"input-{index}.json"
                path.write_text(to_json(value), encoding="utf-8")
                paths.append(path)
                expected.update(expected_renders(path, result))
            try:
                found = subprocess_renders(paths, str(random.getrandbits(32)))
            except AssertionError as error:
                self.report(name, chosen[0][0], f"subprocess: {error}")
                return False
            for key, want in expected.items():
                if found.get(key) != want:
                    value = chosen[paths.index(Path(key[0]))][0]
                    self.report(name, value, f"another hash seed changed {key[1]} output")
                    return False
        return True

    def report(self, name: str, value: Any, problem: str) -> None:
        self.failures += 1
        self.out.mkdir(parents=True, exist_ok=True)
        stem = self.out / f"failure-{self.failures}"
        if value is not None:
            stem.with_suffix(".json").write_text(to_json(value), encoding="utf-8")
        stem.with_suffix(".txt").write_text(f"strategy: {name}\n{problem}", encoding="utf-8")
        print(f"FAILED ({name}): input {stem}.json, error {stem}.txt", file=sys.stderr)
        print(problem[-2000:], file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    budget = parser.add_mutually_exclusive_group(required=True)
    budget.add_argument("--minutes", type=float, help="run for this long")
    budget.add_argument("--examples", type=int, help="run at least this many examples")
    parser.add_argument(
        "--strategy", choices=[*STRATEGIES, "all"], default="all", help="inputs (default: all)"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "fuzz-failures")
    parser.add_argument("--seed", type=int, help="seed of the round seeds (default: random)")
    parser.add_argument("--no-tsc", action="store_true", help="skip the tsc check")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", HypothesisWarning)

    names = list(STRATEGIES) if args.strategy == "all" else [args.strategy]
    rng = random.Random(args.seed)
    fuzzer = Fuzzer(out=args.out, tsc=not args.no_tsc)
    deadline = time.monotonic() + args.minutes * 60 if args.minutes is not None else None
    start = time.monotonic()
    rounds = 0
    while True:
        if deadline is not None and time.monotonic() >= deadline:
            break
        if args.examples is not None and fuzzer.examples >= args.examples:
            break
        name = names[rounds % len(names)]
        rounds += 1
        if not fuzzer.run_round(name, rng):
            break
        elapsed = time.monotonic() - start
        print(
            f"\r{fuzzer.examples} examples, {rounds} rounds, {elapsed:.0f} s",
            end="",
            file=sys.stderr,
            flush=True,
        )
    elapsed = time.monotonic() - start
    summary = {
        "examples": fuzzer.examples,
        "rounds": rounds,
        "seconds": round(elapsed, 1),
        "failures": fuzzer.failures,
        "strategies": names,
    }
    print(file=sys.stderr)
    print(json.dumps(summary))
    return 1 if fuzzer.failures else 0


if __name__ == "__main__":
    sys.exit(main())
