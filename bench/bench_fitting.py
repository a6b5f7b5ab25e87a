"""Benchmark: cutting run results to a token budget, the upper bound alone against the
calibrated exact count, in `o200k_base` tokens, offline.

Run by hand from the repository root (the `bench` extra installs tiktoken; the reference
vocabulary is rebuilt from the npm package, see `bench/tokens.py`):

    .venv/bin/python bench/bench_fitting.py [--runs 5]

For each kind of result (records as JSON, English, logs with a JSON result, source code, CJK
text, base64), both ways of fitting at the default budget: how many real tokens the model
gets (the dearer of the run's two texts, as a fraction of the budget) and the wall time of
one fit (median of `--runs`). Then each counter on the same texts, per megabyte: the bound,
the package's estimate and tiktoken's own `o200k_base` (the reference), and the estimate's
worst ratio to the reference on pieces of each kind (1.00: the same count).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from tokens import o200k_counter  # noqa: E402

from codegen.codemode.presentation.fitting import (  # noqa: E402
    DEFAULT_RESULT_TOKENS,
    bound,
    estimate_tokens,
    fit_run_output,
    o200k,
    run_text,
)


def records(count: int, rnd: random.Random) -> list[dict[str, Any]]:
    words = [
        "the",
        "quick",
        "brown",
        "fox",
        "jumps",
        "over",
        "a",
        "lazy",
        "dog",
        "while",
        "seven",
        "wizards",
        "quietly",
        "box",
    ]
    return [
        {
            "id": index,
            "name": f"item-{index}",
            "description": " ".join(rnd.choice(words) for _ in range(rnd.randint(5, 40))),
            "tags": rnd.sample(words, 3),
            "score": round(rnd.random(), 4),
        }
        for index in range(count)
    ]


def runs() -> dict[str, dict[str, Any]]:
    rnd = random.Random(7)
    code = "\n".join(
        path.read_text(encoding="utf-8") for path in sorted((ROOT / "codegen").rglob("*.py"))
    )
    english = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    return {
        "records": {"logs": [], "result": records(4000, rnd)},
        "english": {"logs": [], "result": english * 3},
        "logs + JSON": {
            "logs": [f"processed {i}: ok ({rnd.random():.3f} s)" for i in range(8000)],
            "result": {"items": records(3000, rnd)},
        },
        "code": {"logs": [], "result": {"source": code}},
        "CJK": {"logs": [], "result": "人人生而自由，在尊严和权利上一律平等。" * 8000},
        "base64": {
            "logs": [],
            "result": {"blob": __import__("base64").b64encode(rnd.randbytes(400_000)).decode()},
        },
    }


def median_time(function: Callable[[], Any], count: int) -> float:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    real = o200k_counter()
    assert o200k.counter() is not None
    budget = DEFAULT_RESULT_TOKENS

    def kept(value: dict[str, Any]) -> int:
        return max(real(json.dumps(value)), real(run_text(value)))

    print(f"## fitting to {budget:,} tokens: real tokens kept (share of budget), time per fit\n")
    print("| result | real tokens | bound only | time | calibrated | time |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, value in runs().items():
        total = kept(value)
        loaded = o200k._loaded[:]
        o200k._loaded[:] = [None]
        try:
            plain = fit_run_output(value, budget)
            plain_time = median_time(lambda value=value: fit_run_output(value, budget), args.runs)
        finally:
            o200k._loaded[:] = loaded
        fitted = fit_run_output(value, budget)
        fitted_time = median_time(lambda value=value: fit_run_output(value, budget), args.runs)
        print(
            f"| {name} | {total:,} | {kept(plain.value) / budget:.2f} | {plain_time * 1000:.0f} ms"
            f" | {kept(fitted.value) / budget:.2f} | {fitted_time * 1000:.0f} ms |"
        )

    print("\n## counters on the same texts\n")
    print(
        "| text | MB | bound MB/s | estimate MB/s | tiktoken MB/s | bound / real | estimate / real, worst piece |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, value in runs().items():
        text = run_text(value)
        size = len(text.encode()) / 1e6
        counted = real(text)
        pieces = [text[i : i + 2000] for i in range(0, min(len(text), 400_000), 2000)]
        worst = max(estimate_tokens(piece) / max(real(piece), 1) for piece in pieces)
        rates = [
            size / median_time(lambda text=text, f=f: f(text), args.runs)
            for f in (bound.cost, estimate_tokens, real)
        ]
        print(
            f"| {name} | {size:.2f} | {rates[0]:.0f} | {rates[1]:.0f} | {rates[2]:.0f} |"
            f" {bound.cost(text) / counted:.2f} | {worst:.3f} |"
        )


if __name__ == "__main__":
    main()
