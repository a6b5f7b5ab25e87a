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
from pathlib import Path
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
class _Document:
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


def _decode(
    display: str, path: Path | None, data: bytes
) -> tuple[list[_Document], list[Diagnostic]]:
    stem = path.stem if path is not None else "stdin"
    suffix = path.suffix.lower() if path is not None else ".json"
    try:
        text = jsontext.decode_bytes(data)
        if suffix in (".yaml", ".yml"):
            return [_Document(display, jsontext.load_yaml(text), stem)], []
        if suffix == ".jsonl":
            return _lines(display, text, stem), []
        try:
            return [_Document(display, jsontext.loads(text), stem)], []
        except jsontext.DecodeProblem as problem:
            if not problem.message.startswith("invalid JSON: Extra data"):
                raise
            return _lines(display, text, stem), []
    except jsontext.DecodeProblem as problem:
        return [], [Diagnostic(display, problem.pointer, problem.describe())]


def _lines(display: str, text: str, stem: str) -> list[_Document]:
    return [
        _Document(f"{display}:{number}", value, stem)
        for number, value in jsontext.loads_lines(text)
    ]


def load_sources(
    sources: Sequence[str],
    fmt: str = "auto",
    namespace: bool = False,
    stdin: BinaryIO | None = None,
) -> LoadResult:
    """Read, decode and recognise every tool in the sources."""
    if not sources:
        raise UsageError("no sources given")
    tools: list[ToolDefinition] = []
    diagnostics: list[Diagnostic] = []
    for display, path in expand_sources(sources):
        documents, problems = _decode(display, path, _read(display, path, stdin))
        diagnostics.extend(problems)
        for document in documents:
            found, problems = extract_tools(document.value, document.source, fmt)
            diagnostics.extend(problems)
            prefix = server_name(document.value) or document.namespace
            tools.extend(_namespaced(tool, prefix) if namespace else tool for tool in found)
    return LoadResult(tuple(tools), tuple(diagnostics))


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
