"""Benchmark: the Python SDK renderer against datamodel-code-generator (DCG), per tool.

Run by hand from the repository root:

    .venv/bin/python bench/bench_python.py [--rounds N]

Over every tool of the vendored corpus (and `CODEGEN_EXTRA_CORPUS`), in one process and one
run, rounds interleaved so both sides see the same machine state:

- ours, render only: `render_python_sdk` per corpus file's catalog (the IR already built);
- ours, normalize + build + render, without meta-schema validation (DCG checks none);
- ours, end to end: validate + normalize + build + render from loaded definitions;
- DCG `generate()` with TypedDict output, on each tool's input and output schema (our module
  declares both), with no formatter (its fastest mode) and with its default black+isort.

Each figure is the median round divided by the number of tools. The target is at least 20x
faster per tool than DCG's TypedDict generation.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))


from codegen.engine import compile_definitions  # noqa: E402
from codegen.load.sources import load_sources  # noqa: E402
from codegen.render.python.sdk import render_python_sdk  # noqa: E402
from codegen.validate.meta_schema import compiled_check  # noqa: E402
from conftest import CORPUS_FILES  # noqa: E402

TARGET = 20.0


def dcg(schemas: list[Any], formatted: bool) -> None:
    from datamodel_code_generator import DataModelType, InputFileType, generate

    options: dict[str, Any] = {} if formatted else {"formatters": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for schema in schemas:
            generate(
                schema,
                input_file_type=InputFileType.JsonSchema,
                output_model_type=DataModelType.TypingTypedDict,
                class_name="Root",
                disable_timestamp=True,
                **options,
            )


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--formatted-sample",
        type=int,
        default=40,
        help="schemas given to DCG with black+isort (slow), per round",
    )
    args = parser.parse_args()

    definitions = [load_sources([str(path)]).tools for path in CORPUS_FILES]
    catalogs = [compile_definitions(tools).catalog for tools in definitions]
    schemas: list[Any] = []
    for tools in definitions:
        for tool in tools:
            schemas.append(tool.input_schema)
            if tool.output_schema is not None:
                schemas.append(tool.output_schema)
    tools_count = sum(len(tools) for tools in definitions)
    sample = schemas[: args.formatted_sample]
    compiled_check("2020-12")  # compile the meta-schemas once, as a long-running process does
    compiled_check("draft-07")

    results: dict[str, list[float]] = {
        "render": [],
        "pipeline": [],
        "dcg": [],
        "dcg_black": [],
    }
    dcg(schemas[:5], formatted=False)  # warm-up imports
    for _ in range(args.rounds):
        results["render"].append(
            timed(lambda: [render_python_sdk(c) for c in catalogs if c is not None]) / tools_count
        )
        results["pipeline"].append(
            timed(
                lambda: [
                    render_python_sdk(compile_definitions(tools).catalog)  # type: ignore[arg-type]
                    for tools in definitions
                ]
            )
            / tools_count
        )
        results["dcg"].append(timed(lambda: dcg(schemas, formatted=False)) / tools_count)
        per_schema = timed(lambda: dcg(sample, formatted=True)) / len(sample)
        results["dcg_black"].append(per_schema * len(schemas) / tools_count)

    median = {name: statistics.median(values) * 1e6 for name, values in results.items()}
    print(f"{tools_count} tools, {len(schemas)} schemas, {args.rounds} rounds (median)\n")
    print(f"{'':44} {'us/tool':>10} {'vs DCG':>8} {'vs DCG+black':>13}")
    for label, key in (
        ("ours: render only", "render"),
        ("ours: validate+normalize+build+render", "pipeline"),
        ("DCG generate() TypedDict, no formatter", "dcg"),
        ("DCG generate() TypedDict, black+isort", "dcg_black"),
    ):
        print(
            f"{label:44} {median[key]:10.1f} {median['dcg'] / median[key]:7.1f}x "
            f"{median['dcg_black'] / median[key]:12.1f}x"
        )
    ratio = median["dcg"] / median["pipeline"]
    verdict = "meets" if ratio >= TARGET else "misses"
    print(
        f"\nend to end: {ratio:.1f}x faster than DCG per tool ({verdict} the {TARGET:.0f}x target)"
    )


if __name__ == "__main__":
    main()
