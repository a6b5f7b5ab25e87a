"""`codegen serve` starts only where programs can run: it runs a trivial program through the
runtime and its sandbox first (`WorkerRuntime.check`), and where that fails it refuses to
start (exit 2) with one message naming what fixes it, before it announces anything, listens
or starts an upstream; it never advertises a `run_code` whose every run would fail."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

from codegen.codemode.runtimes.python import PythonRuntime
from codegen.codemode.runtimes.worker_host import RuntimeUnavailable
from support.sandbox_checks import staged
from support.typescript_nodes import ROOT, TYPESCRIPT7, node, runtime_with

TIME = shutil.which("mcp-server-time") or str(Path(sys.executable).parent / "mcp-server-time")


def serve(folder: Path, path: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`codegen serve` with one upstream that fails to start, and PATH `path`."""
    config = folder / "serve.json"
    config.write_text(json.dumps({"mcpServers": {"never": {"command": "/bin/false"}}}))
    return subprocess.run(
        [sys.executable, "-m", "codegen", "serve", "--config", str(config), *arguments],
        capture_output=True,
        text=True,
        cwd=folder,
        input="",
        env={"PATH": path, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(folder / "xdg")},
        timeout=120,
    )


def path_with_node(folder: Path, major: int) -> str:
    """A PATH whose `node` is the pinned Node of `major` (no `typescript` is installed with
    it), then the system's folders."""
    bin_folder = folder / "bin"
    bin_folder.mkdir(exist_ok=True)
    os.symlink(staged(node(major)), bin_folder / "node")
    return f"{bin_folder}:/usr/bin:/bin"


def test_typescript_on_node_20_without_a_stripper_refuses_to_start(tmp_path: Path) -> None:
    done = serve(tmp_path, path_with_node(tmp_path, 20), "--lang", "typescript")
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("codegen: serve: typescript programs cannot run here: Node 20."), line
    assert "cannot strip types itself (that needs 22.13 or newer)" in line
    assert "run `npm install -g typescript`" in line and "20.12" not in line
    assert "each run" not in done.stderr  # refused before anything is announced


@pytest.mark.slow
def test_typescript_on_node_20_with_typescript_7_serves_runs(tmp_path: Path) -> None:
    """What `npm install typescript` installs today (TypeScript 7, a native compiler)
    strips types on a Node that cannot: serve starts, and a typed program runs."""
    config = tmp_path / "serve.json"
    config.write_text(json.dumps({"mcpServers": {"time": {"command": TIME}}}))
    arguments = ["--config", str(config), "--lang", "typescript", "--typescript", TYPESCRIPT7]
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codegen", "serve", *arguments],
        env={"PATH": path_with_node(tmp_path, 20), "PYTHONPATH": str(ROOT)},
    )
    program = "enum Unit { One = 1 }\nconst n: number = 21;\nreturn n * 2 * Unit.One;"

    async def session() -> str:
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                result = await client.call_tool("run_code", {"code": program, "description": "Add"})
                return "\n".join(block.text for block in result.content if block.type == "text")

    async def bounded() -> str:
        with anyio.fail_after(120):
            return await session()

    assert anyio.run(bounded) == "42"


@pytest.mark.slow
@pytest.mark.parametrize("language", ["python", "typescript"])
def test_a_sandbox_that_cannot_work_here_refuses_to_start(tmp_path: Path, language: str) -> None:
    """No `bwrap` on PATH: `--sandbox bubblewrap` (and `auto`) cannot work."""
    # a Node that strips types, and nothing else: only the sandbox fails
    path = path_with_node(tmp_path, 24).split(":")[0]
    for sandbox in ("bubblewrap", "auto"):
        done = serve(tmp_path, path, "--lang", language, "--sandbox", sandbox)
        assert done.returncode == 2, done.stderr
        message = done.stderr
        assert f"serve: {language} programs cannot run here: " in message
        assert "`bwrap` is not installed" in message and "apt-get install bubblewrap" in message
        assert "each run" not in message


def test_check_is_the_runtimes_own_for_library_hosts() -> None:
    """`check()` runs a trivial program through the sandbox and says what is wrong."""
    asyncio.run(PythonRuntime(sandbox="none").check())
    mounted = runtime_with({"node": node(20), "stripper": "node", "sandbox": "none"})
    with pytest.raises(RuntimeUnavailable, match=r"that needs 22\.13 or newer"):
        asyncio.run(mounted.check())
