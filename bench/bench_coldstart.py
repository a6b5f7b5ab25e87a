"""Benchmark: CLI cold start, whole process, against datamodel-codegen and json2ts.

Run by hand from the repository root (needs `npm ci` for json2ts and the test extra for
datamodel-codegen):

    .venv/bin/python bench/bench_coldstart.py [--runs N]

Commands, each a fresh process, interleaved run by run, median and minimum wall time and
median CPU time (user + system, all of the child's threads) of `--runs` after one warm-up
run each (so every command finds its files in the page cache):

- `codegen sdk schemas --lang python` and `--lang typescript` (the bundled catalogs);
- `datamodel-codegen` with TypedDict output, and `json2ts`, on the same tools: the input
  schemas of the bundled tools gathered into one JSON Schema (each tool's schema under
  `$defs`, one property per tool; tools whose schema has a `$ref` left out), since
  neither reads a tool catalog;
- a one-tool catalog (the first tool of `schemas/nested_objects.json`) through `codegen sdk`,
  against `json2ts --no-format` on that tool's input schema: the smallest job, where
  start-up is everything;
- the floor: `python -c pass` and `node -e 0`, what any Python or Node CLI pays first.

Targets: `codegen sdk` on the bundled schemas under 150 ms; on the one-tool catalog at most
0.5x `json2ts --no-format` (medians).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def combined_schema(directory: Path) -> Path:
    """Every bundled tool's input schema as one JSON Schema document."""
    sys.path.insert(0, str(ROOT))
    from codegen.load.sources import load_sources

    # Left out: the BFCL dialect (not JSON Schema), schemas with a `$ref`, whose pointers
    # would no longer resolve once the schema sits under `$defs`, and schemas declaring
    # their own draft (draft-03's boolean `required` is not valid inside a 2020-12 one).
    tools = [
        tool
        for tool in load_sources([str(ROOT / "schemas")]).tools
        if tool.dialect != "bfcl"
        and '"$ref"' not in json.dumps(tool.input_schema)
        and '"$schema"' not in json.dumps(tool.input_schema)
    ]
    schema = {
        "type": "object",
        "$defs": {f"tool{index}": tool.input_schema for index, tool in enumerate(tools)},
        "properties": {
            f"tool{index}": {"$ref": f"#/$defs/tool{index}"} for index in range(len(tools))
        },
    }
    path = directory / "tools.schema.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    return path


def one_tool(directory: Path) -> tuple[Path, Path]:
    """A one-tool catalog and its tool's input schema alone."""
    document = json.loads((ROOT / "schemas" / "nested_objects.json").read_text(encoding="utf-8"))
    tool = document["tools"][0]
    catalog = directory / "one.json"
    catalog.write_text(json.dumps({"tools": [tool]}), encoding="utf-8")
    schema = directory / "one.schema.json"
    schema.write_text(json.dumps(tool["inputSchema"]), encoding="utf-8")
    return catalog, schema


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    # A wheel install compiles the package's bytecode; an editable checkout may have none
    # (or run with PYTHONDONTWRITEBYTECODE), which would time the compiler, not the CLI.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "codegen")], check=True)
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        schema = combined_schema(directory)
        single, single_schema = one_tool(directory)
        commands = {
            "codegen sdk --lang python": [
                str(BIN / "codegen"),
                "sdk",
                "schemas",
                "--lang",
                "python",
                "-q",
                "-o",
                str(directory / "a.py"),
            ],
            "codegen sdk --lang typescript": [
                str(BIN / "codegen"),
                "sdk",
                "schemas",
                "--lang",
                "typescript",
                "-q",
                "-o",
                str(directory / "a.d.ts"),
            ],
            "datamodel-codegen (TypedDict)": [
                str(BIN / "datamodel-codegen"),
                "--input",
                str(schema),
                "--input-file-type",
                "jsonschema",
                "--output-model-type",
                "typing.TypedDict",
                "--output",
                str(directory / "b.py"),
                "--disable-timestamp",
            ],
            "json2ts": [
                str(ROOT / "node_modules" / ".bin" / "json2ts"),
                "-i",
                str(schema),
                "-o",
                str(directory / "b.d.ts"),
            ],
            "codegen sdk one tool --lang python": [
                str(BIN / "codegen"),
                "sdk",
                str(single),
                "--lang",
                "python",
                "-q",
                "-o",
                str(directory / "one.py"),
            ],
            "codegen sdk one tool --lang typescript": [
                str(BIN / "codegen"),
                "sdk",
                str(single),
                "--lang",
                "typescript",
                "-q",
                "-o",
                str(directory / "one.d.ts"),
            ],
            "json2ts --no-format, one tool": [
                str(ROOT / "node_modules" / ".bin" / "json2ts"),
                "--no-format",
                "-i",
                str(single_schema),
                "-o",
                str(directory / "one-jstt.d.ts"),
            ],
            "floor: python -c pass": [sys.executable, "-c", "pass"],
            "floor: node -e 0": ["node", "-e", "0"],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for warm_up in (True, *([False] * args.runs)):
            for name, command in commands.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
                seconds = time.perf_counter() - start
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if not warm_up:
                    times[name].append(seconds)
                    used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                    cpu[name].append(used)
    median = {name: statistics.median(values) * 1000 for name, values in times.items()}
    fastest = {name: min(values) * 1000 for name, values in times.items()}
    cpu_median = {name: statistics.median(values) * 1000 for name, values in cpu.items()}
    ours = median["codegen sdk --lang python"]
    print("| command | median ms | min ms | CPU median ms | vs codegen sdk --lang python |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, value in median.items():
        print(
            f"| {name} | {value:.0f} | {fastest[name]:.0f} | {cpu_median[name]:.0f} "
            f"| {value / ours:.1f}x |"
        )
    print(f"\ntarget < 150 ms: {'met' if ours < 150 else 'MISSED'} ({ours:.0f} ms)")
    peer = "json2ts --no-format, one tool"
    for language in ("python", "typescript"):
        mine = f"codegen sdk one tool --lang {language}"
        ratios = [
            ("median wall", median[mine] / median[peer]),
            ("min wall", fastest[mine] / fastest[peer]),
            ("median CPU", cpu_median[mine] / cpu_median[peer]),
        ]
        shown = ", ".join(f"{ratio:.2f}x ({what})" for what, ratio in ratios)
        verdict = "met" if ratios[0][1] <= 0.5 else "MISSED"
        print(f"one tool, {language}: {shown} json2ts --no-format; target <= 0.5x: {verdict}")


if __name__ == "__main__":
    main()
