"""The check before a run, by the numbers: which Python checker, and what it adds to a run.

Catalogs of 30, 400 and 3,000 tools (the first tools of ToolUniverse, names prefixed by
server as `codegen serve` prefixes them). For each, the declarations are the Python section's
SDK (what `describe` and the full section show) and the programs are the suites of
`tests/support/program_suites.py` made from the same catalog (a natural program per tool, and wrong
programs of every kind). Candidates:

- `ty-server`: codegen's checker (`checks/python_checker.py`): `ty server` kept warm in the
  sandbox, the program sent as an open document;
- `ty-cli`: `ty check` started for every program (nothing kept);
- `pyright-cli`: `pyright --outputjson` for every program (its language server would keep
  the stub, but its cold CLI already says where it stands);
- `dmypy`: mypy's daemon, started once per catalog (`dmypy run`), then `dmypy check` per
  program.

For each: the cold start (the checker made and the stub read), the added latency per run
(p50, p95 over the programs, warm), and for `ty-server` the false refusals (natural programs
refused) and the catches (wrong programs refused on the mistake's line). The other
candidates' per-run figures come from a sample of `--sample` programs.

Run: `python bench/bench_program_check.py [--sizes 30,400,3000] [--sample 20]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from catalogs import tooluniverse_catalog

from codegen.codemode.checkers.python_checker import PythonChecker, ty_program
from codegen.codemode.checks.outcome import CheckLimits
from codegen.codemode.checks.python_program import checkable_program
from codegen.engine import compile_definitions
from codegen.render.sections.python import render_python_section_sdk
from support.program_suites import natural_programs, wrong_programs


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def milliseconds(values: list[float]) -> str:
    return f"{percentile(values, 0.5) * 1000:.1f} / {percentile(values, 0.95) * 1000:.1f}"


def ty_server(declarations: str, natural: list[str], wrong: list[tuple[str, int]]) -> dict:
    started = time.perf_counter()
    checker = PythonChecker(declarations, CheckLimits())
    checker.warm()
    cold = time.perf_counter() - started
    times: list[float] = []
    refused = 0
    for program in natural:
        outcome = checker.check_now(program)
        times.append(outcome.elapsed)
        refused += bool(outcome.refusing)
    caught = 0
    for program, line in wrong:
        outcome = checker.check_now(program)
        times.append(outcome.elapsed)
        caught += any(d.line == line for d in outcome.refusing)
    checker.close()
    return {"cold": cold, "times": times, "refused": refused, "caught": caught}


def one_shot(folder: Path, command: list[str], programs: list[str], stub_text: str) -> dict:
    """A checker started per program, in `folder` (which holds `sdk.pyi`)."""
    from codegen.codemode.checks.python_stub import checkable_stub

    stub = checkable_stub(stub_text)
    times = []
    for program in programs:
        made = checkable_program(program, stub)
        assert made is not None
        (folder / "program.py").write_text(made.text)
        started = time.perf_counter()
        subprocess.run(command, cwd=folder, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
    return {"cold": times[0], "times": times[1:] or times}


def dmypy(folder: Path, programs: list[str], stub_text: str) -> dict:
    from codegen.codemode.checks.python_stub import checkable_stub

    stub = checkable_stub(stub_text)
    base = [sys.executable, "-m", "mypy.dmypy", "--status-file", str(folder / ".dmypy.json")]
    made = checkable_program(programs[0], stub)
    assert made is not None
    (folder / "program.py").write_text(made.text)
    started = time.perf_counter()
    subprocess.run(
        [*base, "run", "--", "program.py", "--follow-imports=silent"],
        cwd=folder,
        capture_output=True,
        check=False,
    )
    cold = time.perf_counter() - started
    times = []
    try:
        for program in programs[1:]:
            made = checkable_program(program, stub)
            assert made is not None
            (folder / "program.py").write_text(made.text)
            started = time.perf_counter()
            subprocess.run([*base, "check", "program.py"], cwd=folder, capture_output=True)
            times.append(time.perf_counter() - started)
    finally:
        subprocess.run([*base, "stop"], cwd=folder, capture_output=True, check=False)
    return {"cold": cold, "times": times}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="30,400,3000")
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--skip", default="", help="candidates to leave out, comma-separated")
    options = parser.parse_args()
    skip = set(filter(None, options.skip.split(",")))
    tools = tooluniverse_catalog().tools
    print(
        "| tools | checker | cold start s | added per run ms p50 / p95 | false refusals | catches |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    for size in map(int, options.sizes.split(",")):
        catalog = compile_definitions(tools[:size]).catalog
        assert catalog is not None
        declarations = render_python_section_sdk(catalog)
        natural = [p.python for p in natural_programs(catalog) if p.python]
        wrong = [(p.python, p.line) for p in wrong_programs(catalog) if p.python]
        measured = ty_server(declarations, natural, wrong)
        row = (
            f"| {size} | ty-server | {measured['cold']:.2f} | {milliseconds(measured['times'])} | "
            f"{measured['refused']} of {len(natural)} | {measured['caught']} of {len(wrong)} |"
        )
        print(row, flush=True)
        sample = natural[: options.sample // 2] + [w for w, _ in wrong][: options.sample // 2]
        folder = Path(tempfile.mkdtemp(prefix="codegen-bench-check-"))
        try:
            from codegen.codemode.checks.python_stub import checkable_stub

            (folder / "sdk.pyi").write_text(checkable_stub(declarations).text)
            pyright = shutil.which("pyright") or "pyright"
            candidates = {
                "ty-cli": (one_shot, [ty_program(), "check", "program.py"]),
                "pyright-cli": (one_shot, [pyright, "--outputjson", "program.py"]),
                "dmypy": (dmypy, None),
            }
            for name, (_, command) in candidates.items():
                if name in skip:
                    continue
                if command is None:
                    found = dmypy(folder, sample, declarations)
                else:
                    found = one_shot(folder, command, sample, declarations)
                print(
                    f"| {size} | {name} | {found['cold']:.2f} | {milliseconds(found['times'])} "
                    "| | |",
                    flush=True,
                )
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\n{os.cpu_count()} cores; {statistics.__name__} percentiles over every program")


if __name__ == "__main__":
    main()
