"""Loading: sources (files, directories, `-` for stdin) to `ToolDefinition`s.

A directory contributes every `.json`, `.jsonl`, `.yaml` and `.yml` file below it (hidden
files and folders skipped) in sorted relative-path order, so the result never depends on the
file system's listing order. Decoding is strict (see `jsontext`). A `.json` file that holds
one JSON value per line, as BFCL's data files do, is read as JSON Lines. A source that
cannot be read raises `UsageError`; everything else becomes a diagnostic.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from . import jsontext
from .errors import Diagnostic, UsageError
from .formats import extract_tools, server_name
from .model import ToolDefinition

SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
STDIN = "-"


@dataclass(frozen=True, slots=True)
class LoadResult:
    tools: tuple[ToolDefinition, ...]
    diagnostics: tuple[Diagnostic, ...]


@dataclass(frozen=True, slots=True)
class Document:
    """One decoded value and the name `--namespace` gives its tools (the dump's `server`
    field, else the file stem)."""

    source: str
    value: Any
    namespace: str


def expand_sources(sources: Sequence[str]) -> list[tuple[str, Path | None]]:
    """(display name, path) for every file the sources name; stdin has no path."""
    files: list[tuple[str, Path | None]] = []
    for source in sources:
        if source == STDIN:
            files.append(("<stdin>", None))
            continue
        path = Path(source)
        if path.is_dir():
            found = sorted(
                (p.relative_to(path).as_posix(), p)
                for p in path.rglob("*")
                if p.suffix.lower() in SUFFIXES
                and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            base = source.rstrip("/\\") or source
            files.extend((f"{base}/{relative}", p) for relative, p in found)
        elif path.is_file():
            files.append((source, path))
        elif path.exists():
            raise UsageError(f"{source}: not a regular file or directory")
        else:
            raise UsageError(f"{source}: no such file or directory")
    return files


def _read(display: str, path: Path | None, stdin: BinaryIO | None) -> bytes:
    try:
        if path is None:
            stream = stdin if stdin is not None else sys.stdin.buffer
            return stream.read()
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{display}: cannot read: {exc.strerror or exc}") from None


def decode_document(
    display: str, file_name: str, data: bytes
) -> tuple[list[Document], list[Diagnostic]]:
    """Decode one file's bytes by its name: YAML by suffix, JSON Lines by suffix or when a
    `.json` file holds one value per line (as BFCL's do), JSON otherwise."""
    path = PurePosixPath(file_name)
    stem, suffix = path.stem or "stdin", path.suffix.lower() or ".json"
    try:
        text = jsontext.decode_bytes(data)
        if suffix in (".yaml", ".yml"):
            values = [(display, jsontext.load_yaml(text))]
        elif suffix == ".jsonl":
            values = _lines(display, text)
        else:
            try:
                values = [(display, jsontext.loads(text))]
            except jsontext.DecodeProblem as problem:
                if not problem.message.startswith("invalid JSON: Extra data"):
                    raise
                values = _lines(display, text)
    except jsontext.DecodeProblem as problem:
        return [], [Diagnostic(display, problem.pointer, problem.describe())]
    return [Document(source, value, server_name(value) or stem) for source, value in values], []


def _lines(display: str, text: str) -> list[tuple[str, Any]]:
    return [(f"{display}:{number}", value) for number, value in jsontext.loads_lines(text)]


def tools_from(
    documents: Sequence[Document], fmt: str = "auto", namespace: bool = False
) -> tuple[list[ToolDefinition], list[Diagnostic]]:
    """Every tool of the decoded documents, prefixed with their namespace when asked."""
    tools: list[ToolDefinition] = []
    diagnostics: list[Diagnostic] = []
    for document in documents:
        found, problems = extract_tools(document.value, document.source, fmt, decoded=True)
        diagnostics.extend(problems)
        tools.extend(_namespaced(t, document.namespace) if namespace else t for t in found)
    return tools, diagnostics


def load_sources(
    sources: Sequence[str],
    fmt: str = "auto",
    namespace: bool = False,
    stdin: BinaryIO | None = None,
) -> LoadResult:
    """Read, decode and recognise every tool in the sources."""
    if not sources:
        raise UsageError("no sources given")
    documents: list[Document] = []
    diagnostics: list[Diagnostic] = []
    for display, path in expand_sources(sources):
        found, problems = decode_document(
            display, path.name if path else "stdin", _read(display, path, stdin)
        )
        documents.extend(found)
        diagnostics.extend(problems)
    tools, problems = tools_from(documents, fmt, namespace)
    return LoadResult(tuple(tools), tuple(diagnostics + problems))


def load_value(
    value: Any, source: str = "<memory>", fmt: str = "auto", namespace: str | None = None
) -> LoadResult:
    """Recognise the tools in an already-decoded value (the in-process API)."""
    tools, diagnostics = extract_tools(value, source, fmt)
    if namespace:
        tools = [_namespaced(tool, namespace) for tool in tools]
    return LoadResult(tuple(tools), tuple(diagnostics))


def _namespaced(tool: ToolDefinition, prefix: str) -> ToolDefinition:
    """`prefix__name`, as MCP clients name the tools of several servers."""
    return replace(tool, name=f"{prefix}__{tool.name}", namespace=prefix)
