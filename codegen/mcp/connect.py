"""One configured upstream (`config.Upstream`) reached as an MCP client, the one way `serve`
and `harvest` both do it.

`open_transport` makes the upstream's transport through `transports.py`: a stdio server is
started (its program found in `PATH`'s absolute folders, over a minimal environment plus its `env`, in its
own session and process group, which is stopped when the transport closes); a URL is reached
over streamable HTTP with its `headers`. Either way no message past `cap` bytes is held
whole. `open_client` opens the `mcp.Client` session on it, and `list_all` reads every page
of its tools through `listing.py`. What each command does with the connection (serve keeps
it and watches for changes, harvest lists until the list is stable) is its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO

from .._support.program_lookup import find_program as lookup
from .._support.program_lookup import not_found
from .config import UPSTREAM_MESSAGE, Upstream
from .listing import EndlessListing, Listing, list_tools, raw_pages


class StartFailed(Exception):
    """Why an upstream could not be reached or listed, in words."""


def find_program(program: str) -> str:
    """Where `program` is (a bare name is looked for in PATH's absolute folders only, never
    the working directory); `StartFailed` when it cannot be run."""
    found = lookup(program)
    if found is None:
        raise StartFailed(f"cannot run {program!r}: {not_found(program)}")
    return found


def open_transport(
    upstream: Upstream,
    errlog: TextIO,
    cap: int = UPSTREAM_MESSAGE,
    on_skipped: Callable[[int], None] | None = None,
) -> Any:
    """The upstream's transport (an async context manager of the read and write streams
    the MCP `Client` takes). A stdio server's stderr goes to `errlog` (a real file);
    `on_skipped(size)` hears of a message past `cap`. Raises `StartFailed` when the
    program cannot be found."""
    from .transports import http_client, stdio_transport

    if upstream.url is not None:
        from mcp.client.streamable_http import streamable_http_client

        client = http_client(dict(upstream.headers) or None, cap)
        return streamable_http_client(upstream.url, http_client=client, max_sse_event_size=cap)
    command = [find_program(upstream.command[0]), *upstream.command[1:]]
    env = dict(upstream.env) or None
    return stdio_transport(command, env, upstream.cwd, errlog, cap, on_skipped)


@asynccontextmanager
async def open_client(
    transport: Any,
    *,
    name: str,
    message_handler: Any = None,
) -> AsyncIterator[Any]:
    """An initialized `mcp.Client` session over `transport`, introducing itself as `name`;
    `message_handler(message)` (async) gets the server's notifications and any exception
    the transport reads. The session (and with it the transport) closes on leaving."""
    from mcp import Client, types

    async with Client(
        transport,
        message_handler=message_handler,
        cache=None,
        client_info=types.Implementation(name=name, version="1"),
    ) as client:
        yield client


async def list_all(client: Any, on_page: Callable[[int, int], None] | None = None) -> Listing:
    """Every page of `tools/list`, each tool as the plain JSON the server sent (reduced to
    its interface keys); a pagination that never ends is a `StartFailed`."""
    try:
        return await list_tools(raw_pages(client.session), on_page)
    except EndlessListing as error:
        raise StartFailed(str(error)) from None


CONNECTION_CLOSED = -32000
"""The MCP SDK's error code for a request whose connection ended before its answer."""


def describe(error: BaseException) -> str:
    """A failure as one line."""
    if isinstance(error, BaseExceptionGroup) and error.exceptions:
        return describe(error.exceptions[0])
    if isinstance(error, StartFailed):
        return str(error)
    code, message = getattr(error, "code", None), getattr(error, "message", None)
    if code == CONNECTION_CLOSED and message == "Connection closed":
        return "the server closed the connection (it exited or closed its stdout)"
    if isinstance(code, int) and isinstance(message, str):
        return f"{message} (MCP error {code})"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def bad_line(error: Exception) -> str:
    """What a stdio server wrote instead of JSON-RPC, from the parse error its line gave."""
    errors = getattr(error, "errors", None)
    details: Any = []
    if callable(errors):
        try:
            details = errors()
        except Exception:  # a foreign exception type
            details = []
    if details and isinstance(details[0], dict) and "input" in details[0]:
        line = details[0]["input"]
        if isinstance(line, bytes):  # the transport parses the line's bytes
            line = line.decode("utf-8", errors="replace")
        shown = repr(line)
        if len(shown) > 200:
            shown = shown[:200] + "…"
        return f"the server wrote something that is not a JSON-RPC message on stdout: {shown}"
    return f"the server wrote something that is not a JSON-RPC message on stdout ({error})"
