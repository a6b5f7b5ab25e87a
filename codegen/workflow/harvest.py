"""`codegen harvest --mcp`: the tool definitions of a live MCP server, as a file to build from.

Servers publish their tools only at run time (`tools/list`), so a build that wants them has
to start the server once, ask, and keep the answer. This module does that with the official
MCP SDK client (`mcp`, imported lazily: only this command needs it) and writes what the
server sent, key for key, in our own format: `{"server": ..., "tools": [...]}`.

A harvest runs unattended in CI, so every way a server can fail must end quickly, clearly and
without leftovers:

- one overall deadline (`--timeout`, 30 s by default) covers start-up, the handshake and
  every page; when it passes, the server is killed and the error says what it was doing;
- a server that exits, or writes anything that is not JSON-RPC on stdout, fails at once;
- the server runs in its own process group (the SDK starts it in a new session) and that
  whole group is killed afterwards, success or not, so a server that forks helpers, or exits
  and leaves them behind, leaves nothing running. On POSIX the server is started through
  `/bin/sh -c 'echo $$ > PIDFILE; exec "$@"'` only to learn its pid (the `exec` keeps it),
  which the SDK does not expose;
- the server's stderr is kept and its last lines are shown when it fails (`--verbose`
  streams it live instead).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import shlex
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO, cast

from .._support.user_files import display_path
from ..errors import CodegenError, UsageError
from .progress import Console

DEFAULT_TIMEOUT = 30.0
MAX_LISTINGS = 5
"""How often the tool list is fetched again after `notifications/tools/list_changed` before
the server is declared unstable."""

STDERR_TAIL = 20
"""Lines of the server's stderr shown with an error."""


SWEEP_GRACE = 0.5
"""Seconds the server's process group gets between SIGTERM and SIGKILL in the final sweep."""

_SPAWN = 'printf "%s" "$$" > "$0" && exec "$@"'
"""Run by `/bin/sh -c` with the pid file as `$0`: record the shell's pid, then become the
server (same pid, so it is the process group the SDK created)."""


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
class _State:
    """Shared between the harvest, the watchdog and the SDK's message handler."""

    label: str
    timeout: float
    pid_file: Path | None
    phase: str = "starting the server"
    failure: str | None = None
    timed_out: bool = False
    generation: int = 0

    def server_pid(self) -> int | None:
        if self.pid_file is None:
            return None
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None


def _kill_group(pid: int | None, signal_number: int) -> bool:
    """Signal the server's whole process group; False when it is already gone."""
    if pid is None or not hasattr(os, "killpg"):
        return False
    try:
        os.killpg(pid, signal_number)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_group(pid: int | None, grace: float = SWEEP_GRACE) -> None:
    """End whatever is left of the server's process group: SIGTERM, a short wait, SIGKILL."""
    if not _kill_group(pid, signal.SIGTERM):
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not _kill_group(pid, 0):
            return
        time.sleep(0.02)
    _kill_group(pid, signal.SIGKILL)


def _server_argv(command: Sequence[str], pid_file: Path | None) -> list[str]:
    if pid_file is None:
        return list(command)
    return ["/bin/sh", "-c", _SPAWN, str(pid_file), *command]


def _resolve_command(command: Sequence[str]) -> list[str]:
    """The command with its program found on PATH, or a usage error naming it."""
    program = command[0]
    found = shutil.which(program)
    if found is None:
        where = "no such file" if os.sep in program else "not found on PATH"
        raise UsageError(f"harvest: cannot run {program!r}: {where}")
    return [program if os.sep in program else found, *command[1:]]


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


def _describe_bad_line(exc: Exception) -> str:
    """What the server wrote instead of JSON-RPC, from the SDK's parse error."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            details = errors()
        except Exception:  # pragma: no cover - a foreign exception type
            details = []
        if details and isinstance(details[0], dict) and "input" in details[0]:
            shown = repr(details[0]["input"])
            if len(shown) > 200:
                shown = shown[:200] + "…"
            return f"the server wrote something that is not a JSON-RPC message on stdout: {shown}"
    return f"the server wrote something that is not a JSON-RPC message on stdout ({exc})"


async def _harvest(
    command: Sequence[str], state: _State, console: Console, errlog: TextIO
) -> Harvested:
    import anyio
    import anyio.lowlevel
    from mcp import Client, StdioServerParameters, stdio_client, types
    from mcp.client.subscriptions import ToolsListChanged
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from ..mcp.listing import EndlessListing, list_tools, raw_pages

    outer = anyio.CancelScope()

    def fail(message: str) -> None:
        if state.failure is None and not state.timed_out:
            state.failure = message
        _kill_group(state.server_pid(), signal.SIGKILL)  # so the SDK's shutdown is quick
        outer.cancel()

    async def on_message(message: object) -> None:
        if isinstance(message, Exception):
            fail(_describe_bad_line(message))
        elif isinstance(message, types.ToolListChangedNotification):
            state.generation += 1
        await anyio.lowlevel.checkpoint()

    async def watchdog() -> None:
        await anyio.sleep(state.timeout)
        state.timed_out = True
        fail("timeout")

    async def list_once(client: Client) -> tuple[list[dict[str, Any]], int]:
        def progress(page: int, listed: int) -> None:
            state.phase = f"listing tools (page {page})"
            console.progress.update(f"{state.label}: {state.phase}, {listed} tools so far")

        try:
            listed = await list_tools(raw_pages(client.session), progress)
        except EndlessListing as error:
            raise HarvestError(f"{state.label}: error: {error}") from None
        return list(listed.tools), listed.pages

    async def session() -> Harvested:
        parameters = StdioServerParameters(
            command=command[0], args=list(command[1:]), env=dict(os.environ)
        )
        state.phase = "waiting for the handshake"
        console.progress.update(f"{state.label}: {state.phase}", force=True)
        async with Client(
            stdio_client(parameters, errlog=errlog),
            message_handler=on_message,
            cache=None,
            client_info=types.Implementation(name="codegen-harvest", version="1"),
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

    async def watch_changes(client: Client, ready: anyio.Event) -> None:
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

    async def list_until_stable(client: Client, server: str | None) -> Harvested:
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

    if isinstance(exc, CodegenError):
        return exc
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _explain(exc.exceptions[0], state)
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
    return HarvestError(f"{state.label}: error: {type(exc).__name__}: {exc} while {state.phase}")


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


def harvest_mcp(
    command: Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    console: Console | None = None,
) -> Harvested:
    """Start `command` as an MCP server over stdio, list its tools and stop it (and every
    process it started). Raises `HarvestError` when the server fails, `UsageError` when it
    cannot be started."""
    try:
        import anyio
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError(
            "harvest needs the MCP SDK, which is not installed: pip install 'codegen[mcp]'"
        ) from None
    console = console or Console()
    label = shlex.join(command)
    resolved = _resolve_command(command)
    _quiet_sdk_logs(console.verbose, console.stream)
    live = console.verbose and _has_fileno(console.stream)
    with tempfile.TemporaryDirectory(prefix="codegen-harvest-") as scratch:
        pid_file = Path(scratch) / "server.pid" if os.name == "posix" else None
        state = _State(label=label, timeout=timeout, pid_file=pid_file)
        errlog: IO[str]
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            # The SDK hands this to the server as its stderr: any real file will do.
            stream = console.stream if live else cast(TextIO, errlog)
            try:
                return anyio.run(_harvest, _server_argv(resolved, pid_file), state, console, stream)
            except HarvestError as error:
                raise HarvestError(str(error) + ("" if live else _stderr_tail(errlog))) from None
            finally:
                console.progress.clear()
                sweep_group(state.server_pid())


def _has_fileno(stream: TextIO) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


def run_harvest(args: argparse.Namespace) -> int:
    """The `harvest` command."""
    from .._support.atomic_write import write_text
    from ..engine import compile_value

    console = Console(quiet=args.quiet, verbose=args.verbose)
    timeout = parse_timeout(args.timeout)
    command = list(args.server_command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError("harvest: no server command: codegen harvest --mcp -o FILE -- COMMAND")
    started = time.monotonic()
    harvested = harvest_mcp(command, timeout=timeout, console=console)
    document = harvest_document(harvested)
    text = dump_document(document)
    count = len(harvested.tools)
    console.detail(
        f"{count} tool{'s' * (count != 1)} in {harvested.pages} "
        f"page{'s' * (harvested.pages != 1)}, {harvested.listings} "
        f"listing{'s' * (harvested.listings != 1)}, {time.monotonic() - started:.2f} s"
    )
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
