"""The server entry `codegen install` writes, and how it meets an entry already there.

A stdio entry runs `PROGRAM serve --config CONFIG`, every path absolute; an HTTP entry
names the URL of a running `codegen serve --http` and sends its bearer token in an
`Authorization` header, spelled the way the client reads a secret from outside the file (its
environment, or a value it asks for), so the file never holds the token unless the user asks
for exactly that.

An existing entry of the same name is ours when it runs `codegen ... serve` or names the
same URL: it is updated, keeping what the user added to it (keys of its own, `env`, other
headers). Anything else is someone else's server, replaced only when the user says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .clients import DOLLAR, ENV, INPUT, Client

STDIO_KEYS = ("command", "args", "env", "cwd")
HTTP_KEYS = ("url", "headers")


@dataclass(frozen=True, slots=True)
class Entry:
    """One server entry and what goes beside it in the file."""

    value: dict[str, Any]
    input: dict[str, Any] | None = None
    """VS Code's `inputs` item the entry's `${input:ID}` asks for, when it has one."""


def stdio_entry(client: Client, program: Sequence[str], config: str) -> Entry:
    """`program` (absolute) running `serve --config config` (absolute). Settings such as
    `lang` or `mode` belong in the config's `codegen` object, where serve reads them."""
    command, *leading = program
    value: dict[str, Any] = {"type": "stdio"} if client.stdio_type else {}
    value |= {"command": command, "args": [*leading, "serve", "--config", config]}
    return Entry(value)


def http_entry(client: Client, url: str, name: str, variable: str, literal: str | None) -> Entry:
    """An entry for `codegen serve --http` at `url`: the token from `$variable` as the
    client spells it, or `literal` itself when given."""
    token, asked = token_reference(client, name, variable)
    value: dict[str, Any] = {"type": "http"} if client.http_type else {}
    value |= {"url": url, "headers": {"Authorization": f"Bearer {literal or token}"}}
    return Entry(value, None if literal else asked)


def token_reference(client: Client, name: str, variable: str) -> tuple[str, dict[str, Any] | None]:
    """How `client` names the token in a header, and the input it asks for it through."""
    if client.token == ENV:
        return f"${{env:{variable}}}", None
    if client.token == INPUT:
        identifier = f"{name}-token"
        asked = {
            "type": "promptString",
            "id": identifier,
            "description": f"Bearer token of codegen serve --http (${variable} where it runs)",
            "password": True,
        }
        return f"${{input:{identifier}}}", asked
    assert client.token == DOLLAR, client
    return f"${{{variable}}}", None


def is_ours(existing: Any, url: str | None) -> bool:
    """Whether an entry already in the file is one `codegen install` may update: one that
    runs `codegen ... serve` (a script, `python -m codegen`, `uvx ... codegen`), or one for
    the same URL."""
    if not isinstance(existing, Mapping):
        return False
    if url is not None and existing.get("url") == url:
        return True
    command, args = existing.get("command"), existing.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        return False
    words = [command, *(arg for arg in args if isinstance(arg, str))]
    names = {os.path.basename(word.replace("\\", "/")).lower() for word in words}
    return "serve" in args and bool(names & {"codegen", "codegen.exe"})


def updated(existing: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """`existing` with `new` written over it, in `existing`'s key order: what the user added
    stays (keys of their own, `env`, other headers); the other transport's keys go (a stdio
    entry has no `url`), and so does a `type` of that transport."""
    http = "url" in new
    other = STDIO_KEYS if http else HTTP_KEYS
    merged: dict[str, Any] = {}
    for key, value in existing.items():
        if key == "headers" and key in new and isinstance(value, Mapping):
            written = {name.lower() for name in new[key]}
            kept = {name: v for name, v in value.items() if name.lower() not in written}
            merged[key] = {**kept, **new[key]}
        elif key in new:
            merged[key] = new[key]
        elif key in other or (key == "type" and (value == "stdio") == http):
            continue
        else:
            merged[key] = value
    for key, value in new.items():
        merged.setdefault(key, value)
    return merged


def with_input(inputs: Sequence[Any], asked: Mapping[str, Any]) -> list[Any]:
    """VS Code's `inputs` with `asked` in place of the item of the same id, else added."""
    replaced = [
        dict(asked) if isinstance(item, Mapping) and item.get("id") == asked["id"] else item
        for item in inputs
    ]
    return replaced if dict(asked) in replaced else [*inputs, dict(asked)]
