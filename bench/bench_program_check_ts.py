"""The check before a run, by the numbers, for TypeScript: which checker, and what it adds to
a run.

Catalogs of 30, 400 and 3,000 tools (the first tools of ToolUniverse, names prefixed by
server as `codegen serve` prefixes them). For each, the declarations are the TypeScript
section's SDK (what `describe` and the full section show), made checkable
(`checks/typescript_declarations.py`: 0.02, 0.44 and 3.9 MB), and the programs are the
suites of `tests/support/program_suites.py` made from the same catalog (a natural program per tool,
and wrong programs of every kind), at most `--limit` of each, spread over the catalog.
Candidates:

- `ts7-api`: codegen's checker (`checks/typescript_checker.py`) on TypeScript 7: its native
  `tsc --api` kept warm, driven by the package's own client in a Node process, in the
  default sandbox; each check is a snapshot in which only the program changed;
- `ts5-service`: codegen's checker on TypeScript 5.9: its compiler API in a Node process
  kept warm (a program made per check from the source files of the last: the declarations
  and libraries are parsed once), in the default sandbox;
- `ts7-lsp`: TypeScript 7's `tsc --lsp --stdio` kept warm, the program an open document
  changed per check, diagnostics pulled (what a checker built on the language server alone
  would pay: no syntax tree, so no way to tell a certain mistake from a possible one);
- `ts7-cli`: `tsc --noEmit -p` started for every program (nothing kept: the declarations
  parsed every time);
- `ts5-cli`: TypeScript 5's `tsc` (in Node) started for every program.

The other candidates run without a sandbox, so their figures are lower bounds. For each:
the cold start (the checker made, the declarations read, a first program checked), the
added latency per run (p50, p95 over the programs, warm; the cold ones over a sample of
`--sample` programs), the memory it holds (the resident set of its processes after the run,
MB; for the cold ones the largest of one run), and for codegen's checker the false
refusals (natural programs refused) and the catches (wrong programs refused on the
mistake's line, for the mistake's kind).

Run: `python bench/bench_program_check_ts.py [--sizes 30,400,3000] [--limit 500]
[--sample 12] [--skip ts5-cli,...]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from catalogs import ROOT, tooluniverse_catalog

from codegen.codemode.checkers.lsp import LanguageServer
from codegen.codemode.checkers.typescript_checker import TypeScriptChecker
from codegen.codemode.checkers.typescript_server import find_compiler
from codegen.codemode.checks.outcome import CheckLimits
from codegen.codemode.checks.typescript_declarations import checkable_declarations
from codegen.codemode.sandbox.launchers import children
from codegen.engine import compile_definitions
from codegen.render.sections.typescript import render_typescript_section_sdk
from support.program_suites import SuiteProgram, natural_programs, wrong_programs

TYPESCRIPT5 = str(ROOT / "node_modules" / "typescript")
TYPESCRIPT7 = str(ROOT / "node_modules" / "typescript7")
HEAD = '(async function () {"use strict";\n'
TAIL = "\n})"
CONFIG = {
    "compilerOptions": {
        "strict": True,
        "noImplicitAny": False,
        "noImplicitThis": False,
        "useUnknownInCatchVariables": False,
        "noEmit": True,
        "skipLibCheck": True,
        "types": [],
        "target": "es2022",
        "lib": ["esnext"],
    },
    "files": ["declarations.d.ts", "program.ts"],
}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def milliseconds(values: list[float]) -> str:
    return f"{percentile(values, 0.5) * 1000:.1f} / {percentile(values, 0.95) * 1000:.1f}"


def spread(items: list[Any], limit: int) -> list[Any]:
    """At most `limit` of `items`, evenly spaced (the suites follow the catalog's order)."""
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(index * step)] for index in range(limit)]


def resident_mb(root: int) -> float:
    """The resident set of `root` and its descendants, MB."""
    total = 0
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
        pending.extend(children(pid))
    return total / 1024


def ours(
    declarations: str, package: str, natural: list[SuiteProgram], wrong: list[SuiteProgram]
) -> dict[str, Any]:
    started = time.perf_counter()
    checker = TypeScriptChecker(
        declarations, CheckLimits(timeout=30.0, start_timeout=120.0), find_compiler(None, package)
    )
    checker.warm()
    cold = time.perf_counter() - started
    times: list[float] = []
    refused = caught = 0
    try:
        for program in natural:
            assert program.typescript is not None
            outcome = checker.check_now(program.typescript)
            assert outcome.status == "checked", outcome.note
            times.append(outcome.elapsed)
            refused += bool(outcome.refusing)
        for program in wrong:
            assert program.typescript is not None
            outcome = checker.check_now(program.typescript)
            assert outcome.status == "checked", outcome.note
            times.append(outcome.elapsed)
            on_line = {d.kind for d in outcome.refusing if d.line == program.line}
            caught += program.kind in on_line and {d.line for d in outcome.refusing} == {
                program.line
            }
        server = checker._server
        memory = resident_mb(server.process.pid) if server is not None else 0.0
    finally:
        checker.close()
    return {"cold": cold, "times": times, "refused": refused, "caught": caught, "memory": memory}


def folder_for(declarations: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="codegen-bench-tscheck-"))
    (folder / "declarations.d.ts").write_text(declarations, encoding="utf-8")
    (folder / "tsconfig.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    (folder / "program.ts").write_text(HEAD + "return 1" + TAIL, encoding="utf-8")
    return folder


def one_shot(folder: Path, command: list[str], programs: list[str]) -> dict[str, Any]:
    """A checker started per program, in `folder`."""
    times: list[float] = []
    largest = 0
    for program in programs:
        (folder / "program.ts").write_text(HEAD + program + TAIL, encoding="utf-8")
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=folder, stdout=subprocess.DEVNULL)
        _, _, usage = os.wait4(process.pid, 0)
        process.returncode = 0
        times.append(time.perf_counter() - started)
        largest = max(largest, usage.ru_maxrss)
    return {"cold": times[0], "times": times[1:] or times, "memory": largest / 1024}


def lsp(folder: Path, tsc: str, programs: list[str]) -> dict[str, Any]:
    """`tsc --lsp --stdio` kept warm, the program an open document changed per check."""
    started = time.perf_counter()
    server = LanguageServer([tsc, "--lsp", "--stdio"], {"PATH": os.defpath}, str(folder))
    uri = (folder / "program.ts").as_uri()
    try:
        server.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": folder.as_uri(),
                "workspaceFolders": [{"uri": folder.as_uri(), "name": "check"}],
                "capabilities": {"textDocument": {"diagnostic": {"dynamicRegistration": False}}},
            },
            time.monotonic() + 120,
        )
        server.notify("initialized", {})
        opened = {
            "uri": uri,
            "languageId": "typescript",
            "version": 1,
            "text": HEAD + "return 1" + TAIL,
        }
        server.notify("textDocument/didOpen", {"textDocument": opened})
        server.request(
            "textDocument/diagnostic", {"textDocument": {"uri": uri}}, time.monotonic() + 120
        )
        cold = time.perf_counter() - started
        times = []
        for version, program in enumerate(programs, start=2):
            started = time.perf_counter()
            server.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": HEAD + program + TAIL}],
                },
            )
            server.request(
                "textDocument/diagnostic", {"textDocument": {"uri": uri}}, time.monotonic() + 60
            )
            times.append(time.perf_counter() - started)
        memory = resident_mb(server.process.pid)
    finally:
        server.stop()
    return {"cold": cold, "times": times, "memory": memory}


def row(size: int, name: str, found: dict[str, Any], natural: int, wrong: int) -> str:
    rates = (
        f"{found['refused']} of {natural} | {found['caught']} of {wrong}"
        if "refused" in found
        else " | "
    )
    return (
        f"| {size} | {name} | {found['cold']:.2f} | {milliseconds(found['times'])} | "
        f"{found['memory']:.0f} | {rates} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="30,400,3000")
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--sample", type=int, default=12)
    parser.add_argument("--skip", default="", help="candidates to leave out, comma-separated")
    options = parser.parse_args()
    skip = set(filter(None, options.skip.split(",")))
    tools = tooluniverse_catalog().tools
    tsc7 = find_compiler(None, TYPESCRIPT7).package.tsc
    assert tsc7 is not None
    node = find_compiler(None, TYPESCRIPT5).node
    print(
        "| tools | checker | cold start s | added per run ms p50 / p95 | memory MB "
        "| false refusals | catches |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for size in map(int, options.sizes.split(",")):
        catalog = compile_definitions(tools[:size]).catalog
        assert catalog is not None
        declarations = render_typescript_section_sdk(catalog)
        natural = spread([p for p in natural_programs(catalog) if p.typescript], options.limit)
        wrong = spread([p for p in wrong_programs(catalog) if p.typescript], options.limit)
        for name, package in (("ts7-api", TYPESCRIPT7), ("ts5-service", TYPESCRIPT5)):
            if name not in skip:
                found = ours(declarations, package, natural, wrong)
                print(row(size, name, found, len(natural), len(wrong)), flush=True)
        half = max(1, options.sample // 2)
        sample = [str(p.typescript) for p in spread(natural, half) + spread(wrong, half)]
        folder = folder_for(checkable_declarations(declarations).text)
        try:
            checked = [str(p.typescript) for p in natural + wrong]
            tsc5 = [node, str(Path(TYPESCRIPT5) / "lib" / "tsc.js"), "-p", "."]
            others: list[tuple[str, Callable[..., dict[str, Any]], tuple[Any, ...]]] = [
                ("ts7-lsp", lsp, (folder, tsc7, checked)),
                ("ts7-cli", one_shot, (folder, [tsc7, "-p", "."], sample)),
                ("ts5-cli", one_shot, (folder, tsc5, sample)),
            ]
            for name, measure, arguments in others:
                if name not in skip:
                    found = measure(*arguments)
                    print(row(size, name, found, len(natural), len(wrong)), flush=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\n{os.cpu_count()} cores; percentiles over every program checked")


if __name__ == "__main__":
    main()
