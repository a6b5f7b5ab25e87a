"""`codegen harvest`: the tool definitions of live MCP servers, as files to build from.

Servers publish their tools only at run time (`tools/list`), so a build that wants them has
to start the server once, ask, and keep the answer. Two forms:

- `--mcp -- COMMAND`: one server started over stdio, written (to `-o FILE` or stdout) as
  `{"server": <--server NAME, else its serverInfo.name>, "tools": [...]}`;
- `--config FILE -o DIR`: every enabled server of an MCP client config, the file
  `codegen serve --config` reads (stdio and streamable HTTP, `${VAR}` expansion,
  `allow` / `deny`), one file per server, `DIR/<prefix>.json` holding
  `{"server": <its name in the config>, "tools": [...]}`.

One naming rule: a harvested file's `server` is the name `serve` knows the server by, its
key in the config, and `--namespace` derives the prefix from it by the rule `serve` applies
to that key, so the tools built from the file are named `prefix__tool` exactly as `serve`
names them. `--mcp` has no config to read the key from: `--server NAME` gives it, and
without it the server's own `serverInfo.name` stands in (`mcp-time` → `mcp_time__...`,
which matches `serve` only under a key of that name).

The config reader, the transports and the connection are `serve`'s own (`codegen.mcp`),
so a file means the same to both and a server is started and reached the same way: a stdio
server in its own process group, stopped with every process it started, success or not;
what one message may hold is capped (`limits.upstream_message`, 16 MiB by default). Tools
are listed through `codegen.mcp.listing` and written key for key as the server sent them.

A harvest runs unattended in CI, so every way a server can fail must end quickly, clearly and
without leftovers:

- one overall deadline (`--timeout`, 30 s by default) covers start-up, the handshake and
  every page; when it passes, the server is stopped and the error says what it was doing;
- a server that exits, or writes anything that is not JSON-RPC on stdout, fails at once;
- the server's stderr is kept and its last lines are shown when it fails (`--verbose`
  streams it live instead);
- under `--config` the servers are harvested at once; one that fails is reported and the
  others are still written (the exit status is then 1), and nothing is written before every
  server has answered or failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, TextIO, cast

from .._support.user_files import display_path
from ..errors import CodegenError, UsageError
from ..mcp.config import UPSTREAM_MESSAGE, ServeConfig, Upstream, load_servers_file
from .progress import Console

DEFAULT_TIMEOUT = 30.0
MAX_LISTINGS = 5
"""How often the tool list is fetched again after `notifications/tools/list_changed` before
the server is declared unstable."""

STDERR_TAIL = 20
"""Lines of the server's stderr shown with an error."""


class HarvestError(CodegenError):
    """The server failed: it exited, broke the protocol or did not answer in time."""

    exit_code = 1


@dataclass(frozen=True, slots=True)
class Harvested:
    """What one harvest found: the server's name and its tools exactly as sent."""

    server: str | None
    tools: tuple[dict[str, Any], ...]
    protocol_version: str | None = None
    pages: int = 0
    listings: int = 0


def harvest_document(harvested: Harvested) -> dict[str, Any]:
    """Our format. Tools are sorted by name (stable, so duplicates keep the server's order):
    servers are free to list them in any order, and the file should change only when a
    tool does. Schemas keep the server's key order, which decides the SDK's field order."""
    tools = sorted(harvested.tools, key=lambda tool: str(tool.get("name", "")))
    document: dict[str, Any] = {}
    if harvested.server:
        document["server"] = harvested.server
    document["tools"] = tools
    return document


def dump_document(document: Mapping[str, Any]) -> str:
    """Stable JSON text: two-space indent, UTF-8, a trailing newline."""
    text = json.dumps(document, indent=2, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates cannot be UTF-8; escape everything instead
        text = json.dumps(document, indent=2, ensure_ascii=True)
    return text + "\n"


def parse_timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"harvest: --timeout: expected a positive number of seconds, got {text!r}")
    return value


@dataclass(slots=True)
class _Board:
    """A harvest's one progress line: how many servers are done (and failed), and what the
    latest one did: started, waiting for the handshake, listing (page, tools so far),
    listed N tools, or failed and why."""

    console: Console
    total: int
    listed: int = 0
    failed: int = 0

    def show(self, label: str, what: str, *, force: bool = False) -> None:
        line = f"{label}: {what}"
        if self.total > 1:
            done = self.listed + self.failed
            failed = f", {self.failed} failed" if self.failed else ""
            line = f"{done} of {self.total} servers done{failed} · {line}"
        self.console.progress.update(line, force=force)

    def finished(self, name: str, label: str, outcome: Harvested | CodegenError) -> None:
        """One server is done: `name` as the line shows it, `label` as errors name it."""
        if isinstance(outcome, Harvested):
            self.listed += 1
            count = len(outcome.tools)
            self.show(name, f"listed {count} tool{'s' * (count != 1)}", force=True)
        else:
            self.failed += 1
            reason = str(outcome).partition("\n")[0].removeprefix(f"{label}: error: ")
            self.show(name, f"failed: {reason}", force=True)


@dataclass(slots=True)
class _State:
    """Shared between one server's harvest, its watchdog and the SDK's message handler."""

    label: str
    timeout: float
    board: _Board
    name: str = ""
    """How the progress line names the server (its name in the config, else `label`)."""
    phase: str = "starting the server"
    failure: str | None = None
    timed_out: bool = False
    generation: int = 0


def check_server_name(name: str) -> str:
    """`--server NAME`: the server's key in a serve config, which must leave a prefix by the
    rule `serve` applies to it (`load.namespaces.sanitize`)."""
    from ..load.namespaces import sanitize

    if not sanitize(name):
        raise UsageError(
            f"harvest: --server {json.dumps(name, ensure_ascii=False)} leaves no ASCII letter "
            "or digit for a prefix"
        )
    return name


def command_upstream(command: Sequence[str]) -> Upstream:
    """`--mcp -- COMMAND` as an upstream: the command as given, started with this process's
    whole environment (as it would be from the shell), messages naming it as written. A
    program that cannot be found is a usage error (found again where it is started)."""
    from ..mcp.connect import StartFailed, find_program

    try:
        find_program(command[0])
    except StartFailed as error:
        raise UsageError(f"harvest: {error}") from None
    return Upstream(
        name="",
        prefix="",
        pointer="",
        command=tuple(command),
        env=tuple(os.environ.items()),
        shown=shlex.join(command),
    )


def _quiet_sdk_logs(verbose: bool, stream: TextIO) -> None:
    """The SDK logs protocol trouble with tracebacks; the CLI reports it once, clearly.
    With `--verbose` its messages are shown, one line each, without the tracebacks."""

    class OneLine(logging.Formatter):
        def formatException(self, ei: Any) -> str:
            return ""

        def format(self, record: logging.LogRecord) -> str:
            record.exc_info = None
            record.exc_text = None
            return super().format(record)

    logger = logging.getLogger("mcp")
    logger.propagate = False
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    output: logging.Handler = logging.NullHandler()
    if verbose:
        output = logging.StreamHandler(stream)
        output.setFormatter(OneLine("mcp: %(levelname)s: %(message)s"))
        output.setLevel(logging.WARNING)
    logger.addHandler(output)


async def _harvest(
    upstream: Upstream, state: _State, console: Console, errlog: TextIO, cap: int
) -> Harvested:
    import anyio
    import anyio.lowlevel
    from mcp import types
    from mcp.client.subscriptions import ToolsListChanged
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from ..mcp.connect import bad_line, describe, list_all, open_client, open_transport

    outer = anyio.CancelScope()

    def fail(message: str) -> None:
        if state.failure is None and not state.timed_out:
            state.failure = message
        outer.cancel()  # leaving the transport stops the server's whole process group

    async def on_message(message: object) -> None:
        if isinstance(message, Exception):
            if upstream.url is None:
                fail(bad_line(message))
            else:
                fail(f"the HTTP transport failed: {describe(message)}")
        elif isinstance(message, types.ToolListChangedNotification):
            state.generation += 1
        await anyio.lowlevel.checkpoint()

    async def watchdog() -> None:
        await anyio.sleep(state.timeout)
        state.timed_out = True
        fail("timeout")

    async def list_once(client: Any) -> tuple[list[dict[str, Any]], int]:
        def progress(page: int, listed: int) -> None:
            state.phase = f"listing tools (page {page})"
            state.board.show(state.name, f"{state.phase}, {listed} tools so far")

        listed = await list_all(client, progress)  # endless: `StartFailed`, see `_explain`
        return list(listed.tools), listed.pages

    async def session() -> Harvested:
        state.board.show(state.name, "starting", force=True)
        transport = open_transport(upstream, errlog, cap)
        state.phase = "waiting for the handshake"
        state.board.show(state.name, state.phase, force=True)
        async with open_client(
            transport, name="codegen-harvest", message_handler=on_message
        ) as client:
            info = client.server_info
            console.detail(
                f"{state.label}: connected to {info.name if info else 'an unnamed server'} "
                f"(protocol {client.protocol_version})"
            )
            if client.server_capabilities.tools is None:
                console.note(f"{state.label}: warning: the server offers no tools")
                return Harvested(info.name if info else None, (), client.protocol_version)
            async with anyio.create_task_group() as watchers:
                if client.server_capabilities.tools.list_changed and (
                    client.protocol_version in MODERN_PROTOCOL_VERSIONS
                ):
                    # Since 2026-07-28 change notifications come only on a listen stream.
                    ready = anyio.Event()
                    watchers.start_soon(watch_changes, client, ready)
                    await ready.wait()
                harvested = await list_until_stable(client, info.name if info else None)
                watchers.cancel_scope.cancel()
            return harvested

    async def watch_changes(client: Any, ready: anyio.Event) -> None:
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                ready.set()
                async for event in subscription:
                    if isinstance(event, ToolsListChanged):
                        state.generation += 1
        except Exception as exc:  # not being told about changes is no reason to fail
            console.detail(f"{state.label}: cannot watch the tool list for changes: {exc}")
        finally:
            ready.set()

    async def list_until_stable(client: Any, server: str | None) -> Harvested:
        for listing in range(1, MAX_LISTINGS + 1):
            generation = state.generation
            tools, pages = await list_once(client)
            for _ in range(3):  # let a change notice that raced the last page land
                await anyio.lowlevel.checkpoint()
            if state.generation == generation:
                return Harvested(server, tuple(tools), client.protocol_version, pages, listing)
            console.detail(f"{state.label}: the tool list changed meanwhile; listing again")
        raise HarvestError(
            f"{state.label}: error: the tool list changed during each of "
            f"{MAX_LISTINGS} listings; the server never settled"
        )

    outcome: list[Harvested] = []
    problem: list[BaseException] = []
    with outer:
        async with anyio.create_task_group() as group:
            group.start_soon(watchdog)
            try:
                outcome.append(await session())
            except Exception as exc:  # reported below, after the task group is closed
                problem.append(exc)
            finally:
                group.cancel_scope.cancel()
    if state.timed_out:
        raise HarvestError(
            f"{state.label}: error: no answer within {state.timeout:g} s while {state.phase}"
        )
    if state.failure is not None:
        raise HarvestError(f"{state.label}: error: {state.failure}")
    if problem:
        raise _explain(problem[0], state) from None
    if not outcome:  # pragma: no cover - cancelled without a recorded reason
        raise HarvestError(f"{state.label}: error: the harvest was cancelled")
    return outcome[0]


def _explain(exc: BaseException, state: _State) -> CodegenError:
    """A failure of the session as one clear sentence."""
    from mcp.shared.exceptions import MCPError
    from pydantic import ValidationError

    from ..mcp.connect import StartFailed, describe

    if isinstance(exc, CodegenError):
        return exc
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _explain(exc.exceptions[0], state)
    if isinstance(exc, StartFailed):
        return HarvestError(f"{state.label}: error: {exc}")
    if isinstance(exc, MCPError):
        if exc.code == -32000 and "closed" in exc.message.lower():
            return HarvestError(
                f"{state.label}: error: the server closed the connection while {state.phase} "
                "(it exited or closed its stdout)"
            )
        return HarvestError(
            f"{state.label}: error: the server answered with an error while {state.phase}: "
            f"{exc.message} (code {exc.code})"
        )
    if isinstance(exc, ValidationError):
        details = exc.errors()
        reason = str(exc)
        if details:
            where = "/".join(str(part) for part in details[0]["loc"])
            reason = f"{where}: {details[0]['msg']}"
        return HarvestError(
            f"{state.label}: error: the server sent an invalid result while {state.phase}: {reason}"
        )
    if isinstance(exc, OSError):
        return UsageError(f"harvest: cannot start {state.label}: {exc.strerror or exc}")
    return HarvestError(f"{state.label}: error: {describe(exc)} while {state.phase}")


def _stderr_tail(errlog: IO[str]) -> str:
    try:
        errlog.flush()
        errlog.seek(0)
        lines = errlog.read().splitlines()
    except (OSError, ValueError):
        return ""
    lines = [line for line in lines if line.strip()][-STDERR_TAIL:]
    if not lines:
        return ""
    return "\nthe server's stderr ended with:\n" + "\n".join(f"  | {line}" for line in lines)


def _require_sdk() -> None:
    try:
        import anyio  # noqa: F401
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError(
            "harvest needs the MCP SDK, which is not installed: pip install 'tool-codegen[mcp]'"
        ) from None


Outcome = Harvested | CodegenError
"""One server's harvest: what it listed, or why it failed."""


def _harvest_all(
    jobs: Sequence[tuple[Upstream, str]], timeout: float, console: Console, cap: int
) -> list[Outcome]:
    """Harvest every (upstream, label) at once, each under the same deadline; one failing
    is its own outcome and never stops the others. Every server is stopped on return."""
    import anyio

    _quiet_sdk_logs(console.verbose, console.stream)
    live = console.verbose and _has_fileno(console.stream)
    outcomes: list[Outcome | None] = [None] * len(jobs)
    board = _Board(console, len(jobs))
    with contextlib.ExitStack() as stack:
        # The transport hands each server one of these as its stderr: any real file will do.
        errlogs = [
            stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
            for _ in jobs
        ]

        async def one(index: int) -> None:
            upstream, label = jobs[index]
            errlog = errlogs[index]
            stream = console.stream if live else cast(TextIO, errlog)
            name = json.dumps(upstream.name, ensure_ascii=False) if upstream.name else label
            state = _State(label=label, timeout=timeout, board=board, name=name)
            try:
                outcomes[index] = await _harvest(upstream, state, console, stream, cap)
            except HarvestError as error:
                tail = "" if live else _stderr_tail(errlog)
                outcomes[index] = HarvestError(str(error) + tail)
            except CodegenError as error:
                outcomes[index] = error
            except Exception as error:  # pragma: no cover - one server never stops the others
                from ..mcp.connect import describe

                outcomes[index] = HarvestError(f"{label}: error: {describe(error)}")
            finished = outcomes[index]
            if finished is not None:
                board.finished(state.name, label, finished)

        async def every() -> None:
            async with anyio.create_task_group() as group:
                for index in range(len(jobs)):
                    group.start_soon(one, index)

        try:
            anyio.run(every)
        finally:
            console.progress.clear()
    return [
        outcome if outcome is not None else HarvestError(f"{label}: error: not harvested")
        for outcome, (_, label) in zip(outcomes, jobs, strict=True)
    ]


def harvest_mcp(
    command: Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    console: Console | None = None,
) -> Harvested:
    """Start `command` as an MCP server over stdio, list its tools and stop it (and every
    process it started). Raises `HarvestError` when the server fails, `UsageError` when it
    cannot be started."""
    _require_sdk()
    console = console or Console()
    upstream = command_upstream(command)
    (outcome,) = _harvest_all([(upstream, upstream.shown)], timeout, console, UPSTREAM_MESSAGE)
    if isinstance(outcome, CodegenError):
        raise outcome
    return outcome


def message_cap(config: ServeConfig) -> int:
    """What one message from an upstream may hold: the config's `upstream_message` limit,
    else serve's default."""
    return int(dict(config.settings.limits).get("upstream_message", UPSTREAM_MESSAGE))


@dataclass(frozen=True, slots=True)
class ServerHarvest:
    """One server of a config: what it listed, or why it failed."""

    upstream: Upstream
    outcome: Outcome
    """Its `Harvested` (`server` is its name in the config, `tools` those its `allow` /
    `deny` admit, as `serve` mounts them), or the error it failed with."""
    warnings: tuple[str, ...] = ()
    """`allow` / `deny` entries naming a tool the server does not list."""


def harvest_config(
    config: ServeConfig,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    console: Console | None = None,
) -> list[ServerHarvest]:
    """Every upstream of `config` harvested at once, in the config's order."""
    _require_sdk()
    console = console or Console()
    jobs = [(upstream, upstream.label) for upstream in config.upstreams]
    outcomes = _harvest_all(jobs, timeout, console, message_cap(config))
    found: list[ServerHarvest] = []
    for upstream, outcome in zip(config.upstreams, outcomes, strict=True):
        if not isinstance(outcome, Harvested):
            found.append(ServerHarvest(upstream, outcome))
            continue
        warnings = upstream.unlisted({tool.get("name") for tool in outcome.tools})
        admitted = tuple(tool for tool in outcome.tools if _admits(upstream, tool))
        outcome = replace(outcome, server=upstream.name, tools=admitted)
        found.append(ServerHarvest(upstream, outcome, tuple(warnings)))
    return found


def _admits(upstream: Upstream, tool: Mapping[str, Any]) -> bool:
    """A tool without a usable name is kept, for the build to report."""
    name = tool.get("name")
    return not isinstance(name, str) or upstream.admits(name)


def _has_fileno(stream: TextIO) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


def run_harvest(args: argparse.Namespace) -> int:
    """The `harvest` command."""
    console = Console(quiet=args.quiet, verbose=args.verbose)
    timeout = parse_timeout(args.timeout)
    command = list(args.server_command)
    if command and command[0] == "--":
        command = command[1:]
    server = getattr(args, "server", None)
    if getattr(args, "config", None):
        if command:
            raise UsageError(
                f"harvest: --config takes no COMMAND (the servers are the config's), "
                f"got {shlex.join(command)!r}"
            )
        if server is not None:
            raise UsageError(
                "harvest: --server names the one server of --mcp; under --config each "
                "server's name is its key in the config"
            )
        return _run_config(args, console, timeout)
    if server is not None:
        check_server_name(server)
    if not command:
        raise UsageError(
            "harvest: --mcp needs the server's command: codegen harvest --mcp -o FILE -- COMMAND"
        )
    return _run_command(args, console, timeout, command)


def _run_command(
    args: argparse.Namespace, console: Console, timeout: float, command: list[str]
) -> int:
    from .._support.atomic_write import write_text
    from ..engine import compile_value

    started = time.monotonic()
    harvested = harvest_mcp(command, timeout=timeout, console=console)
    if getattr(args, "server", None) is not None:
        harvested = replace(harvested, server=args.server)
    document = harvest_document(harvested)
    text = dump_document(document)
    count = len(harvested.tools)
    console.detail(f"{_counts(harvested)}, {time.monotonic() - started:.2f} s")
    output = args.output
    display = display_path(Path(output)) if output else "<stdout>"
    compiled = compile_value(document, source=display)
    console.diagnostics(compiled.diagnostics)
    if output:
        changed = write_text(output, text)
        console.note(f"{'wrote' if changed else 'unchanged'} {display} ({count} tools)")
    else:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()
    if not compiled.ok:
        console.error("harvest: the server's tools are not valid; see the errors above")
        return 1
    return 0


def _counts(harvested: Harvested) -> str:
    count = len(harvested.tools)
    return (
        f"{count} tool{'s' * (count != 1)} in {harvested.pages} "
        f"page{'s' * (harvested.pages != 1)}, {harvested.listings} "
        f"listing{'s' * (harvested.listings != 1)}"
    )


def _run_config(args: argparse.Namespace, console: Console, timeout: float) -> int:
    """`--config FILE -o DIR`: one file per server that answered, written once every server
    has answered or failed; exit status 1 when one failed or sent invalid tools."""
    from .._support.atomic_write import write_text
    from ..engine import compile_value

    if not args.output:
        raise UsageError(
            "harvest: --config writes one file per server: name their directory with -o DIR"
        )
    folder = Path(args.output)
    shown = display_path(folder)
    if folder.exists() and not folder.is_dir():
        raise UsageError(
            f"harvest: -o {shown}: not a directory (--config writes one file per server)"
        )
    path = Path(args.config)
    config = load_servers_file(path, display_path(path))
    started = time.monotonic()
    found = harvest_config(config, timeout=timeout, console=console)
    seconds = time.monotonic() - started
    failed = [one.upstream for one in found if not isinstance(one.outcome, Harvested)]
    for one in found:
        if not isinstance(one.outcome, Harvested):
            console.error(f"codegen: {one.outcome}")
    invalid: list[Upstream] = []
    for one in found:
        upstream, outcome = one.upstream, one.outcome
        if not isinstance(outcome, Harvested):
            continue
        console.detail(f"{upstream.label}: {_counts(outcome)}")
        for warning in one.warnings:
            console.note(f"{upstream.label}: warning: {warning}")
        document = harvest_document(outcome)
        target = folder / f"{upstream.prefix}.json"
        display = display_path(target)
        compiled = compile_value(document, source=display)
        console.diagnostics(compiled.diagnostics)
        if not compiled.ok:
            invalid.append(upstream)
        folder.mkdir(parents=True, exist_ok=True)
        changed = write_text(target, dump_document(document))
        count = len(outcome.tools)
        console.note(
            f"{'wrote' if changed else 'unchanged'} {display} ({count} tool{'s' * (count != 1)})"
        )
    total = len(found)
    written = total - len(failed)  # every server that answered, its tools valid or not
    if failed:
        names = ", ".join(json.dumps(upstream.name, ensure_ascii=False) for upstream in failed)
        kept = "nothing was written"
        if written:
            kept = ("its file is" if len(failed) == 1 else "their files are") + " left as before"
            kept += f", the other{'s' * (written != 1)} written"
        console.error(f"harvest: {len(failed)} of {total} servers failed ({names}): {kept}")
    if invalid:
        names = ", ".join(json.dumps(upstream.name, ensure_ascii=False) for upstream in invalid)
        console.error(f"harvest: the tools of {names} are not valid; see the errors above")
    if failed or invalid:
        return 1
    console.detail(f"{total} server{'s' * (total != 1)} harvested into {shown} in {seconds:.2f} s")
    return 0
