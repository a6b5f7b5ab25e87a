"""Loading: sources (files, directories, `-` for stdin) to `ToolDefinition`s.

A directory contributes every `.json`, `.jsonl`, `.yaml` and `.yml` file below it (hidden
files and folders skipped) in sorted relative-path order, so the result never depends on the
file system's listing order. Decoding is strict (see `json_text`). A `.json` file that holds
one JSON value per line, as BFCL's data files do, is read as JSON Lines. A source that
cannot be read raises `UsageError`; everything else becomes a diagnostic. `--namespace`
prefixes follow `namespaces`: derived per document, an error when none can be derived or
when two files arrive at the same one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, BinaryIO

from ..errors import Diagnostic, UsageError
from . import fast_json, json_text, namespaces
from .definitions import ToolDefinition
from .formats import extract_tools, is_plain_schema, plain_schema, plain_schema_hint
from .namespaces import Prefix

SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
_LISTED = ", ".join(SUFFIXES[:-1]) + " or " + SUFFIXES[-1]
STDIN = "-"


@dataclass(frozen=True, slots=True)
class LoadResult:
    """The tools of every source, and every problem found while reading them."""

    tools: tuple[ToolDefinition, ...]
    diagnostics: tuple[Diagnostic, ...]


@dataclass(frozen=True, slots=True)
class Document:
    """One decoded value, the file it came from (JSON Lines records and YAML documents of
    one file share it) and the prefix `--namespace` gives its tools (`namespaces.derive`;
    None when no candidate yields one)."""

    source: str
    value: Any
    prefix: Prefix | None
    file: str
    stem: str | None
    """The file's name without suffix; None for stdin."""

    @property
    def namespace(self) -> str | None:
        return self.prefix.name if self.prefix is not None else None


def expand_sources(sources: Sequence[str]) -> list[tuple[str, str | None]]:
    """(display name, file path) for every file the sources name; stdin has no path.
    (`os.path`, not `pathlib`: importing `pathlib` costs a cold run more than all of this.)"""
    files: list[tuple[str, str | None]] = []
    for source in sources:
        if source == STDIN:
            files.append(("<stdin>", None))
            continue
        if os.path.isdir(source):
            base = source.rstrip("/\\") or source
            files.extend((f"{base}/{relative}", path) for relative, path in _listed(source))
        elif os.path.isfile(source):
            files.append((source, source))
        elif os.path.exists(source):
            raise UsageError(f"{source}: not a regular file or directory")
        else:
            raise UsageError(f"{source}: no such file or directory")
    return files


def _listed(directory: str) -> list[tuple[str, str]]:
    """(relative path with `/`, path) of every file with a listed suffix under `directory`,
    hidden files and folders skipped, symbolic links to folders not followed, sorted."""
    found = []
    for folder, subfolders, names in os.walk(directory):
        subfolders[:] = [name for name in subfolders if not name.startswith(".")]
        for name in names:
            if name.startswith(".") or _suffix(name) not in SUFFIXES:
                continue
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                relative = os.path.relpath(path, directory).replace(os.sep, "/")
                found.append((relative, path))
    found.sort()
    return found


def _suffix(name: str) -> str:
    """The name's last suffix, lower-cased, as `PurePath.suffix` has it."""
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def _read(display: str, path: str | None, stdin: BinaryIO | None) -> bytes:
    try:
        if path is None:
            stream = stdin if stdin is not None else sys.stdin.buffer
            return stream.read()
        with open(path, "rb") as file:
            return file.read()
    except OSError as exc:
        raise UsageError(f"{display}: cannot read: {exc.strerror or exc}") from None


def decode_document(
    display: str, file_name: str, data: bytes
) -> tuple[list[Document], list[Diagnostic]]:
    """Decode one file's bytes by its name: YAML by suffix, JSON Lines by suffix or when a
    `.json` file holds one value per line (as BFCL's do), JSON otherwise. `file_name` is
    "" for stdin, which is JSON (or JSON Lines) and has no stem to namespace by."""
    name = file_name.rpartition("/")[2]
    suffix = _suffix(name)
    stem = (name[: -len(suffix)] if suffix else name) or None
    suffix = suffix or ".json"
    if suffix not in (".yaml", ".yml", ".jsonl"):
        # A clean document never needs its text: `jiter` checks the UTF-8 itself.
        value = fast_json.try_loads("", json_text.without_bom(data))
        if value is not fast_json.NOT_DECODED:
            return [Document(display, value, namespaces.derive(value, stem), display, stem)], []
    try:
        text = json_text.decode_bytes(data)
        if suffix in (".yaml", ".yml"):
            values = [(display, json_text.load_yaml(text))]
        elif suffix == ".jsonl":
            values = _lines(display, text)
        else:
            try:
                values = [(display, json_text.loads(text, json_text.without_bom(data)))]
            except json_text.DecodeProblem as problem:
                if not problem.message.startswith("invalid JSON: Extra data"):
                    raise
                values = _lines(display, text)
    except json_text.DecodeProblem as problem:
        return [], [Diagnostic(display, problem.pointer, problem.describe())]
    documents = [
        Document(source, value, namespaces.derive(value, stem), display, stem)
        for source, value in values
    ]
    return documents, []


def _lines(display: str, text: str) -> list[tuple[str, Any]]:
    return [(f"{display}:{number}", value) for number, value in json_text.loads_lines(text)]


def tools_from(
    documents: Sequence[Document],
    fmt: str = "auto",
    namespace: bool = False,
    plain_schemas: bool = False,
) -> tuple[list[ToolDefinition], list[Diagnostic]]:
    """Every tool of the decoded documents, prefixed with their namespace when asked.
    Namespacing errors leave tools out rather than give them a wrong name: a document with
    tools but no prefix, and a file whose prefix a file sorting before it already took
    (one error for the prefix, not one duplicate name per tool). With `plain_schemas`, a
    document that is a plain JSON Schema (`formats.is_plain_schema`, detected formats only)
    is one `PLAIN_SCHEMA` definition, never prefixed; plain schemas and tools in one run
    are an error at each schema, which is left out."""
    tools: list[ToolDefinition] = []
    diagnostics: list[Diagnostic] = []
    prefixed: list[tuple[Document, Prefix, list[ToolDefinition]]] = []
    schemas: list[tuple[Document, ToolDefinition]] = []
    for document in documents:
        if plain_schemas and fmt == "auto" and is_plain_schema(document.value):
            definition = plain_schema(document.value, document.source, document.stem, True)
            schemas.append((document, definition))
            continue
        found, problems = extract_tools(
            document.value, document.source, fmt, decoded=True, stem=document.stem
        )
        diagnostics.extend(problems)
        if not namespace:
            tools.extend(found)
        elif document.prefix is None:
            if found:
                diagnostics.append(
                    namespaces.no_prefix(document.value, document.stem, document.source)
                )
        elif found:
            prefixed.append((document, document.prefix, found))
    owners, problems = namespaces.claim_prefixes(
        (document.file, document.source, prefix) for document, prefix, _ in prefixed
    )
    diagnostics.extend(problems)
    for document, prefix, found in prefixed:
        if owners[prefix.name] == document.file:
            tools.extend(_namespaced(tool, prefix.name) for tool in found)
    if schemas and (tools or prefixed):
        diagnostics.extend(
            Diagnostic(document.source, "", plain_schema_hint(document.value, document.stem))
            for document, _ in schemas
        )
    else:
        tools.extend(definition for _, definition in schemas)
    return tools, diagnostics


def load_sources(
    sources: Sequence[str],
    fmt: str = "auto",
    namespace: bool = False,
    stdin: BinaryIO | None = None,
    require_tools: bool = True,
    plain_schemas: bool = False,
) -> LoadResult:
    """Read, decode and recognise every tool in the sources. Sources that hold no tool at
    all are an error (an SDK of nothing is a mistake, not a result) unless `require_tools`
    is false, as for one side of a diff. `plain_schemas`: read plain JSON Schema documents
    too, for a run that generates their types (see `tools_from`)."""
    if not sources:
        raise UsageError("no sources given")
    documents: list[Document] = []
    diagnostics: list[Diagnostic] = []
    files = []
    for source in sources:
        found_files = expand_sources([source])
        if require_tools and not found_files:  # only a directory can hold no files
            diagnostics.append(Diagnostic(source, "", f"no {_LISTED} files in this directory"))
        files.extend(found_files)
    for display, path in files:
        found, problems = decode_document(
            display, os.path.basename(path) if path else "", _read(display, path, stdin)
        )
        documents.extend(found)
        diagnostics.extend(problems)
    tools, problems = tools_from(documents, fmt, namespace, plain_schemas)
    diagnostics.extend(problems)
    if require_tools and not tools and not any(d.is_error for d in diagnostics):
        where = files[0][0] if len(files) == 1 else ", ".join(sources)
        diagnostics.append(Diagnostic(where, "", "no tool definitions found"))
    return LoadResult(tuple(tools), tuple(diagnostics))


def load_value(
    value: Any, source: str = "<memory>", fmt: str = "auto", namespace: str | None = None
) -> LoadResult:
    """Recognise the tools in an already-decoded value (the in-process API). A `namespace`
    goes through the same rule as a dump's `server` field (`namespaces.sanitize`), so
    `"mcp-servers/everything"` prefixes `everything__`; one that leaves nothing is an error
    and the tools are left out, as for a file."""
    tools, diagnostics = extract_tools(value, source, fmt)
    if namespace:
        prefix = namespaces.explicit(namespace)
        if prefix is None:
            if tools:
                diagnostics.append(namespaces.no_explicit_prefix(namespace, source))
            tools = []
        else:
            tools = [_namespaced(tool, prefix.name) for tool in tools]
    return LoadResult(tuple(tools), tuple(diagnostics))


def _namespaced(tool: ToolDefinition, prefix: str) -> ToolDefinition:
    """`prefix__name`, as MCP clients name the tools of several servers; `namespace` keeps
    the prefix, so the tool's own (wire) name is what follows it and the `__`."""
    return replace(tool, name=namespaces.namespaced(prefix, tool.name), namespace=prefix)
