"""A corpus of `codegen serve` configs and the two sides that judge them: the example and
minimal configs mutated key by key (`corpus`), labelled where the schema's `$comment` says
it cannot follow the reader (`SEMANTIC`); what serve's reader makes of each (`read`) and what
the shipped JSON Schema says (`check`). Shared by the config-schema tests and
`bench/bench_config_reader.py`."""

from __future__ import annotations

import copy
import json
import os
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from unittest import mock

import jsonschema

from codegen.codemode.approval.hints import CLASSES
from codegen.codemode.approval.rules import ACTIONS, parse_policy
from codegen.errors import Diagnostic, InvalidInputError, escape_pointer_token
from codegen.load import namespaces
from codegen.mcp.config import (
    CHECK_PROGRAMS,
    MODES,
    SANDBOXES,
    SDK_PLACES,
    TRANSPORT_TYPES,
    load_servers_file,
)
from codegen.mcp.config_example import example_config

SCHEMA_NAME = "serve_config.schema.json"
ENVIRON = {"HOME": "/home/me", "PATH": "/usr/bin"}
"""The environment every config of the corpus is read in: `${HOME}` is set, the example's
`${TZ:-UTC}` takes its default, its disabled server's `${REMOTE_TOKEN}` is unset."""
SEED = 41
SAMPLE: int | None = None
"""Configs kept of the mutations (None: all), drawn with `SEED`."""

SEMANTIC = {
    "unset variable": "reader",
    "relative audit_log": "reader",
    "url after expansion": "reader",
    "prefix collision": "reader",
    "integer written with a fraction": "reader",
    "size under one byte": "reader",
    "non-ASCII name": "schema",
}
"""What the schema's `$comment` lists as beyond it, and the side that refuses: the reader
(the schema cannot see it) or the schema (its ASCII reading of a server name that the
reader, normalizing it first, finds a prefix in)."""


def load_schema() -> dict[str, Any]:
    text = resources.files("codegen.mcp").joinpath(SCHEMA_NAME).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema())


@contextmanager
def environment() -> Iterator[None]:
    with mock.patch.dict(os.environ, ENVIRON, clear=True):
        yield


# --- the two sides ----------------------------------------------------------------------


def read(path: Path) -> Diagnostic | None:
    """What serve makes of a config file: the reader's first problem, else None. The
    `policy` is read as serve reads it at start, with Code Mode's rule parser."""
    try:
        config = load_servers_file(path, "serve.json")
        if config.settings.policy is not None:
            source, pointer, value = config.settings.policy

            def fail(at: str, message: str) -> Exception:
                return InvalidInputError((Diagnostic(source, at, message),))

            parse_policy(value, pointer, fail)
    except InvalidInputError as error:
        return error.diagnostics[0]
    return None


def check(checker: jsonschema.Draft202012Validator, config: Any) -> tuple[str, str] | None:
    """The schema's verdict: None, or the pointer and message of `best_match`."""
    best = jsonschema.exceptions.best_match(checker.iter_errors(config))
    if best is None:
        return None
    return pointer(best.absolute_path), best.message


def pointer(path: Any) -> str:
    return "".join(f"/{escape_pointer_token(token)}" for token in path)


# --- the corpus -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    label: str
    config: Any
    at: str
    """JSON pointer of what the mutation changed: the most specific place to report."""
    semantic: str | None = None
    """One of `SEMANTIC` when the config holds what the schema cannot judge."""


def bases() -> dict[str, dict[str, Any]]:
    return {
        "example": example_config(),
        "stdio": {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}},
        "http": {
            "mcpServers": {"remote": {"url": "https://mcp.example.com/mcp", "headers": {"A": "b"}}}
        },
        "settings": {
            "codegen": {
                "http": "127.0.0.1:8765",
                "typescript": "/opt/typescript",
                "http_token": "${HOME}",
                "http_allowed_hosts": ["example.com"],
                "audit_log": "${HOME}/audit.jsonl",
                "limits": {"timeout": 2.5, "memory": "256 mb", "processes": 16},
                "http_limits": {"body": 1048576, "connections": 8},
                "policy": {
                    "rules": [
                        {"tool": "github__delete_*", "action": "deny"},
                        {"server": "slack", "class": "destructive", "action": "ask"},
                    ],
                    "ask_unannotated": True,
                },
            },
            "mcpServers": {"Desktop Commander": {"command": "npx", "cwd": None, "allow": None}},
        },
    }


WRONG: tuple[Any, ...] = (None, True, 0, 7, -1, 1.5, "", "x", [], ["x"], [1], {}, {"x": 1})
"""Values every place gets in turn: each of JSON's kinds, and edges of each."""
SIZES: tuple[Any, ...] = (
    *("256MiB", " 4 kb ", "1.5G", "2TB", "7iB", "1 b", "0", "0B", "0.5", "0.75KiB"),
    *("0.0001KiB", "12XB", "1e3", "-1", "MiB", "5 Mi B", "0x10", 1024, 1024.0, 0, 2.5),
)
SECONDS: tuple[Any, ...] = (0, 0.001, 86401, 1e9, "10", "10s", False)
ADDRESSES = (
    *("127.0.0.1:8765", "[::1]:8000", "localhost:0", "h:065535", "a:b:80", "[]:80", "[]x:80"),
    *("host", "host:", ":80", "host:65536", "host:8x", "host:-1", "[::1]", "h: 80"),
)
NAMES = ("Time", "time-2", "_", "---", "a/b", "a/", "/", "b\\_", "42", "é", "x é", "", "Ｔ", "²")
BY_KEY: dict[str, tuple[Any, ...]] = {
    "type": (*TRANSPORT_TYPES, "sse", "STDIO", "streamable_http"),
    "mode": (*MODES, "Code", "direct"),
    "sdk": (*SDK_PLACES, "prompt"),
    "check_programs": (*CHECK_PROGRAMS, "true"),
    "sandbox": (*SANDBOXES, "none", "docker", "Auto"),
    "lang": ("python", "typescript", "rust"),
    "http": ADDRESSES,
    "url": (
        *("http://x", "https://x/mcp", "HTTP://x", "ftp://x", "x", "https:/x", "${", "$HOME"),
        *("${HOME}", "${NOPE:-https://x}", "${NOPE:-ftp://x}", "${NOPE}/x"),
    ),
    "audit_log": ("/var/log/audit.jsonl", "relative.jsonl", "${HOME}/a", "${NOPE:-/x}"),
    "description_budget": (511, 512, 4096, 2048.0, 600.5, "2048"),
    "result_tokens": (999, 1000, 1_000_000, 1_000_001, 22000.0),
    "ask_timeout": (*SECONDS, 86400, 0.5),
    "action": (*ACTIONS, "block", "Allow"),
    "class": (*CLASSES, "any", "write"),
    "server": ("github", "a__b", "_"),
    "tool": ("*", "a__b"),
    "command": ("uvx", "${HOME}/bin/x", "${NOPE}", "${NOPE:-}"),
    "cwd": ("/", "${NOPE}"),
    "headers": ({"Authorization": "Bearer ${NOPE}"}, {"A": "${HOME}"}),
}
"""Values a place of that key gets besides `WRONG`: its valid ones and near misses."""
ADDED: dict[str, tuple[Any, ...]] = {
    "command": ("uvx",),
    "url": ("https://x",),
    "args": (["a"],),
    "env": ({"A": "b"},),
    "cwd": ("/",),
    "headers": ({"A": "b"},),
    "type": ("stdio", "http"),
    "disabled": (True, False),
    "allow": (["a"],),
    "deny": (["a"],),
    "concurrency_safe": ({"a": True},),
    "description": ("d",),
}
"""Server keys added to an entry that lacks them."""
SETTING_VALUES: dict[str, Any] = {
    "mode": "both",
    "lang": "typescript",
    "sdk": "instructions",
    "http": "0.0.0.0:0",
    "sandbox": "bubblewrap",
    "typescript": "/ts",
    "limits": {"timeout": 1},
    "http_token": "t",
    "http_allowed_hosts": [],
    "http_allowed_origins": ["https://a"],
    "http_limits": {"idle_timeout": 1},
    "description_budget": 512,
    "result_tokens": 1000,
    "check_programs": "off",
    "policy": {},
    "ask_timeout": 1,
    "audit_log": "/a",
    "audit_arguments": True,
}


def places(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Every place of a document below its root, parents first."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*path, index)
            yield from places(item, (*path, index))


def at(document: Any, path: tuple[str | int, ...]) -> Any:
    for token in path:
        document = document[token]
    return document


def replaced(document: Any, path: tuple[str | int, ...], value: Any) -> Any:
    if not path:
        return copy.deepcopy(value)
    copied = copy.deepcopy(document)
    at(copied, path[:-1])[path[-1]] = value
    return copied


def renamed(document: Any, path: tuple[str | int, ...], name: str) -> Any:
    """The object at `path` with its key `path[-1]` renamed, in the same position."""
    copied = copy.deepcopy(document)
    parent = at(copied, path[:-1])
    items = [(name if key == path[-1] else key, item) for key, item in parent.items()]
    parent.clear()
    parent.update(items)
    return copied


def mutations(name: str, base: dict[str, Any]) -> Iterator[Case]:
    yield Case(f"{name}", base, "")
    yield Case(f"{name}: with $schema", {"$schema": f"./{SCHEMA_NAME}", **base}, "")
    for path in places(base):
        where = pointer(path)
        key = next((token for token in reversed(path) if isinstance(token, str)), "")
        if path[:1] == ("codegen",) and len(path) == 3 and path[1] in ("limits", "http_limits"):
            extra: tuple[Any, ...] = SIZES + SECONDS
        else:
            extra = BY_KEY.get(key, ())
        for value in (*WRONG, *extra):
            yield Case(f"{name}: {where} = {json.dumps(value)}", replaced(base, path, value), where)
        parent = at(base, path[:-1])
        if isinstance(parent, dict):
            rest = {k: v for k, v in parent.items() if k != path[-1]}
            yield Case(
                f"{name}: {where} removed", replaced(base, path[:-1], rest), pointer(path[:-1])
            )
            yield Case(f"{name}: {where} renamed", renamed(base, path, f"{path[-1]}_"), f"{where}_")
        value = at(base, path)
        if isinstance(value, dict):
            added = f"{where}/bogus"
            yield Case(f"{name}: {added} added", replaced(base, path, {**value, "bogus": 1}), added)
        if path[:1] == ("mcpServers",) and len(path) == 2:
            yield from server_mutations(name, base, path)
    if "codegen" not in base:
        for setting, value in SETTING_VALUES.items():
            config = {"codegen": {setting: value}, **base}
            yield Case(f"{name}: /codegen/{setting} set", config, f"/codegen/{setting}")
    first = next(iter(base["mcpServers"]))
    for new in NAMES:
        where = f"/mcpServers/{escape_pointer_token(new)}"
        yield Case(
            f"{name}: server named {new!r}", renamed(base, ("mcpServers", first), new), where
        )
        twin = {**base["mcpServers"], new: {"command": "x"}}
        yield Case(f"{name}: server {new!r} added", {**base, "mcpServers": twin}, where)


def server_mutations(
    name: str, base: dict[str, Any], path: tuple[str | int, ...]
) -> Iterator[Case]:
    entry = at(base, path)
    where = pointer(path)
    for key, values in ADDED.items():
        for value in values:
            if key not in entry or entry[key] != value:
                changed = replaced(base, path, {**entry, key: value})
                yield Case(
                    f"{name}: {where}/{key} = {json.dumps(value)}", changed, f"{where}/{key}"
                )
    for gone in ("command", "url"):
        if gone in entry:
            swapped = {("url" if gone == "command" else "command"): "https://x", **entry}
            del swapped[gone]
            yield Case(f"{name}: {where} {gone} swapped", replaced(base, path, swapped), where)


def semantic(config: Any) -> str | None:
    """Which of `SEMANTIC` a config holds, judged apart from both sides (None: none)."""
    if not isinstance(config, dict):
        return None
    settings_ = config.get("codegen")
    servers = config.get("mcpServers")
    settings_ = settings_ if isinstance(settings_, dict) else {}
    enabled = (
        {
            name: entry
            for name, entry in servers.items()
            if isinstance(entry, dict) and entry.get("disabled", False) is False
        }
        if isinstance(servers, dict)
        else {}
    )
    expanded = [settings_.get(key) for key in ("typescript", "http_token", "audit_log")]
    for entry in enabled.values():
        for key in ("command", "cwd", "url", "args", "env", "headers"):
            value = entry.get(key)
            expanded += value if isinstance(value, list) else [value]
            expanded += list(value.values()) if isinstance(value, dict) else []
    if any(isinstance(text, str) and unset(text) for text in expanded):
        return "unset variable"
    for entry in enabled.values():
        url = entry.get("url")
        if isinstance(url, str) and "${" in url and not expand(url).startswith(HTTP):
            return "url after expansion"
    log = settings_.get("audit_log")
    if isinstance(log, str) and log and not expand(log).startswith("/"):
        return "relative audit_log"
    prefixes = [namespaces.sanitize(name) for name in enabled]
    if len({prefix for prefix in prefixes if prefix}) < len([p for p in prefixes if p]):
        return "prefix collision"
    for key in ("description_budget", "result_tokens"):
        if isinstance(settings_.get(key), float):
            return "integer written with a fraction"
    for table in ("limits", "http_limits"):
        limits = settings_.get(table)
        if isinstance(limits, dict) and any(under_a_byte(value) for value in limits.values()):
            return "size under one byte"
    if any(bool(namespaces.sanitize(name)) != ascii_prefix(name) for name in enabled):
        return "non-ASCII name"
    return None


def ascii_prefix(name: str) -> bool:
    """Whether the last part of a server name between `/` or `\\` holds an ASCII letter or
    digit: the schema's reading of a name that derives a prefix."""
    parts = [part for part in re.split(r"[/\\]", name) if part]
    return bool(parts) and re.search("[A-Za-z0-9]", parts[-1]) is not None


HTTP = ("http://", "https://")
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT])(i?B)?\s*", re.IGNORECASE)


def unset(text: str) -> bool:
    return any(m[1] not in ENVIRON and m[2] is None for m in VARIABLE.finditer(text))


def expand(text: str) -> str:
    return VARIABLE.sub(lambda m: ENVIRON.get(m[1], m[2] or ""), text)


def under_a_byte(value: Any) -> bool:
    """A size string with a unit whose number is not zero but gives less than one byte."""
    match = SIZE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return False
    size = float(match[1]) * float(1024 ** " KMGT".index(match[2].upper()))
    return 0 < size < 1


def corpus(seed: int = SEED, sample: int | None = SAMPLE) -> list[Case]:
    """The mutations of every base, less duplicates, each labelled by `semantic`; with a
    `sample`, that many drawn with `seed` (every base and every semantic case kept)."""
    seen: set[str] = set()
    cases = []
    for name, base in bases().items():
        for case in mutations(name, base):
            text = json.dumps(case.config, sort_keys=True)
            if text not in seen:
                seen.add(text)
                cases.append(Case(case.label, case.config, case.at, semantic(case.config)))
    if sample is None:
        return cases
    kept = [case for case in cases if case.semantic or case.at == ""]
    rest = [case for case in cases if not (case.semantic or case.at == "")]
    drawn = random.Random(seed).sample(rest, min(sample - len(kept), len(rest)))
    return kept + drawn


@dataclass(frozen=True, slots=True)
class Verdicts:
    case: Case
    reader: Diagnostic | None
    schema: tuple[str, str] | None


def judge(cases: list[Case], folder: Path) -> list[Verdicts]:
    checker = validator()
    found = []
    with environment():
        for number, case in enumerate(cases):
            path = folder / f"{number}.json"
            path.write_text(json.dumps(case.config), encoding="utf-8")
            found.append(Verdicts(case, read(path), check(checker, case.config)))
    return found
