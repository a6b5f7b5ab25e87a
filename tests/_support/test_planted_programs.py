"""Nothing a cloned repository holds is run or read as the user's own: a `bwrap` or an
upstream server planted in the working folder is never found through an empty or relative
PATH entry, and a relative `XDG_CONFIG_HOME` (or `HOME`) never points serve at a config in
the working folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from codegen._support.program_lookup import find_program, not_found
from codegen.mcp.config import user_config
from conftest import ROOT
from support.sandbox_checks import python_for, stage

PLANTED = """#!/bin/sh
echo ran > {mark}
exec /bin/false
"""


def plant(folder: Path, name: str, mark: Path) -> None:
    """An executable `name` in `folder` that leaves `mark` behind if it ever runs."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(PLANTED.format(mark=mark))
    program.chmod(0o755)


def marks_folder() -> Path:
    """Where a planted program would write: open to any uid a sandbox may run as (a root
    host starts bubblewrap as an unprivileged uid of its own)."""
    folder = Path(tempfile.mkdtemp(prefix="marks-", dir=stage()))
    folder.chmod(0o777)
    return folder


@pytest.mark.parametrize("path", [":/usr/bin:/bin", "/usr/bin::/bin", ".:/usr/bin", "bin:/usr/bin"])
def test_lookup_skips_folders_that_are_not_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    mark = tmp_path / "ran"
    plant(tmp_path, "codegen-planted", mark)
    plant(tmp_path / "bin", "codegen-planted", mark)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", path)
    assert find_program("codegen-planted") is None
    assert find_program("sh") == "/usr/bin/sh" or find_program("sh") == "/bin/sh"
    skipped = "''" if path.startswith(":") or "::" in path else repr(path.split(":")[0])
    assert skipped in not_found("codegen-planted")


RUN_IN_SANDBOX = """
import asyncio, json, sys
from codegen.codemode.run_code.code_runtime import Bindings
from codegen.codemode.runtimes.by_language import runtime_for
from codegen.codemode.calls.cancellation import AbortController

async def main():
    options = {"python": sys.argv[1]} if sys.argv[1] else {}
    runtime = runtime_for("python", sandbox="bubblewrap", spare=False, **options)
    try:
        output = await runtime.run("return 6 * 7", Bindings((), None), AbortController().signal)
        print(json.dumps(output.result))
    finally:
        await runtime.aclose()

asyncio.run(main())
"""


@pytest.mark.parametrize("path", [":/usr/bin:/bin", "bin:/usr/bin:/bin"])
def test_bubblewrap_is_never_taken_from_the_working_folder(tmp_path: Path, path: str) -> None:
    """With the working folder on PATH (an empty entry, or a relative one), a `bwrap`
    planted there never runs: the system's does, and the run works."""
    repository = tmp_path / "repository"
    mark = marks_folder() / "bwrap-ran"
    plant(repository, "bwrap", mark)
    plant(repository / "bin", "bwrap", mark)
    done = subprocess.run(
        [sys.executable, "-c", RUN_IN_SANDBOX, python_for("bubblewrap") or ""],
        cwd=repository,
        env={"PATH": path, "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert not mark.exists(), "the planted bwrap ran"
    assert done.returncode == 0 and done.stdout.strip() == "42", done.stderr[-2000:]


def test_an_upstream_server_is_never_taken_from_the_working_folder(tmp_path: Path) -> None:
    """An `mcpServers` command given by bare name is looked up in PATH's absolute folders
    only: the one planted in the working folder never starts, and the failure says why."""
    repository = tmp_path / "repository"
    mark = tmp_path / "server-ran"
    plant(repository, "planted-server", mark)
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"planted": {"command": "planted-server"}}}))
    more = ["-o", str(tmp_path / "out"), "--timeout", "20"]
    done = subprocess.run(
        [sys.executable, "-m", "codegen", "harvest", "--config", str(config), *more],
        cwd=repository,
        env={"PATH": ":/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert not mark.exists(), "the planted server ran"
    assert "not found on PATH" in done.stderr and "never searched" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_user_config_lies_in_an_absolute_folder(tmp_path: Path) -> None:
    absolute = str(tmp_path / "xdg")
    assert user_config({"XDG_CONFIG_HOME": absolute}) == Path(absolute, "codegen", "serve.json")
    home = str(tmp_path / "home")
    for relative in ("xdg", "./xdg", "../xdg", ""):
        found = user_config({"XDG_CONFIG_HOME": relative, "HOME": home})
        assert found == Path(home, ".config", "codegen", "serve.json"), relative
    for relative_home in ("home", ".", ""):
        found = user_config({"XDG_CONFIG_HOME": "xdg", "HOME": relative_home})
        assert found is None or found.is_absolute(), found


def test_serve_never_reads_a_config_from_a_relative_xdg_folder(tmp_path: Path) -> None:
    """`XDG_CONFIG_HOME=cfg` in a repository holding `cfg/codegen/serve.json`: serve reads
    nothing from it (and starts none of its servers) and says there is no config."""
    repository = tmp_path / "repository"
    planted = repository / "cfg" / "codegen"
    planted.mkdir(parents=True)
    mark = tmp_path / "planted-ran"
    server = {"command": sys.executable, "args": ["-c", f"open({str(mark)!r}, 'w').write('x')"]}
    (planted / "serve.json").write_text(json.dumps({"mcpServers": {"planted": server}}))
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "codegen", "serve"],
        cwd=repository,
        env={
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": str(ROOT),
            "XDG_CONFIG_HOME": "cfg",
            "HOME": str(home),
        },
        capture_output=True,
        text=True,
        input="",
        timeout=120,
        check=False,
    )
    assert not mark.exists(), "serve started a server from the working folder's config"
    assert done.returncode == 2 and "no upstream servers" in done.stderr, done.stderr
    assert str(home / ".config" / "codegen" / "serve.json") in done.stderr
