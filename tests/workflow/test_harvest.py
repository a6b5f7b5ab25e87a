"""`codegen harvest --mcp`: real MCP servers over stdio, and every way one can fail.

The servers are real: two written here with the `mcp` SDK (`tests/fixtures/mcp/`), and the
reference `@modelcontextprotocol/server-everything` from the npm dev dependencies. The broken
ones are tiny scripts; each must end within its timeout with a clear error and leave no
process behind (checked with psutil: a pid that is gone or only a zombie is not running).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.mcp.listing import TOOL_KEYS
from conftest import FIXTURES, ROOT
from support.processes import running

MCP = FIXTURES / "mcp"
EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"
TIMEOUT = "60"
"""Generous for a busy machine; the failure tests use short timeouts on purpose."""


def harvest(
    capsys: pytest.CaptureFixture[str], *args: str, command: list[str]
) -> tuple[int, str, str]:
    status = main(["harvest", "--mcp", *args, "--", *command])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


def python(script: str, *args: str) -> list[str]:
    return [sys.executable, str(MCP / script), *args]


def assert_gone(pids: list[int]) -> None:
    """Every pid ends within a few seconds (killing is asynchronous)."""
    deadline = time.monotonic() + 60
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in pids if running(pid)], "processes left running"


def pids_from(path: Path) -> list[int]:
    return [int(word) for word in path.read_text().split()]


@pytest.mark.slow
def test_harvest_an_mcpserver_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tools.json"
    status, stdout, err = harvest(
        capsys, "-o", str(out), "--timeout", TIMEOUT, command=python("mcpserver_tools.py")
    )
    assert status == 0, err
    assert stdout == ""
    assert f"wrote {out.as_posix()} (3 tools)" in err
    text = out.read_text()
    assert text.endswith("}\n") and not text.endswith("\n\n")
    document = json.loads(text)
    assert list(document) == ["server", "tools"]
    assert document["server"] == "weather-demo"
    tools = {tool["name"]: tool for tool in document["tools"]}
    assert list(tools) == ["add", "get_forecast", "reset_station"]  # sorted by name
    for tool in document["tools"]:
        assert list(tool) == [key for key in TOOL_KEYS if key in tool]
    forecast = tools["get_forecast"]
    assert forecast["title"] == "Get forecast"
    assert forecast["annotations"] == {"readOnlyHint": True}
    assert forecast["inputSchema"]["properties"]["units"]["enum"] == ["c", "f"]
    assert forecast["outputSchema"]["properties"]["conditions"]["enum"] == [
        "sunny",
        "cloudy",
        "rain",
        "snow",
    ]
    assert forecast["outputSchema"]["required"] == ["city", "temperature", "conditions"]

    # Ready for `codegen build`: the output schema becomes a typed return.
    status = main(["build", str(out), "-o", str(tmp_path / "sdk"), "-q"])
    assert status == 0
    sdk = (tmp_path / "sdk" / "tools.py").read_text()
    assert "async def get_forecast(self, args: GetForecastArgs) -> GetForecastOutput:" in sdk
    assert 'conditions: Literal["sunny", "cloudy", "rain", "snow"]' in sdk

    # A second harvest of the same server leaves the file untouched.
    os.utime(out, ns=(1_000_000_000, 1_000_000_000))
    status, _, err = harvest(
        capsys, "-o", str(out), "--timeout", TIMEOUT, command=python("mcpserver_tools.py")
    )
    assert status == 0 and "unchanged" in err
    assert out.stat().st_mtime_ns == 1_000_000_000


def _expected(*files: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for name in files:
        tools += json.loads((MCP / name).read_text())["tools"]
    ordered = [{key: tool[key] for key in TOOL_KEYS if key in tool} for tool in tools]
    return sorted(ordered, key=lambda tool: tool["name"])


def test_every_page_is_harvested_exactly_as_sent(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = harvest(
        capsys, "--verbose", "--timeout", TIMEOUT, command=python("paged_server.py")
    )
    assert status == 0, err
    document = json.loads(out)
    assert document["server"] == "paged-server"
    assert document["tools"] == _expected("paged_tools.json")
    assert "5 tools in 3 pages, 1 listing" in err


def test_a_tool_list_change_while_harvesting_lists_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = harvest(
        capsys, "-v", "--timeout", TIMEOUT, command=python("paged_server.py", "--list-changed")
    )
    assert status == 0, err
    assert json.loads(out)["tools"] == _expected("paged_tools.json", "changed_tools.json")
    assert "the tool list changed meanwhile; listing again" in err
    assert "6 tools in 3 pages, 2 listings" in err


def test_server_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The reference server from the npm dev dependencies (`npm ci` installs it)."""
    assert EVERYTHING.exists(), "run `npm ci`: @modelcontextprotocol/server-everything"
    out = tmp_path / "everything.json"
    status, _, err = harvest(
        capsys, "-o", str(out), "-v", "--timeout", TIMEOUT, command=[str(EVERYTHING), "stdio"]
    )
    assert status == 0, err
    document = json.loads(out.read_text())
    assert document["server"] == "mcp-servers/everything"
    names = [tool["name"] for tool in document["tools"]]
    assert names == sorted(names)
    assert {"echo", "get-sum", "get-structured-content"} <= set(names)
    structured = next(t for t in document["tools"] if t["name"] == "get-structured-content")
    assert structured["outputSchema"]["type"] == "object"
    echo = next(t for t in document["tools"] if t["name"] == "echo")
    assert echo["inputSchema"]["required"] == ["message"]
    assert main(["build", str(out), "-o", str(tmp_path / "sdk"), "-q"]) == 0
    assert "get-structured-content" in (tmp_path / "sdk" / "tools.d.ts").read_text()


def test_a_server_that_exits_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid_file, out = tmp_path / "pids", tmp_path / "tools.json"
    status, _, err = harvest(
        capsys, "-o", str(out), "--timeout", "30", command=python("exits.py", str(pid_file))
    )
    assert status == 1
    # Noticed at once: waiting for the timeout would report "no answer within 30 s".
    assert "error: the server closed the connection" in err
    assert "the server's stderr ended with:\n  | exits.py: giving up before the handshake" in err
    assert not out.exists()
    # The server exited by itself, but the helper it left in its process group is ended too.
    assert_gone(pids_from(pid_file))


def test_a_server_that_prints_garbage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid_file, out = tmp_path / "pid", tmp_path / "tools.json"
    status, _, err = harvest(
        capsys, "-o", str(out), "--timeout", "30", command=python("garbage.py", str(pid_file))
    )
    assert status == 1
    # Fails at once: waiting for the timeout would report "no answer within 30 s" instead.
    assert "no answer within" not in err
    assert (
        "error: the server wrote something that is not a JSON-RPC message on stdout: "
        "'Welcome to my server! (this line is not JSON-RPC)'"
    ) in err
    assert not out.exists()
    assert_gone(pids_from(pid_file))


@pytest.mark.slow
def test_a_server_that_never_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid_file, out = tmp_path / "pids", tmp_path / "tools.json"
    started = time.monotonic()
    status, _, err = harvest(
        capsys, "-o", str(out), "--timeout", "3", command=python("hangs.py", str(pid_file))
    )
    assert status == 1
    assert time.monotonic() - started >= 3  # not before the deadline (only a lower bound)
    assert "error: no answer within 3 s while waiting for the handshake" in err
    assert "  | hangs.py: thinking..." in err
    assert not out.exists()
    assert_gone(pids_from(pid_file))  # it ignores SIGTERM and its stdin: the group is killed


@pytest.mark.slow
def test_the_real_command_line_reports_a_broken_server_without_a_traceback(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "harvest",
            "--mcp",
            "-o",
            str(tmp_path / "t.json"),
            "--",
            *python("garbage.py", str(pid_file)),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith("codegen: ") and "garbage.py" in lines[0]
    assert "not a JSON-RPC message" in lines[0]
    assert "Traceback" not in result.stderr
    assert_gone(pids_from(pid_file))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--mcp", "--", "no-such-program-for-codegen"],
            "cannot run 'no-such-program-for-codegen': not found on PATH",
        ),
        (["--mcp", "--", "./missing/server.py"], "cannot run './missing/server.py': no such file"),
        (
            ["--mcp", "--timeout", "0", "--", "true"],
            "--timeout: expected a positive number of seconds, got '0'",
        ),
        (["--mcp", "--timeout", "soon", "--", "true"], "got 'soon'"),
        (["--mcp", "--timeout", "nan", "--", "true"], "got 'nan'"),
        (["--mcp"], "harvest: --mcp needs the server's command"),
        (["--", "true"], "one of the arguments --mcp --config is required"),
    ],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    status = main(["harvest", *args])
    _, err = capsys.readouterr()
    assert status == 2
    assert message in err


def test_without_the_mcp_sdk(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    status = main(["harvest", "--mcp", "--", sys.executable, "-c", "pass"])
    _, err = capsys.readouterr()
    assert status == 2
    assert "pip install 'tool-codegen[mcp]'" in err
