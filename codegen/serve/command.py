"""`codegen serve`: read the config, start the upstreams, serve, and leave nothing behind.

The config is the file the user names (`--config`), else the user-level one
(`config.user_config()`); never anything in the working folder. Security-relevant choices
are the user's, made where they can see them: no sandbox only with `--sandbox none`
(announced on stderr), HTTP off loopback only with `--http-allow-remote`, and HTTP always
behind the bearer token of `http.py`.

Start-up connects to every upstream at once (`supervisor.py`); one that fails to start is
reported on stderr and left out (when none starts, the command fails with exit status 1). An
upstream that dies later is restarted after a pause that doubles up to a minute (its
tools leave the SDK meanwhile, and come back with it); nothing an upstream does ends serve.
Then the server runs over stdio (until the client closes stdin) or over streamable HTTP with
`--http HOST:PORT`. Ctrl-C or SIGTERM ends either, quietly. On every way out, each upstream's
session is closed and its process group stopped, the code runtime's spare worker and run
cgroups are removed, and the threads serve started that run extension code are joined, so
nothing is left and the interpreter finalizes with no such thread running.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from ..errors import UsageError
from ..mcp.config import (
    HTTP_LIMIT_KEYS,
    LIMIT_KEYS,
    UPSTREAM_MESSAGE,
    ServeConfig,
    load_servers_file,
    parse_address,
    parse_budget,
    parse_limit,
    parse_result_tokens,
    user_config,
)
from ..mcp.config_example import example_text
from .http_limits import HttpLimits, http_limits

DEFAULT_BUDGET = 2048
"""The default description budget (`codemode.tiers.DEFAULT_BUDGET`, which a test pins to
this; serve does not import Code Mode before it must)."""
DEFAULT_RESULT_TOKENS = 22_000
"""The default result budget (`codemode.fitting.DEFAULT_RESULT_TOKENS`, pinned by a test)."""

RUNTIME_LIMITS = {
    "timeout": "timeout",
    "cpu_seconds": "cpu_seconds",
    "memory": "memory_bytes",
    "output": "output_bytes",
    "arguments": "argument_bytes",
    "processes": "processes",
    "concurrent_runs": "max_concurrent_runs",
}
"""Config limit -> its `RuntimeLimits` field (`upstream_message` is serve's own)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything `serve` needs, settled before anything starts."""

    config: ServeConfig
    mode: str
    language: str
    sdk: str
    sandbox: str
    http: tuple[str, int] | None
    limits: Any
    """`RuntimeLimits` of every run."""
    upstream_message: int = UPSTREAM_MESSAGE
    typescript: str | None = None
    allow_remote: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    http_token: str | None = None
    http_limits: HttpLimits = field(default_factory=HttpLimits)
    budget: int = DEFAULT_BUDGET
    """UTF-16 code units of the SDK text given up front (`codemode.tiers`)."""
    result_tokens: int = DEFAULT_RESULT_TOKENS
    """`o200k_base` tokens a run's result may take before it is cut (`codemode.fitting`)."""
    check_programs: str = "refuse"
    """What the check of a program before it runs does (`codemode.checks`)."""
    policy: Any = None
    """The user's `Policy` for calls (`codemode.approval.rules`)."""
    ask_timeout: float = 120.0
    """Seconds the user has to answer an approval request."""
    audit: Any = None
    """`AuditSettings` of the audit log, or None for none."""


def _config(args: argparse.Namespace) -> ServeConfig:
    from .._support.user_files import display_path

    if args.config:
        path = Path(args.config)
        return load_servers_file(path, display_path(path))
    found = user_config()
    if found is None or not found.is_file():
        where = "" if found is None else f" or write {found}"
        raise UsageError(
            "serve: no upstream servers: pass --config FILE (an MCP client config with "
            f'"mcpServers", or a pyproject.toml with [tool.codegen.serve]){where}; '
            "nothing is read from the working folder; --print-config-example shows one"
        )
    return load_servers_file(found, str(found))


def _limits(settings: Any, args: argparse.Namespace) -> tuple[Any, int]:
    """The runs' `RuntimeLimits` and the upstream message cap: flags over the config over
    the defaults."""
    from ..codemode.run_code.run_limits import RuntimeLimits

    chosen: dict[str, float] = {**dict(settings.limits), **_flagged(args, LIMIT_KEYS)}
    fields: dict[str, Any] = {
        RUNTIME_LIMITS[key]: value for key, value in chosen.items() if key in RUNTIME_LIMITS
    }
    limits = replace(RuntimeLimits(), **fields)
    return limits, int(chosen.get("upstream_message", UPSTREAM_MESSAGE))


def _flagged(args: argparse.Namespace, keys: dict[str, str], prefix: str = "") -> dict[str, float]:
    """The limits of `keys` the command line gives, checked: each key's flag is
    `--PREFIXKEY`, dashed."""
    given: dict[str, float] = {}
    for key, kind in keys.items():
        text = getattr(args, prefix + key, None)
        if text is None:
            continue
        flag = "--" + (prefix + key).replace("_", "-")
        try:
            given[key] = parse_limit(_number(text), kind)
        except ValueError as error:
            raise UsageError(f"serve: {flag}: {error}") from None
    return given


def _number(text: str) -> Any:
    """A flag's text as a number where it is one (sizes may carry units)."""
    for convert in (int, float):
        with contextlib.suppress(ValueError):
            return convert(text)
    return text


def plan(args: argparse.Namespace) -> Plan:
    config = _config(args)
    settings = config.settings
    mode = args.mode or settings.mode or "code"
    language = args.lang or settings.lang or "python"
    sdk = args.sdk or settings.sdk or "description"
    sandbox = checked_sandbox(args.sandbox or settings.sandbox or "auto")
    address = args.http or settings.http
    try:
        http = None if address is None else parse_address(address)
    except UsageError as error:
        raise UsageError(f"serve: --http: {error}") from None
    limits, upstream_message = _limits(settings, args)
    budget = settings.description_budget or DEFAULT_BUDGET
    if args.description_budget is not None:
        try:
            budget = parse_budget(_number(args.description_budget))
        except ValueError as error:
            raise UsageError(f"serve: --description-budget: {error}") from None
    result_tokens = settings.result_tokens or DEFAULT_RESULT_TOKENS
    if args.result_tokens is not None:
        try:
            result_tokens = parse_result_tokens(_number(args.result_tokens))
        except ValueError as error:
            raise UsageError(f"serve: --result-tokens: {error}") from None
    if args.typescript and language != "typescript":
        raise UsageError(f"serve: --typescript applies to --lang typescript, not {language}")
    return Plan(
        config,
        mode,
        language,
        sdk,
        sandbox,
        http,
        limits,
        upstream_message,
        typescript=args.typescript or settings.typescript,
        allow_remote=bool(args.http_allow_remote),
        allowed_hosts=(*settings.http_allowed_hosts, *args.http_allowed_host),
        allowed_origins=(*settings.http_allowed_origins, *args.http_allowed_origin),
        http_token=settings.http_token,
        http_limits=http_limits(
            {**dict(settings.http_limits), **_flagged(args, HTTP_LIMIT_KEYS, "http_")}
        ),
        budget=budget,
        result_tokens=result_tokens,
        check_programs=args.check_programs or settings.check_programs or "refuse",
        policy=_policy(settings),
        ask_timeout=settings.ask_timeout or 120.0,
        audit=_audit(settings, args),
    )


def _policy(settings: Any) -> Any:
    """The config's `policy`, read by Code Mode's one rule parser; the defaults without one."""
    from ..codemode.approval.rules import DEFAULT_POLICY, parse_policy
    from ..errors import Diagnostic, InvalidInputError

    if settings.policy is None:
        return DEFAULT_POLICY
    source, pointer, value = settings.policy

    def fail(at: str, message: str) -> Exception:
        return InvalidInputError((Diagnostic(source, at, message),))

    return parse_policy(value, pointer, fail)


def _audit(settings: Any, args: argparse.Namespace) -> Any:
    from ..codemode.approval.audit import AuditSettings

    path = args.audit_log or settings.audit_log
    if path is None:
        if args.audit_arguments:
            raise UsageError("serve: --audit-arguments needs an audit log (--audit-log FILE)")
        return None
    arguments = bool(args.audit_arguments or settings.audit_arguments)
    return AuditSettings(Path(path).absolute(), arguments=arguments)


def _runtime(settled: Plan) -> Any:
    from ..codemode.presentation.languages import UnknownLanguageError, sdk_renderer
    from ..codemode.runtimes.by_language import RuntimeUnavailableError, runtime_for

    options: dict[str, Any] = {}
    if settled.language == "typescript":
        options["typescript"] = settled.typescript
    try:
        sdk_renderer(settled.language)
        return runtime_for(settled.language, settled.limits, sandbox=settled.sandbox, **options)
    except (UnknownLanguageError, RuntimeUnavailableError) as error:
        raise UsageError(f"serve: --lang {settled.language}: {error}") from None


def _check(settled: Plan, runtime: Any) -> None:
    """Refuse to start (exit 2) where no program could run, rather than advertise
    `run_code` and fail every run: the runtime runs a trivial program first, through the
    sandbox (`WorkerRuntime.check`), and its message names what fixes it."""
    import asyncio

    from ..codemode.runtimes.worker_host import RuntimeUnavailable

    try:
        asyncio.run(runtime.check())
    except RuntimeUnavailable as error:
        raise UsageError(f"serve: {settled.language} programs cannot run here: {error}") from None


def run_serve(args: argparse.Namespace) -> int:
    """The `serve` command."""
    if args.print_config_example:
        sys.stdout.write(example_text())
        sys.stdout.flush()
        return 0
    if args.print_config_schema:
        from ..mcp.config_example import SCHEMA as schema

        with open(schema, encoding="utf-8") as file:
            sys.stdout.write(file.read())
        sys.stdout.flush()
        sys.stderr.write(f"(the file: {schema})\n")
        return 0
    try:
        import anyio
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError(
            "serve needs the MCP SDK, which is not installed: pip install 'tool-codegen[serve]'"
        ) from None
    settled = plan(args)
    runtime = _runtime(settled)
    _check(settled, runtime)
    listener = None if settled.http is None else _listen(*settled.http, settled.allow_remote)
    gc.enable()  # a long-lived server: the CLI's batch-job pause does not apply
    _quiet_sdk_logs()
    audit = _open_audit(settled)
    _announce(settled, sys.stderr)
    try:
        return anyio.run(_serve, settled, runtime, listener, sys.stderr, audit, backend="asyncio")
    except KeyboardInterrupt:  # a second Ctrl-C while shutting down
        return 130
    finally:
        if listener is not None:
            listener.close()


def _announce(settled: Plan, errlog: TextIO) -> None:
    """What the user should know before anything runs: no isolation, and each run's
    limits."""
    limits = settled.limits
    if settled.sandbox == "none":
        errlog.write(
            "codegen serve: --sandbox none: programs run WITHOUT isolation, as uid "
            f"{os.geteuid()}, with every file, environment variable, process and network "
            "this process can reach\n"
        )
        memory = f"{limits.memory_bytes // (1 << 20)} MiB of address space per process"
    else:
        from ..codemode.sandbox.cgroups import run_memory_bound

        memory = run_memory_bound(limits)[1]
    errlog.write(
        f"codegen serve: each run: {limits.timeout:g} s, {limits.cpu_seconds} CPU s, "
        f"{memory}; at most {limits.max_concurrent_runs} runs at once\n"
    )
    if settled.policy is not None:
        errlog.write("codegen serve: the policy for calls programs make:\n")
        for line in settled.policy.describe():
            errlog.write(f"  {line}\n")
        errlog.write(
            f"  (asked through the client, which has {settled.ask_timeout:g} s to answer; "
            "a client that cannot be asked gets a refusal)\n"
        )
    if settled.audit is not None:
        what = "with the arguments" if settled.audit.arguments else "arguments as digests"
        errlog.write(f"codegen serve: audit log: {settled.audit.path} ({what})\n")
    errlog.flush()


def _quiet_sdk_logs() -> None:
    """The SDK logs expected disconnects with tracebacks; serve reports them once itself."""
    import logging

    for name in ("mcp", "uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [logging.NullHandler()]
        logger.propagate = False


def _open_audit(settled: Plan) -> Any:
    """The audit log, opened before anything starts (a path it cannot use is exit 2)."""
    if settled.audit is None:
        return None
    from ..codemode.approval.audit import AuditLog, AuditLogError
    from .approval import CLIENT

    try:
        return AuditLog(settled.audit, client=lambda: _client_name(CLIENT.get()))
    except AuditLogError as error:
        raise UsageError(f"serve: {error}") from None


def _quiet_dead_pipes(loop: Any, context: dict[str, Any]) -> None:
    """The event loop's handler for errors nobody awaited: a write to an upstream that has
    died (a broken pipe, a reset connection) is reported once by its connection, so the
    transport's own copy of it, with a traceback, is left out; anything else goes to the
    loop's default handler."""
    if isinstance(context.get("exception"), BrokenPipeError | ConnectionResetError):
        return
    loop.default_exception_handler(context)


async def _serve(
    settled: Plan, runtime: Any, listener: Any, errlog: TextIO, audit: Any = None
) -> int:
    import asyncio

    import anyio

    asyncio.get_running_loop().set_exception_handler(_quiet_dead_pipes)

    from ..codemode.registry import ToolRegistry
    from .approval import ClientApproval
    from .mcp_server import Host
    from .supervisor import Supervisor, start_all

    registry = ToolRegistry(
        mode=settled.mode,  # type: ignore[arg-type]
        budget=settled.budget,
        check=settled.check_programs,  # type: ignore[arg-type]
        policy=settled.policy,
    )
    registry.result_tokens = settled.result_tokens
    registry.set_approval_service(ClientApproval(settled.ask_timeout))
    if audit is not None:
        registry.add_observer(audit)
    registry.mount_runtime(runtime)
    for upstream in settled.config.upstreams:
        if upstream.description:
            registry.set_server_summary(upstream.prefix, upstream.description)
    host = Host(registry, settled.sdk, errlog)
    supervisors = [
        Supervisor(upstream, host, errlog, settled.upstream_message)
        for upstream in settled.config.upstreams
    ]
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_on_signals, group.cancel_scope, host)
            if not await start_all(supervisors, group):
                host.note("no upstream server started; nothing to serve")
                group.cancel_scope.cancel()
                return 1
            server = host.build_server()
            if settled.http is None:
                await _serve_stdio(server)
            else:
                await _serve_http(server, settled, listener, host)
            group.cancel_scope.cancel()
    finally:
        for supervisor in supervisors:
            supervisor.close()
        with anyio.CancelScope(shield=True):
            await runtime.aclose()
            # before the interpreter finalizes: see `Host.close`
            await anyio.to_thread.run_sync(host.close)
            await registry.close_checkers()
            if audit is not None:
                audit.close()
    return 0


def _client_name(link: Any) -> str | None:
    return None if link is None else link.name


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


def _listen(name: str, port: int, allow_remote: bool) -> Any:
    """The listening socket, refused off loopback unless the user allowed it."""
    import socket

    from .http import is_loopback

    try:
        family = socket.AF_INET6 if ":" in name else socket.AF_INET
        listener = socket.create_server((name, port), family=family)
    except OSError as error:
        raise UsageError(
            f"serve: --http: cannot listen on {name}:{port}: {error.strerror or error}"
        ) from None
    bound = listener.getsockname()[0]
    if not is_loopback(bound) and not allow_remote:
        listener.close()
        raise UsageError(
            f"serve: --http {name}:{port} listens on {bound}, which is not a loopback "
            "address: anyone who reaches it could run programs with every upstream's "
            "credentials. Pass --http-allow-remote to serve there anyway (clients still "
            "need the token)"
        )
    return listener


async def _serve_http(server: Any, settled: Plan, listener: Any, host: Any) -> None:
    import asyncio

    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from .connections import Gate
    from .descriptors import http_cap
    from .http import Guard, choose_token, is_loopback, policy_for

    assert settled.http is not None
    name, _ = settled.http
    bound_address, bound_port = listener.getsockname()[:2]
    token = choose_token(os.environ, settled.http_token)
    policy = policy_for(
        token.value, name, bound_port, settled.allowed_hosts, settled.allowed_origins
    )
    # Host, Origin and the token are checked by the guard, for every address
    app = Guard(
        server.streamable_http_app(
            host=name,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        ),
        policy,
    )

    class Quiet(uvicorn.Server):
        def capture_signals(self) -> Any:  # signals are ours: they end every part
            return _no_signal_capture()

    limits = settled.http_limits
    cap = http_cap(
        limits.connections, settled.limits.max_concurrent_runs, len(settled.config.upstreams)
    )
    gate = Gate(limits, cap.connections, asyncio.get_running_loop())
    options = gate.server_options()
    web = Quiet(uvicorn.Config(gate.watch(app), log_level="critical", lifespan="on", **options))
    shown = f"[{name}]" if ":" in name else name
    host.note(f"listening on http://{shown}:{bound_port}/mcp")
    if cap.note is not None:
        host.note(cap.note)
    if not is_loopback(bound_address):
        host.note(
            f"listening on {bound_address}, off loopback (--http-allow-remote): clients must "
            "send the token, and a Host this server answers to (--http-allowed-host)"
        )
    if token.source == "generated":
        host.note(
            f'clients send "Authorization: Bearer {token.value}" (a token made for this run; '
            "set CODEGEN_SERVE_TOKEN or http_token to choose one)"
        )
    else:
        host.note(f'clients send "Authorization: Bearer <the token of {token.source}>"')
    try:
        await web.serve(sockets=[listener])
    finally:
        web.should_exit = True


def checked_sandbox(name: str) -> str:
    """A sandbox setting serve knows (`--sandbox` is checked by argparse; a config's by its
    reader), else a usage error naming the known ones."""
    from ..codemode.sandbox.launchers import MODES

    if name not in MODES:
        known = ", ".join(repr(mode) for mode in MODES)
        raise UsageError(f"unknown sandbox {name!r} (known: {known})")
    return name
