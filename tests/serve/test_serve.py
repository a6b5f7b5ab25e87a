"""`codegen serve` settings and behaviour short of the two real upstreams: the config
format and its errors, the command line, the runtime seam, where the SDK goes, and an
upstream whose tool list changes (`tests/fixtures/serve/changing_server.py`)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

from codegen.cli import main
from codegen.codemode.presentation.languages import RUN_CODE_FLAVORS
from codegen.codemode.run_code.definition import run_code_tool, with_sdk
from codegen.codemode.runtimes.by_language import (
    RuntimeUnavailableError,
    create_runtime,
)
from codegen.errors import InvalidInputError, UsageError
from codegen.mcp.config import (
    HTTP_LIMIT_KEYS,
    LIMIT_KEYS,
    SERVER_KEYS,
    SETTING_KEYS,
    ServeSettings,
    load_servers_file,
    load_table,
    parse_address,
    parse_servers,
    user_config,
)
from codegen.mcp.config_example import example_config
from codegen.serve.tools import mount
from conftest import ROOT

CHANGING = ROOT / "tests" / "fixtures" / "serve" / "changing_server.py"


def problem(servers: Any, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(InvalidInputError) as raised:
        parse_servers(servers, "servers.json", "/mcpServers", environ or {})
    return str(raised.value)


# --- the config --------------------------------------------------------------------------


def test_client_format_is_read_as_written() -> None:
    upstreams = parse_servers(
        {
            "Desktop Commander": {
                "command": "npx",
                "args": ["-y", "${PKG:-dc}"],
                "env": {"TOKEN": "${SECRET}"},
                "type": "stdio",
                "allow": ["read"],
                "concurrency_safe": {"read": False},
            },
            "remote": {"url": "https://example.com/mcp", "headers": {"A": "b"}},
            "off": {"command": "x", "disabled": True},
        },
        "servers.json",
        "/mcpServers",
        {"SECRET": "s3"},
    )
    first, second = upstreams
    assert first.prefix == "desktop_commander"
    assert first.command == ("npx", "-y", "dc")
    assert first.env == (("TOKEN", "s3"),)
    assert first.allow == frozenset({"read"}) and first.concurrency_safe == (("read", False),)
    assert second.url == "https://example.com/mcp" and second.headers == (("A", "b"),)
    assert [u.name for u in upstreams] == ["Desktop Commander", "remote"]


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ([], "servers.json:/mcpServers: error: expected an object of servers, got an array"),
        ({}, "servers.json:/mcpServers: error: no upstream servers: add at least one entry"),
        ({"a": {"args": []}}, 'servers.json:/mcpServers/a: error: needs exactly one of "command"'),
        ({"a": {"command": "x", "url": "http://h"}}, "needs exactly one of"),
        (
            {"a": {"command": "x", "arg": []}},
            "servers.json:/mcpServers/a/arg: error: unknown key 'arg'",
        ),
        (
            {"a": {"command": "x", "args": ["ok", 1]}},
            "/mcpServers/a/args/1: error: expected a string, got a number",
        ),
        ({"a": {"command": "x", "env": {"K": 1}}}, "/mcpServers/a/env/K: error: expected a string"),
        (
            {"a": {"command": "x", "headers": {}}},
            "/mcpServers/a/headers: error: 'headers' applies only to HTTP servers",
        ),
        (
            {"a": {"url": "ftp://h"}},
            "/mcpServers/a/url: error: expected an http:// or https:// URL",
        ),
        (
            {"a": {"url": "http://h", "type": "stdio"}},
            "/mcpServers/a/type: error: type 'stdio' does not match 'url'",
        ),
        ({"a": {"url": "http://h", "type": "sse"}}, "unsupported transport 'sse'"),
        (
            {"a": {"command": "x", "concurrency_safe": {"t": "yes"}}},
            "/mcpServers/a/concurrency_safe/t: error: expected a boolean",
        ),
        (
            {"a": {"command": "x", "disabled": "no"}},
            "/mcpServers/a/disabled: error: expected a boolean",
        ),
        (
            {"a": {"command": "${NOPE}"}},
            "/mcpServers/a/command: error: environment variable NOPE is not set",
        ),
        ({"a/b": {"command": ""}}, "/mcpServers/a~1b/command: error: expected a non-empty string"),
        ({"日本": {"command": "x"}}, "leaves no ASCII letter or digit for a prefix"),
        (
            {"my-srv": {"command": "x"}, "My Srv": {"command": "y"}},
            "derives the tool prefix 'my_srv', like \"my-srv\"",
        ),
        ({"a": {"command": "x", "disabled": True}}, "every entry is disabled"),
    ],
)
def test_config_errors_name_file_and_pointer(servers: Any, message: str) -> None:
    assert message in problem(servers)


def test_config_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"mcpServers": {"a": {"command": "x"}, "a": {}}}')
    with pytest.raises(
        InvalidInputError,
        match=r'c.json:/mcpServers/a: error: duplicate key "a" at line 1 column 40',
    ):
        load_servers_file(path, "c.json")
    path.write_text('{"servers": {}}')
    with pytest.raises(InvalidInputError, match='no "mcpServers" object'):
        load_servers_file(path, "c.json")
    with pytest.raises(UsageError, match="cannot read"):
        load_servers_file(tmp_path / "missing.json", "missing.json")


def test_pyproject_table(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(
        "[tool.codegen]\nsandbox = 'none'\n"
        "[tool.codegen.serve]\nmode = 'both'\nlang = 'python'\nsdk = 'instructions'\n"
        "http = '127.0.0.1:9000'\nsandbox = 'namespaces'\n"
        "[tool.codegen.serve.limits]\nmemory = '512MiB'\ntimeout = 5\n"
        "[tool.codegen.serve.mcpServers.time]\ncommand = 'mcp-server-time'\n"
    )
    config = load_table(path, "pyproject.toml")
    assert config is not None
    assert config.settings.mode == "both" and config.settings.sdk == "instructions"
    assert config.settings.sandbox == "namespaces"
    assert dict(config.settings.limits) == {"memory": 512 * 1024 * 1024, "timeout": 5.0}
    assert [u.prefix for u in config.upstreams] == ["time"]
    path.write_text(
        "[tool.codegen.serve]\nmode = 'native'\n[tool.codegen.serve.mcpServers.t]\ncommand = 'x'\n"
    )
    with pytest.raises(
        InvalidInputError, match=r"/tool/codegen/serve/mode: error: unknown value 'native'"
    ):
        load_table(path, "pyproject.toml")
    path.write_text("[tool.codegen.serve]\nmodes = 'code'\n")
    with pytest.raises(InvalidInputError, match=r"/tool/codegen/serve/modes: error: unknown key"):
        load_table(path, "pyproject.toml")


def _settings_problem(tmp_path: Path, settings: Any) -> str:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}, "codegen": settings}))
    with pytest.raises(InvalidInputError) as raised:
        load_servers_file(path, "c.json")
    return str(raised.value)


def test_settings_in_a_client_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEGEN_TEST_TOKEN", "t0ken")
    path = tmp_path / "c.json"
    settings = {
        "mode": "both",
        "sandbox": "bubblewrap",
        "typescript": "/opt/ts",
        "limits": {"output": "64KiB", "arguments": 2048, "concurrent_runs": 3, "timeout": 1.5},
        "http_token": "${CODEGEN_TEST_TOKEN}",
        "http_allowed_hosts": ["example.com"],
        "http_allowed_origins": ["https://app.example.com"],
    }
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}, "codegen": settings}))
    config = load_servers_file(path, "c.json").settings
    assert config.mode == "both" and config.sandbox == "bubblewrap"
    assert config.http_token == "t0ken" and config.typescript == "/opt/ts"
    assert dict(config.limits) == {
        "output": 65536,
        "arguments": 2048,
        "concurrent_runs": 3,
        "timeout": 1.5,
    }
    assert config.http_allowed_hosts == ("example.com",)
    assert "c.json:/codegen/sandbox: error: a config cannot turn the sandbox off" in (
        _settings_problem(tmp_path, {"sandbox": "none"})
    )
    assert "c.json:/codegen/limits/memory: error: expected a size" in (
        _settings_problem(tmp_path, {"limits": {"memory": "lots"}})
    )
    assert "c.json:/codegen/limits/processes: error: expected a whole number" in (
        _settings_problem(tmp_path, {"limits": {"processes": 2.5}})
    )
    for huge in ("9" * 400 + "K", 10**400, 1e300, "1e999"):  # an error, never a crash
        memory = _settings_problem(tmp_path, {"limits": {"memory": huge}})
        assert "c.json:/codegen/limits/memory: error: expected " in memory
    assert "c.json:/codegen/limits/speed: error: unknown limit" in (
        _settings_problem(tmp_path, {"limits": {"speed": 1}})
    )
    assert "c.json:/codegen/colour: error: unknown setting" in (
        _settings_problem(tmp_path, {"colour": "red"})
    )
    assert "c.json:/codegen/description_budget: error: expected a number of UTF-16 code " in (
        _settings_problem(tmp_path, {"description_budget": 511})
    )
    for tokens in (999, 1_000_001, 22000.5, "22000", True):
        assert "c.json:/codegen/result_tokens: error: expected a number of tokens from 1,000 " in (
            _settings_problem(tmp_path, {"result_tokens": tokens})
        )


def test_the_result_budget_from_the_config_and_the_flag(tmp_path: Path) -> None:
    """`result_tokens` reaches the registry that fits run results; the flag wins; the
    default is Code Mode's own."""
    from codegen.cli import build_parser
    from codegen.codemode.presentation.fitting import DEFAULT_RESULT_TOKENS
    from codegen.serve.command import DEFAULT_RESULT_TOKENS as SERVE_DEFAULT
    from codegen.serve.command import plan

    assert SERVE_DEFAULT == DEFAULT_RESULT_TOKENS
    path = tmp_path / "c.json"
    config: dict[str, Any] = {"mcpServers": {"a": {"command": "x"}}}

    def planned(*flags: str) -> int:
        path.write_text(json.dumps(config))
        argv = ["serve", "--config", str(path), *flags]
        result: int = plan(build_parser(argv).parse_args(argv)).result_tokens
        return result

    assert planned() == DEFAULT_RESULT_TOKENS
    config["codegen"] = {"result_tokens": 60_000}
    assert planned() == 60_000
    assert planned("--result-tokens", "8000") == 8000
    with pytest.raises(UsageError, match="serve: --result-tokens: expected a number of tokens"):
        planned("--result-tokens", "lots")


def test_the_user_config_is_the_only_default() -> None:
    assert user_config({"XDG_CONFIG_HOME": "/x"}) == Path("/x/codegen/serve.json")
    assert user_config({}).parts[-3:] == (".config", "codegen", "serve.json")


def test_messages_show_commands_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret passed through `${VAR}` reaches the server, never stderr."""
    monkeypatch.setenv("CODEGEN_TEST_SECRET", "s3cr3t-value")
    upstreams = parse_servers(
        {
            "a": {"command": "srv", "args": ["--token", "${CODEGEN_TEST_SECRET}"]},
            "b": {"url": "https://h/${CODEGEN_TEST_SECRET}/mcp"},
        },
        "c.json",
        "/mcpServers",
    )
    assert upstreams[0].command == ("srv", "--token", "s3cr3t-value")
    assert upstreams[0].label == '"a" (srv --token ${CODEGEN_TEST_SECRET})'
    assert upstreams[1].url == "https://h/s3cr3t-value/mcp"
    assert "s3cr3t" not in upstreams[1].label


def test_addresses() -> None:
    assert parse_address("127.0.0.1:8000") == ("127.0.0.1", 8000)
    assert parse_address("[::1]:0") == ("::1", 0)
    for bad in ("8000", "host:", "host:x", ":80", "h:70000"):
        with pytest.raises(UsageError, match="expected HOST:PORT"):
            parse_address(bad)


# --- the command line ----------------------------------------------------------------------


def test_print_config_example_shows_every_key_and_parses(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every key the reader accepts is in the example, which loads back, and the settings
    it shows are the ones `serve` runs with when the config says nothing."""
    import dataclasses

    from codegen.cli import build_parser
    from codegen.serve.command import plan

    assert main(["serve", "--print-config-example"]) == 0
    text = capsys.readouterr().out
    example = json.loads(text)
    assert example == example_config()
    # The reader's tables are every key it takes: a setting is a field of ServeSettings.
    assert tuple(field.name for field in dataclasses.fields(ServeSettings)) == SETTING_KEYS
    settings = example["codegen"]
    assert tuple(settings) == SETTING_KEYS
    assert tuple(settings["limits"]) == tuple(LIMIT_KEYS)
    assert tuple(settings["http_limits"]) == tuple(HTTP_LIMIT_KEYS)
    servers = example["mcpServers"].values()
    assert {key for entry in servers for key in entry} == set(SERVER_KEYS)
    path = tmp_path / "example.json"
    path.write_text(text)
    config = load_servers_file(path, "example.json")
    assert [u.prefix for u in config.upstreams] == ["everything", "time"]
    assert all(getattr(config.settings, key) not in (None, ()) for key in ("limits", "sdk"))
    # At their defaults: the plan of the example is the plan of a config without settings
    # (but for the connection cap, which the example spells out).
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"mcpServers": example["mcpServers"]}))

    def planned(config_path: Path) -> Any:
        argv = ["serve", "--config", str(config_path)]
        settled = plan(build_parser(argv).parse_args(argv))
        limits = dataclasses.replace(settled.http_limits, connections=None)
        return dataclasses.replace(settled, config=None, http_limits=limits)

    assert planned(path) == planned(bare)
    assert dict(config.settings.http_limits)["connections"] == 256


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen", "serve", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        input="",
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(cwd / "xdg")},
        timeout=120,
    )


@pytest.mark.slow
def test_cli_errors(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}))
    done = _cli("--config", str(config), "--lang", "cobol", cwd=tmp_path)
    assert done.returncode == 2 and "no SDK renderer registered for language 'cobol'" in done.stderr
    done = _cli(cwd=tmp_path)
    assert done.returncode == 2 and "no upstream servers: pass --config FILE" in done.stderr
    done = _cli("--config", str(config), "--http", "nowhere", cwd=tmp_path)
    assert done.returncode == 2 and "serve: --http: expected HOST:PORT" in done.stderr
    expected = "serve: --description-budget: expected a number of UTF-16 code units of at least 512"
    for budget in ("511", "2048.5", "lots"):  # the flag is checked as the setting is
        done = _cli("--config", str(config), "--description-budget", budget, cwd=tmp_path)
        assert done.returncode == 2 and f"{expected}, got " in done.stderr
    config.write_text('{"mcpServers": {"a": {"command": 1}}}')
    done = _cli("--config", str(config), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.endswith(
        "/mcpServers/a/command: error: expected a non-empty string, got a number\n"
    )
    assert "Traceback" not in done.stderr


def test_runtime_seam() -> None:
    runtime = create_runtime("python", "none")
    assert runtime.language == "python" and runtime.sandbox == "none"
    runtime = create_runtime("typescript", "none")
    assert runtime.language == "typescript" and runtime.sandbox == "none"
    with pytest.raises(RuntimeUnavailableError, match='runtime: "python", "typescript"'):
        create_runtime("__class__")


@pytest.mark.parametrize("language", sorted(RUN_CODE_FLAVORS))
def test_every_flavor_can_carry_the_sdk(language: str) -> None:
    definition = run_code_tool(language)
    carried = with_sdk(definition, "SECTION")
    assert carried["description"].endswith(
        "described below"
        + definition["description"].split("described in the system prompt")[1]
        + "\n\nSECTION"
    )
    assert carried["inputSchema"] == definition["inputSchema"]


# --- tools of an upstream ----------------------------------------------------------------


def test_mount_prefixes_filters_and_classifies() -> None:
    (upstream,) = parse_servers(
        {"srv": {"command": "x", "deny": ["gone", "typo"], "concurrency_safe": {"write": True}}},
        "s.json",
        "/mcpServers",
        {},
    )
    tools = (
        {"name": "read", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
        {"name": "write", "inputSchema": {"type": "object"}},
        {
            "name": "plain",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": "yes"},
        },
        {"name": "gone", "inputSchema": {"type": "object"}},
        {"name": "bad", "inputSchema": {"type": 7}},
        {"inputSchema": {"type": "object"}},
    )

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        return name

    mounted = mount(upstream, tools, call)
    specs = {spec.name: spec for spec in mounted.specs}
    assert list(specs) == ["srv__read", "srv__write", "srv__plain"]
    safe = {name: spec.is_concurrency_safe({}) for name, spec in specs.items()}  # type: ignore[misc]
    assert safe == {"srv__read": True, "srv__write": True, "srv__plain": False}
    assert mounted.warnings[0].startswith(
        "tool 'bad' left out, its schema is invalid: /inputSchema/type: 7 is not one of"
    )
    assert "tool 5 has no name; left out" in mounted.warnings
    assert "deny names 'typo', which the server does not list" in mounted.warnings
    assert anyio.run(specs["srv__read"].handler, {"a": 1}, None) == "read"  # type: ignore[arg-type]


# --- shutting down ---------------------------------------------------------------------------


class NamedRuntime:
    """A runtime that only says its language (the wire view needs one; nothing runs)."""

    language = "python"

    async def run(self, *args: Any) -> Any:
        raise AssertionError("not run")


def test_closing_the_host_waits_for_the_discovery_warm_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The search tier warms discovery in a thread that runs extension code (the embedding
    model's). It is no daemon and `Host.close` (serve's shutdown) joins it, so the
    interpreter never finalizes while it runs: a daemon thread there aborted the process
    (SIGABRT, "FATAL: exception not rethrown"). Nothing is warmed after closing."""
    from codegen.codemode.calls.specs import ToolSpec
    from codegen.codemode.presentation.discovery import Discovery
    from codegen.codemode.registry import ToolRegistry
    from codegen.serve.mcp_server import Host

    working, release = threading.Event(), threading.Event()

    def held_warm(self: Discovery) -> None:
        working.set()
        release.wait(60)

    monkeypatch.setattr(Discovery, "warm", held_warm)
    registry = ToolRegistry(mode="code", budget=600)
    registry.mount_runtime(NamedRuntime())
    for index in range(12):
        registry.register(ToolSpec(f"server__tool_{index}", f"Tool number {index} does things."))
    host = Host(registry, "description", io.StringIO())
    assert host.view().tier is not None and host.view().tier.tier == "search"
    assert working.wait(60)
    (warmer,) = [thread for thread in threading.enumerate() if thread.name == "codegen-discovery"]
    assert not warmer.daemon
    closing = threading.Thread(target=host.close)
    closing.start()
    closing.join(0.2)
    assert closing.is_alive(), "close waits for the warming under way"
    release.set()
    closing.join(60)
    assert not closing.is_alive() and not warmer.is_alive()
    working.clear()
    registry.register(ToolSpec("server__tool_new", "One more."))
    host.unmount("none")  # the registry changed: a new view, a new tool set
    assert host.view().tier is not None
    assert not any(thread.name == "codegen-discovery" for thread in threading.enumerate())


# --- an upstream whose tools change ------------------------------------------------------


@pytest.mark.slow
def test_list_changed_regenerates_and_notifies(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {"mcpServers": {"changing": {"command": sys.executable, "args": [str(CHANGING)]}}}
        )
    )
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codegen", "serve", "--config", str(config)],
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)},
    )
    touch = "return await tools.changing__touch({})"
    grow = "return await tools.changing__grow({})"

    async def session() -> tuple[str, str, str, int]:
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                first = (await client.list_tools()).tools[0].description or ""
                async with client.listen(tools_list_changed=True) as changes:
                    await client.call_tool("run_code", {"code": touch, "description": "Touch"})
                    same = (await client.list_tools()).tools[0].description or ""
                    await client.call_tool("run_code", {"code": grow, "description": "Grow"})
                    with anyio.fail_after(60):
                        await changes.__anext__()
                grown = (await client.list_tools()).tools[0].description or ""
                result = await client.call_tool(
                    "run_code",
                    {
                        "code": 'return await tools.changing__added({"text": "hi"})',
                        "description": "Echo",
                    },
                )
                assert result.structured_content == {"logs": [], "result": "hi"}
                return first, same, grown, 0

    def bounded() -> Any:
        async def inner() -> Any:
            with anyio.fail_after(180):
                return await session()

        return anyio.run(inner)

    first, same, grown, _ = bounded()
    assert same == first, "a notice that changed nothing regenerates the same bytes"
    assert "changing__added" not in first and "def changing__added" in grown
    header = first.split("async def changing__")[0]  # the tools start at the first function
    assert grown.startswith(header), "the tools change only after the fixed header"
    stderr = (tmp_path / "stderr").read_text()
    assert "tool list re-read, nothing changed" in stderr
    assert "tool list changed, now 3 tools" in stderr


@pytest.mark.slow
def test_tools_changing_inside_a_server_leave_the_search_tier_alone(tmp_path: Path) -> None:
    """In the search tier the description holds no tool: a tool added inside a server
    changes none of its bytes, so the client is not told (its prompt cache survives), and
    programs find and call the new tool at once."""
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {"mcpServers": {"changing": {"command": sys.executable, "args": [str(CHANGING)]}}}
        )
    )
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codegen", "serve", "--config", str(config), "--description-budget", "1200"],
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)},
    )
    stderr = tmp_path / "stderr"
    find = (
        'names = await catalog.names("changing")\n'
        'hits = await catalog.search("echo text")\n'
        'return [names, hits.names[0], await tools[hits.names[0]](text="hi")]'
    )

    async def session() -> tuple[str, str, Any, list[Any]]:
        with stderr.open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                first = (await client.list_tools()).tools[0].description or ""
                events: list[Any] = []
                async with client.listen(tools_list_changed=True) as changes:
                    grow = "return await tools.changing__grow({})"
                    await client.call_tool("run_code", {"code": grow, "description": "Grow"})
                    while "tool list re-read, nothing changed" not in stderr.read_text():
                        await anyio.sleep(0.05)  # bounded by the session's deadline
                    with anyio.move_on_after(0):
                        events.append(await changes.__anext__())
                after = (await client.list_tools()).tools[0].description or ""
                found = await client.call_tool("run_code", {"code": find, "description": "Find"})
                return first, after, found.structured_content, events

    async def bounded() -> Any:
        with anyio.fail_after(180):
            return await session()

    first, after, found, events = anyio.run(bounded)
    assert "catalog.search" in first and len(first.encode("utf-16-le")) // 2 <= 1200
    assert after == first and events == []
    assert found == {
        "logs": [],
        "result": [
            ["changing__added", "changing__grow", "changing__touch"],
            "changing__added",
            "hi",
        ],
    }
    told = stderr.read_text()
    assert "run_code description: search tier (discovery, server index: " in told
    assert "of 1,200 UTF-16 units" in told


@pytest.mark.slow
def test_sdk_in_instructions(tmp_path: Path) -> None:
    """`--sdk instructions`: the Code Mode prompt is the server's instructions and
    run_code keeps its plain description, which points at the system prompt."""
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {"mcpServers": {"changing": {"command": sys.executable, "args": [str(CHANGING)]}}}
        )
    )
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codegen", "serve", "--config", str(config), "--sdk", "instructions"],
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)},
    )

    async def session() -> tuple[str | None, str]:
        with anyio.fail_after(120), (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                listed = await client.list_tools()
                return client.instructions, listed.tools[0].description or ""

    instructions, description = anyio.run(session)
    assert description == run_code_tool("python")["description"]
    assert instructions is not None
    assert instructions.startswith(
        "Only one tool can be called directly in this session: run_code."
    )
    assert "async def changing__grow" in instructions


def test_a_write_to_a_dead_upstream_leaves_no_traceback_on_stderr() -> None:
    """A broken pipe nobody awaited (an upstream died while a message was on its way) is
    reported once by its connection; the event loop's own copy, with a traceback, is left
    out. Any other error reaches the loop's default handler."""
    from codegen.serve.command import _quiet_dead_pipes

    seen: list[dict[str, Any]] = []

    class Loop:
        def default_exception_handler(self, context: dict[str, Any]) -> None:
            seen.append(context)

    loop = Loop()
    _quiet_dead_pipes(loop, {"message": "never retrieved", "exception": BrokenPipeError(32)})
    _quiet_dead_pipes(loop, {"message": "never retrieved", "exception": ConnectionResetError()})
    assert seen == []
    other = {"message": "never retrieved", "exception": ValueError("x")}
    _quiet_dead_pipes(loop, other)
    _quiet_dead_pipes(loop, {"message": "no exception at all"})
    assert seen == [other, {"message": "no exception at all"}]
