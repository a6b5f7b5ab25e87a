"""How long and how much an HTTP connection of `codegen serve --http` may take.

Every default is safe for a server on loopback with clients on the same machine: a client
sends its request head and body at once, so seconds are plenty, and anything slower is a
client holding a descriptor without asking for anything (`connections.py` enforces them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_CONNECTIONS = 256
"""The connection cap when none is given, unless a quarter of the open-file limit is less
(`descriptors.connection_cap`)."""


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """One field per `codegen.mcp.config.HTTP_LIMIT_KEYS` key (a test keeps them equal)."""

    header_timeout: float = 10.0
    """Seconds from a connection's first byte (its opening, for a new connection) to the end
    of a request head, however slowly the bytes come."""
    idle_timeout: float = 30.0
    """Seconds a connection may wait, after a response, for the next request's first byte.
    Longer than the 4 to 5 s after which HTTP clients drop an idle connection themselves, so
    a client never reuses one the server is closing."""
    body_timeout: float = 30.0
    """Seconds from the end of a request head to the end of its body."""
    body: int = 4 << 20
    """Bytes a request body may hold (a `run_code` call is its program and a description)."""
    connections: int | None = None
    """Connections open at once; None: `DEFAULT_CONNECTIONS` or a quarter of the open-file
    limit, whichever is less."""


def http_limits(chosen: Mapping[str, float]) -> HttpLimits:
    """The limits with `chosen` (checked values by key: the config's, then the flags')
    over the defaults."""
    default = HttpLimits()
    return HttpLimits(
        header_timeout=float(chosen.get("header_timeout", default.header_timeout)),
        idle_timeout=float(chosen.get("idle_timeout", default.idle_timeout)),
        body_timeout=float(chosen.get("body_timeout", default.body_timeout)),
        body=int(chosen.get("body", default.body)),
        connections=int(chosen["connections"]) if "connections" in chosen else None,
    )
