"""The package as users install it: `python -m build` makes the sdist and, from it, the wheel;
both pass `twine check --strict` and carry the metadata an index shows (name, license file,
project URLs, classifiers, the extras); the wheel, installed alone in a fresh virtual
environment, runs `codegen sdk`, `codegen serve --print-config-example` and the Code Mode
example of docs/codemode.md from a folder outside the checkout; and the README's install
commands for today (pipx and pip, from a checkout and from a wheel) work as written."""

from __future__ import annotations

import email
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from support.readme_examples import fenced, section

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
    data = ("presentation/fitting/o200k_base.tiktoken.gz", "../mcp/serve_config.schema.json")
    for name in data:  # data files the package reads at run time
        assert f"codegen/codemode/{name}".replace("codemode/../", "") in names, name
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


TOOL_HEADING = "## Installing it as a tool"


def run_install_commands(commands: str, dist: Path, folder: Path) -> None:
    """Each line of `commands` run as written by the shell, each in a place of its own: a
    checkout (the sdist unpacked: every file an install reads) with the wheel in `dist/`,
    where `python3 -m build` leaves it, an active virtual environment, and pipx. Then the
    `codegen` it installed runs from elsewhere, with serve's MCP SDK, and `codegen install`
    writes an entry that runs it by its absolute path."""
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    tools = folder / "tools"  # pipx, as `python3 -m pip install --user pipx` gives it
    run(sys.executable, "-m", "venv", tools, cwd=folder)
    run(tools / "bin" / "python", "-m", "pip", "install", "--quiet", "pipx", cwd=folder)
    lines = [line.split(" #")[0].strip() for line in commands.splitlines()]
    assert len([line for line in lines if line]) >= 3, commands
    for number, command in enumerate(line for line in lines if line):
        place = folder / f"line{number}"
        with tarfile.open(sdist) as archive:
            archive.extractall(place, filter="data")
        (checkout,) = place.iterdir()
        (checkout / "dist").mkdir()
        shutil.copy(wheel, checkout / "dist")
        venv = place / "venv"
        run(sys.executable, "-m", "venv", venv, cwd=place)
        pipx = {name: str(place / "pipx" / part) for name, part in PIPX.items()}
        path = [venv / "bin", place / "pipx" / "bin", tools / "bin", "/usr/bin", "/bin"]
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL"))},
            **pipx,
            "PATH": os.pathsep.join(map(str, path)),
            "VIRTUAL_ENV": str(venv),
        }
        run("/bin/sh", "-euc", command, cwd=checkout, env=env)

        work = place / "work"  # nothing of the checkout is reachable from here
        work.mkdir()
        codegen = shutil.which("codegen", path=env["PATH"])
        assert codegen is not None and not codegen.startswith(str(checkout)), command
        assert run(codegen, "--version", cwd=work, env=env).startswith("codegen 0.1.0")
        done = subprocess.run(
            [codegen, "install", "json", "--file", "mcp.json"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and "MCP SDK" not in done.stderr, done.stderr
        entry = json.loads((work / "mcp.json").read_text())["mcpServers"]["codegen"]
        assert os.path.samefile(entry["command"], codegen), (entry, codegen)


PIPX = {"PIPX_HOME": "home", "PIPX_BIN_DIR": "bin", "PIPX_MAN_DIR": "man"}
"""pipx's folders, inside the test's place instead of the user's home."""


def test_the_readme_install_commands_work_today(dist: Path, tmp_path: Path) -> None:
    """The first `sh` block of "Installing it as a tool": what works before the package is
    on the index."""
    run_install_commands(fenced(section(TOOL_HEADING), "sh")[0], dist, tmp_path)
