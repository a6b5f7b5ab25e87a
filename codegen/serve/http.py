"""The front door of `codegen serve --http`: who may reach it, and from where.

Anyone who reaches the endpoint runs programs that call every upstream tool with its
credentials, so every request is checked, whatever address serve listens on:

- `Host` must be one the server answers to (the loopback names and the listening address,
  with its port, plus what the config adds): a page on another site that points a DNS name
  at this address (DNS rebinding) sends its own name, and is turned away (421);
- `Origin`, when a browser sends one, must be the server's own or one the config adds (403);
- `Authorization: Bearer <token>` must carry the server's token, compared in constant time
  (401 with `WWW-Authenticate: Bearer`). The token comes from `CODEGEN_SERVE_TOKEN`, else the
  config's `http_token`, else it is generated at start and shown once on stderr.

A non-loopback address is refused unless the user passes `--http-allow-remote` (the token
is still required there). Whether an address is loopback is decided on the address the
socket is bound to, so `127.1`, `localhost` or `::ffff:127.0.0.1` count as what they are.
How long a connection may take, and how many may be open, is decided before any of this
runs (`connections.py`).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

TOKEN_VARIABLE = "CODEGEN_SERVE_TOKEN"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(address: str) -> bool:
    """Whether a bound socket address (as `getsockname` gives it) is a loopback one."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


@dataclass(frozen=True)
class Token:
    value: str
    source: str
    """Where it came from: the variable, the config, or "generated"."""


def choose_token(environ: Mapping[str, str], configured: str | None) -> Token:
    """The bearer token: the environment variable, else the config's, else a new one."""
    given = environ.get(TOKEN_VARIABLE, "")
    if given:
        return Token(given, f"${TOKEN_VARIABLE}")
    if configured:
        return Token(configured, "the config's http_token")
    return Token(secrets.token_urlsafe(32), "generated")


@dataclass(frozen=True)
class Policy:
    """What a request must carry to be served."""

    token: str
    hosts: frozenset[str]
    """Allowed `Host` values, lowercase: `name:port`, or `name` for any port."""
    origins: frozenset[str]
    """Allowed `Origin` values, lowercase."""

    def host_allowed(self, host: str) -> bool:
        host = host.strip().lower()
        if host in self.hosts:
            return True
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name in self.hosts

    def origin_allowed(self, origin: str) -> bool:
        return origin.strip().lower().rstrip("/") in self.origins

    def token_matches(self, authorization: str) -> bool:
        scheme, _, given = authorization.strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(given.strip().encode(), self.token.encode())


def policy_for(
    token: str,
    listening: str,
    port: int,
    extra_hosts: Iterable[str] = (),
    extra_origins: Iterable[str] = (),
) -> Policy:
    """The allow-lists for a server listening on `listening:port` (the name as the user
    wrote it); loopback names are always allowed, the config adds the others."""
    names = set(LOOPBACK_NAMES)
    if listening and listening not in ("0.0.0.0", "::"):
        names.add(f"[{listening}]" if ":" in listening else listening)
    hosts = {f"{name}:{port}".lower() for name in names}
    hosts.update(host.strip().lower() for host in extra_hosts)
    origins = {f"http://{name}:{port}".lower() for name in names}
    origins.update(origin.strip().lower().rstrip("/") for origin in extra_origins)
    return Policy(token, frozenset(hosts), frozenset(origins))


class Guard:
    """ASGI middleware: `Host`, then `Origin`, then the token, before anything else runs."""

    def __init__(self, app: App, policy: Policy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no other kind of route: close it before it is read
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = {
            key.decode("latin-1").lower(): value.decode("latin-1")
            for key, value in scope["headers"]
        }
        if not self.policy.host_allowed(headers.get("host", "")):
            await refuse(
                send,
                421,
                "this server does not answer to that Host (add it with --http-allowed-host)",
            )
            return
        origin = headers.get("origin")
        if origin is not None and not self.policy.origin_allowed(origin):
            await refuse(send, 403, "requests from that Origin are not served")
            return
        if not self.policy.token_matches(headers.get("authorization", "")):
            await refuse(
                send,
                401,
                'send "Authorization: Bearer <token>" with the token codegen serve printed',
                (b"www-authenticate", b'Bearer realm="codegen-serve"'),
            )
            return
        await self.app(scope, receive, send)


async def refuse(send: Send, status: int, message: str, *headers: tuple[bytes, bytes]) -> None:
    """Answer `status` with `{"error": message}`."""
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
