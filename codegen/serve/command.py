"""`codegen serve`: read the config, start the upstreams, serve, and leave nothing behind.

Start-up connects to every upstream at once; one that fails to start is reported on stderr
and left out (when none starts, the command fails with exit status 1). Then the server runs
over stdio (until the client closes stdin) or over streamable HTTP with `--http HOST:PORT`.
Ctrl-C or SIGTERM ends either. On every way out, each upstream's session is closed and its
process group stopped, and the code runtime's spare worker is stopped, so no process is left.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..errors import UsageError
from .config import (
    ServeConfig,
    ServeSettings,
    example_text,
    load_servers_file,
    load_table,
    parse_address,
)


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything `serve` needs, settled before anything starts."""

    config: ServeConfig
    mode: str
    language: str
    sdk: str
    sandbox: str
    http: tuple[str, int] | None


def find_table(start: Path | None = None) -> ServeConfig | None:
    """The nearest `pyproject.toml` with `[tool.codegen.serve]`, from `start` upwards."""
    from ..workflow.config import display_path

    directory = (start or Path.cwd()).resolve()
    for folder in (directory, *directory.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            config = load_table(candidate, display_path(candidate))
            if config is not None:
                return config
    return None


def _project_sandbox() -> str | None:
    from ..workflow.config import find_config

    project = find_config()
    return project.sandbox if project is not None else None


def plan(args: argparse.Namespace) -> Plan:
    from ..workflow.config import check_sandbox, display_path

    if args.config:
        path = Path(args.config)
        config = load_servers_file(path, display_path(path))
    else:
        found = find_table()
        if found is None:
            raise UsageError(
                "serve: no upstream servers: pass --config FILE (an MCP client config with "
                '"mcpServers") or add [tool.codegen.serve] to pyproject.toml; '
                "--print-config-example shows one"
            )
        config = found
    settings: ServeSettings = config.settings
    mode = args.mode or settings.mode or "code"
    language = args.lang or settings.lang or "python"
    sdk = args.sdk or settings.sdk or "description"
    sandbox = check_sandbox(args.sandbox or _project_sandbox() or "auto")
    address = args.http or settings.http
    try:
        http = None if address is None else parse_address(address)
    except UsageError as error:
        raise UsageError(f"serve: --http: {error}") from None
    return Plan(config, mode, language, sdk, sandbox, http)


def _runtime(language: str, sandbox: str) -> Any:
    from ..codemode.languages import UnknownLanguageError, sdk_renderer
    from ..codemode.runtimes import RuntimeUnavailableError, create_runtime

    try:
        sdk_renderer(language)
        return create_runtime(language, sandbox)
    except (UnknownLanguageError, RuntimeUnavailableError) as error:
        raise UsageError(f"serve: --lang {language}: {error}") from None


def run_serve(args: argparse.Namespace) -> int:
    """The `serve` command."""
    if args.print_config_example:
        sys.stdout.write(example_text())
        sys.stdout.flush()
        return 0
    try:
        import anyio
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError(
            "serve needs the MCP SDK, which is not installed: pip install 'codegen[serve]'"
        ) from None
    settled = plan(args)
    runtime = _runtime(settled.language, settled.sandbox)
    gc.enable()  # a long-lived server: the CLI's batch-job pause does not apply
    _quiet_sdk_logs()
    return anyio.run(_serve, settled, runtime, sys.stderr, backend="asyncio")


def _quiet_sdk_logs() -> None:
    """The SDK logs expected disconnects with tracebacks; serve reports them once itself."""
    import logging

    for name in ("mcp", "uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [logging.NullHandler()]
        logger.propagate = False


async def _serve(settled: Plan, runtime: Any, errlog: TextIO) -> int:
    import anyio

    from ..codemode.registry import ToolRegistry
    from .host import Host
    from .upstream import Connection

    registry = ToolRegistry(mode=settled.mode)  # type: ignore[arg-type]
    registry.mount_runtime(runtime)
    host = Host(registry, settled.sdk, errlog)
    connections = [
        Connection(upstream, host.on_change, host.on_end, errlog)
        for upstream in settled.config.upstreams
    ]
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_on_signals, group.cancel_scope, host)
            started = 0

            async def start(connection: Connection) -> None:
                nonlocal started
                outcome = await group.start(connection.run)
                label = connection.upstream.label
                if isinstance(outcome, str):
                    host.note(f"{label} failed to start: {outcome}; its tools are left out")
                    return
                count = host.mount(connection, outcome)
                started += 1
                host.note(f"{label}: {count} tool{'s' * (count != 1)}")

            async with anyio.create_task_group() as starting:
                for connection in connections:
                    starting.start_soon(start, connection)
            if not started:
                host.note("no upstream server started; nothing to serve")
                group.cancel_scope.cancel()
                return 1
            server = host.build_server()
            if settled.http is None:
                await _serve_stdio(server)
            else:
                await _serve_http(server, settled.http, host)
            group.cancel_scope.cancel()
    finally:
        for connection in connections:
            connection.closing = True
        with anyio.CancelScope(shield=True):
            await runtime.aclose()
    return 0


async def _on_signals(scope: Any, host: Any) -> None:
    import anyio

    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for number in signals:
            host.note(f"{signal.Signals(number).name}: shutting down")
            scope.cancel()
            return


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    from .stdin import StdinLines

    async with stdio_server(stdin=StdinLines()) as (read, write):  # type: ignore[arg-type]
        await server.run(read, write, server.create_initialization_options())


@contextlib.contextmanager
def _no_signal_capture() -> Iterator[None]:
    yield


async def _serve_http(server: Any, address: tuple[str, int], host: Any) -> None:
    import socket

    import uvicorn

    name, port = address
    try:
        family = socket.AF_INET6 if ":" in name else socket.AF_INET
        listener = socket.create_server((name, port), family=family)
    except OSError as error:
        raise UsageError(
            f"serve: --http: cannot listen on {name}:{port}: {error.strerror or error}"
        ) from None
    bound = listener.getsockname()[1]
    app = server.streamable_http_app(host=name)

    class Quiet(uvicorn.Server):
        def capture_signals(self) -> Any:  # signals are ours: they end every part
            return _no_signal_capture()

    web = Quiet(uvicorn.Config(app, log_level="warning", lifespan="on"))
    shown = f"[{name}]" if ":" in name else name
    host.note(f"listening on http://{shown}:{bound}/mcp")
    try:
        await web.serve(sockets=[listener])
    finally:
        web.should_exit = True
        listener.close()
