"""The package as users install it: `python -m build` makes the sdist and, from it, the wheel;
both pass `twine check --strict` and carry the metadata an index shows (name, license file,
project URLs, classifiers, the extras); the wheel, installed alone in a fresh virtual
environment, runs `codegen sdk`, `codegen serve --print-config-example` and the Code Mode
example of docs/codemode.md from a folder outside the checkout."""

from __future__ import annotations

import email
import os
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow  # builds, and installs the dependencies from the index

FENCE = re.compile(
    r"^```python\n(?P<code>.*?)^```\n\nIt prints:\n\n```text\n(?P<out>.*?)^```", re.S | re.M
)


def run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--outdir", out, ROOT, cwd=ROOT)
    return out


def test_both_artifacts_pass_twine_and_carry_the_metadata(dist: Path) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    run(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist, cwd=dist)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"tool_codegen-{project['version']}.dist-info"
        metadata = email.message_from_bytes(archive.read(f"{info}/METADATA"))
    assert metadata["Name"] == "tool-codegen" != "codegen"  # the index's `codegen` is taken
    assert metadata["License-Expression"] == "MIT"
    assert metadata["License-File"] == "LICENSE" and f"{info}/licenses/LICENSE" in names
    urls = metadata.get_all("Project-URL") or []
    assert any(url.startswith("Homepage, https://") for url in urls)
    classifiers = metadata.get_all("Classifier") or []
    assert (
        "Typing :: Typed" in classifiers and "Programming Language :: Python :: 3.11" in classifiers
    )
    assert {"mcp", "serve", "search"} <= set(metadata.get_all("Provides-Extra") or [])
    assert metadata.get_payload().startswith("# codegen")  # the README, as the long description
    templates = {name for name in (ROOT / "templates").rglob("*") if name.is_file()}
    for template in templates:
        relative = template.relative_to(ROOT / "templates").as_posix()
        assert f"codegen/templates/{relative}" in names, relative
    for module in (ROOT / "codegen").rglob("*.py"):
        assert module.relative_to(ROOT).as_posix() in names
    assert "codegen/py.typed" in names and "codegen/codemode/runtimes/typescript_worker.js" in names
    with tarfile.open(sdist) as archive:
        members = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"LICENSE", "README.md", "pyproject.toml", "docs/codemode.md"} <= members
    assert not any(name.startswith(("tests/", "bench/", "node_modules/")) for name in members)


def test_the_wheel_alone_runs_in_a_fresh_environment(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python, codegen = venv / "bin" / "python", venv / "bin" / "codegen"
    run(python, "-m", "pip", "install", "--quiet", wheel, cwd=tmp_path)
    work = tmp_path / "work"  # nothing of the checkout is reachable from here
    work.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    where = run(python, "-c", "import codegen; print(codegen.__file__)", cwd=work, env=env)
    assert where.startswith(str(venv)), where

    source = ROOT / "schemas" / "anthropic_tools.json"
    sdk = run(codegen, "sdk", source, "--lang", "python", cwd=work, env=env)
    assert sdk == (ROOT / "snapshots" / "python" / "anthropic_tools.py").read_text(encoding="utf-8")
    assert run(codegen, "--version", cwd=work, env=env).startswith("codegen 0.1.0 (tool-codegen)")
    example = run(codegen, "serve", "--print-config-example", cwd=work, env=env)
    assert '"mcpServers"' in example

    host = FENCE.search((ROOT / "docs" / "codemode.md").read_text(encoding="utf-8"))
    assert host is not None
    (work / "host.py").write_text(host["code"], encoding="utf-8")
    assert run(python, "host.py", cwd=work, env=env) == host["out"]
