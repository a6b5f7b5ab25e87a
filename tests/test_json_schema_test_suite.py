"""Every schema of the official JSON-Schema-Test-Suite, used as a tool's input and output
schema, renders both SDKs or is rejected with error diagnostics; nothing raises.

The schemas are vendored in `fixtures/json-schema-test-suite/schemas.json` (its `update.py`
regenerates the file from the `jsonschema` sdist). `EXPECTED` pins the outcome per draft, so
a change in what renders, what is rejected or what degrades shows up here. Every distinct
Python output is parsed and checked for its structure, then all of them go through one
`mypy --strict` run; every distinct TypeScript output through one `tsc --strict` process.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codegen import ir
from codegen.engine import compile_value
from codegen.render.python.sdk import render_python_sdk
from codegen.render.typescript.sdk import render_typescript_sdk
from conftest import FIXTURES
from support.sdk_checks import check_structure
from support.tsc import check_declarations

pytestmark = pytest.mark.slow  # 2,291 schemas through both SDKs and both checkers

SUITE = FIXTURES / "json-schema-test-suite" / "schemas.json"

EXPECTED = {
    # group: (schemas, rendered, rejected with errors, rendered with warnings)
    "draft3": (126, 126, 0, 7),
    "draft4": (198, 198, 0, 18),
    "draft6": (275, 275, 0, 23),
    "draft7": (311, 311, 0, 28),
    "draft2019-09": (428, 428, 0, 59),
    "draft2020-12": (438, 438, 0, 69),
    "draft-next": (432, 432, 0, 430),
    "remotes": (83, 83, 0, 34),
}
"""Every schema is valid for its draft, so none is rejected. The warnings are degraded nodes
(`$dynamicRef`, remote and dangling `$ref`s, recursive or contradictory `allOf` arms,
unknown keywords; `not` and `if` only narrow, so they are notes, not warnings) and, for every draft-next schema, its `$schema` that no meta-schema here knows."""


@dataclass(frozen=True)
class Outcome:
    group: str
    case: str
    catalog: ir.Catalog | None
    python: str | None
    typescript: str | None
    errors: int
    warnings: int
    crash: str | None


def run_case(group: str, case: str, schema: Any) -> Outcome:
    tool = {"name": "case", "inputSchema": schema, "outputSchema": schema}
    try:
        compiled = compile_value(tool, f"{group}/{case}", "mcp")
        catalog = compiled.catalog
        python = render_python_sdk(catalog) if catalog is not None else None
        typescript = render_typescript_sdk(catalog) if catalog is not None else None
    except Exception:
        return Outcome(group, case, None, None, None, 0, 0, traceback.format_exc(limit=-4))
    errors = len(compiled.errors)
    # A suite schema is any schema, where MCP asks for an object one: that warning is the
    # wrapping's, not the schema's; the count is of what degrades.
    warnings = sum(
        not w.message.startswith("MCP requires an object schema") for w in compiled.warnings
    )
    return Outcome(group, case, catalog, python, typescript, errors, warnings, None)


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    suite = json.loads(SUITE.read_text(encoding="utf-8"))
    return [run_case(c["draft"], c["id"], c["schema"]) for c in suite["cases"]]


def test_nothing_raises(outcomes: list[Outcome]) -> None:
    crashed = {f"{o.group}/{o.case}": o.crash for o in outcomes if o.crash}
    assert not crashed


def test_counts_per_draft(outcomes: list[Outcome]) -> None:
    """Each schema renders or is rejected with an error; the counts are pinned."""
    counts: Counter[tuple[str, str]] = Counter()
    for o in outcomes:
        counts[o.group, "schemas"] += 1
        if o.catalog is not None:
            counts[o.group, "rendered"] += 1
            counts[o.group, "warned"] += o.warnings > 0
        elif o.errors:
            counts[o.group, "rejected"] += 1
    table = {
        group: tuple(counts[group, k] for k in ("schemas", "rendered", "rejected", "warned"))
        for group in EXPECTED
    }
    print("\ngroup         schemas rendered rejected warned")
    for group, row in table.items():
        print(f"{group:<13} " + " ".join(f"{n:>8}" for n in row))
    assert {o.group for o in outcomes} == set(EXPECTED)
    for schemas, rendered, rejected, _ in table.values():
        assert rendered + rejected == schemas
    assert table == EXPECTED


def distinct(outcomes: list[Outcome], attribute: str) -> dict[str, Outcome]:
    """One outcome per distinct output text (most schemas share their output with another)."""
    found: dict[str, Outcome] = {}
    for o in outcomes:
        text = getattr(o, attribute)
        if text is not None:
            found.setdefault(text, o)
    return found


def test_python_outputs_parse_with_the_expected_structure(outcomes: list[Outcome]) -> None:
    for text, o in distinct(outcomes, "python").items():
        assert o.catalog is not None
        try:
            module = ast.parse(text)
        except SyntaxError as error:
            pytest.fail(f"{o.group}/{o.case}: {error}")
        check_structure(module, o.catalog, text)


def test_python_outputs_pass_mypy_strict(outcomes: list[Outcome], tmp_path: Path) -> None:
    texts = distinct(outcomes, "python")
    names = {}
    for index, (text, o) in enumerate(texts.items()):
        path = tmp_path / f"case_{index:04d}.py"
        path.write_text(text, encoding="utf-8")
        names[path.name] = f"{o.group}/{o.case}"
    command = [sys.executable, "-m", "mypy", "--strict", "--no-incremental"]
    result = subprocess.run(
        [*command, "--cache-dir", os.devnull, *sorted(str(p) for p in tmp_path.glob("*.py"))],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, (result.stdout[-5000:], names)
    assert f"no issues found in {len(texts)} source files" in result.stdout


def test_typescript_outputs_pass_tsc(outcomes: list[Outcome], tmp_path: Path) -> None:
    texts = distinct(outcomes, "typescript")
    check_declarations({f"{o.group}/{o.case}": text for text, o in texts.items()}, tmp_path)
