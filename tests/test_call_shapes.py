"""Calls of shapes a checker once got wrong, as a caller writes them and wrong, through both
Python checkers and `tsc --strict` (`tests/fixtures/call_shapes.json`).

- Closed objects whose keys nest, in a union (`{path, type} | {path}`, as items and as a
  field): mypy matched `{"path": "x", "type": "DEFAULT"}` against the smaller arm and
  reported "Extra key" until closed objects were declared `closed=True` (PEP 728).
- An array of any values (`{"type": "array"}`, also nested): `{}` and `{"k": 1}` passed as
  one until `SequenceNotStr` asked for a member a dict lacks (`__mul__`).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from codegen.engine import compile_sources
from codegen.render.python.sdk import render_python_sdk
from codegen.render.typescript.sdk import render_typescript_sdk
from conftest import FIXTURES
from support.tsc import NODE_MODULES, node
from support.typed_calls import Expectations, check_findings, mypy_findings, pyright_findings

pytestmark = pytest.mark.slow  # mypy, pyright and tsc over one caller module each

SHAPES = FIXTURES / "call_shapes.json"

PYTHON_CALLS: list[tuple[str, bool]] = [
    ('{"files": [{"path": "x", "type": "DEFAULT"}]}', True),
    ('{"files": [{"path": "x"}, {"path": "y", "type": "t"}]}', True),
    ('{"files": [], "env": {"name": "A", "value": "1"}}', True),
    ('{"files": [], "env": {"name": "A"}}', True),
    ('{"files": [], "anything": [1, "a", {"k": 1}, None, []]}', True),
    ('{"files": [], "anything": []}', True),
    ('{"files": [], "anything": (1, "a")}', True),
    ('{"files": [], "grid": [[1, "a"], []]}', True),
    ('{"files": [{"path": "x", "typo": "t"}]}', False),
    ('{"files": [{"path": 1}]}', False),
    ('{"files": [{"type": "t"}]}', False),
    ('{"files": {}}', False),
    ('{"files": [], "env": {"name": "A", "valeu": "1"}}', False),
    ('{"files": [], "env": {"value": "1"}}', False),
    ('{"files": [], "anything": {}}', False),
    ('{"files": [], "anything": {"k": 1}}', False),
    ('{"files": [], "anything": {1: 2}}', False),
    ('{"files": [], "anything": "abc"}', False),
    ('{"files": [], "grid": [{}]}', False),
    ('{"files": [], "grid": [[1], {"k": 1}]}', False),
    ('{"files": [], "grid": {}}', False),
]
"""`make_spec` calls: (the argument, whether it is right)."""

TYPESCRIPT_CALLS: list[tuple[str, bool]] = [
    ('{ files: [{ path: "x", type: "DEFAULT" }] }', True),
    ('{ files: [{ path: "x" }, { path: "y", type: "t" }] }', True),
    ('{ files: [], env: { name: "A", value: "1" } }', True),
    ('{ files: [], env: { name: "A" } }', True),
    ('{ files: [], anything: [1, "a", { k: 1 }, null, []] }', True),
    ("{ files: [], anything: [] }", True),
    ('{ files: [], grid: [[1, "a"], []] }', True),
    ('{ files: [{ path: "x", typo: "t" }] }', False),
    ("{ files: [{ path: 1 }] }", False),
    ('{ files: [{ type: "t" }] }', False),
    ("{ files: {} }", False),
    ("{ files: [], anything: {} }", False),
    ("{ files: [], anything: { k: 1 } }", False),
    ('{ files: [], anything: "abc" }', False),
    ("{ files: [], grid: [{}] }", False),
    ("{ files: [], grid: {} }", False),
]


def caller(head: list[str], calls: list[tuple[str, bool]], form: str) -> tuple[str, Expectations]:
    """The caller's text, each call on a line of its own, and what each line must get."""
    lines = list(head)
    expect = Expectations(clean=set(range(1, len(lines) + 1)))
    for call, right in calls:
        lines.append(form.format(call))
        if right:
            expect.clean.add(len(lines))
        else:
            expect.reported[len(lines)] = ""
    return "\n".join(lines) + "\n", expect


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("call_shapes")
    catalog = compile_sources([str(SHAPES)]).catalog
    assert catalog is not None
    (directory / "shapes.py").write_text(render_python_sdk(catalog), encoding="utf-8")
    (directory / "shapes.d.ts").write_text(render_typescript_sdk(catalog), encoding="utf-8")
    (directory / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "strict"}))
    return directory


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_python_checkers_take_right_calls_and_report_wrong_ones(checker: str, shapes: Path) -> None:
    head = ["import shapes", "", "", "async def calls(tools: shapes.Tools) -> None:"]
    found: dict[str, Expectations] = {}
    for name, form in (
        ("call_method.py", "tools.make_spec"),
        ("call_key.py", 'tools["make_spec"]'),
    ):
        text, found[name] = caller(head, PYTHON_CALLS, f"    await {form}({{}})")
        (shapes / name).write_text(text, encoding="utf-8")
    find = mypy_findings if checker == "mypy" else pyright_findings
    check_findings(find(shapes, sorted(found)), found)


def test_tsc_takes_right_calls_and_reports_wrong_ones(shapes: Path) -> None:
    head = [
        'import type { Tools } from "./shapes.js";',
        "declare const tools: Tools;",
        "export async function calls(): Promise<void> {",
    ]
    text, expect = caller(head, TYPESCRIPT_CALLS, "  await tools.make_spec({});")
    (shapes / "calls.ts").write_text(text + "}\n", encoding="utf-8")
    options = {"strict": True, "noEmit": True, "target": "es2022", "module": "nodenext"}
    config = {"compilerOptions": {**options, "types": []}, "files": ["calls.ts"]}
    (shapes / "tsconfig.json").write_text(json.dumps(config), encoding="utf-8")
    tsc = NODE_MODULES / "typescript" / "bin" / "tsc"
    run = subprocess.run(
        [node(), str(tsc), "-p", str(shapes / "tsconfig.json")],
        cwd=shapes,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    findings: dict[str, dict[int, list[str]]] = {}
    for line in run.stdout.splitlines():
        match = re.match(r"([^(\s]+)\((\d+),\d+\): error (.*)", line)
        if match:
            findings.setdefault(match[1], {}).setdefault(int(match[2]), []).append(match[3])
    check_findings(findings, {"calls.ts": expect})
