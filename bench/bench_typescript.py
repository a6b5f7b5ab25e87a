"""Benchmark: the TypeScript renderer against json-schema-to-typescript (JSTT), per tool.

Run by hand from the repository root (needs `npm ci`):

    .venv/bin/python bench/bench_typescript.py [--rounds N]

Over every tool of the vendored corpus it measures, in one run:

- `render_typescript_sdk` alone, per corpus file's catalog (the IR already built);
- normalize + build + render from loaded definitions, without meta-schema validation (the
  work JSTT's `compile()` does: it checks no meta-schema);
- validate + normalize + build + render from loaded definitions (loading excluded);
- JSTT `compile()` with `format: false`, and with its default prettier formatting, in one
  long-lived Node child (`tests/node/jstt_bench.js`) that times only the `compile()` calls;
  each tool costs one call for its input schema plus one for its output schema, because our
  file declares both.

Every figure is the best round (the first is a warm-up; the renderer's caches are emptied
before each round), divided by the number of tools.
The target is at least 5x faster per tool than JSTT's unformatted `compile()`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from common import build_without_validation  # noqa: E402

from codegen import ir  # noqa: E402
from codegen.engine import compile_definitions  # noqa: E402
from codegen.load.sources import load_sources  # noqa: E402
from codegen.render.typescript.sdk import render_typescript_sdk  # noqa: E402
from conftest import CORPUS_FILES  # noqa: E402

TARGET = 5.0


def best_seconds(work: Callable[[], object], rounds: int) -> float:
    """The fastest of `rounds` timed runs after one warm-up run, each with the renderer's
    caches emptied first (one CLI run renders cold)."""
    work()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def corpus() -> tuple[list[Any], list[ir.Catalog], list[Any]]:
    """Loaded definitions per file, their catalogs, and every schema JSTT is given."""
    definitions = [load_sources([str(path)]).tools for path in CORPUS_FILES]
    catalogs = []
    schemas: list[Any] = []
    for tools in definitions:
        compiled = compile_definitions(tools)
        assert compiled.catalog is not None, compiled.errors
        catalogs.append(compiled.catalog)
        for tool in compiled.catalog.tools:
            schemas.append(json.loads(tool.input_schema))
            if tool.output_schema is not None:
                schemas.append(json.loads(tool.output_schema))
    return definitions, catalogs, schemas


def jstt_seconds(schemas: list[Any], rounds: int) -> dict[str, float]:
    """Best round of JSTT over all schemas, unformatted and formatted, from one Node child."""
    worker = subprocess.Popen(
        ["node", str(ROOT / "tests" / "node" / "jstt_bench.js")],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    assert worker.stdin is not None and worker.stdout is not None
    results = {}
    try:
        for label, fmt in (("unformatted", False), ("prettier", True)):
            request = {"schemas": schemas, "format": fmt, "rounds": rounds + 1}
            worker.stdin.write(json.dumps(request) + "\n")
            worker.stdin.flush()
            answer = json.loads(worker.stdout.readline())
            results[label] = min(answer["rounds_ns"][1:]) / 1e9
    finally:
        worker.stdin.close()
        worker.wait(timeout=60)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (best is kept)")
    options = parser.parse_args()

    definitions, catalogs, schemas = corpus()
    tools = sum(len(catalog.tools) for catalog in catalogs)

    def render_only() -> None:
        for catalog in catalogs:
            render_typescript_sdk(catalog)

    def build_and_render() -> None:
        for loaded in definitions:
            compiled = compile_definitions(loaded)
            assert compiled.catalog is not None
            render_typescript_sdk(compiled.catalog)

    def normalize_build_render() -> None:
        for loaded in definitions:
            render_typescript_sdk(build_without_validation(loaded))

    ours = {
        "render only": best_seconds(render_only, options.rounds),
        "normalize+build+render": best_seconds(normalize_build_render, options.rounds),
        "validate+normalize+build+render": best_seconds(build_and_render, options.rounds),
    }
    theirs = jstt_seconds(schemas, options.rounds)
    jstt_plain = theirs["unformatted"] / tools

    print(f"{tools} tools from {len(CORPUS_FILES)} corpus files ({len(schemas)} JSTT schemas)")
    print()
    print(f"{'':40} {'us/tool':>9} {'vs JSTT':>9} {'vs JSTT+prettier':>17}")
    for label, seconds in ours.items():
        per_tool = seconds / tools
        print(
            f"{'codegen ' + label:40} {per_tool * 1e6:9.1f} "
            f"{jstt_plain / per_tool:8.1f}x {theirs['prettier'] / tools / per_tool:16.1f}x"
        )
    for label, seconds in theirs.items():
        print(f"{'JSTT compile() ' + label:40} {seconds / tools * 1e6:9.1f}")
    print()
    ratio = jstt_plain / (ours["render only"] / tools)
    verdict = "meets" if ratio >= TARGET else "MISSES"
    print(
        f"render only is {ratio:.1f}x JSTT unformatted per tool: {verdict} the {TARGET:g}x target"
    )


if __name__ == "__main__":
    main()
