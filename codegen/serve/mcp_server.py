"""The MCP server in front of the upstreams: one registry, its wire view, its executor.

`Host` owns the registry's upstream tools: `mount` (re)registers one upstream's listing,
`unmount` removes it. `tools/list` answers from the registry (`wire`), `tools/call` runs the
registry's executor, so collapse, policies, validation and nested calls behave exactly as in
the library. When an upstream's tools change, the definitions are generated again from the
registry; only when the bytes differ (so a client's prompt cache survives a notice that
changed nothing) are clients told: `notifications/tools/list_changed` to each handshake-era
session that listed tools, a tools event on every 2026-07-28 `subscriptions/listen` stream.
Clients are told at most once per `NOTIFY_INTERVAL`: changes within it make one notice, sent
at its end (an upstream that floods change notices cannot flood the clients).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import secrets
import threading
from collections.abc import Callable
from typing import Any, TextIO

from ..codemode.calls.execution import ToolCall
from ..codemode.presentation.tiers import FULL
from ..codemode.registry import CodeModeError, ToolRegistry
from .rounds import RoundRun, Rounds
from .tools import Caller, mount, server_summary
from .upstream import Connection, Tools
from .wire import WireView, call_result, tool_list, wire_view

NAME = "codegen-serve"
ROUND_STATE_TTL = 900.0
"""Seconds a 2026-07-28 client has to send an approval's answer back (past the approval
service's own timeout, which ends the wait first)."""
NOTIFY_INTERVAL = 1.0
"""Seconds between two change notices to the clients."""


def _load_search_model() -> None:
    """Load the search's embedding model (`tool-codegen[search]`; nothing without it) now,
    off the path of the first search: 0.6 to 0.9 s, overlapping the upstreams' start."""
    from ..search import semantic

    semantic.model()


def _load_dictionary() -> None:
    """Read the search's Chinese-English dictionary (`tool-codegen[search]`; nothing
    without it) now, for an upstream that describes its tools in Chinese: 0.25 s off the
    path of the first search."""
    from ..search import glosses

    glosses.dictionary()


def _describes_in_chinese(tools: Tools) -> bool:
    """Whether a tool of the listing is described in Chinese (`glosses.chinese`), judged on
    the part of each description the search reads (`documents.MAX_DESCRIPTION` characters):
    an upstream's 100 MB description costs what its first 8,000 characters do."""
    from ..search import glosses
    from ..search.documents import MAX_DESCRIPTION

    return any(
        isinstance(description := tool.get("description"), str)
        and glosses.chinese(description[:MAX_DESCRIPTION])
        for tool in tools
    )


def finished(result: Any) -> Any:
    """The wire's answer to a finished call (an unknown tool is a protocol error)."""
    outcome = call_result(result)
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


class Host:
    def __init__(self, registry: ToolRegistry, place: str, errlog: TextIO) -> None:
        self.registry = registry
        self.place = place
        self.errlog = errlog
        self._mounted: dict[str, list[Callable[[], None]]] = {}
        self._view: WireView | None = None
        """What clients are offered, made again after each change of the registry."""
        self._wire_text = ""
        self._told = ""
        self._warm_lock = threading.Lock()
        self._warming = False
        self._to_warm: Any = None
        self._warmer: threading.Thread | None = None
        self._closed = False
        self._sessions: dict[int, Any] = {}
        self._calls = itertools.count(1)
        self.bus: Any = None
        self.server: Any = None
        self.changes = 0
        """How many times clients were told the tool list changed."""
        self._last_notice = float("-inf")
        self._notice_due = False
        self.rounds = Rounds()
        """Runs waiting for a 2026-07-28 client to answer (`rounds.py`)."""
        self.run_prefix = secrets.token_hex(4)
        """Call ids are `call-PREFIX-N`: unique across serve processes (the audit log's
        `run`)."""

    def note(self, message: str) -> None:
        self.errlog.write(f"codegen serve: {message}\n")
        self.errlog.flush()

    # --- the registry's upstream tools ---------------------------------------------------

    def mount(self, connection: Connection, tools: Tools) -> int:
        """Register one upstream's listing in place of its previous one; the tool count."""
        upstream = connection.upstream
        self.unmount(upstream.prefix)
        call: Caller = connection.call
        mounted = mount(upstream, tools, call)
        for warning in mounted.warnings:
            self.note(f"{upstream.label}: warning: {warning}")
        removers: list[Callable[[], None]] = []
        for spec in mounted.specs:
            try:
                removers.append(self.registry.register(spec))
            except CodeModeError as error:
                self.note(f"{upstream.label}: warning: {error}; left out")
        self._mounted[upstream.prefix] = removers
        if removers and self._past_full_tier():
            warmers = [_load_search_model]
            if _describes_in_chinese(tools):
                warmers.append(_load_dictionary)
            self._warm(warmers)  # while the other upstreams start
        if not upstream.description:  # the config's own summary wins
            self.registry.set_server_summary(
                upstream.prefix, server_summary(getattr(connection, "about", ()), tools)
            )
        self._view = None
        return len(removers)

    def _past_full_tier(self) -> bool:
        """Whether the tools' names alone are past the budget, so the SDK text cannot be the
        full section and programs will search (`tiers.py`'s lower bound)."""
        budget = self.registry.budget
        return budget is not None and sum(map(len, self.registry.visible())) > budget

    def unmount(self, prefix: str) -> int:
        removers = self._mounted.pop(prefix, [])
        for remove in removers:
            remove()
        self._view = None
        return len(removers)

    def view(self) -> WireView:
        """The wire view, generated once per change of the registry; the tier of the SDK
        text is told on stderr whenever it or the text's size changes."""
        if self._view is None:
            view = self._view = wire_view(self.registry, self.place)
            self._wire_text = json.dumps(view.definitions, sort_keys=True, ensure_ascii=False)
            if self.server is not None:
                self.server.instructions = view.instructions
            if view.tier is not None:
                warmers: list[Callable[[], None]] = []
                discovery = None
                if view.tier.tier != FULL:  # here: the loop's registry is read
                    discovery = self.registry.discovery()
                    warmers.append(discovery.warm)
                check = self.registry.check_warmer()
                if check is not None:
                    warmers.append(check)
                if discovery is not None:  # last: every tool's hit, until superseded
                    warmers.append(functools.partial(discovery.fill, self._superseded))
                if warmers:
                    self._warm(warmers)
                where = "run_code description" if self.place == "description" else "instructions"
                told = f"{where}: {view.tier.describe(self.registry.budget)}"
                if told != self._told:
                    self._told = told
                    self.note(told)
        return self._view

    def _warm(self, warmers: list[Callable[[], None]]) -> None:
        """Build the catalog's search index, start the program checker and make every
        tool's hit, now, in a thread, so the first program does not wait for them (a few
        hundred milliseconds at thousands of tools). One thread at a time: tool sets that change
        while it works are warmed once it is done, only the latest (a flood of changes
        builds one or two).

        Not a daemon: the interpreter ends a daemon thread that is still running while it
        finalizes with `pthread_exit` as soon as the thread wants the GIL back, and inside
        an extension that catches every unwind (the PyO3 ones that load the embedding model,
        `safetensors` and `tokenizers`) that aborts the whole process with SIGABRT ("FATAL:
        exception not rethrown"). `close` joins it instead."""
        with self._warm_lock:
            if self._closed:
                return
            self._to_warm = warmers
            if self._warming:
                return
            self._warming = True
            self._warmer = threading.Thread(target=self._warm_latest, name="codegen-discovery")
            self._warmer.start()

    def _superseded(self) -> bool:
        """Whether a newer tool set waits to be warmed, or serve closes."""
        return self._to_warm is not None or self._closed

    def _warm_latest(self) -> None:
        while True:
            with self._warm_lock:
                warmers, self._to_warm = self._to_warm, None
                if warmers is None:
                    self._warming = False
                    return
            for warm in warmers:
                with contextlib.suppress(Exception):  # a program that asks is told what failed
                    warm()

    def close(self) -> None:
        """Warm nothing more and wait for the warming under way (blocking: call it in a
        thread), so no thread of serve's is inside extension code when the process ends."""
        with self._warm_lock:
            self._closed = True
            self._to_warm = None
            warmer = self._warmer
        if warmer is not None:
            warmer.join()

    # --- upstream events -------------------------------------------------------------------

    def _wire_bytes(self) -> str:
        self.view()
        return self._wire_text

    async def on_change(self, connection: Connection, tools: Tools) -> None:
        before = self._wire_bytes()
        count = self.mount(connection, tools)
        if self._wire_bytes() == before:
            self.note(f"{connection.upstream.label}: tool list re-read, nothing changed")
            return
        self.note(f"{connection.upstream.label}: tool list changed, now {count} tools")
        await self.notify_changed()

    async def on_end(self, connection: Connection, reason: str) -> None:
        count = self.unmount(connection.upstream.prefix)
        tools = f"{count} tool is" if count == 1 else f"{count} tools are"
        self.note(
            f"{connection.upstream.label} stopped ({reason}); its {tools} removed, the other "
            "servers are still served"
        )
        await self.notify_changed()

    async def notify_changed(self) -> None:
        """Tell the clients; within `NOTIFY_INTERVAL` of the last notice, one notice at the
        interval's end stands for every change until then."""
        import anyio
        from mcp.server.subscriptions import ToolsListChanged

        if self._notice_due:
            return  # a notice is already waiting for the end of the interval
        wait = self._last_notice + NOTIFY_INTERVAL - anyio.current_time()
        if wait > 0:
            self._notice_due = True
            try:
                await anyio.sleep(wait)
            finally:
                self._notice_due = False
        self._last_notice = anyio.current_time()
        self.changes += 1
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception:  # that client is gone
                self._sessions.pop(key, None)
        if self.bus is not None:
            await self.bus.publish(ToolsListChanged())

    # --- the MCP server ----------------------------------------------------------------------

    def build_server(self) -> Any:
        from mcp.server.lowlevel import NotificationOptions, Server
        from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
        from mcp.shared.exceptions import MCPError
        from mcp.types import INVALID_PARAMS
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        from .approval import CLIENT, client_link

        host = self
        self.bus = InMemorySubscriptionBus()

        async def list_tools(ctx: Any, params: Any) -> Any:
            if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                host._sessions[id(ctx.session)] = ctx.session
            return tool_list(host.view().definitions)

        async def call_tool(ctx: Any, params: Any) -> Any:
            state = getattr(params, "request_state", None)
            if state is not None:  # a 2026-07-28 client's retry, with the user's answer
                run = host.rounds.take(state)
                if run is None:
                    raise MCPError(
                        code=INVALID_PARAMS,
                        message="this approval request was answered already or has expired; "
                        "run the program again",
                    )
                run.answer(dict(getattr(params, "input_responses", None) or {}))
                return await host.next_round(run)
            arguments = dict(params.arguments or {})
            call = ToolCall(params.name, arguments, f"call-{host.run_prefix}-{next(host._calls)}")
            link = client_link(ctx, params.name, arguments)
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and link.ask is not None:
                run = None

                async def execute() -> Any:
                    assert run is not None
                    link.ask = run.ask
                    CLIENT.set(link)
                    return await host.registry.execute(call)

                run = RoundRun(execute())
                return await host.next_round(run)
            CLIENT.set(link)
            return finished(await host.registry.execute(call))

        class CodegenServer(Server[Any]):
            def create_initialization_options(self, *args: Any, **kwargs: Any) -> Any:
                if not args and "notification_options" not in kwargs:
                    kwargs["notification_options"] = NotificationOptions(tools_changed=True)
                return super().create_initialization_options(*args, **kwargs)

        from .._support.distribution import installed_version

        self.server = CodegenServer(
            NAME,
            version=installed_version(),
            instructions=self.view().instructions,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_subscriptions_listen=ListenHandler(self.bus),
        )
        # a 2026-07-28 retry's requestState is sealed, bound to its call and expires
        security = RequestStateSecurity.ephemeral(ttl=ROUND_STATE_TTL)
        self.server.middleware.append(RequestStateBoundary(security, default_audience=NAME))
        return self.server

    async def next_round(self, run: RoundRun) -> Any:
        """The run's result once it ends, or an `input_required` result with its question
        (the run waits, parked under the state the client sends back)."""
        from mcp import types

        question = await run.next()
        if question is None:
            return finished(run.task.result())
        form = types.ElicitRequestFormParams(
            message=question.message,
            requested_schema=question.schema,
        )
        return types.InputRequiredResult(
            input_requests={question.key: types.ElicitRequest(params=form)},
            request_state=self.rounds.park(run),
        )
