"""Hostile sizes: a 100,000-level nested schema (through properties, items, anyOf and a
`$ref` chain), a 100,000-arm union, a 100,000-arm `allOf`, a 100,000-member enum, a 10 MB
description and a 50,000-tool catalog each render, or are rejected with a diagnostic, in
bounded time and memory, with no `RecursionError`; and the Python parser's limits are met by
degrading with a warning, never by emitting code that does not parse.

Each large case runs in a fresh interpreter under an address-space cap and a CPU-time cap, so
a blow-up fails one test instead of the machine. Time is the child's own CPU time, which a
busy machine does not inflate, never the wall clock. The bounds are generous on purpose:
they catch a crash or super-linear growth, not a slow machine. `bench/bench_growth.py`
measures the growth curve.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codegen.engine import compile_value
from codegen.ir_build.limits import ARMS_LIMIT, EXPRESSION_LIMIT, LITERAL_LIMIT, UNION_LIMIT
from codegen.load.json_text import MAX_NESTING
from codegen.render.python.sdk import render_python_sdk
from codegen.render.typescript.sdk import render_typescript_sdk
from conftest import ROOT
from support import hostile
from support.tsc import check_declarations

# Hostile sizes in fresh processes, and three type checkers on the widest outputs.
pytestmark = pytest.mark.slow

CPU_SECONDS = 60.0
"""Bound on one case's compile and render, in CPU seconds of the child (the 50,000-tool
catalog needs about 5)."""
CPU_LIMIT = 600
"""RLIMIT_CPU of a case's process, start-up and parse checks included: a runaway is killed
by the kernel after this much CPU time, however busy the machine is."""
HANG_GUARD = 3600.0
"""Wall-clock seconds after which a case that stopped using CPU (blocked, not slow) is
killed, so the suite cannot hang; it bounds no speed."""
PEAK_MB = 1536
"""Bound on one case's peak resident memory."""
ADDRESS_SPACE = 3 * 1024**3
"""Hard cap on a case's address space, so a runaway fails fast instead of swapping."""

LIMITED = (
    f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE},) * 2)\n"
    f"resource.setrlimit(resource.RLIMIT_CPU, ({CPU_LIMIT}, {CPU_LIMIT + 5}))\n"
    "import atexit, os\n"
    "def _peak():\n"
    "    with open('/proc/self/status') as status:\n"
    "        kb = next(line.split()[1] for line in status if line.startswith('VmHWM:'))\n"
    "    with open(os.environ['CODEGEN_PEAK_FILE'], 'w') as out:\n"
    "        out.write(kb)\n"
    "atexit.register(_peak)\n"
)
"""Run before a case: the address-space and CPU caps, and at exit the process's own peak resident
memory (`VmHWM`, which starts afresh at `exec`; `wait4`'s figure would also count the
parent's memory, copied into the child when it forked)."""

CHILD = """
import ast, json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from support import hostile
from codegen.engine import compile_value
from codegen.render.python.sdk import render_python_sdk
from codegen.render.typescript.sdk import render_typescript_sdk

value = hostile.shape(sys.argv[2], int(sys.argv[3]))
start = time.process_time()
compiled = compile_value(value, "hostile.json")
python = typescript = ""
if compiled.catalog is not None:
    python = render_python_sdk(compiled.catalog)
    typescript = render_typescript_sdk(compiled.catalog)
cpu_seconds = time.process_time() - start
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
report = {
    "cpu_seconds": cpu_seconds,
    "peak_mb": peak_mb,
    "errors": sorted({d.message for d in compiled.diagnostics if d.is_error}),
    "warnings": sorted({d.message for d in compiled.diagnostics if not d.is_error}),
    "python_bytes": len(python),
    "methods": python.count("\\n    async def "),
    "typescript_tools": typescript.partition("interface ToolOutputMap {")[2]
    .partition("\\n}\\n")[0]
    .count("\\n  "),
}
del compiled, value
if python:
    # The parser at its default recursion limit, as an importer would run it; a catalog of
    # ordinary tools is compiled instead, which parses without building Python objects.
    tree = compile(python, "sdk.py", "exec") if sys.argv[2] == "catalog" else ast.parse(python)
    if isinstance(tree, ast.Module):
        tools = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tools")
        docs = [ast.get_docstring(m, clean=False) or "" for m in tools.body]
        report["longest_docstring"] = max(map(len, docs), default=0)
out = Path(sys.argv[4])
(out / "sdk.py").write_text(python, encoding="utf-8")
(out / "sdk.d.ts").write_text(typescript, encoding="utf-8")
print(json.dumps(report))
"""


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    peak_mb: float


def run_limited(code: str, args: list[str], directory: Path) -> Run:
    """`python -c code args` under the address-space and CPU caps (killed only if it hangs
    for `HANG_GUARD`); its peak resident memory is the one it reports at exit (`wait4`'s,
    when it died first)."""
    stdout, stderr = directory / "stdout.txt", directory / "stderr.txt"
    peak_file = directory / "peak.txt"
    peak_file.unlink(missing_ok=True)
    start = time.monotonic()
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-c", LIMITED + code, *args],
            stdout=out,
            stderr=err,
            cwd=ROOT,
            env={**os.environ, "CODEGEN_PEAK_FILE": str(peak_file)},
        )
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > HANG_GUARD:
            process.kill()
            os.wait4(process.pid, 0)
            process.returncode = -9
            pytest.fail(f"{args} hung: still running after {HANG_GUARD:.0f} s")
        time.sleep(0.02)
    process.returncode = os.waitstatus_to_exitcode(status)
    return Run(
        process.returncode,
        stdout.read_text("utf-8"),
        stderr.read_text("utf-8", "replace"),
        (int(peak_file.read_text()) if peak_file.exists() else usage.ru_maxrss) / 1024,
    )


def run_shape(shape: str, size: int, directory: Path) -> dict[str, Any]:
    """Compile and render one hostile shape in a bounded child; its report."""
    run = run_limited(CHILD, [str(ROOT / "tests"), shape, str(size), str(directory)], directory)
    assert run.returncode != -signal.SIGXCPU, f"{shape} {size}: over {CPU_LIMIT} CPU seconds"
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stderr == ""
    assert run.peak_mb < PEAK_MB, f"{shape} {size}: {run.peak_mb:.0f} MB"
    report: dict[str, Any] = json.loads(run.stdout)
    assert report["cpu_seconds"] < CPU_SECONDS, f"{shape} {size}: {report['cpu_seconds']:.1f} s"
    return report


@dataclass(frozen=True)
class Expect:
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


DEPTH = f"schema nesting depth {{}} exceeds the limit of {MAX_NESTING}"

TRIPWIRES = {
    # Deeper than any document may be: rejected before anything walks it.
    ("properties", 100_000): Expect(errors=(DEPTH.format(200_001),)),
    ("items", 100_000): Expect(
        errors=(DEPTH.format(100_001),),
        warnings=("MCP requires an object schema for inputSchema, not type 'array'",),
    ),
    ("anyOf", 100_000): Expect(errors=(DEPTH.format(200_001),)),
    ("annotations", 100_000): Expect(
        errors=(f"annotations nesting depth 200001 exceeds the limit of {MAX_NESTING}",)
    ),
    ("bfcl", 100_000): Expect(errors=(DEPTH.format(200_001),)),
    # The deepest documents accepted (512 levels with the tool itself).
    ("properties", 255): Expect(),
    ("items", 510): Expect(
        warnings=(
            "MCP requires an object schema for inputSchema, not type 'array'",
            "arrays nested deeper than 64 levels; typed as any value",
        )
    ),
    ("anyOf", 255): Expect(),
    # Flat documents that are long chains or wide.
    ("ref_chain", 100_000): Expect(
        warnings=("schema nested deeper than 512 levels; typed as any value",)
    ),
    ("union", UNION_LIMIT): Expect(
        warnings=(
            f"a union of {UNION_LIMIT} arms is wider than the limit of {ARMS_LIMIT}; "
            "typed as any value",
        )
    ),
    ("union", 100_000): Expect(
        warnings=(
            f"a union of 100000 arms is larger than the limit of {UNION_LIMIT}; typed as any value",
        )
    ),
    ("enum", 100_000): Expect(
        warnings=(
            f"100000 literal values are more than the limit of {LITERAL_LIMIT}; "
            "typed by the types of the values",
        )
    ),
    ("allOf", 100_000): Expect(
        warnings=(
            f"100000 literal values are more than the limit of {LITERAL_LIMIT}; "
            "typed by the types of the values",
        )
    ),
    ("description", 10_000_000): Expect(),
    ("catalog", 50_000): Expect(),
}


@pytest.mark.parametrize(("shape", "size"), list(TRIPWIRES), ids=[f"{s}-{n}" for s, n in TRIPWIRES])
def test_hostile_size_renders_or_is_rejected(shape: str, size: int, tmp_path: Path) -> None:
    expect = TRIPWIRES[shape, size]
    report = run_shape(shape, size, tmp_path)
    assert tuple(report["errors"]) == expect.errors
    assert tuple(report["warnings"]) == expect.warnings
    if expect.errors:
        assert report["python_bytes"] == 0
        return
    assert report["python_bytes"] > 0  # and the child parsed it
    python = (tmp_path / "sdk.py").read_text("utf-8")
    if shape == "catalog":
        assert report["methods"] == size
        assert report["typescript_tools"] == size
    else:
        assert report["methods"] == 1
    if shape == "description":
        assert report["longest_docstring"] >= size
    if shape == "enum":
        assert "    choice: str\n" in python
    if shape == "allOf":
        assert "    p99999: NotRequired[str]\n" in python
        assert "    both: NotRequired[str]\n" in python
    if shape in ("union", "ref_chain"):
        assert "Any" in python


def test_cli_rejects_a_deep_document(tmp_path: Path) -> None:
    """The decoder refuses a 100,000-level document with a position-free diagnostic; the CLI
    exits 1 without a traceback."""
    source = tmp_path / "deep.json"
    source.write_text(hostile.nested_text("properties", 100_000), encoding="utf-8")
    run = run_cli(["sdk", str(source), "--lang", "python"], tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stdout == ""
    assert f"{source}:: error: nesting deeper than {MAX_NESTING} levels" in run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr


def test_cli_renders_a_huge_file(tmp_path: Path) -> None:
    """A 20 MB file holding a 100,000-arm union, a 100,000-member enum and a 10 MB
    description: exit 0, warnings on stderr, a module that parses."""
    tools = [
        hostile.shape("union", 100_000),
        {**hostile.shape("enum", 100_000), "name": "choose"},
        {**hostile.shape("description", 10_000_000), "name": "describe"},
    ]
    source = tmp_path / "huge.json"
    source.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    assert source.stat().st_size > 20_000_000
    run = run_cli(["sdk", str(source), "--lang", "python"], tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert "a union of 100000 arms is larger than the limit" in run.stderr
    assert "100000 literal values are more than the limit" in run.stderr
    module = ast.parse(run.stdout)
    tools_class = next(n for n in module.body if isinstance(n, ast.ClassDef) and n.name == "Tools")
    assert [n.name for n in tools_class.body if isinstance(n, ast.AsyncFunctionDef)] == [
        "choose",
        "describe",
        "hostile",
    ]


def test_the_cli_reads_a_wide_union_in_linear_time(tmp_path: Path) -> None:
    """A 100,000-arm union through the command line (the path that gathers the arms' inline
    documentation): within `CPU_SECONDS` of the child's CPU, as the library path is (each
    arm's type was once counted among all the others, 160 CPU seconds here)."""
    source = tmp_path / "wide.json"
    source.write_text(json.dumps({"tools": [hostile.shape("union", 100_000)]}), encoding="utf-8")
    code = (
        "import resource, runpy, sys\n"
        "sys.argv[0] = 'codegen'\n"
        "try:\n"
        "    runpy.run_module('codegen', run_name='__main__')\n"
        "finally:\n"
        "    used = resource.getrusage(resource.RUSAGE_SELF)\n"
        "    sys.stderr.write(f'cpu {used.ru_utime + used.ru_stime}\\n')\n"
    )
    run = run_limited(code, ["sdk", str(source), "--lang", "python"], tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    cpu = float(run.stderr.rsplit("cpu ", 1)[1])
    assert cpu < CPU_SECONDS, f"{cpu:.1f} CPU seconds"


def test_single_type_conversions_of_deep_schemas(tmp_path: Path) -> None:
    """`json_schema_to_py` / `_ts` take any value, unvalidated: a 100,000-level one is any
    value, at once."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from support import hostile\n"
        "from codegen import json_schema_to_py, json_schema_to_ts\n"
        "for kind in hostile.NESTINGS:\n"
        "    schema = hostile.nested(kind, 100_000)\n"
        "    print(json_schema_to_py(schema), json_schema_to_ts(schema))\n"
    )
    run = run_limited(code, [str(ROOT / "tests")], tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == ["Any unknown"] * len(hostile.NESTINGS)
    assert run.peak_mb < PEAK_MB


def run_cli(args: list[str], directory: Path) -> Run:
    """`python -m codegen ARGS` under the same bounds as every case."""
    code = "import runpy, sys; sys.argv[0] = 'codegen'; runpy.run_module('codegen', run_name='__main__')"
    run = run_limited(code, args, directory)
    assert run.peak_mb < PEAK_MB, f"{run.peak_mb:.0f} MB"
    return run


# --- the parser limits, at their edges ---------------------------------------------------

EDGES = {
    "widest_union": (hostile.union(ARMS_LIMIT), ()),
    "union_one_too_wide": (
        hostile.union(ARMS_LIMIT + 1),
        (f"a union of {ARMS_LIMIT + 1} arms is wider than the limit of {ARMS_LIMIT}",),
    ),
    "unions_of_unions": (
        {"anyOf": [hostile.union(ARMS_LIMIT - 50), hostile.union(60)]},
        (f"a union of {ARMS_LIMIT + 10} arms is wider than the limit of {ARMS_LIMIT}",),
    ),
    "deep_unions": (hostile.nested_unions(2, 240), ()),
    "too_deep_unions": (
        hostile.nested_unions(3, 200),
        (f"a type expression nested deeper than {EXPRESSION_LIMIT} levels",),
    ),
    "deepest_items": (
        hostile.nested("items", 510),
        ("MCP requires an object schema for inputSchema", "arrays nested deeper than 64 levels"),
    ),
    "deepest_properties": (hostile.nested("properties", 255), ()),
}
"""Schemas at and just past the limits that keep Python code parseable, with the start of
each warning they must give."""


@pytest.fixture(scope="module")
def edge_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    """Each edge schema as input and output schema of a tool: (Python, TypeScript)."""
    outputs = {}
    for name, (schema, warnings) in EDGES.items():
        compiled = compile_value({**hostile.tool(schema), "outputSchema": schema})
        assert compiled.catalog is not None, compiled.errors
        found = sorted({d.message for d in compiled.warnings})
        assert len(found) == len(warnings), (name, found)
        for message, start in zip(found, warnings, strict=True):
            assert message.startswith(start), (name, message)
        outputs[name] = (
            render_python_sdk(compiled.catalog),
            render_typescript_sdk(compiled.catalog),
        )
    return outputs


def test_edges_parse_at_the_default_recursion_limit(
    edge_outputs: dict[str, tuple[str, str]],
) -> None:
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default, whatever ran before in this process
    try:
        for name, (python, _) in edge_outputs.items():
            try:
                ast.parse(python)
            except (SyntaxError, RecursionError) as error:
                pytest.fail(f"{name}: {type(error).__name__}: {error}")
    finally:
        sys.setrecursionlimit(previous)


def test_edges_pass_mypy_and_pyright(
    edge_outputs: dict[str, tuple[str, str]], tmp_path: Path
) -> None:
    """The widest and deepest spellings the limits allow still type-check: `pyright`
    refuses a longer `|` chain and runs out of stack on a deeper one."""
    for name, (python, _) in edge_outputs.items():
        (tmp_path / f"{name}.py").write_text(python, encoding="utf-8")
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    mypy = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            os.devnull,
            *files,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    pyright = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    (tmp_path / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.11"})
    )
    result = subprocess.run(
        [pyright, "--project", str(tmp_path), *files],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "0 errors" in result.stdout


def test_edges_pass_tsc(edge_outputs: dict[str, tuple[str, str]], tmp_path: Path) -> None:
    check_declarations({name: ts for name, (_, ts) in edge_outputs.items()}, tmp_path)
