"""`codegen serve` end to end: a real MCP client session over stdio against `codegen serve`
fronting two real upstream servers, `mcp-server-time` (PyPI) and
`@modelcontextprotocol/server-everything` (npm), with the real Python runtime in its
sandbox. The transcript (tool list, programs and their results, a direct call, an upstream
killed mid-session) is pinned in `snapshots/serve/e2e-transcript.md`. Every process the
session started must be gone afterwards.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from conftest import ROOT
from support.processes import running
from support.serve_clients import TIME, run, text_of, write_config

# Real upstream servers (stdio and HTTP), started and stopped per test.
pytestmark = pytest.mark.slow

EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"


def two_upstreams(folder: Path) -> Path:
    """The two real servers, with a budget their whole SDK fits (about 6,000 units)."""
    return write_config(
        folder,
        {
            "time": {"command": TIME, "args": ["--local-timezone", "UTC"]},
            "everything": {"command": str(EVERYTHING), "deny": ["get-env"]},
        },
        description_budget=65536,
    )


def serve_parameters(config: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "codegen", "serve", "--config", str(config), *extra],
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)},
    )


def serve_process(config: Path) -> psutil.Process:
    """The `codegen serve` process this test started for `config`."""
    for child in psutil.Process().children(recursive=True):
        try:
            line = " ".join(child.cmdline())
        except psutil.Error:
            continue
        if "serve" in line and str(config) in line:
            return child
    raise AssertionError("codegen serve is not running")


def descendants(process: psutil.Process) -> list[int]:
    return [process.pid, *(child.pid for child in process.children(recursive=True))]


def upstream_pid(process: psutil.Process, mark: str) -> int:
    for child in process.children(recursive=True):
        try:
            if any(mark in part for part in child.cmdline()):
                return child.pid
        except psutil.Error:
            continue
    raise AssertionError(f"no upstream process matches {mark!r}")


def wait_gone(pids: list[int], seconds: float = 30.0) -> list[int]:
    _, alive = psutil.wait_procs([p for p in map(_process, pids) if p is not None], timeout=seconds)
    return [p.pid for p in alive if running(p.pid)]


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


PROGRAM_BOTH = """\
import asyncio

now, total = await asyncio.gather(
    tools.time__get_current_time({"timezone": "Europe/Paris"}),
    tools["everything__get-sum"]({"a": 2, "b": 3}),
)
print(total)
try:
    await tools.time__get_current_time({"timezone": "Mars/Olympus"})
except ToolCallError as error:
    print(f"{error.tool_name} failed: {error}")
echo = await tools.everything__echo({"message": "hello"})
return {"timezone": now["timezone"], "is_dst_known": isinstance(now["is_dst"], bool), "echo": echo}
"""

PROGRAM_AFTER = """\
print(await tools.everything__echo({"message": "still here"}))
gone = "time__get_current_time"  # a name held in a variable: the host says it is gone
try:
    await tools[gone]({"timezone": "UTC"})
except Exception as error:
    print(f"{type(error).__name__}: {error}")
return "done"
"""


def normalize(text: str) -> str:
    """Nothing machine- or time-dependent stays in the transcript."""
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+\-]\d\d:\d\d", "<datetime>", text)
    return text.replace(str(ROOT), "<root>")


def test_session_with_two_real_upstreams(tmp_path: Path, golden: Any) -> None:
    config = two_upstreams(tmp_path)
    errors = tmp_path / "serve.stderr"
    lines: list[str] = ["# codegen serve: a session over stdio", ""]
    seen: dict[str, Any] = {}

    async def session() -> None:
        nonlocal lines
        with errors.open("w") as errlog:
            async with Client(
                stdio_client(serve_parameters(config), errlog=errlog), cache=None
            ) as client:
                process = serve_process(config)
                seen["pids"] = descendants(process)
                listed = await client.list_tools()
                names = [tool.name for tool in listed.tools]
                description = listed.tools[0].description or ""
                seen["description"] = description
                lines.extend(["## tools/list", "", *(f"- {name}" for name in names), ""])
                assert names == ["run_code"]
                assert "async def time__get_current_time" in description
                assert '@tool("everything__get-sum")' in description
                assert "everything__get_env" not in description and "get-env" not in description
                assert client.instructions is None

                result = await client.call_tool(
                    "run_code", {"code": PROGRAM_BOTH, "description": "Sum, echo and read a clock"}
                )
                lines += ["## run_code: both upstreams, asyncio.gather, a ToolCallError", ""]
                lines += ["```python", PROGRAM_BOTH.rstrip(), "```", ""]
                lines += [f"isError: {result.is_error}", "", "```text", text_of(result), "```", ""]
                assert result.is_error is False
                assert result.structured_content == {
                    "logs": [
                        "The sum of 2 and 3 is 5.",
                        "time__get_current_time failed: Error executing tool get_current_time: "
                        "Invalid timezone: 'No time zone found with key Mars/Olympus'",
                    ],
                    "result": {
                        "timezone": "Europe/Paris",
                        "is_dst_known": True,
                        "echo": "Echo: hello",
                    },
                }

                with pytest.raises(MCPError) as direct:
                    await client.call_tool("time__get_current_time", {"timezone": "UTC"})
                lines += ["## direct call of time__get_current_time under code", ""]
                lines += [
                    "```text",
                    f"MCP error {direct.value.code}: {direct.value.message}",
                    "```",
                    "",
                ]
                assert direct.value.code == -32602
                assert direct.value.message.startswith('unknown tool "time__get_current_time"')

                async with client.listen(tools_list_changed=True) as changes:
                    os.kill(upstream_pid(process, "mcp-server-time"), signal.SIGKILL)
                    with anyio.fail_after(60):
                        event = await changes.__anext__()
                lines += ["## mcp-server-time killed", "", f"notice: {type(event).__name__}", ""]
                relisted = await client.list_tools()
                after = relisted.tools[0].description or ""
                assert "time__" not in after and "everything__echo" in after
                result = await client.call_tool(
                    "run_code", {"code": PROGRAM_AFTER, "description": "Echo once more"}
                )
                lines += ["## run_code: the other upstream after the kill", ""]
                lines += ["```python", PROGRAM_AFTER.rstrip(), "```", ""]
                lines += [f"isError: {result.is_error}", "", "```text", text_of(result), "```", ""]
                assert result.is_error is False
                assert text_of(result).startswith("Echo: still here\n")

    run(session)
    transcript = normalize("\n".join(lines))
    assert transcript == golden("serve", "md", "e2e-transcript")
    stderr = errors.read_text()
    assert re.search(r'"time" \(.*mcp-server-time --local-timezone UTC\) stopped \(', stderr)
    assert "its 2 tools are removed, the other servers are still served" in stderr
    assert "Traceback" not in stderr
    assert wait_gone(seen["pids"]) == [], "every process of the session is gone"


CORPUS_SERVER = ROOT / "tests" / "fixtures" / "serve" / "corpus_server.py"

PROGRAM_FIND_AND_CALL = """\
hits = await catalog.search("current time in a time zone")
print(hits)
now = await tools[hits.names[0]](timezone="Asia/Tokyo")
return {"called": hits.names[0], "timezone": now["timezone"]}
"""

PROGRAM_STEPS = """\
hits = await catalog.search(
    ["create an issue in a GitHub repository", "post a message to a Slack channel"], k=4
)
print(hits)
print(await catalog.describe("slack__slack_post_message"))
posted = await tools.slack__slack_post_message(channel_id="C1", text="Found by search")
print(posted)
return [server["name"] for server in await catalog.servers()]
"""

PROGRAM_GUESS = """\
return await tools.get_time(timezone="UTC")
"""


def many_upstreams(folder: Path, **settings: Any) -> Path:
    """Two real servers and five recorded ones: 101 tools behind one run_code."""
    corpus = {
        name: {
            "command": sys.executable,
            "args": [str(CORPUS_SERVER), str(ROOT / "tests" / "corpus" / "mcp" / f"{name}.json")],
        }
        for name in ("github", "filesystem", "kubernetes", "playwright", "slack")
    }
    corpus["github"]["description"] = "GitHub repositories, files, issues and pull requests."
    corpus["slack"]["description"] = "Slack channels, messages, threads and users."
    return write_config(
        folder,
        {
            "time": {
                "command": TIME,
                "args": ["--local-timezone", "UTC"],
                "description": "Current time, and times converted between time zones.",
            },
            "everything": {"command": str(EVERYTHING), "deny": ["get-env"]},
            **corpus,
        },
        **settings,
    )


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def test_a_large_catalog_is_found_by_search(tmp_path: Path, golden: Any) -> None:
    """Past the description budget, run_code's description is the discovery text (within
    2,048 UTF-16 units), and one program searches and calls what it found."""
    config = many_upstreams(tmp_path)
    errors = tmp_path / "serve.stderr"
    lines: list[str] = ["# codegen serve: a catalog too large to describe", ""]
    seen: dict[str, Any] = {}

    async def run_code(client: Any, program: str, title: str, about: str) -> Any:
        result = await client.call_tool("run_code", {"code": program, "description": about})
        lines.extend([f"## run_code: {title}", "", "```python", program.rstrip(), "```", ""])
        lines.extend([f"isError: {result.is_error}", "", "```text", text_of(result), "```", ""])
        return result

    async def session() -> None:
        with errors.open("w") as errlog:
            async with Client(
                stdio_client(serve_parameters(config), errlog=errlog), cache=None
            ) as client:
                seen["pids"] = descendants(serve_process(config))
                listed = await client.list_tools()
                assert [tool.name for tool in listed.tools] == ["run_code"]
                description = listed.tools[0].description or ""
                seen["units"] = utf16_units(description)
                lines.extend(["## tools/list: run_code's description", "", description, ""])

                found = await run_code(
                    client, PROGRAM_FIND_AND_CALL, "search, then call, in one run", "Read a clock"
                )
                assert found.is_error is False
                assert found.structured_content["result"] == {
                    "called": "time__get_current_time",
                    "timezone": "Asia/Tokyo",
                }
                steps = await run_code(
                    client, PROGRAM_STEPS, "one query per step, describe", "Post to Slack"
                )
                assert steps.is_error is False
                logs = "\n".join(steps.structured_content["logs"])
                assert "tools.github__create_issue(" in logs
                assert "async def slack__slack_post_message(" in logs
                assert '"channel_id": "C1"' in logs
                guess = await run_code(client, PROGRAM_GUESS, "a guessed name", "Read a clock")
                assert guess.is_error is True  # refused by the check, before any call
                assert "line 1: `tools` has no tool `get_time`" in text_of(guess)
                assert "tools.time__get_current_time" in text_of(guess)

    run(session)
    stderr = errors.read_text()
    assert seen["units"] <= 2048
    assert re.search(
        r"run_code description: search tier \(discovery, server index: \w+\), ", stderr
    )
    assert "Traceback" not in stderr
    transcript = normalize("\n".join(lines))
    assert transcript == golden("serve", "md", "discovery-transcript")
    assert wait_gone(seen["pids"]) == [], "every process of the session is gone"


def test_description_is_the_sdk_and_stable(tmp_path: Path) -> None:
    """Two servers started alike describe run_code with the same bytes, and the SDK's first
    bytes do not depend on the tools (the header comes before any tool)."""
    config = two_upstreams(tmp_path)

    async def describe() -> str:
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(
                stdio_client(serve_parameters(config, "--mode", "both"), errlog=errlog), cache=None
            ) as client:
                listed = await client.list_tools()
                names = [tool.name for tool in listed.tools]
                assert names[-1] == "run_code" and "time__convert_time" in names
                assert "everything__get-env" not in names
                result = await client.call_tool("everything__get-sum", {"a": 1, "b": 2})
                assert text_of(result) == "The sum of 1 and 2 is 3."
                return listed.tools[-1].description or ""

    first, second = run(describe), run(describe)
    assert first == second
    assert first.startswith("Run a Python program against the tools described below.")


TOKEN = "e2e-serve-token-5b1d0c9a"
"""The HTTP token the tests' `serve --http` runs with (CODEGEN_SERVE_TOKEN)."""
AUTHORIZATION = {"Authorization": f"Bearer {TOKEN}"}


def _popen(config: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "codegen", "serve", "--config", str(config), *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), "CODEGEN_SERVE_TOKEN": TOKEN},
    )


def _wait_ready(process: subprocess.Popen[bytes], count: int) -> list[str]:
    """stderr lines until `count` upstreams reported their tools."""
    assert process.stderr is not None
    lines: list[str] = []
    while sum(line.endswith(" tools") for line in lines) < count:
        raw = process.stderr.readline()
        assert raw, f"serve ended early: {lines}"
        lines.append(raw.decode().rstrip("\n"))
    return lines


@pytest.mark.parametrize("how", ["stdin-closed", "sigint", "sigterm"])
def test_shutdown_leaves_no_process(tmp_path: Path, how: str) -> None:
    process = _popen(two_upstreams(tmp_path))
    try:
        _wait_ready(process, 2)
        pids = descendants(psutil.Process(process.pid))
        assert len(pids) >= 3, "serve and both upstreams are running"
        assert process.stdin is not None
        if how == "stdin-closed":
            process.stdin.close()
        else:
            process.send_signal(signal.SIGINT if how == "sigint" else signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        assert wait_gone(pids) == []
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stderr is not None
    rest = process.stderr.read().decode()
    assert "Traceback" not in rest


HOSTILE = ROOT / "tests" / "fixtures" / "serve" / "hostile_server.py"
PATCHED = ROOT / "tests" / "fixtures" / "serve" / "patched_serve.py"


def test_shutdown_while_discovery_warms_leaves_no_thread_running(tmp_path: Path) -> None:
    """SIGTERM while the discovery warm-up of the search or listing tier runs (held for 2 s by
    `patched_serve.py --slow-warm`): serve waits for it, so no thread it started is still
    running when the interpreter finalizes. One that was, inside the embedding model's
    extension code, aborted the process (SIGABRT, "FATAL: exception not rethrown")."""
    config = write_config(
        tmp_path, {"hostile": {"command": sys.executable, "args": [str(HOSTILE)]}}
    )
    patched = [sys.executable, str(PATCHED), "", "--slow-warm", "2", "--threads-at-exit"]
    process = subprocess.Popen(
        [*patched, "serve", "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stderr is not None
        lines: list[str] = []
        while not any(tier in line for line in lines for tier in ("search tier", "listing tier")):
            raw = process.stderr.readline()
            assert raw, f"serve ended early: {lines}"
            lines.append(raw.decode().rstrip("\n"))
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
        rest = process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "threads at exit: none" in rest, rest
    assert "Traceback" not in rest and "FATAL" not in rest


def test_upstream_that_fails_to_start(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "missing": {"command": "codegen-no-such-server"},
            "broken": {"command": sys.executable, "args": ["-c", "print('not MCP')"]},
            "time": {"command": TIME},
        },
        description_budget=65536,  # the SDK itself: its tools show who started
    )

    async def session() -> tuple[list[str], str]:
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(
                stdio_client(serve_parameters(config), errlog=errlog), cache=None
            ) as client:
                listed = await client.list_tools()
                return [t.name for t in listed.tools], listed.tools[0].description or ""

    names, description = run(session)
    assert names == ["run_code"] and "time__get_current_time" in description
    stderr = (tmp_path / "stderr").read_text()
    assert (
        "\"missing\" (codegen-no-such-server) failed to start: cannot run 'codegen-no-such-server': not found on PATH; its tools are left out"
        in stderr
    )
    assert re.search(r'"broken" \(.*\) failed to start: .*; its tools are left out', stderr)


def test_no_upstream_starts(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"missing": {"command": "codegen-no-such-server"}})
    done = subprocess.run(
        [sys.executable, "-m", "codegen", "serve", "--config", str(config)],
        input=b"",
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 1
    assert b"no upstream server started; nothing to serve" in done.stderr
    assert b"Traceback" not in done.stderr


def test_http_serving_and_an_http_upstream(tmp_path: Path) -> None:
    """`--http` serves streamable HTTP; a second `codegen serve` reaches it as a `url`
    upstream, so a program there calls the first one's tools (served under `both`)."""
    front = write_config(tmp_path, {"time": {"command": TIME}})
    process = _popen(front, "--http", "127.0.0.1:0", "--mode", "both")
    try:
        lines = _wait_ready(process, 1)
        assert process.stderr is not None
        while not any("listening on" in line for line in lines):
            lines.append(process.stderr.readline().decode().rstrip("\n"))
        url = re.search(r"listening on (http://\S+)", "\n".join(lines))
        assert url is not None
        second = tmp_path / "second"
        second.mkdir()
        config = write_config(second, {"front": {"url": url.group(1), "headers": AUTHORIZATION}})
        program = (
            'return (await tools.front__time__get_current_time({"timezone": "UTC"}))["timezone"]'
        )

        async def session() -> Any:
            http = create_mcp_http_client(headers=AUTHORIZATION)
            transport = streamable_http_client(url.group(1), http_client=http)
            async with Client(transport, cache=None) as direct:
                names = [t.name for t in (await direct.list_tools()).tools]
                assert names == ["time__convert_time", "time__get_current_time", "run_code"]
            with (second / "stderr").open("w") as errlog:
                async with Client(
                    stdio_client(serve_parameters(config), errlog=errlog), cache=None
                ) as client:
                    result = await client.call_tool(
                        "run_code", {"code": program, "description": "Read a clock"}
                    )
                    return result.structured_content

        assert run(session) == {"logs": [], "result": "UTC"}
        pids = descendants(psutil.Process(process.pid))
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0
        assert wait_gone(pids) == []
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


PROGRAM_TYPESCRIPT = """\
const [now, total] = await Promise.all([
  tools.time__get_current_time({ timezone: "Europe/Paris" }),
  tools["everything__get-sum"]({ a: 2, b: 3 }),
]);
console.log(total);
try {
  await tools.time__get_current_time({ timezone: "Mars/Olympus" });
} catch (error) {
  if (error instanceof ToolCallError) console.log(`${error.toolName} failed`);
}
const zone: string = now.timezone;
return { timezone: zone, dst: typeof now.is_dst };
"""


def test_a_typescript_session(tmp_path: Path) -> None:
    """`--lang typescript`: run_code in the TypeScript flavor, its programs run by the
    TypeScript runtime (the machine's `node`, types stripped by the `typescript` package
    named with --typescript), and no worker left after the session."""
    config = two_upstreams(tmp_path)
    typescript = str(ROOT / "node_modules" / "typescript")

    async def session() -> tuple[str, str]:
        with (tmp_path / "stderr").open("w") as errlog:
            parameters = serve_parameters(
                config, "--lang", "typescript", "--typescript", typescript, "--sandbox", "none"
            )
            async with Client(stdio_client(parameters, errlog=errlog), cache=None) as client:
                listed = await client.list_tools()
                description = listed.tools[-1].description or ""
                result = await client.call_tool(
                    "run_code", {"code": PROGRAM_TYPESCRIPT, "description": "Both servers"}
                )
                assert not result.is_error, text_of(result)
                return description, text_of(result)

    description, text = run(session)
    assert description.startswith("Run a TypeScript program against the tools described below.")
    assert "```ts" in description
    assert text == (
        "The sum of 2 and 3 is 5.\ntime__get_current_time failed\n"
        '{\n  "timezone": "Europe/Paris",\n  "dst": "boolean"\n}'
    ), text
    from support.processes import TS_WORKER_MARK, left_processes

    assert not wait_gone([p.pid for p in left_processes((TS_WORKER_MARK,))])


def test_a_dead_http_upstream_is_removed_after_a_failed_call(tmp_path: Path) -> None:
    """Streamable HTTP keeps no stream whose end means the server died: a call that fails
    asks for a ping, and an unanswered one removes the upstream's tools and tells the
    client, as a dead stdio upstream's are."""
    front = write_config(tmp_path, {"time": {"command": TIME}})
    process = _popen(front, "--http", "127.0.0.1:0", "--mode", "both")
    try:
        lines = _wait_ready(process, 1)
        assert process.stderr is not None
        while not any("listening on" in line for line in lines):
            lines.append(process.stderr.readline().decode().rstrip("\n"))
        url = re.search(r"listening on (http://\S+)", "\n".join(lines))
        assert url is not None
        second = tmp_path / "second"
        second.mkdir()
        config = write_config(second, {"front": {"url": url.group(1), "headers": AUTHORIZATION}})
        program = """\
try:
    await tools.front__time__get_current_time({"timezone": "UTC"})
except ToolCallError as error:
    return "failed: " + error.tool_name
return "answered"
"""

        async def session() -> tuple[Any, Any, str]:
            with (second / "stderr").open("w") as errlog:
                async with Client(
                    stdio_client(serve_parameters(config), errlog=errlog), cache=None
                ) as client:
                    first = await client.call_tool(
                        "run_code", {"code": program, "description": "Read a clock"}
                    )
                    pids = descendants(psutil.Process(process.pid))
                    process.kill()
                    process.wait()
                    assert wait_gone(pids) == []
                    async with client.listen(tools_list_changed=True) as changes:
                        failed = await client.call_tool(
                            "run_code", {"code": program, "description": "Read it again"}
                        )
                        with anyio.fail_after(60):
                            await changes.__anext__()
                    relisted = await client.list_tools()
                    return first, failed, relisted.tools[0].description or ""

        first, failed, description = run(session)
        assert first.structured_content == {"logs": [], "result": "answered"}
        assert failed.structured_content == {
            "logs": [],
            "result": "failed: front__time__get_current_time",
        }
        assert "front__time__" not in description
        stderr = (second / "stderr").read_text()
        assert "stopped answering" in stderr, stderr
        assert "Traceback" not in stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
