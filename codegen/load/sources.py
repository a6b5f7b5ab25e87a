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

from .._support import progress
from ..errors import Diagnostic, UsageError
from . import fast_json, json_text, namespaces
from .bundle import Bundler, Home
from .definitions import ToolDefinition
from .formats import extract_tools, is_plain_schema, plain_schema, plain_schema_hint
from .namespaces import Prefix
from .ref_files import DiskFiles, RefFiles

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
    location: str | None = None
    """Where the file is, for the references in it (`bundle`); None for stdin."""
    tree: str | None = None
    """The folder of the source it came from, below which its references may read."""
    may_refer: bool = True
    """Its text may hold a `$ref` (`may_refer`)."""

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


def may_refer(data: bytes) -> bool:
    """Whether a file's bytes may hold a `$ref` key: spelled out, or behind an escape
    (`\\u0024ref` in JSON, `\\x24ref` in YAML). A file without one needs no bundling walk."""
    return b"$ref" in data or b"\\u0024" in data or b"\\x24" in data


def _tree(source: str) -> str:
    """The folder a source's references may read below: a directory source itself, else
    the folder of the file."""
    return source if os.path.isdir(source) else os.path.dirname(source) or "."


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
    display: str,
    file_name: str,
    data: bytes,
    location: str | None = None,
    tree: str | None = None,
) -> tuple[list[Document], list[Diagnostic]]:
    """Decode one file's bytes by its name: YAML by suffix, JSON Lines by suffix or when a
    `.json` file holds one value per line (as BFCL's do), JSON otherwise. `file_name` is
    "" for stdin, which is JSON (or JSON Lines) and has no stem to namespace by.
    `location` and `tree`: where the file is and the folder of its source, for the
    references in it."""
    name = file_name.rpartition("/")[2]
    suffix = _suffix(name)
    stem = (name[: -len(suffix)] if suffix else name) or None
    suffix = suffix or ".json"
    place = (location, tree, may_refer(data))
    if suffix not in (".yaml", ".yml", ".jsonl"):
        # A clean document never needs its text: `jiter` checks the UTF-8 itself.
        value = fast_json.try_loads("", json_text.without_bom(data))
        if value is not fast_json.NOT_DECODED:
            prefix = namespaces.derive(value, stem)
            return [Document(display, value, prefix, display, stem, *place)], []
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
        Document(source, value, namespaces.derive(value, stem), display, stem, *place)
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
    files: RefFiles | None = None,
) -> tuple[list[ToolDefinition], list[Diagnostic]]:
    """Every tool of the decoded documents, prefixed with their namespace when asked.
    Namespacing errors leave tools out rather than give them a wrong name: a document with
    tools but no prefix, and a file whose prefix a file sorting before it already took
    (one error for the prefix, not one duplicate name per tool). With `plain_schemas`, a
    document that is a plain JSON Schema (`formats.is_plain_schema`, detected formats only)
    is one `PLAIN_SCHEMA` definition, never prefixed; plain schemas and tools in one run
    are an error at each schema, which is left out. `files`: where references to other
    files are read and bundled into each schema (`bundle`; None leaves them as written); a
    document a tool refers to (a plain schema, or a file of definitions in no tool format)
    is then that tool's definitions, not a source of its own, and no error."""
    tools: list[ToolDefinition] = []
    diagnostics: list[Diagnostic] = []
    prefixed: list[tuple[Document, Prefix, list[ToolDefinition]]] = []
    plain: list[Document] = []
    unused: list[tuple[Document, list[Diagnostic]]] = []
    bundler = None
    if files is not None:
        bundler = Bundler(files)
        files.seed(
            [(d.location, d.file, d.value, d.source == d.file) for d in documents if d.location]
        )
    for document in documents:
        if fmt == "auto" and is_plain_schema(document.value):
            plain.append(document)  # read after the tools, which may refer to it
            continue
        found, problems = extract_tools(
            document.value, document.source, fmt, decoded=True, stem=document.stem
        )
        if not found and problems and _key(document, bundler) is not None:
            unused.append((document, problems))  # no tool: maybe a file of definitions
            continue
        diagnostics.extend(problems)
        if bundler is not None and document.may_refer:
            found = [bundler.tool(tool, _home(document)) for tool in found]
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
    for document, problems in unused:
        if bundler is None or _key(document, bundler) not in bundler.referenced:
            diagnostics.extend(problems)
    schemas = _plain_schemas(plain, plain_schemas, bundler, diagnostics)
    if schemas and (tools or prefixed):
        diagnostics.extend(
            Diagnostic(document.source, "", plain_schema_hint(document.value, document.stem))
            for document, _ in schemas
        )
    else:
        tools.extend(definition for _, definition in schemas)
    if bundler is not None:
        diagnostics.extend(bundler.diagnostics)
    return tools, diagnostics


def _plain_schemas(
    documents: list[Document],
    plain_schemas: bool,
    bundler: Bundler | None,
    diagnostics: list[Diagnostic],
) -> list[tuple[Document, ToolDefinition]]:
    """The plain JSON Schema documents a run reads on their own, as definitions (an error
    showing how to wrap one as a tool where the run does not read them). A document a tool
    refers to is that tool's definitions; one another document refers to is bundled into
    it, unless they refer to each other, when the first by file keeps them both."""
    keys = [_key(document, bundler) for document in documents]
    referenced = bundler.referenced if bundler is not None else set()
    kept = [(d, key) for d, key in zip(documents, keys, strict=True) if key not in referenced]
    if not plain_schemas:
        diagnostics.extend(
            Diagnostic(d.source, "", plain_schema_hint(d.value, d.stem)) for d, _ in kept
        )
        return []
    made = []
    for document, key in kept:
        definition = plain_schema(document.value, document.source, document.stem, True)
        reached: set[str] = set()
        if bundler is not None and document.may_refer:
            definition = bundler.tool(definition, _home(document))
            reached = bundler.reached
        made.append((document, definition, key, reached))
    reach = {key: reached for _, _, key, reached in made if key is not None}
    return [
        (document, definition) for document, definition, key, _ in made if not _covered(key, reach)
    ]


def _covered(key: str | None, reach: dict[str, set[str]]) -> bool:
    """Whether another plain schema of the run bundles the one at `key`: it refers to it and
    is not referred to back, or they refer to each other and its file comes first."""
    if key is None:
        return False
    return any(
        key in reached and (other not in reach[key] or other < key)
        for other, reached in reach.items()
        if other != key
    )


def _key(document: Document, bundler: Bundler | None) -> str | None:
    """The file's one name (`RefFiles.key`), when references may reach it."""
    if bundler is None or document.location is None or document.source != document.file:
        return None
    return bundler.files.key(document.location)


def _home(document: Document) -> Home:
    return Home(document.location, document.tree, document.source == document.file)


def load_sources(
    sources: Sequence[str],
    fmt: str = "auto",
    namespace: bool = False,
    stdin: BinaryIO | None = None,
    require_tools: bool = True,
    plain_schemas: bool = False,
    ref_roots: Sequence[str] = (),
) -> LoadResult:
    """Read, decode and recognise every tool in the sources. Sources that hold no tool at
    all are an error (an SDK of nothing is a mistake, not a result) unless `require_tools`
    is false, as for one side of a diff. `plain_schemas`: read plain JSON Schema documents
    too, for a run that generates their types (see `tools_from`). A `$ref` to another file
    is bundled into the schema that holds it (`bundle`), read only below its source's
    folder or one of `ref_roots` (`ref_files`)."""
    if not sources:
        raise UsageError("no sources given")
    documents: list[Document] = []
    diagnostics: list[Diagnostic] = []
    files = []
    trees: list[str | None] = []  # each file's source's folder, for its references
    for source in sources:
        found_files = expand_sources([source])
        if require_tools and not found_files:  # only a directory can hold no files
            diagnostics.append(Diagnostic(source, "", f"no {_LISTED} files in this directory"))
        files.extend(found_files)
        trees.extend([None if source == STDIN else _tree(source)] * len(found_files))
    reader = DiskFiles(ref_roots)
    progress.begin("reading files", len(files))
    for (display, path), tree in zip(files, trees, strict=True):
        data = _read(display, path, stdin)
        name = os.path.basename(path) if path else ""
        found, problems = decode_document(display, name, data, path, tree)
        documents.extend(found)
        diagnostics.extend(problems)
        progress.advance()
    tools, problems = tools_from(documents, fmt, namespace, plain_schemas, reader)
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
