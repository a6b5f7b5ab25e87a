"""`codegen harvest --config FILE -o DIR`: every server of an MCP client config, the file
`codegen serve --config` reads, harvested through serve's own reader and connection.

The servers are real: the `mcp`-SDK fixtures of `tests/fixtures/mcp/` (fast), and, in the
slow tests, `mcp-server-time` (PyPI), `@modelcontextprotocol/server-everything` (npm) and a
`codegen serve --http` as a streamable HTTP upstream; the harvested names are checked
against the names a real `codegen serve` exposes for the same config.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from codegen.cli import main
from codegen.load.sources import load_sources
from codegen.mcp.listing import TOOL_KEYS
from conftest import FIXTURES, ROOT
from support.processes import running

MCP = FIXTURES / "mcp"
EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"
TIME = shutil.which("mcp-server-time") or str(Path(sys.executable).parent / "mcp-server-time")
TIMEOUT = "60"
"""Generous for a busy machine."""


def assert_gone(pids: list[int]) -> None:
    """Every pid ends within a few seconds (killing is asynchronous)."""
    deadline = time.monotonic() + 60
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in pids if running(pid)], "processes left running"


def pids_from(path: Path) -> list[int]:
    return [int(word) for word in path.read_text().split()]


def fixture(script: str, **entry: Any) -> dict[str, Any]:
    """A config entry starting one of the fixture servers over stdio."""
    return {"command": sys.executable, "args": [str(MCP / script)], **entry}


def write_config(folder: Path, servers: dict[str, Any], **settings: Any) -> Path:
    path = folder / "servers.json"
    document: dict[str, Any] = {"mcpServers": servers}
    if settings:
        document["codegen"] = settings
    path.write_text(json.dumps(document, indent=2))
    return path


def harvest(
    capsys: pytest.CaptureFixture[str], config: Path, out: Path | None, *args: str
) -> tuple[int, str, str]:
    output = ["-o", str(out)] if out is not None else []
    status = main(["harvest", "--config", str(config), *output, "--timeout", TIMEOUT, *args])
    stdout, err = capsys.readouterr()
    assert "Traceback" not in stdout + err
    return status, stdout, err


def names(folder: Path) -> list[str]:
    """The tool names `codegen sdk DIR --namespace` builds from the harvested files."""
    loaded = load_sources([str(folder)], namespace=True)
    assert not [d for d in loaded.diagnostics if d.is_error], loaded.diagnostics
    return sorted(tool.name for tool in loaded.tools)


def test_every_server_is_written_to_its_own_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(
        tmp_path,
        {
            "Weather Demo": fixture("mcpserver_tools.py", deny=["reset_station"]),
            "paged": fixture("paged_server.py", allow=["ping", "get-user", "no_such_tool"]),
            "off": {"command": "codegen-no-such-server", "disabled": True},
        },
    )
    out = tmp_path / "tools"
    status, stdout, err = harvest(capsys, config, out)
    assert status == 0, err
    assert stdout == ""
    assert sorted(path.name for path in out.iterdir()) == ["paged.json", "weather_demo.json"]
    assert f"wrote {out.as_posix()}/weather_demo.json (2 tools)" in err
    assert f"wrote {out.as_posix()}/paged.json (2 tools)" in err
    assert "codegen-no-such-server" not in err  # disabled: never started
    assert (
        '"paged" (' in err
        and "): warning: allow names 'no_such_tool', which the server does not list" in err
    )

    weather = json.loads((out / "weather_demo.json").read_text())
    assert list(weather) == ["server", "tools"]
    assert weather["server"] == "Weather Demo"  # its name in the config: serve's prefix
    assert [tool["name"] for tool in weather["tools"]] == ["add", "get_forecast"]
    for tool in weather["tools"]:
        assert list(tool) == [key for key in TOOL_KEYS if key in tool]
    paged = json.loads((out / "paged.json").read_text())
    expected = json.loads((MCP / "paged_tools.json").read_text())["tools"]
    assert paged["tools"] == sorted(
        (t for t in expected if t["name"] in {"ping", "get-user"}), key=lambda t: t["name"]
    )

    # Built with --namespace, the names are serve's: `prefix__tool`.
    assert names(out) == [
        "paged__get-user",
        "paged__ping",
        "weather_demo__add",
        "weather_demo__get_forecast",
    ]
    sdk = ["sdk", str(out), "--namespace", "--lang", "python", "-o", str(tmp_path / "t.py")]
    assert main(sdk) == 0
    capsys.readouterr()

    # Harvested again, nothing changes.
    mtimes = {path.name: path.stat().st_mtime_ns for path in out.iterdir()}
    status, _, err = harvest(capsys, config, out)
    assert status == 0, err
    assert err.count("unchanged ") == 2
    assert {path.name: path.stat().st_mtime_ns for path in out.iterdir()} == mtimes


def test_a_server_that_fails_is_reported_and_the_others_are_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pid_file = tmp_path / "pid"
    config = write_config(
        tmp_path,
        {
            "missing": {"command": "codegen-no-such-server"},
            "garbage": {
                "command": sys.executable,
                "args": [str(MCP / "garbage.py"), str(pid_file)],
            },
            "weather": fixture("mcpserver_tools.py"),
        },
    )
    out = tmp_path / "tools"
    out.mkdir()
    (out / "missing.json").write_text("kept\n")  # a failed server's last harvest stays
    status, _, err = harvest(capsys, config, out)
    assert status == 1
    assert (
        'codegen: "missing" (codegen-no-such-server): error: cannot run '
        "'codegen-no-such-server': not found on PATH"
    ) in err
    assert re.search(
        r'codegen: "garbage" \(.*garbage\.py .*\): error: the server wrote something that is '
        r"not a JSON-RPC message on stdout: 'Welcome to my server! \(this line is not JSON-RPC\)'",
        err,
    )
    assert (
        'harvest: 2 of 3 servers failed ("missing", "garbage"): their files are left as '
        "before, the other written"
    ) in err
    assert sorted(path.name for path in out.iterdir()) == ["missing.json", "weather.json"]
    assert (out / "missing.json").read_text() == "kept\n"
    assert len(json.loads((out / "weather.json").read_text())["tools"]) == 3
    assert_gone(pids_from(pid_file))


def test_when_every_server_fails_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, {"missing": {"command": "./no/such/server"}})
    out = tmp_path / "tools"
    status, _, err = harvest(capsys, config, out)
    assert status == 1
    assert "cannot run './no/such/server': no such file" in err
    assert 'harvest: 1 of 1 servers failed ("missing"): nothing was written' in err
    assert not out.exists()


def test_variables_are_expanded_and_never_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-7f1c"
    monkeypatch.setenv("HARVEST_FIXTURES", str(MCP))
    monkeypatch.setenv("HARVEST_SECRET", secret)
    monkeypatch.delenv("HARVEST_UNSET", raising=False)
    config = write_config(
        tmp_path,
        {
            "weather": {
                "command": sys.executable,
                "args": ["${HARVEST_FIXTURES}/mcpserver_tools.py", "--key=${HARVEST_SECRET}"],
                "env": {"TOKEN": "${HARVEST_SECRET}", "MODE": "${HARVEST_UNSET:-plain}"},
            },
            "exits": {
                "command": sys.executable,
                "args": [
                    "${HARVEST_FIXTURES}/exits.py",
                    str(tmp_path / "pids"),
                    "${HARVEST_SECRET}",
                ],
            },
        },
    )
    out = tmp_path / "tools"
    status, stdout, err = harvest(capsys, config, out, "--verbose")
    assert status == 1  # `exits` fails; its error names it as written
    assert '"exits" (' in err and "exits.py" in err and "${HARVEST_SECRET}" in err
    assert "--key=${HARVEST_SECRET}" in err
    assert secret not in stdout + err
    assert secret not in (out / "weather.json").read_text()
    assert_gone(pids_from(tmp_path / "pids"))


def test_the_upstream_message_limit_of_the_config_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The config's `limits.upstream_message` caps what harvest reads, as it caps serve."""
    config = write_config(
        tmp_path,
        {"weather": fixture("mcpserver_tools.py")},
        limits={"upstream_message": 1500},
    )
    status, _, err = harvest(capsys, config, tmp_path / "tools")
    assert status == 1
    assert re.search(
        r"error: the server answered with an error while listing tools \(page 1\): the server "
        r"sent a message of \d+ bytes; messages from a server may have at most 1500 "
        r"\(the upstream_message limit\)",
        err,
    ), err


def test_a_pyproject_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        "[tool.codegen.serve]\nmode = 'code'\n"
        "[tool.codegen.serve.mcpServers.weather]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(MCP / 'mcpserver_tools.py'))}]\n"
        "allow = ['add']\n"
    )
    status, _, err = harvest(capsys, pyproject, tmp_path / "tools")
    assert status == 0, err
    assert names(tmp_path / "tools") == ["weather__add"]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"mcpServers": {"t": {"command": "x", "bogus": 1}}},
            "servers.json:/mcpServers/t/bogus: error: unknown key 'bogus'",
        ),
        (
            {"mcpServers": {"t": {"url": "${HARVEST_UNSET}"}}},
            "servers.json:/mcpServers/t/url: error: environment variable HARVEST_UNSET is not set",
        ),
        (
            {"mcpServers": {"t": {"command": "x", "disabled": True}}},
            "servers.json:/mcpServers: error: no upstream servers to serve (every entry is "
            "disabled)",
        ),
        (
            {"codegen": {"sandbox": "none"}, "mcpServers": {"t": {"command": "x"}}},
            "servers.json:/codegen/sandbox: error: a config cannot turn the sandbox off",
        ),
        ({"servers": {}}, 'servers.json:: error: no "mcpServers" object'),
    ],
)
def test_an_invalid_config_is_refused_as_serve_refuses_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    document: dict[str, Any],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HARVEST_UNSET", raising=False)
    Path("servers.json").write_text(json.dumps(document))
    status = main(["harvest", "--config", "servers.json", "-o", "tools"])
    _, err = capsys.readouterr()
    assert status == 1
    assert message in err
    assert not Path("tools").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--config", "missing.json", "-o", "out"], "missing.json: cannot read"),
        (["--config", "servers.json"], "--config writes one file per server"),
        (["--config", "servers.json", "-o", "file.txt"], "-o file.txt: not a directory"),
        (["--config", "servers.json", "-o", "out", "--", "true"], "--config takes no COMMAND"),
        (["--config", "servers.json", "--mcp", "--", "true"], "not allowed with argument"),
        (["--config", "pyproject.toml", "-o", "out"], "has no [tool.codegen.serve] table"),
        (["--config", "servers.json", "-o", "out", "--timeout", "0"], "--timeout"),
        (["--config", "servers.json", "-o", "out", "--server", "t"], "--server names the one"),
        (["--mcp", "--server", "Ωμέγα", "--", "true"], "leaves no ASCII letter or digit"),
    ],
)
def test_usage_errors(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    write_config(tmp_path, {"t": {"command": "codegen-no-such-server"}})
    Path("file.txt").write_text("")
    Path("pyproject.toml").write_text("[tool.codegen]\nsources = []\n")
    status = main(["harvest", *args])
    _, err = capsys.readouterr()
    assert status == 2
    assert message in err
    assert not Path("out").exists()


# --- against the real servers and a real `codegen serve` -------------------------------------

TOKEN = "harvest-e2e-token-0c4e"
SERVE = (sys.executable, "-m", "codegen", "serve")


def _front(tmp_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`codegen serve --http` fronting `mcp-server-time` (under `both`, so it lists the time
    tools beside run_code): a streamable HTTP upstream. Returns it and its URL."""
    folder = tmp_path / "front"
    folder.mkdir()
    config = write_config(folder, {"time": {"command": TIME}})
    process = subprocess.Popen(
        [*SERVE, "--config", str(config), "--http", "127.0.0.1:0", "--mode", "both"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT), "CODEGEN_SERVE_TOKEN": TOKEN},
    )
    assert process.stderr is not None
    lines: list[str] = []
    while True:
        raw = process.stderr.readline()
        assert raw, f"serve ended early: {lines}"
        lines.append(raw.decode())
        found = re.search(r"listening on (http://\S+)", lines[-1])
        if found:
            return process, found.group(1)


def _served_names(config: Path, environ: dict[str, str]) -> list[str]:
    """The tools a real `codegen serve --mode both` offers for `config`, run_code aside."""
    import anyio
    from mcp import Client, StdioServerParameters, stdio_client

    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codegen", "serve", "--config", str(config), "--mode", "both"],
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), **environ},
    )

    async def session() -> list[str]:
        with anyio.fail_after(180), (config.parent / "serve.stderr").open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                listed = await client.list_tools()
                return sorted(tool.name for tool in listed.tools if tool.name != "run_code")

    return anyio.run(session)


@pytest.mark.slow
def test_the_harvest_names_what_serve_exposes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """stdio (`mcp-server-time`, the everything server) and streamable HTTP (a `codegen
    serve --http`) upstreams, `${VAR}`s, deny, a disabled entry and one that cannot start:
    the files, built with --namespace, hold exactly the tools `codegen serve` offers for the
    same config, under the same names; no process is left."""
    assert EVERYTHING.exists(), "run `npm ci`: @modelcontextprotocol/server-everything"
    before = {child.pid for child in psutil.Process().children(recursive=True)}
    front, url = _front(tmp_path)
    try:
        environ = {"HARVEST_TOKEN": TOKEN, "HARVEST_ZONE": "Europe/Paris"}
        for key, value in environ.items():
            monkeypatch.setenv(key, value)
        config = write_config(
            tmp_path,
            {
                "time": {"command": TIME, "args": ["--local-timezone", "${HARVEST_ZONE:-UTC}"]},
                "everything": {"command": str(EVERYTHING), "deny": ["get-env"]},
                "Front Door": {
                    "url": url,
                    "headers": {"Authorization": "Bearer ${HARVEST_TOKEN}"},
                    "deny": ["run_code"],
                },
                "off": {"command": "codegen-no-such-server", "disabled": True},
                "missing": {"command": "codegen-no-such-server"},
            },
        )
        out = tmp_path / "tools"
        status, _, err = harvest(capsys, config, out)
        assert status == 1  # "missing" cannot start; the others are written
        assert '"missing" (codegen-no-such-server): error: cannot run' in err
        assert TOKEN not in err
        assert sorted(path.name for path in out.iterdir()) == [
            "everything.json",
            "front_door.json",
            "time.json",
        ]
        harvested = names(out)
        assert "front_door__time__get_current_time" in harvested
        assert "time__convert_time" in harvested and "everything__echo" in harvested
        assert "everything__get-env" not in harvested
        assert not [name for name in harvested if name.endswith("run_code")]
        assert harvested == _served_names(config, environ)
        # The harvest left none of its servers running (serve's are gone with it too).
        left = [
            child
            for child in psutil.Process().children(recursive=True)
            if child.pid not in before and child.pid != front.pid
        ]
        front_family = {child.pid for child in psutil.Process(front.pid).children(recursive=True)}
        assert_gone([child.pid for child in left if child.pid not in front_family])
    finally:
        front.send_signal(signal.SIGINT)
        try:
            front.wait(timeout=60)
        except subprocess.TimeoutExpired:
            front.kill()
            front.wait()


@pytest.mark.slow
def test_harvest_mcp_with_the_config_name_names_tools_as_serve_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One naming rule: `harvest --mcp --server time` writes the name `serve` knows the
    server by, as `harvest --config` does, so `--namespace` gives serve's names; without
    `--server` the server's own name (`mcp-time`) stands in, and names differ."""
    config = write_config(tmp_path, {"time": {"command": TIME}})
    served = _served_names(config, {})
    assert served == ["time__convert_time", "time__get_current_time"]
    from_config = tmp_path / "from_config"
    status, _, err = harvest(capsys, config, from_config)
    assert status == 0, err
    assert names(from_config) == served
    named = tmp_path / "named"
    named.mkdir()
    target = str(named / "time.json")
    status = main(
        ["harvest", "--mcp", "--server", "time", "-o", target, "--timeout", TIMEOUT, "--", TIME]
    )
    _, err = capsys.readouterr()
    assert status == 0, err
    assert json.loads((named / "time.json").read_text())["server"] == "time"
    assert names(named) == served
    unnamed = tmp_path / "unnamed"
    unnamed.mkdir()
    status = main(
        ["harvest", "--mcp", "-o", str(unnamed / "time.json"), "--timeout", TIMEOUT, "--", TIME]
    )
    _, err = capsys.readouterr()
    assert status == 0, err
    assert names(unnamed) == ["mcp_time__convert_time", "mcp_time__get_current_time"]


README_BLOCK = re.compile(
    r"`\{\"server\": \"<its name in the config>\", \"tools\": \[\.\.\.\]\}`:\n\n```sh\n(?P<commands>.*?)```",
    re.S,
)


@pytest.mark.slow
def test_the_readme_harvest_from_a_config_runs_as_written(tmp_path: Path) -> None:
    """README.md's two commands, as written, with `~` a fresh home whose serve config
    fronts `mcp-server-time` (under a name with a space, as client configs often have)."""
    found = README_BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert found is not None, "README.md lost its harvest-from-a-config example"
    home = tmp_path / "home"
    config = home / ".config" / "codegen" / "serve.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {"Time Server": {"command": TIME}}}))
    work = tmp_path / "work"
    work.mkdir()
    bin_dir = Path(sys.executable).parent
    env = {
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
    }
    script = 'set -euo pipefail\ncodegen() { python -m codegen "$@"; }\n' + found["commands"]
    done = subprocess.run(
        ["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    harvested = json.loads((work / "tools" / "time_server.json").read_text())
    assert harvested["server"] == "Time Server"
    assert {tool["name"] for tool in harvested["tools"]} == {"get_current_time", "convert_time"}
    generated = "\n".join(p.read_text() for p in (work / "generated").rglob("*.py"))
    assert "time_server__get_current_time" in generated
