"""`codegen serve` safe by default: a locked HTTP front door (token, Host, Origin, loopback),
nothing taken from the working folder, no sandbox only when the command line says so, no
secret on stderr, bounded upstream messages, coalesced change floods, dead upstreams
restarted, limits from flags and config, and quiet shutdowns that leave no cgroup behind.

Each test starts the real `codegen serve` with real upstreams (`mcp-server-time`, and
`fixtures/serve/hostile_server.py`) and talks to it as clients do."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

from conftest import FIXTURES, ROOT
from support.serve_clients import (
    TIME,
    Serve,
    client_call,
    environment,
    http_serve,
    run,
    write_config,
)

pytestmark = pytest.mark.slow

HOSTILE = FIXTURES / "serve" / "hostile_server.py"


def serve_once(
    *args: str, folder: Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`codegen serve ARGS` run to its end with nothing on stdin."""
    return subprocess.run(
        [sys.executable, "-m", "codegen", "serve", *args],
        capture_output=True,
        text=True,
        cwd=cwd or folder,
        env=environment(folder),
        timeout=120,
        input="",
    )


def request(
    url: str, headers: dict[str, str] | None = None, body: Any = None
) -> tuple[int, dict[str, str]]:
    data = json.dumps(body if body is not None else {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    asked = urllib.request.Request(url, data=data.encode(), method="POST")
    asked.add_header("content-type", "application/json")
    asked.add_header("accept", "application/json, text/event-stream")
    for key, value in (headers or {}).items():
        asked.add_header(key, value)
    try:
        with urllib.request.urlopen(asked, timeout=30) as answer:
            return answer.status, dict(answer.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


def own_cgroups(pid: int) -> list[str]:
    found = []
    for base in ("/sys/fs/cgroup", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory"):
        for root, folders, _ in os.walk(base):
            found += [os.path.join(root, f) for f in folders if f.startswith(f"codegen-{pid}-")]
    return found


# --- the HTTP front door ---------------------------------------------------------------------


def test_http_needs_the_token_a_known_host_and_origin(tmp_path: Path) -> None:
    serve, url, token = http_serve(tmp_path)
    try:
        assert token is not None
        port = url.split(":")[2].split("/")[0]
        program = 'return (await tools.time__get_current_time({"timezone": "UTC"}))["timezone"]'
        names, result = run(lambda: client_call(url, token, program))
        assert names == ["run_code"] and result == {"logs": [], "result": "UTC"}
        assert "Server returned an error response" in failure_of(
            lambda: client_call(url, None, program)
        )
        status, headers = request(url)
        assert status == 401 and headers.get("www-authenticate", "").startswith("Bearer")
        assert request(url, {"Authorization": "Bearer wrong"})[0] == 401
        assert request(url, {"Authorization": f"Basic {token}"})[0] == 401
        bearer = {"Authorization": f"Bearer {token}"}
        assert request(url, {**bearer, "Host": f"evil.example:{port}"})[0] == 421
        assert request(url, {**bearer, "Origin": "https://evil.example"})[0] == 403
        assert request(url, {**bearer, "Origin": "null"})[0] == 403
        allowed = request(url, {**bearer, "Origin": f"http://localhost:{port}"})[0]
        assert allowed not in (401, 403, 421), allowed
        assert serve.stderr.count(token) == 1, "the token is shown once"
        if os.geteuid() == 0:
            assert another_user_status(url) == 401
        assert serve.stop() == 0
        assert "Traceback" not in serve.stderr
        assert own_cgroups(serve.process.pid) == []
    finally:
        serve.kill()


def failure_of(function: Callable[[], Awaitable[Any]]) -> str:
    """The messages of what `function` raised, exception groups flattened."""
    try:
        run(function)
    except BaseException as error:
        pending, said = [error], []
        while pending:
            each = pending.pop()
            said.append(str(each))
            pending.extend(getattr(each, "exceptions", ()))
        return "\n".join(said)
    raise AssertionError("it succeeded")


def another_user_status(url: str) -> int:
    """What a request from another local uid (no token) gets."""
    from support.sandbox_checks import reachable_python

    script = (
        "import sys, urllib.request, urllib.error\n"
        "r = urllib.request.Request(sys.argv[1], data=b'{}', method='POST')\n"
        "try:\n    urllib.request.urlopen(r, timeout=30); print(200)\n"
        "except urllib.error.HTTPError as e:\n    print(e.code)\n"
    )
    done = subprocess.run(
        [reachable_python(), "-I", "-c", script, url],
        user=64123,
        group=64123,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": os.defpath},
        check=True,
    )
    return int(done.stdout.strip())


def test_the_token_from_the_environment_or_the_config_is_never_printed(tmp_path: Path) -> None:
    serve, url, printed = http_serve(tmp_path, CODEGEN_SERVE_TOKEN="env-token-value-1234567890")
    try:
        assert printed is None and "env-token-value" not in serve.stderr
        assert "$CODEGEN_SERVE_TOKEN" in serve.stderr
        assert request(url, {"Authorization": "Bearer env-token-value-1234567890"})[0] != 401
        assert request(url)[0] == 401
    finally:
        assert serve.stop() == 0
        serve.kill()
    folder = tmp_path / "second"
    folder.mkdir()
    config = write_config(
        folder, {"time": {"command": TIME}}, http_token="${MY_TOKEN}", http="127.0.0.1:0"
    )
    serve = Serve(
        "--config",
        str(config),
        cwd=folder,
        env=environment(folder, MY_TOKEN="cfg-token-abcdefghijklmnop"),
    )
    try:
        url = serve.wait_for(r"listening on (http://\S+)").group(1)
        serve.wait_for("clients send")
        assert "cfg-token" not in serve.stderr
        assert request(url, {"Authorization": "Bearer cfg-token-abcdefghijklmnop"})[0] != 401
        assert request(url)[0] == 401
    finally:
        assert serve.stop() == 0
        serve.kill()


def test_off_loopback_needs_an_explicit_flag_and_still_the_token(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"time": {"command": TIME}})
    refused = serve_once("--config", str(config), "--http", "0.0.0.0:0", folder=tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert "not a loopback address" in refused.stderr and "--http-allow-remote" in refused.stderr
    assert "Traceback" not in refused.stderr
    serve = Serve(
        "--config",
        str(config),
        "--http",
        "0.0.0.0:0",
        "--http-allow-remote",
        cwd=tmp_path,
        env=environment(tmp_path),
    )
    try:
        url = serve.wait_for(r"listening on (http://\S+)").group(1)
        serve.wait_for("off loopback")
        local = url.replace("0.0.0.0", "127.0.0.1")
        assert request(local)[0] == 401
    finally:
        assert serve.stop() == 0
        serve.kill()


def test_a_loopback_address_written_another_way_keeps_every_check(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"time": {"command": TIME}})
    serve = Serve(
        "--config", str(config), "--http", "127.1:0", cwd=tmp_path, env=environment(tmp_path)
    )
    try:
        url = serve.wait_for(r"listening on (http://\S+)").group(1)
        token = re.search(r"Bearer ([A-Za-z0-9_\-]+)\"", serve.wait_for("clients send").string)
        assert token is not None
        port = url.rsplit(":", 1)[1].split("/")[0]
        local = f"http://127.0.0.1:{port}/mcp"
        bearer = {"Authorization": f"Bearer {token.group(1)}"}
        assert request(local, {**bearer, "Host": f"rebound.example:{port}"})[0] == 421
        assert request(local)[0] == 401
        assert request(local, bearer)[0] not in (401, 403, 421)
    finally:
        assert serve.stop(signal.SIGINT) == 0
        assert "Traceback" not in serve.stderr
        serve.kill()


# --- nothing from the working folder ---------------------------------------------------------

PLANTED = """\
[tool.codegen]
sandbox = "none"

[tool.codegen.serve]
sandbox = "bubblewrap"

[tool.codegen.serve.mcpServers.planted]
command = "{python}"
args = ["-c", "open({mark!r}, 'w').write('ran')"]
"""


def test_a_planted_project_changes_nothing(tmp_path: Path) -> None:
    """A repository the client starts serve in holds a pyproject.toml that turns the sandbox
    off and starts its own command: neither happens, with or without --config."""
    workspace = tmp_path / "repo" / "src"
    workspace.mkdir(parents=True)
    mark = tmp_path / "planted-ran"
    (tmp_path / "repo" / "pyproject.toml").write_text(
        PLANTED.format(python=sys.executable, mark=str(mark))
    )
    alone = serve_once(folder=tmp_path, cwd=workspace)
    assert alone.returncode == 2 and "nothing is read from the working folder" in alone.stderr
    assert not mark.exists()
    config = write_config(tmp_path, {"time": {"command": TIME}})
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codegen", "serve", "--config", str(config)],
        env=environment(tmp_path),
        cwd=str(workspace),
    )
    program = (
        "import os\nreturn [os.path.exists('/etc/passwd'), os.getuid(), sorted(os.listdir('/'))]"
    )

    async def session() -> Any:
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                result = await client.call_tool(
                    "run_code", {"code": program, "description": "Look"}
                )
                return result.structured_content

    outcome = run(session)
    passwd, uid, top = outcome["result"]
    assert passwd is False and uid == 65534 and "home" not in top, outcome
    assert not mark.exists()
    assert "WITHOUT isolation" not in (tmp_path / "stderr").read_text()


def test_no_sandbox_only_from_the_command_line_and_announced(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"time": {"command": TIME}}, sandbox="none")
    done = serve_once("--config", str(config), folder=tmp_path)
    assert done.returncode == 1
    assert "/codegen/sandbox: error: a config cannot turn the sandbox off" in done.stderr
    config = write_config(tmp_path, {"time": {"command": TIME}})
    serve = Serve(
        "--config", str(config), "--sandbox", "none", cwd=tmp_path, env=environment(tmp_path)
    )
    try:
        serve.wait_for("WITHOUT isolation")
        serve.wait_for(": 2 tools")  # the upstream is served
    finally:
        serve.process.stdin.close()  # type: ignore[union-attr]
        assert serve.stop() == 0
        serve.kill()


def test_secrets_in_arguments_are_never_printed(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "missing": {
                "command": "codegen-no-such-server",
                "args": ["--key", "${CODEGEN_SECRET}"],
            },
            "time": {"command": TIME, "args": ["--local-timezone", "${CODEGEN_ZONE}"]},
        },
    )
    serve = Serve(
        "--config",
        str(config),
        cwd=tmp_path,
        env=environment(tmp_path, CODEGEN_SECRET="hunter2-secret", CODEGEN_ZONE="UTC"),
    )
    try:
        serve.wait_for(r'"time" .*: 2 tools')
        serve.wait_for("failed to start")
    finally:
        serve.process.stdin.close()  # type: ignore[union-attr]
        serve.stop()
        serve.kill()
    assert "hunter2" not in serve.stderr
    assert "--key ${CODEGEN_SECRET}" in serve.stderr and "${CODEGEN_ZONE}" in serve.stderr


# --- upstreams that misbehave -----------------------------------------------------------------


def hostile_parameters(folder: Path, *flags: str) -> StdioServerParameters:
    config = write_config(
        folder,
        {
            "hostile": {"command": sys.executable, "args": [str(HOSTILE)]},
            "time": {"command": TIME},
        },
    )
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "codegen", "serve", "--config", str(config), *flags],
        env=environment(folder),
        cwd=str(folder),
    )


BIG_RESULT = """\
try:
    await tools.hostile__huge({"mib": 48})
    said = "answered"
except ToolCallError as error:
    said = str(error)
small = await tools.hostile__small({})
zone = (await tools.time__get_current_time({"timezone": "UTC"}))["timezone"]
return [said, small, zone]
"""


def test_an_oversized_upstream_message_fails_only_its_call(tmp_path: Path) -> None:
    parameters = hostile_parameters(tmp_path, "--upstream-message", "1MiB")

    async def session() -> Any:
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                result = await client.call_tool(
                    "run_code", {"code": BIG_RESULT, "description": "Big"}
                )
                again = await client.call_tool(
                    "run_code",
                    {"code": "return await tools.hostile__small({})", "description": "Small"},
                )
                return result.structured_content, again.structured_content

    first, second = run(session)
    said, small, zone = first["result"]
    assert "at most 1048576" in said and small == "ok" and zone == "UTC", first
    assert second["result"] == "ok"
    stderr = (tmp_path / "stderr").read_text()
    assert re.search(r"a message of \d+ bytes was refused \(at most 1048576\)", stderr), stderr


def test_a_flood_of_change_notices_is_coalesced(tmp_path: Path) -> None:
    """In the full tier (a budget the whole SDK fits), where every change of the tools is a
    change of the description's bytes."""
    parameters = hostile_parameters(tmp_path, "--description-budget", "1000000")

    async def session() -> tuple[int, str]:
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                await client.list_tools()
                async with client.listen(tools_list_changed=True) as changes:
                    result = await client.call_tool(
                        "run_code",
                        {
                            "code": 'return await tools.hostile__flood({"count": 300})',
                            "description": "Flood",
                        },
                    )
                    assert result.structured_content["result"] == "version_300"
                    notices, description = 0, ""
                    async for _ in changes:  # until a notice brings the last version
                        notices += 1
                        listed = await client.list_tools()
                        description = listed.tools[0].description or ""
                        if "version_300" in description:
                            break
                return notices, description

    notices, description = run(session)
    # 300 changes upstream; the clients hear of a handful (one notice per interval at most)
    assert 1 <= notices <= 30, notices
    assert "version_300" in description and "version_299" not in description


def test_a_dead_upstream_is_restarted(tmp_path: Path) -> None:
    parameters = hostile_parameters(tmp_path)

    async def session() -> tuple[str, str]:
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                first = await client.call_tool(
                    "run_code",
                    {"code": "return await tools.hostile__pid({})", "description": "Pid"},
                )
                pid = int(first.structured_content["result"])
                os.kill(pid, signal.SIGKILL)
                for _ in range(120):
                    await anyio.sleep(0.5)
                    again = await client.call_tool(
                        "run_code",
                        {"code": "return await tools.hostile__pid({})", "description": "Again"},
                    )
                    if not again.is_error and again.structured_content.get("result"):
                        return str(pid), again.structured_content["result"]
                raise AssertionError("the upstream never came back")

    before, after = run(session)
    assert before != after
    stderr = (tmp_path / "stderr").read_text()
    assert "restarting in 1 s" in stderr and "is back" in stderr, stderr
    assert "Traceback" not in stderr


# --- limits ------------------------------------------------------------------------------------


def test_limits_come_from_flags_and_config(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"time": {"command": TIME}}, limits={"output": "1KiB"})
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codegen", "serve", "--config", str(config), "--timeout", "3"],
        env=environment(tmp_path),
        cwd=str(tmp_path),
    )

    async def session() -> tuple[str, str]:
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                slow = await client.call_tool(
                    "run_code", {"code": "import time\ntime.sleep(30)", "description": "Sleep"}
                )
                loud = await client.call_tool(
                    "run_code", {"code": "print('x' * 5000)", "description": "Print"}
                )
                return slow.content[0].text, loud.content[0].text  # type: ignore[union-attr]

    slow, loud = run(session)
    assert "longer than 3 seconds" in slow and "more than 1024 bytes" in loud, (slow, loud)
    assert "each run: 3 s" in (tmp_path / "stderr").read_text()
    bad = serve_once("--config", str(config), "--memory", "lots", folder=tmp_path)
    assert bad.returncode == 2 and "serve: --memory: expected a size" in bad.stderr


# --- the same front door and folder rules with serve running as a normal user -------------


@dataclass(frozen=True)
class NormalUser:
    """How to start `codegen serve` and a fixture server as a normal user: as `PROBE_ID`
    from copies it can reach when the tests run as root, else as the tests' own user."""

    home: Path
    serve_argv: Callable[..., list[str]]
    fixture_server: Callable[[Path], dict[str, Any]]
    process: dict[str, Any]
    script_argv: Callable[..., list[str]]
    """`script_argv(PATH, *ARGUMENTS)`: a script that takes the search path first."""

    @staticmethod
    def here(tmp_path: Path) -> NormalUser:
        if os.geteuid() != 0:
            return NormalUser.this_user(tmp_path)
        from support import unprivileged

        home = unprivileged.user_folder(f"home-{os.getpid()}-{tmp_path.name}")
        return NormalUser(
            home,
            unprivileged.serve_argv,
            unprivileged.fixture_server,
            unprivileged.as_user(),
            unprivileged.script_argv,
        )

    @staticmethod
    def this_user(tmp_path: Path) -> NormalUser:
        """The tests' own user, root or not."""
        return NormalUser(
            tmp_path,
            lambda *arguments: [sys.executable, "-m", "codegen", "serve", *arguments],
            lambda path: {"command": sys.executable, "args": [str(path)]},
            {},
            lambda path, *arguments: [sys.executable, str(path), "", *arguments],
        )

    def own(self, path: Path) -> None:
        if self.process:
            os.chown(path, self.process["user"], self.process["group"])


def test_serve_as_a_normal_user_keeps_the_door_locked_and_the_folder_out(tmp_path: Path) -> None:
    """`codegen serve` started as an unprivileged uid: HTTP still needs the token and a known
    Host, and a planted project in its working folder still changes nothing."""
    user = NormalUser.here(tmp_path)
    home = user.home
    workspace = home / "repo" / "src"
    workspace.mkdir(parents=True)
    mark = home / "planted-ran"
    (home / "repo" / "pyproject.toml").write_text(
        PLANTED.format(python=sys.executable, mark=str(mark))
    )
    for path in (home / "repo", workspace):
        user.own(path)
    config = write_config(home, {"hostile": user.fixture_server(HOSTILE)})
    env = {"PATH": os.defpath, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg")}
    env["PYTHONPATH"] = str(ROOT)  # the copies run isolated (-I) and ignore it
    alone = subprocess.run(
        user.serve_argv(),
        capture_output=True,
        text=True,
        cwd=workspace,
        env=env,
        timeout=120,
        input="",
        **user.process,
    )
    assert alone.returncode == 2 and "nothing is read from the working folder" in alone.stderr
    assert not mark.exists()
    argv = user.serve_argv("--config", str(config), "--http", "127.0.0.1:0")
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=workspace,
        env=env,
        text=True,
        **user.process,
    )
    try:
        assert process.stderr is not None
        lines: list[str] = []
        while not any("clients send" in line for line in lines):
            line = process.stderr.readline()
            assert line, f"serve ended early: {lines}"
            lines.append(line.rstrip("\n"))
        text = "\n".join(lines)
        url = re.search(r"listening on (http://\S+)", text)
        token = re.search(r"Bearer ([A-Za-z0-9_\-]+)\"", text)
        assert url is not None and token is not None, text
        port = url.group(1).rsplit(":", 1)[1].split("/")[0]
        assert request(url.group(1))[0] == 401
        bearer = {"Authorization": f"Bearer {token.group(1)}"}
        assert request(url.group(1), {**bearer, "Host": f"evil.example:{port}"})[0] == 421
        program = "import os\nreturn [await tools.hostile__small({}), os.getuid(), os.path.exists('/etc/passwd')]"
        names, result = run(lambda: client_call(url.group(1), token.group(1), program))
        assert names == ["run_code"] and result["result"] == ["ok", 65534, False], result
        assert not mark.exists()
        assert "memory cgroup" in text  # how a run's memory is bounded here, said at start
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        rest = process.stderr.read() if process.stderr else ""
        assert "Traceback" not in rest


# --- upstreams that die or break, in front of serve run as either user ----------------------

DYING = FIXTURES / "serve" / "dying_server.py"
PATCHED = FIXTURES / "serve" / "patched_serve.py"
START_TIMEOUT = 5
"""The start-up deadline of the upstream that never answers (60 s by default)."""
CLOSED = r"the server closed the connection \(it exited or closed its stdout\)"
FAILURES = {
    "exits": rf"{CLOSED} during the handshake",
    "closes": rf"{CLOSED} during the handshake",
    "garbage": (
        r"the server wrote something that is not a JSON-RPC message on stdout: "
        r"'Welcome to my server! \(this line is not JSON-RPC\)' during the handshake"
    ),
    "hangs": rf"no answer within {START_TIMEOUT} s during the handshake",
    "unlisted": rf"{CLOSED} while listing its tools",
    "buggy": r"internal error: RuntimeError: mounting buggy broke \(a bug in codegen\)",
}
"""Each upstream that cannot start, and the reason serve gives."""
SURVIVOR = """\
try:
    await tools.dies__die({})
    said = "answered"
except ToolCallError as error:
    said = str(error)
return [await tools.hostile__small({}), said]
"""


@pytest.mark.parametrize("host", ["this user", "a normal user"])
def test_dying_and_broken_upstreams_never_end_serve(tmp_path: Path, host: str) -> None:
    """In front of upstreams that exit at once, close stdout mid-handshake, print garbage,
    never answer, exit when asked for their tools, set off a bug of codegen while they are
    mounted (`patched_serve.py --break-mount`) or exit in the middle of a call, `codegen
    serve` starts, lists its tools, runs programs against the upstream that works, and says
    on stderr which upstream failed and how; no failure ends it or shows as an internal
    error of the whole command."""
    if host == "a normal user" and os.geteuid() != 0:
        pytest.skip("the tests' own user is already a normal user")
    user = NormalUser.here(tmp_path) if host == "a normal user" else NormalUser.this_user(tmp_path)
    home = user.home

    def dying(mode: str) -> dict[str, Any]:
        server = user.fixture_server(DYING)
        return {**server, "args": [*server["args"], mode]}

    config = write_config(
        home,
        {
            "exits": dying("exit"),
            "closes": dying("close-stdout"),
            "garbage": dying("garbage"),
            "hangs": dying("hang"),
            "unlisted": dying("list-then-die"),
            "buggy": user.fixture_server(HOSTILE),
            "dies": dying("call-then-die"),
            "hostile": user.fixture_server(HOSTILE),
        },
    )
    env = {"PATH": os.defpath, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg")}
    env["PYTHONPATH"] = str(ROOT)  # the copies run isolated (-I) and ignore it
    patches = ("--break-mount", "buggy", "--start-timeout", "hangs", str(START_TIMEOUT))
    argv = user.script_argv(PATCHED, *patches, "serve", "--config", str(config), "--http")
    process = subprocess.Popen(
        [*argv, "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=home,
        env=env,
        text=True,
        **user.process,
    )
    lines: list[str] = []
    try:
        assert process.stderr is not None
        while not any("clients send" in line for line in lines):
            line = process.stderr.readline()
            assert line, f"serve ended early: {lines}"
            lines.append(line.rstrip("\n"))
        text = "\n".join(lines)
        url = re.search(r"listening on (http://\S+)", text)
        token = re.search(r"Bearer ([A-Za-z0-9_\-]+)\"", text)
        assert url is not None and token is not None, text
        names, result = run(lambda: client_call(url.group(1), token.group(1), SURVIVOR))
        assert names == ["run_code"]
        small, said = result["result"]
        assert small == "ok" and said != "answered", result
        for name, reason in FAILURES.items():
            failed = rf'^codegen serve: "{name}" \(.*\) failed to start: {reason}; its tools are left out$'
            assert any(re.search(failed, line) for line in lines), (name, text)
        for name, count in (("hostile", 8), ("dies", 1)):
            started = rf'^codegen serve: "{name}" \(.*\): {count} tools?$'
            assert any(re.search(started, line) for line in lines), (name, text)
        program = "return await tools.hostile__small({})"
        assert run(lambda: client_call(url.group(1), token.group(1), program))[1]["result"] == "ok"
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)
        rest = process.stderr.read() if process.stderr else ""
    told = "\n".join([*lines, rest])
    assert code == 0, told
    assert re.search(r'"dies" \(.*\) stopped \(.*\); its 1 tool is removed', told), told
    assert "Traceback" not in told and "codegen: internal error" not in told, told
