"""The renderers' per-tool chunks of text as plain JSON data and back, for the cache on disk.

Each target the toolkit renders has one chunk class (named tuples of strings, see
`render.chunks`); a chunk is stored as the JSON array of its fields (what `json` makes of a
named tuple) and decoded by its target's reader, which checks every field and makes only
that class. Chunks of any other target, or of another class (a library caller's own `memo`
target), stay in memory and are not written.

A warm render reads every unchanged tool's chunks, so the readers are written for speed:
each checks its fields' types inline (the strings of a chunk in one `set(map(type, ...))`)
and makes the named tuples with `tuple.__new__`, as their own `_make` does, which took a
warm 5,003-tool render's chunk reading (10,000 chunks) from about 50 ms to 16.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from typing import Any

from .checked import CacheDataError

_STRING = frozenset({str})
_new = tuple.__new__

Reader = Callable[[Any], Any]


def storable(target: str, chunk: Any) -> bool:
    """Whether the cache writes this chunk (a known target's own class)."""
    found = _CLASSES.get(target)
    return found is not None and type(chunk) is found()


def decode_chunk(target: str, data: Any) -> Any:
    """The chunk `data` stores for `target`; `CacheDataError` when it is not one."""
    reader = _readers.get(target)
    if reader is None:
        if target not in _CLASSES:
            raise CacheDataError("a chunk is stored for a target the toolkit does not render")
        reader = _readers[target] = _MAKERS[target]()
    return reader(data)


def _python_class() -> type:
    from ..render.python.sdk import PythonChunk

    return PythonChunk


def _typescript_class() -> type:
    from ..render.typescript.sdk import TypeScriptChunk

    return TypeScriptChunk


def _section_class() -> type:
    from ..render.sections.short_names import ToolText

    return ToolText


def _python_reader() -> Reader:
    """`PythonChunk(declarations, method, overload, key)`."""
    chunk_class = _python_class()

    def read(data: Any) -> Any:
        if type(data) is list and len(data) == 4:
            declarations, method, overload, key = data
            if (
                type(declarations) is list
                and type(method) is str
                and type(overload) is str
                and type(key) is str
                and set(map(type, declarations)) <= _STRING
            ):
                return _new(chunk_class, (tuple(declarations), method, overload, key))
        raise CacheDataError("a Python chunk is not [declarations, method, overload, key]")

    return read


def _typescript_reader() -> Reader:
    """`TypeScriptChunk(declarations, args_entry, output_entry)`, each entry a
    `Member(comment, text)`."""
    from ..render.typescript.sdk import Member

    chunk_class = _typescript_class()

    def read(data: Any) -> Any:
        if type(data) is list and len(data) == 3:
            declarations, args_entry, output_entry = data
            if (
                type(declarations) is list
                and type(args_entry) is list
                and type(output_entry) is list
                and len(args_entry) == 2
                and len(output_entry) == 2
            ):
                args_comment, args_text = args_entry
                output_comment, output_text = output_entry
                if (
                    type(args_comment) is list
                    and type(output_comment) is list
                    and type(args_text) is str
                    and type(output_text) is str
                    and set(map(type, chain(declarations, args_comment, output_comment))) <= _STRING
                ):
                    args_member = _new(Member, (tuple(args_comment), args_text))
                    output_member = _new(Member, (tuple(output_comment), output_text))
                    return _new(chunk_class, (tuple(declarations), args_member, output_member))
        raise CacheDataError("a TypeScript chunk is not [declarations, args entry, output entry]")

    return read


def _section_reader() -> Reader:
    """A model-facing section's `ToolText(head, declarations, names, function, avoid,
    signature)`: declarations `Declaration(name, text)`, names `(IR name, preferred name)`."""
    from ..render.sections.short_names import Declaration

    chunk_class = _section_class()

    def read(data: Any) -> Any:
        if type(data) is list and len(data) == 6:
            head, declared, names, function, avoid, signature = data
            strings = [head, function, signature]
            if type(declared) is list and type(names) is list and type(avoid) is list:
                strings += avoid
                declarations = []
                candidates = []
                for item in declared:
                    if type(item) is not list or len(item) != 2:
                        break
                    strings += item
                    declarations.append(_new(Declaration, item))
                else:
                    for item in names:
                        if type(item) is not list or len(item) != 2:
                            break
                        strings += item
                        candidates.append(tuple(item))
                    else:
                        if set(map(type, strings)) <= _STRING:
                            fields = (tuple(declarations), tuple(candidates), function)
                            return _new(chunk_class, (head, *fields, tuple(avoid), signature))
        raise CacheDataError(
            "a section chunk is not [head, declarations, names, function, avoid, signature]"
        )

    return read


_CLASSES: dict[str, Callable[[], type]] = {
    "python": _python_class,
    "typescript": _typescript_class,
    "python-section": _section_class,
    "typescript-section": _section_class,
}
"""Each target whose chunks are written, and its chunk class (the render modules are
imported on first use, as the renderers themselves are)."""
_MAKERS: dict[str, Callable[[], Reader]] = {
    "python": _python_reader,
    "typescript": _typescript_reader,
    "python-section": _section_reader,
    "typescript-section": _section_reader,
}
_readers: dict[str, Reader] = {}
"""Each target's reader, made on first use (at most one per target)."""
