"""Type-check TypeScript declarations with the pinned `typescript` package, each file as its
own program (`tests/node/check_isolated.js`), in one Node process. A missing Node or
`npm ci` fails the test that needs it; it is never skipped."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

NODE_MODULES = ROOT / "node_modules"
NPM_HINT = "run `npm ci --no-audit --no-fund` in the repository root"


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail(f"node is not on PATH; install Node 20, then {NPM_HINT}")
    if not (NODE_MODULES / "typescript" / "package.json").is_file():
        pytest.fail(f"node_modules/typescript is missing; {NPM_HINT}")
    return found


def check_declarations(files: dict[str, str], directory: Path) -> None:
    """Assert every file passes `tsc --noEmit --strict` on its own."""
    paths = {}
    for index, (name, text) in enumerate(sorted(files.items())):
        path = directory / f"{index:03d}.d.ts"
        path.write_bytes(text.encode("utf-8"))
        paths[str(path)] = name
    result = subprocess.run(
        [node(), str(ROOT / "tests/node/check_isolated.js"), *paths],
        capture_output=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace")
    report = json.loads(result.stdout)
    failures = {paths[p]: r["diagnostics"] for p, r in report.items() if r["diagnostics"]}
    assert not failures, failures
    assert len(report) == len(paths)
