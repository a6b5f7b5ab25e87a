"""Bundling: each `$ref` to another file, copied into the referring schema as a definition.

`{"$ref": "common.schema.json#/$defs/Address"}` in a tool's schema becomes
`{"$ref": "#/$defs/Address"}` beside a `$defs` entry `Address` holding a copy of that
definition, so validation, normalization and the build see one self-contained schema with
local references only: types are named as if the definition had been written in place, a
cycle across files is a cycle inside one schema, and the per-tool cache, which keys on the
schema, sees a change to the other file.

- A reference is resolved against the file that holds it (a bundled definition's own
  references against its file), as json-schema-to-typescript does; a `$id` does not move
  it, and a relative reference below a nested `$id` (whose base is another resource) is an
  error. `http(s)`, `urn` and other absolute URIs stay as written (the build degrades them
  with a warning; nothing is fetched); `file:` URLs and absolute paths are errors, since
  they name one machine's files.
- Every place is known by its file (`RefFiles.key`: `./a.json` and `a.json` are one file)
  and canonical JSON pointer, and copied once per schema. A place inside the referring
  schema itself becomes a plain local reference; a place inside a copied definition
  becomes a reference into that copy.
- Copies go in the schema's `$defs` (`definitions` where the schema uses it or its draft
  is older than 2019-09), without their `$id`, `$anchor` and `$schema`: they are no longer
  those resources, and the referring schema's draft applies (a warning says so when the
  file declares another). They are named by their key (`Address`), a whole document by its
  `title` or file name, else the pointer's last name; a name the schema already uses gets
  `2`, `3`, ... in the order the references are met, so names depend only on the tool.
- A referenced file that holds tool definitions (not a schema document), a JSON Lines file,
  a missing file, a bad pointer and a file outside the allowed folders (`ref_files`) are
  each an error naming the file, the pointer of the `$ref` and what is wrong; the reference
  is left as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..errors import Diagnostic, join_pointer
from .definitions import Bundled, ToolDefinition
from .formats import holds_tools, plain_schema_name
from .ref_files import RefDocument, RefFiles
from .ref_walk import (
    NAME_MAPS,
    Where,
    anchor_pointer,
    as_fragment,
    as_pointer,
    follow,
    fragment_tokens,
    pointer_at,
    pointer_tokens,
    rewrite_refs,
)

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_KEYWORD_TOKENS = (
    NAME_MAPS
    | {"additionalProperties", "items", "prefixItems", "anyOf", "oneOf", "allOf", "not"}
    | {"if", "then", "else", "contains", "propertyNames"}
)
"""Pointer tokens that name a keyword, never a definition: not a name for a copy."""
_DEFAULT_DRAFT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True, slots=True)
class Home:
    """Where a tool's schemas were read from: the file's location (None for stdin), the
    folder its references may read below (its source's), and whether the file is one
    document (a pointer back into it means something)."""

    location: str | None
    tree: str | None
    single: bool


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a reference leads: a node of a referenced document, or (`document` None) a
    node of the referring schema itself at `pointer` relative to it."""

    document: RefDocument | None
    pointer: str
    node: Any = None


class Bundler:
    """One run's bundling over `files`: every problem reported once, and the files the
    tools referred to (`referenced`, keys), which are then not read as sources of their own
    (`sources.tools_from`)."""

    def __init__(self, files: RefFiles) -> None:
        self.files = files
        self.referenced: set[str] = set()
        self.reached: set[str] = set()
        """The files the last tool bundled referred to, through any number of files."""
        self._problems: dict[Diagnostic, None] = {}

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return list(self._problems)

    def report(self, diagnostic: Diagnostic) -> None:
        self._problems[diagnostic] = None

    def tool(self, tool: ToolDefinition, home: Home) -> ToolDefinition:
        """The tool with every reference to another file bundled into its schemas."""
        self.reached = set()
        schema, bundled = _Schema(self, tool, home, tool.input_pointer).bundle(tool.input_schema)
        output: Any = tool.output_schema
        more: tuple[Bundled, ...] = ()
        if output is not None:
            output, more = _Schema(self, tool, home, tool.output_pointer).bundle(output)
        if schema is tool.input_schema and output is tool.output_schema:
            return tool
        return replace(
            tool,
            input_schema=schema,
            output_schema=output,
            decoded=tool.decoded and not (bundled or more),  # copies may sit deeper
            bundled=(*tool.bundled, *bundled, *more),
        )


class _Schema:
    """The bundling of one schema: the places its references reach, found first (so a
    place inside another is known before any is named), then named and written."""

    def __init__(self, bundler: Bundler, tool: ToolDefinition, home: Home, pointer: str):
        self.bundler = bundler
        self.files = bundler.files
        self.tool = tool
        self.home = home
        self.pointer = pointer
        self.key = (
            self.files.key(home.location) if home.location is not None and home.single else None
        )
        self.places: dict[tuple[str, str], _Place] = {}
        """Every place of another document reached, in the order first met."""
        self.met: list[_Place] = []
        """The same places, in a list the search walks while it grows."""
        self.local = False
        """Whether a reference leads back into this schema through its file."""

    def bundle(self, schema: Any) -> tuple[Any, tuple[Bundled, ...]]:
        if not isinstance(schema, dict):
            return schema, ()
        rewrite_refs(schema, self.pointer, self._finder(None))
        for place in self.met:  # the places' own references, met in turn (the list grows)
            assert place.document is not None
            rewrite_refs(place.node, place.pointer, self._finder(place.document), root=False)
        if not self.places and not self.local:
            return schema, ()
        container = _container(schema)
        if container is None:  # `$defs` and `definitions` both taken by other values
            return schema, ()
        names = self._names(schema)
        result = rewrite_refs(schema, self.pointer, self._writer(None, names, container))
        entries = dict(result.get(container) or {})
        bundled = []
        for (key, pointer), name in names.items():
            place = self.places[key, pointer]
            assert place.document is not None
            self._check_draft(schema, place.document)
            writer = self._writer(place.document, names, container)
            entries[name] = rewrite_refs(place.node, pointer, writer, copy=True, root=not pointer)
            local = join_pointer(self.pointer, container, name)
            bundled.append(Bundled(local, place.document.display, pointer))
        if names:
            result = {**result, container: entries}
        return result, tuple(bundled)

    # --- the two passes -------------------------------------------------------------------

    def _finder(self, document: RefDocument | None) -> Callable[[str, Where, bool], None]:
        def find(ref: str, at: Where, nested: bool) -> None:
            place = self._resolve(ref, document, at, nested)
            if place is None:
                return
            if place.document is None:
                self.local = True
                return
            if (place.document.key, place.pointer) not in self.places:
                self.places[place.document.key, place.pointer] = place
                self.met.append(place)

        return find

    def _writer(
        self, document: RefDocument | None, names: dict[tuple[str, str], str], container: str
    ) -> Callable[[str, Where, bool], str | None]:
        def write(ref: str, at: Where, nested: bool) -> str | None:
            place = self._resolve(ref, document, at, nested)
            if place is None:
                return None
            if place.document is None:
                return as_fragment(place.pointer)
            key, pointer = place.document.key, place.pointer
            for cut in _prefixes(pointer):
                name = names.get((key, cut))
                if name is not None:
                    return as_fragment(join_pointer("", container, name) + pointer[len(cut) :])
            return None  # unreachable: every place is in a named one

        return write

    def _names(self, schema: dict[str, Any]) -> dict[tuple[str, str], str]:
        """A name for each place no other place holds, in the order met; the others are
        reached inside the copy of the one that holds them."""
        taken = {
            name
            for keyword in ("$defs", "definitions")
            if isinstance(schema.get(keyword), dict)
            for name in schema[keyword]
        }
        names: dict[tuple[str, str], str] = {}
        for key, pointer in self.places:
            if any((key, cut) in self.places for cut in _prefixes(pointer) if cut != pointer):
                continue
            document = self.places[key, pointer].document
            assert document is not None
            base = _entry_name(document, pointer)
            name, number = base, 1
            while name in taken:
                number += 1
                name = f"{base}{number}"
            taken.add(name)
            names[key, pointer] = name
        return names

    # --- one reference ------------------------------------------------------------------

    def _resolve(
        self, ref: str, document: RefDocument | None, at: Where, nested: bool
    ) -> _Place | None:
        """Where `ref`, written at `at` in `document` (None: in the tool's schema), leads;
        None when it stays as written: local to the tool's schema, remote, or an error
        (reported)."""
        path, _, fragment = ref.partition("#")
        if not path:
            return None if document is None else self._place(document, fragment, ref, at, document)
        if _remote(path):
            return None  # never fetched: the build degrades it with a warning
        base = document.location if document is not None else self.home.location
        problem = _refusal(path, nested, base is None or self.home.tree is None)
        if problem is None:
            assert base is not None and self.home.tree is not None
            found = self.files.open(self.files.join(base, _unquoted(path)), self.home.tree)
            if not isinstance(found, str):
                return self._place(found, fragment, ref, at, document)
            problem = found
        self._error(document, at, ref, problem)
        return None

    def _place(
        self, found: RefDocument, fragment: str, ref: str, at: Where, written: RefDocument | None
    ) -> _Place | None:
        """The node at `fragment` of `found`, for a reference written at `at` in `written`
        (None: the tool's schema)."""
        if not found.single:
            problem = f"{found.display} holds many documents (JSON Lines); no pointer names one"
            self._error(written, at, ref, problem)
            return None
        tokens = fragment_tokens(fragment)
        if tokens is None:  # a plain name: an `$anchor`
            pointer = anchor_pointer(found.value, _unquoted(fragment))
            if pointer is None:
                self._error(written, at, ref, f"{found.display} has no $anchor {fragment!r}")
                return None
            tokens = pointer_tokens(pointer)
        exists, node = follow(found.value, tokens)
        pointer = as_pointer(tokens)
        if not exists:
            self._error(written, at, ref, f"{found.display} has nothing at {pointer}")
            return None
        if found.key == self.key and (pointer + "/").startswith(self.pointer + "/"):
            return _Place(None, pointer[len(self.pointer) :])
        if holds_tools(found.value):
            problem = (
                f"{found.display} holds tool definitions; a reference may point into a schema "
                "document, or into the schema that holds it"
            )
            self._error(written, at, ref, problem)
            return None
        self.bundler.referenced.add(found.key)
        self.bundler.reached.add(found.key)
        return _Place(found, pointer, node)

    def _error(self, document: RefDocument | None, at: Where, ref: str, problem: str) -> None:
        source = document.display if document is not None else self.tool.source
        where = join_pointer(pointer_at(at), "$ref")
        self.bundler.report(Diagnostic(source, where, f"$ref {ref!r}: {problem}"))

    def _check_draft(self, schema: dict[str, Any], document: RefDocument) -> None:
        """A warning when the copied file declares another draft than the schema it is
        copied into, whose draft it is then read in."""
        theirs = document.value.get("$schema") if isinstance(document.value, dict) else None
        ours = schema.get("$schema")
        ours = ours if isinstance(ours, str) else _DEFAULT_DRAFT
        if isinstance(theirs, str) and _draft(theirs) != _draft(ours):
            message = (
                f"declares {theirs}; its definitions are read in the draft of the schema "
                f"that refers to them ({ours})"
            )
            self.bundler.report(Diagnostic(document.display, "/$schema", message, "warning"))


def _remote(path: str) -> bool:
    """An absolute URI but a `file:` URL, or a network-path reference (`//host/x.json`)."""
    if path.startswith("//"):
        return True
    return bool(_SCHEME.match(path)) and not _drive(path) and path[:5].lower() != "file:"


def _refusal(path: str, nested: bool, from_stdin: bool) -> str | None:
    """Why a reference to the file at `path` is not followed, if it is not."""
    if path[:5].lower() == "file:":
        return "a file: URL names one machine's file; write the path relative to this file"
    if path.startswith(("/", "\\")) or _drive(path):
        return "an absolute path names one machine's file; write the path relative to this file"
    if "?" in path:
        return "a query in a file reference is not supported"
    if nested:
        return (
            "a relative reference below a nested $id resolves against that $id, not this "
            "file; move the definition out of the $id's schema, or drop the $id"
        )
    if from_stdin:
        return (
            "a file reference cannot be followed from stdin; name the file as a source so "
            "its folder is known"
        )
    return None


def _unquoted(text: str) -> str:
    """Percent escapes decoded (`urllib` imported only when there is one)."""
    if "%" not in text:
        return text
    from urllib.parse import unquote

    return unquote(text)


def _prefixes(pointer: str) -> list[str]:
    """`pointer` and every pointer above it, the document's root (`""`) first."""
    cuts = [index for index, char in enumerate(pointer) if char == "/"]
    return [pointer[:index] for index in cuts] + [pointer]


def _container(schema: dict[str, Any]) -> str | None:
    """Where copies go: the schema's own `$defs` or `definitions`, else the one its draft
    spells (`definitions` before 2019-09); None when both keys hold something else."""
    for keyword in ("$defs", "definitions"):
        if isinstance(schema.get(keyword), dict):
            return keyword
    draft = schema.get("$schema")
    legacy = isinstance(draft, str) and "draft-0" in draft
    for keyword in ("definitions", "$defs") if legacy else ("$defs", "definitions"):
        if keyword not in schema:
            return keyword
    return None


def _entry_name(document: RefDocument, pointer: str) -> str:
    """A definition's key, a whole document's title or file name, else the last name in
    the pointer."""
    tokens = pointer_tokens(pointer)
    if len(tokens) >= 2 and tokens[-2] in ("$defs", "definitions") and tokens[-1]:
        return tokens[-1]
    name = document.location.replace("\\", "/").rpartition("/")[2]
    stem = name.rpartition(".")[0] if "." in name[1:] else name
    if not tokens:
        value = document.value
        return plain_schema_name(value if isinstance(value, dict) else {}, stem)
    for token in reversed(tokens):
        if token and not token.isdigit() and token not in _KEYWORD_TOKENS:
            return token
    return plain_schema_name({}, stem)


def _draft(uri: str) -> str:
    """A `$schema` without scheme and empty fragment: `http://` and `https://` spell one."""
    return uri.strip().rstrip("#").partition("://")[2] or uri.strip()


def _drive(path: str) -> bool:
    """A Windows path with a drive letter (`C:\\x.json`, `C:/x.json`), not a URI scheme."""
    return len(path) > 2 and path[0].isalpha() and path[1] == ":" and path[2] in "\\/"
