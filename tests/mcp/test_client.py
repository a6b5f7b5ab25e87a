"""`codegen.client.bind`: a generated SDK's `Tools` calling real tools.

Unit tests use a fake async callable and fake sessions that return the `mcp` SDK's own result
types. The end-to-end tests run the reference `@modelcontextprotocol/server-everything` over
stdio: harvest it, generate its SDK, bind it to a real `mcp.Client` and call it; the README
example is run as written (a stand-in `npx` on PATH starts the locally installed server) and
type-checked with `mypy --strict`. Every server started here must be gone afterwards.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
import os
import pickle
import shlex
import subprocess
import sys
import time
import types
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import psutil
import pytest
from mcp import Client, StdioServerParameters, stdio_client
from mcp import types as mcp_types
from mcp.shared.exceptions import MCPError

import codegen.client
from codegen.cli import main
from codegen.client import ToolCallError, UnknownToolError, bind
from conftest import ROOT
from support.processes import running, sweep_group
from support.readme_examples import NPX, fenced, section

EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"
EXAMPLE_HEADING = "## Calling tools from Python"
DEADLINE = 120.0
"""Seconds for one end-to-end test's async part: generous, the machine is shared."""

T = TypeVar("T")


def run(function: Callable[[], Awaitable[T]], deadline: float = 20.0) -> T:
    async def bounded() -> T:
        with anyio.fail_after(deadline):
            return await function()

    return anyio.run(bounded)


# --- fakes ------------------------------------------------------------------------------


class Recorder:
    """An async callable target that records its calls and answers from a function."""

    def __init__(self, answer: Callable[[str, dict[str, Any]], Any] | None = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answer = answer or (lambda name, arguments: {"tool": name, "args": arguments})

    async def __call__(self, name: str, arguments: dict[str, Any]) -> Any:
        self.calls.append((name, arguments))
        return self.answer(name, arguments)


async def module_level_target(name: str, arguments: dict[str, Any]) -> Any:
    return name


def text(*texts: str) -> list[mcp_types.ContentBlock]:
    return [mcp_types.TextContent(type="text", text=t) for t in texts]


class FakeSession:
    """`mcp.ClientSession`'s surface: `call_tool(name, arguments)` and
    `list_tools(*, params=None)`, answering from `results` and `pages` (cursor -> page)."""

    def __init__(
        self,
        results: dict[str, Any] | None = None,
        pages: dict[str | None, tuple[list[str], str | None]] | None = None,
    ) -> None:
        self.results = results or {}
        self.pages = pages or {None: (sorted(self.results), None)}
        self.calls: list[tuple[str, dict[str, Any] | None]] = []
        self.listed: list[str | None] = []

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        self.calls.append((name, arguments))
        await anyio.lowlevel.checkpoint()
        result = self.results[name]
        if isinstance(result, BaseException):
            raise result
        if callable(result):
            return await result()
        return result

    async def list_tools(
        self, *, params: mcp_types.PaginatedRequestParams | None = None
    ) -> mcp_types.ListToolsResult:
        cursor = params.cursor if params else None
        self.listed.append(cursor)
        await anyio.lowlevel.checkpoint()
        names, next_cursor = self.pages[cursor]
        tools = [mcp_types.Tool(name=name, input_schema={"type": "object"}) for name in names]
        return mcp_types.ListToolsResult(tools=tools, next_cursor=next_cursor)


class FakeClient(FakeSession):
    """`mcp.Client`'s surface: `list_tools(*, cursor=None)`."""

    async def list_tools(self, *, cursor: str | None = None) -> mcp_types.ListToolsResult:
        return await super().list_tools(
            params=mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        )


SDK_SOURCE = '''
from typing import Literal, TypeAlias


class ToolCallError(Exception):
    """As the generated SDK declares it."""

    def __init__(self, tool_name: str, message: str) -> None:
        super().__init__(message)
        self.tool_name = tool_name


ToolName: TypeAlias = Literal["echo", "get-sum"]
'''


def fake_sdk(name: str = "fake_sdk", source: str = SDK_SOURCE) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


# --- a plain async callable ---------------------------------------------------------------


def test_a_callable_gets_the_exact_name_and_a_copy_of_the_arguments() -> None:
    target = Recorder()
    tools = bind(target)
    args = {"message": "hi"}

    async def calls() -> list[Any]:
        return [
            await tools.echo(args),
            await tools["get-sum"]({"a": 2, "b": 3}),
            await tools["any name at all"](),  # unchecked: no names are known
        ]

    assert run(calls) == [
        {"tool": "echo", "args": {"message": "hi"}},
        {"tool": "get-sum", "args": {"a": 2, "b": 3}},
        {"tool": "any name at all", "args": {}},
    ]
    assert target.calls[0][1] == args and target.calls[0][1] is not args
    assert repr(tools) == "<tools via Recorder: any name>"
    assert repr(tools.echo) == "<tool 'echo'>"


@pytest.mark.parametrize(
    ("args", "keywords", "message"),
    [
        (["hi"], {}, "tools['echo']: arguments must be a dict of JSON values, got list"),
        ("hi", {}, "tools['echo']: arguments must be a dict of JSON values, got str"),
        ({1: "x"}, {}, "tools['echo']: argument names must be strings, got 1"),
        (None, {"message": "hi"}, "tools['echo'] takes its arguments as one dict"),
    ],
)
def test_arguments_are_one_mapping(args: Any, keywords: dict[str, Any], message: str) -> None:
    target = Recorder()
    tools = bind(target)
    with pytest.raises(TypeError) as info:
        tools.echo(args, **keywords)  # fails at the call, before any coroutine exists
    assert message in str(info.value)
    assert target.calls == []


def _raising_target(shape: str, problem: BaseException) -> object:
    """A target of one shape `bind` accepts whose call of "echo" raises `problem`."""

    async def failing(name: str, arguments: dict[str, Any]) -> Any:
        await anyio.lowlevel.checkpoint()
        raise problem

    def raising_at_once(name: str, arguments: dict[str, Any]) -> Any:
        raise problem

    class AsyncCallable:
        async def __call__(self, name: str, arguments: dict[str, Any]) -> Any:
            return await failing(name, arguments)

    shapes: dict[str, Callable[[], object]] = {
        "async function": lambda: failing,
        "async callable object": AsyncCallable,
        "function returning a coroutine": lambda: lambda name, arguments: failing(name, arguments),
        "function raising before it returns": lambda: raising_at_once,
        "partial of an async function": lambda: functools.partial(failing),
        "ClientSession-like": lambda: FakeSession({"echo": problem}),
        "Client-like": lambda: FakeClient({"echo": problem}),
    }
    return shapes[shape]()


TARGET_SHAPES = [
    "async function",
    "async callable object",
    "function returning a coroutine",
    "function raising before it returns",
    "partial of an async function",
    "ClientSession-like",
    "Client-like",
]


@pytest.mark.parametrize("shape", TARGET_SHAPES)
def test_a_failing_tool_raises_tool_call_error_whatever_the_target(shape: str) -> None:
    """What a target raises reaches the caller as `ToolCallError` with the original as
    `__cause__`, the same through a function as through an MCP session."""
    problem = ValueError("broken")
    for sdk in (None, fake_sdk()):
        tools = bind(_raising_target(shape, problem), sdk, names=["echo"])
        with pytest.raises(ToolCallError) as info:
            run(lambda tools=tools: tools.echo({}))
        error = info.value
        assert (error.tool_name, str(error)) == ("echo", "ValueError: broken")
        assert error.__cause__ is problem
        if sdk is not None:
            assert isinstance(error, sdk.ToolCallError)


@pytest.mark.parametrize("shape", TARGET_SHAPES)
@pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit])
def test_interrupts_pass_unwrapped_whatever_the_target(
    shape: str, kind: type[BaseException]
) -> None:
    problem = kind()
    tools = bind(_raising_target(shape, problem), names=["echo"])
    with pytest.raises(kind) as info:
        run(lambda: tools.echo({}))
    assert info.value is problem


@pytest.mark.parametrize("shape", ["async function", "ClientSession-like"])
def test_cancellation_passes_unwrapped_whatever_the_target(shape: str) -> None:
    async def forever(*args: Any) -> Any:
        await anyio.sleep_forever()

    target = FakeSession({"slow": forever}) if shape == "ClientSession-like" else forever
    tools = bind(target, names=["slow"])

    async def cancelled() -> bool:
        with anyio.move_on_after(0.05) as scope:
            await tools.slow({})
        return scope.cancelled_caught

    assert run(cancelled) is True


def test_a_callables_tool_call_errors_pass_and_a_non_awaitable_is_a_type_error() -> None:
    ours = ToolCallError("echo", "failed")

    async def failing(name: str, arguments: dict[str, Any]) -> Any:
        raise ours

    with pytest.raises(ToolCallError) as failed:
        run(lambda: bind(failing).echo({}))
    assert failed.value is ours  # already what the binding raises: not wrapped again

    def not_async(name: str, arguments: dict[str, Any]) -> Any:
        return 42

    with pytest.raises(TypeError, match="returned int for 'echo', not an awaitable"):
        run(lambda: bind(not_async).echo({}))


def test_bind_rejects_what_it_cannot_use() -> None:
    with pytest.raises(
        TypeError, match=r"expected an MCP session .* or an async callable, got int"
    ):
        bind(42)
    with pytest.raises(TypeError, match="is not a generated SDK"):
        bind(Recorder(), types.ModuleType("empty"))
    with pytest.raises(TypeError, match="not one string"):
        bind(Recorder(), names="echo")
    with pytest.raises(TypeError, match="ToolName is not a Literal"):
        bind(Recorder(), fake_sdk(source=SDK_SOURCE + "\nToolName = str\n"))


# --- names ------------------------------------------------------------------------------


def test_unknown_names_fail_at_access_when_the_names_are_known() -> None:
    target = Recorder()
    tools = bind(target, names=["echo", "get-sum", "get-tiny-image"])
    with pytest.raises(UnknownToolError) as info:
        tools.ech  # noqa: B018
    error = info.value
    assert isinstance(error, AttributeError) and isinstance(error, KeyError)
    assert error.tool_name == "ech"
    assert error.known == ("echo", "get-sum", "get-tiny-image")
    assert str(error) == (
        "unknown tool 'ech' (did you mean 'echo'?). "
        "Known tools (from names=): 'echo', 'get-sum', 'get-tiny-image'"
    )
    with pytest.raises(KeyError):
        tools["get_sum"]
    assert not hasattr(tools, "nope")
    assert getattr(tools, "nope", None) is None
    assert str(pickle.loads(pickle.dumps(error))) == str(error)
    assert target.calls == []


def test_an_unknown_name_among_many_names_stays_readable() -> None:
    names = [f"tool-{n:04}" for n in range(5000)]
    tools = bind(Recorder(), names=names)
    with pytest.raises(UnknownToolError) as info:
        tools["tool-12345"]
    message = str(info.value)
    assert len(message) < 300
    assert "5000 tools are known (from names=), dir(tools) lists them" in message
    assert message.startswith("unknown tool 'tool-12345' (did you mean 'tool-2345', ")
    assert "'tool-1235' or 'tool-1234'?)" in message
    with pytest.raises(UnknownToolError, match=r"none of the 5000 known tools .* is close"):
        tools["zzz"]
    with pytest.raises(UnknownToolError, match=r"no tools are known \(from names=\)"):
        bind(Recorder(), names=[]).echo  # noqa: B018


def test_names_come_from_the_sdks_tool_name() -> None:
    sdk = fake_sdk()
    tools = bind(Recorder(), sdk)
    assert run(lambda: tools["get-sum"]({"a": 1, "b": 2}))["tool"] == "get-sum"
    with pytest.raises(UnknownToolError, match=r"Known tools \(from fake_sdk.ToolName\)"):
        tools["get_sum"]
    assert "get-sum" in dir(tools) and "echo" in dir(tools)
    assert tools._ipython_key_completions_() == ["echo", "get-sum"]
    assert repr(tools) == "<tools via Recorder: 'echo', 'get-sum'>"
    # names= wins over the SDK; an SDK without tools declares `Never`.
    assert run(lambda: bind(Recorder(), sdk, names=["other"]).other({}))["tool"] == "other"
    empty = fake_sdk(source=SDK_SOURCE + "\nfrom typing import Never\nToolName = Never\n")
    with pytest.raises(UnknownToolError, match="no tools are known"):
        bind(Recorder(), empty).echo  # noqa: B018
    # An SDK generated before `ToolName` existed: names unknown, so unchecked.
    older = fake_sdk(source=SDK_SOURCE.replace("ToolName:", "_Unused:"))
    assert run(lambda: bind(Recorder(), older).whatever({}))["tool"] == "whatever"


def test_dunder_and_private_lookups_never_call_a_tool() -> None:
    target = Recorder()
    tools = bind(module_level_target)
    checked = bind(target, names=["echo", "_private"])
    for bound in (tools, checked):
        for name in ("__deepcopy__", "__length_hint__", "_repr_html_", "_fields", "_private"):
            assert not hasattr(bound, name)
        with pytest.raises(AttributeError) as info:
            bound.__wrapped__  # noqa: B018
        assert not isinstance(info.value, UnknownToolError)
        with pytest.raises(TypeError, match="not iterable"):
            "echo" in bound  # noqa: B015
        with pytest.raises(TypeError, match="tool names are strings"):
            bound[0]
    assert run(lambda: checked["_private"]({}))["tool"] == "_private"  # by item it is a tool
    assert copy.copy(checked)._ipython_key_completions_() == ["_private", "echo"]
    assert repr(copy.deepcopy(checked)) == repr(checked)
    restored = pickle.loads(pickle.dumps(tools))
    assert run(lambda: restored.echo({})) == "echo"
    assert target.calls == [("_private", {})]


# --- MCP sessions -----------------------------------------------------------------------


def result(**fields: Any) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(**fields)


def test_mcp_results_become_plain_values() -> None:
    image = mcp_types.ImageContent(type="image", data="AA==", mime_type="image/png")
    session = FakeSession(
        {
            "structured": result(content=text('{"t": 1}'), structured_content={"t": 1}),
            "one-text": result(content=text("hello")),
            "texts": result(content=text("a", "b", "")),
            "image": result(content=[*text("here:"), image]),
            "nothing": result(content=[]),
            "old-style": types.SimpleNamespace(
                content=text("x"), structuredContent={"old": True}, isError=False
            ),
            "json": {"content": [{"type": "text", "text": "from JSON"}], "isError": False},
        }
    )
    tools = bind(session)

    async def calls() -> dict[str, Any]:
        return {name: await tools[name]({}) for name in session.results}

    assert run(calls) == {
        "structured": {"t": 1},
        "one-text": "hello",
        "texts": "a\nb\n",
        "image": [
            {"type": "text", "text": "here:"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
        ],
        "nothing": None,
        "old-style": {"old": True},
        "json": "from JSON",
    }
    assert session.calls[0] == ("structured", {})


def test_a_tool_error_raises_tool_call_error() -> None:
    session = FakeSession(
        {
            "fails": result(content=text("bad input", "really"), is_error=True),
            "fails-quietly": result(content=[], is_error=True),
            "old-style": types.SimpleNamespace(content=text("old error"), isError=True),
        }
    )
    tools = bind(session)
    for name, message in [
        ("fails", "bad input\nreally"),
        ("fails-quietly", "the tool reported an error without a message"),
        ("old-style", "old error"),
    ]:
        with pytest.raises(ToolCallError) as info:
            run(lambda name=name: tools[name]({"x": 1}))
        assert (info.value.tool_name, info.value.message, str(info.value)) == (
            name,
            message,
            message,
        )


def test_protocol_errors_become_tool_call_errors_chained() -> None:
    refused = MCPError(-32602, "Tool nope not found")
    session = FakeSession(
        {
            "refused": refused,
            "input-required": RuntimeError("the server asked for input"),
            "not-a-result": mcp_types.InputRequiredResult(request_state="abc"),
            "no-content": types.SimpleNamespace(isError=False),
        }
    )
    tools = bind(session)
    cases = {
        "refused": "Tool nope not found (MCP error -32602)",
        "input-required": "RuntimeError: the server asked for input",
        "not-a-result": "expected a tool result, got InputRequiredResult ('input_required')",
        "no-content": "expected a tool result, got SimpleNamespace",
    }
    for name, message in cases.items():
        with pytest.raises(ToolCallError) as info:
            run(lambda name=name: tools[name]({}))
        assert (info.value.tool_name, str(info.value)) == (name, message)
    with pytest.raises(ToolCallError) as info:
        run(lambda: tools.refused({}))
    assert info.value.__cause__ is refused


def test_cancellation_is_not_swallowed() -> None:
    async def forever() -> Any:
        await anyio.sleep_forever()

    session = FakeSession({"slow": forever})
    tools = bind(session, names=["slow"])

    async def cancelled() -> bool:
        with anyio.move_on_after(0.05) as scope:
            await tools.slow({})
        return scope.cancelled_caught

    assert run(cancelled) is True


@pytest.mark.parametrize("kind", [FakeSession, FakeClient])
def test_a_sessions_names_are_listed_once_page_by_page(kind: type[FakeSession]) -> None:
    pages: dict[str | None, tuple[list[str], str | None]] = {
        None: (["echo"], "page 2"),
        "page 2": (["get-sum"], "page 3"),
        "page 3": (["get-tiny-image"], None),
    }
    session = kind({"echo": result(content=text("hi"))}, pages)
    tools = bind(session)
    assert (
        repr(tools) == f"<tools via {kind.__name__}: names read from the server on the first call>"
    )
    unknown = tools.ech  # no names yet: nothing is listed on access
    assert session.listed == []

    async def calls() -> list[Any]:
        async with anyio.create_task_group() as group:  # concurrent first calls list once
            for _ in range(3):
                group.start_soon(tools.echo, {})
        return [await tools.echo({})]

    assert run(calls) == ["hi"]
    assert session.listed == [None, "page 2", "page 3"]
    with pytest.raises(UnknownToolError) as info:
        run(lambda: unknown({}))
    assert "(did you mean 'echo'?). Known tools (from the server's tools/list): " in str(info.value)
    assert [name for name, _ in session.calls] == ["echo"] * 4
    assert "get-tiny-image" in dir(tools)
    with pytest.raises(UnknownToolError):
        tools.ech  # now the names are known, access fails at once  # noqa: B018


def test_a_repeated_cursor_ends_the_listing_with_an_error() -> None:
    pages: dict[str | None, tuple[list[str], str | None]] = {
        None: (["echo"], "a"),
        "a": (["get-sum"], "b"),
        "b": (["get-tiny-image"], "a"),
    }
    session = FakeSession({"echo": result(content=text("hi"))}, pages)
    tools = bind(session, fake_sdk(source=SDK_SOURCE.replace("ToolName:", "_Unused:")))
    with pytest.raises(ToolCallError) as info:
        run(lambda: tools.echo({}))
    assert info.value.tool_name == "echo"
    assert str(info.value) == (
        "cannot list the server's tools: the server sent the cursor 'a' twice; its list never ends"
    )
    assert session.listed == [None, "a", "b"]
    assert session.calls == []


def test_no_part_needs_the_mcp_sdk_installed_but_a_real_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` now fails
    session = FakeClient({"echo": {"content": [{"type": "text", "text": "hi"}]}})
    assert run(lambda: bind(session).echo({})) == "hi"
    assert run(lambda: bind(Recorder(), fake_sdk()).echo({}))["tool"] == "echo"


# --- the SDK's ToolCallError ------------------------------------------------------------


def test_errors_are_the_sdks_tool_call_error_too(monkeypatch: pytest.MonkeyPatch) -> None:
    sdk = fake_sdk()
    monkeypatch.setitem(sys.modules, sdk.__name__, sdk)  # so errors can be pickled

    async def target(name: str, arguments: dict[str, Any]) -> Any:
        if name == "echo":
            raise ToolCallError("echo", "ours")
        raise sdk.ToolCallError("get-sum", "the SDK's")

    tools = bind(target, sdk)
    caught = []
    for name in ("echo", "get-sum"):
        try:
            run(lambda name=name: tools[name]({}))
        except sdk.ToolCallError as error:
            caught.append(error)
    for error in caught:
        assert isinstance(error, ToolCallError)
        assert isinstance(error.__cause__, ToolCallError | sdk.ToolCallError)
    assert [(e.tool_name, str(e), e.args) for e in caught] == [
        ("echo", "ours", ("ours",)),
        ("get-sum", "the SDK's", ("the SDK's",)),
    ]
    session = FakeSession({"echo": result(content=text("no"), is_error=True)})
    with pytest.raises(codegen.client.ToolCallError) as info:
        run(lambda: bind(session, sdk).echo({}))
    error = info.value
    assert isinstance(error, sdk.ToolCallError)
    assert type(error) is type(caught[0])  # one class per SDK, cached
    assert type(error).__name__ == "ToolCallError" and type(error).__module__ == "fake_sdk"
    restored = pickle.loads(pickle.dumps(error))
    assert type(restored) is type(error) and restored.tool_name == "echo"
    assert str(restored) == "no"
    # Without an SDK, our own class, picklable too.
    plain = ToolCallError("echo", "no")
    assert pickle.loads(pickle.dumps(plain)).tool_name == "echo"


# --- end to end: @modelcontextprotocol/server-everything --------------------------------


def assert_gone(pids: list[int]) -> None:
    """Every pid ends within a few seconds (the SDK stops the server as it closes)."""
    deadline = time.monotonic() + 60
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if running(pid)]
    for pid in left:  # never leave one behind, even when failing
        sweep_group(pid)
    assert not left, "server processes left running"


def children() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


def import_file(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    """The SDK of the server's harvested tools, and their names."""
    assert EVERYTHING.exists(), "run `npm ci`: @modelcontextprotocol/server-everything"
    tmp = tmp_path_factory.mktemp("everything")
    harvested = tmp / "everything.json"
    status = main(
        ["harvest", "--mcp", "-q", "-o", str(harvested), "--timeout", "60", "--", str(EVERYTHING)]
    )
    assert status == 0
    sdk = tmp / "everything_tools.py"
    assert main(["sdk", str(harvested), "--lang", "python", "-q", "-o", str(sdk)]) == 0
    names = [tool["name"] for tool in json.loads(harvested.read_text())["tools"]]
    assert {"echo", "get-sum", "get-structured-content", "get-tiny-image"} <= set(names)
    yield sdk, names


def test_end_to_end_with_server_everything(
    everything: tuple[Path, list[str]], tmp_path: Path
) -> None:
    module = import_file(everything[0], "everything_tools")
    started: set[int] = set()
    before = children()

    async def session() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        server = StdioServerParameters(command=str(EVERYTHING), args=["stdio"])
        with (tmp_path / "server.err").open("w") as errlog:
            async with Client(stdio_client(server, errlog=errlog)) as client:
                started.update(children() - before)
                tools = bind(client, module)
                seen["echo"] = await tools.echo({"message": "hello"})
                seen["sum"] = await tools["get-sum"]({"a": 2, "b": 3})
                seen["weather"] = await tools["get-structured-content"]({"location": "Chicago"})
                seen["image"] = await tools["get-tiny-image"]({})
                for name, args in [
                    ("get-sum", {"a": "two"}),
                    ("get-resource-reference", {"resourceId": 1.5}),
                ]:
                    try:
                        await tools[name](args)
                    except module.ToolCallError as error:
                        assert isinstance(error, ToolCallError)
                        seen[name] = (error.tool_name, str(error))
                with pytest.raises(UnknownToolError) as info:
                    await tools["no-such-tool"]({})
                seen["unknown"] = str(info.value)
                # The session itself, without the SDK: the names come from tools/list.
                listed = bind(client.session)
                seen["listed"] = await listed["get-sum"]({"a": 1, "b": 1})
                with pytest.raises(UnknownToolError) as info:
                    await listed["get_sum"]({})
                seen["listed unknown"] = str(info.value)
        return seen

    try:
        seen = run(session, DEADLINE)
    finally:
        assert started, "the server was not seen running"
        assert_gone(sorted(started))
    assert seen["echo"] == "Echo: hello"
    assert seen["sum"] == "The sum of 2 and 3 is 5."
    weather = seen["weather"]
    assert set(weather) == {"temperature", "conditions", "humidity"}
    assert isinstance(weather["temperature"], int | float)
    image = seen["image"]
    assert [block["type"] for block in image] == ["text", "image", "text"]
    assert image[1]["mimeType"] == "image/png" and image[1]["data"]
    tool_name, message = seen["get-sum"]
    assert tool_name == "get-sum"
    assert "Invalid arguments for tool get-sum" in message
    assert seen["get-resource-reference"] == (
        "get-resource-reference",
        "Invalid resourceId: 1.5. Must be a finite positive integer.",
    )
    assert seen["unknown"].startswith("unknown tool 'no-such-tool'")
    assert seen["listed"] == "The sum of 1 and 1 is 2."
    assert seen["listed unknown"].startswith("unknown tool 'get_sum' (did you mean 'get-sum'")
    assert "(from the server's tools/list)" in seen["listed unknown"]


def test_the_generated_sdk_gives_the_names_up_front(everything: tuple[Path, list[str]]) -> None:
    """The generated `ToolName` lists every harvested tool; `bind` checks names with it."""
    import typing

    module = import_file(everything[0], "everything_tools_names")

    assert list(typing.get_args(module.ToolName)) == everything[1]
    tools = bind(Recorder(), module)
    with pytest.raises(UnknownToolError) as info:
        tools["no-such-tool"]  # at access: nothing to await
    assert f"(from {module.__name__}.ToolName)" in str(info.value)
    assert tools._ipython_key_completions_() == everything[1]


# --- the README example -----------------------------------------------------------------


def example_text() -> str:
    """README.md's section on calling tools from Python, up to the next heading."""
    return section(EXAMPLE_HEADING, r"^## ")


@pytest.mark.slow
def test_the_readme_example_runs_and_type_checks(tmp_path: Path) -> None:
    assert EVERYTHING.exists(), "run `npm ci`: @modelcontextprotocol/server-everything"
    markdown = example_text()
    (shell,), (program,), (expected,) = (
        fenced(markdown, lang) for lang in ("sh", "python", "text")
    )
    shim = tmp_path / "bin"
    shim.mkdir()
    pids = tmp_path / "pids"
    (shim / "npx").write_text(
        NPX.format(pids=shlex.quote(str(pids)), server=shlex.quote(str(EVERYTHING)))
    )
    (shim / "npx").chmod(0o755)
    path = [str(shim), str(Path(sys.executable).parent), os.environ["PATH"]]
    env = {**os.environ, "PATH": os.pathsep.join(path)}
    work = tmp_path / "example"
    work.mkdir()
    try:
        commands = subprocess.run(
            ["/bin/sh", "-eu", "-c", shell],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )
        assert commands.returncode == 0, commands.stderr
        (work / "example.py").write_text(program)
        ran = subprocess.run(
            [sys.executable, "example.py"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout == expected
    finally:
        if pids.exists():
            assert_gone([int(word) for word in pids.read_text().split()])
    assert len(pids.read_text().split()) == 2  # harvest, then the program

    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "example.py"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=DEADLINE * 3,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("Success")
