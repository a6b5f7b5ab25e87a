"""`--namespace` prefixes: one rule that turns a source's name into `prefix` for `prefix__tool`.

MCP clients that talk to several servers name each tool `server__tool`. The server names
they start from are display text (`desktop-commander`, `Bright Data`, and in a harvested dump
`serverInfo.name` such as `mcp-servers/everything`), so the prefix is derived, not copied:
a prefix made of `[a-z0-9_]` keeps a tool whose own name is a Python identifier usable as a
method of the generated SDK, and a prefix that never contains `__` (nor starts or ends with
`_`) makes the first `__` of a namespaced name the one place it splits back into prefix and
the tool's own name, which is the name the server knows the tool by.

Candidates, in order: the document's `server` field, its `serverInfo.name`, the file stem
(stdin has none). Each is NFKC-normalized, cut to the last non-empty segment between `/` or
`\\`, lower-cased; every character outside `[a-z0-9_]` becomes `_`, runs of `_` collapse,
leading and trailing `_` go, and a leading digit gets `mcp_` in front. The first candidate
that leaves something wins. None is an error, and so is a prefix two files arrive at (their
tools would share one namespace): the file that sorts first keeps it. Documents of one file
(JSON Lines records, YAML documents) may share their prefix.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import Diagnostic, source_key

SEPARATOR = "__"
"""Between prefix and tool name, as MCP clients write it."""

_OUTSIDE = re.compile(r"[^a-z0-9_]")
_RUNS = re.compile(r"_+")
_SEGMENTS = re.compile(r"[/\\]")


def sanitize(candidate: str) -> str:
    """The prefix one candidate yields; "" when nothing usable is left (no ASCII letter or
    digit), so the next candidate is tried."""
    segments = [s for s in _SEGMENTS.split(unicodedata.normalize("NFKC", candidate)) if s]
    if not segments:
        return ""
    prefix = _RUNS.sub("_", _OUTSIDE.sub("_", segments[-1].lower())).strip("_")
    return f"mcp_{prefix}" if prefix[:1].isdigit() else prefix


@dataclass(frozen=True, slots=True)
class Prefix:
    """A derived prefix and where it came from, so a diagnostic can point at it."""

    name: str
    pointer: str
    """JSON pointer of the candidate (`/server`, `/serverInfo/name`), "" for the file stem
    or a caller's explicit prefix."""
    origin: str
    """The candidate in words, for messages."""


def _candidates(document: Any, stem: str | None) -> list[tuple[str, str, str]]:
    """(text, pointer, description) of every candidate present, in the order tried."""
    found: list[tuple[str, str, str]] = []
    if isinstance(document, dict):
        server = document.get("server")
        if isinstance(server, str):
            found.append((server, "/server", f'"server" {_quote(server)}'))
        info = document.get("serverInfo")
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            name = info["name"]
            found.append((name, "/serverInfo/name", f"serverInfo.name {_quote(name)}"))
    if stem:
        found.append((stem, "", f"file name {_quote(stem)}"))
    return found


def derive(document: Any, stem: str | None) -> Prefix | None:
    """The prefix of one decoded document: the first candidate that yields one, else None.
    `stem`: the file's name without suffix; None for stdin, which has no name to fall on."""
    for text, pointer, origin in _candidates(document, stem):
        name = sanitize(text)
        if name:
            return Prefix(name, pointer, origin)
    return None


def explicit(prefix: str) -> Prefix | None:
    """A prefix a caller passes in (`load_value(..., namespace=...)`): the same rule as a
    `server` field, so the in-process API names tools exactly as a file would."""
    name = sanitize(prefix)
    return Prefix(name, "", f"namespace {_quote(prefix)}") if name else None


def no_prefix(document: Any, stem: str | None, source: str) -> Diagnostic:
    """The error for a document whose tools cannot be namespaced: which candidates were
    tried, pointing at the first of them."""
    tried = [(pointer, origin) for _, pointer, origin in _candidates(document, stem)]
    if not tried:
        because = 'stdin has no file name and the document no "server" or serverInfo.name'
    else:
        because = _leave_nothing([origin for _, origin in tried])
        if stem is None:
            because += ", and stdin has no file name to fall back on"
    return Diagnostic(
        source,
        tried[0][0] if tried else "",
        f"--namespace cannot derive a prefix for these tools: {because}; "
        'set "server" to a name with ASCII letters or digits',
    )


def no_explicit_prefix(prefix: str, source: str) -> Diagnostic:
    """The error for a caller's prefix that leaves nothing."""
    because = _leave_nothing([f"namespace {_quote(prefix)}"])
    return Diagnostic(source, "", f"--namespace cannot derive a prefix for these tools: {because}")


def _leave_nothing(origins: list[str]) -> str:
    verb = "leaves" if len(origins) == 1 else "leave"
    return f"{' and '.join(origins)} {verb} no ASCII letter or digit"


def claim_prefixes(
    entries: Iterable[tuple[str, str, Prefix]],
) -> tuple[dict[str, str], list[Diagnostic]]:
    """Which file owns each prefix, and an error at each other file that derives it (once,
    at its first document with it) naming the owner. `entries`: (file, document source,
    prefix); documents of one file (JSON Lines records, YAML documents) may share a prefix.
    Files are taken in sorted order, so neither result depends on the order sources were
    given in: the owner is the file that sorts first."""
    first: dict[str, tuple[str, str, Prefix]] = {}
    reported: set[tuple[str, str]] = set()
    problems: list[Diagnostic] = []
    for file, source, prefix in sorted(
        entries, key=lambda e: (source_key(e[0]), source_key(e[1]), e[2].pointer)
    ):
        taken = first.setdefault(prefix.name, (file, source, prefix))
        if taken[0] == file or (file, prefix.name) in reported:
            continue
        reported.add((file, prefix.name))
        problems.append(
            Diagnostic(
                source,
                prefix.pointer,
                f"--namespace prefix {_quote(prefix.name)} (from {prefix.origin}) is already "
                f"the prefix of {taken[1]} (from {taken[2].origin}); its tools are left out: "
                'give one of the two another "server" name',
            )
        )
    return {name: owner[0] for name, owner in first.items()}, problems


def namespaced(prefix: str, name: str) -> str:
    """`prefix__name`."""
    return f"{prefix}{SEPARATOR}{name}"


def split(name: str) -> tuple[str | None, str]:
    """(prefix, the tool's own name) of a namespaced name, at its first `__`; (None, name)
    when there is none. Exact for every name `namespaced` made: a prefix has no `__` and
    does not end with `_`."""
    prefix, separator, rest = name.partition(SEPARATOR)
    return (prefix, rest) if separator and prefix else (None, name)


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)
