"""`Entry`: what one tool's definition compiled to, as the cache keeps it.

The IR rides along as JSON text (`ir_codec`), decoded only when asked for (`tool`): a warm
render that only needs each tool's text and claims never pays for making IR objects, which
is most of what loading a cache would otherwise cost. The same text carries the IR from a
forked share back to its parent and into the cache file, so a tool is encoded once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .. import ir
from ..errors import Diagnostic
from ..ir_build.builder import Prebuilt
from ..load.definitions import ToolDefinition
from .checked import CacheDataError, json_value
from .ir_codec import decode_tool, encode_tool


def relative(pointer: str, base: str) -> str:
    return pointer[len(base) :] if pointer.startswith(base) else pointer


class Entry:
    """One tool's `name`, its validation and normalization `problems`; when there are no
    errors, the name `claims` and `warnings` of its build alone, and its IR; and the
    renderers' `chunks` of text by target. Diagnostic pointers are relative to the tool and
    carry no source, so a moved tool still hits."""

    __slots__ = (
        "_stored",
        "_tool",
        "chunks",
        "claims",
        "has_output",
        "name",
        "problems",
        "warnings",
    )

    def __init__(
        self,
        name: str,
        problems: tuple[Diagnostic, ...],
        claims: tuple[tuple[str, str], ...] | None,
        warnings: tuple[Diagnostic, ...],
        has_output: bool,
        tool: ir.Tool | None = None,
        stored: bytes | memoryview | None = None,
        chunks: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.problems = problems
        self.claims = claims
        self.warnings = warnings
        self.has_output = has_output
        self._tool = tool
        self._stored = stored
        self.chunks: dict[str, Any] = chunks if chunks is not None else {}

    @staticmethod
    def of(
        definition: ToolDefinition, problems: Iterable[Diagnostic], prebuilt: Prebuilt | None
    ) -> Entry:
        detached = _detached(definition, problems)
        if prebuilt is None:
            return Entry(definition.name, detached, None, (), False)
        warnings = _detached(definition, prebuilt.warnings)
        output = prebuilt.tool.output is not None
        return Entry(definition.name, detached, prebuilt.claims, warnings, output, prebuilt.tool)

    def text_only(self) -> Entry:
        """The entry without its IR: its problems, claims, warnings and chunks, all an
        assembled SDK needs of a tool it does not build again."""
        fields = (self.problems, self.claims, self.warnings, self.has_output)
        return Entry(self.name, *fields, None, None, self.chunks)

    @property
    def built(self) -> bool:
        """Whether the definition compiled (no errors), so there is a tool."""
        return self.claims is not None

    @property
    def loaded(self) -> bool:
        return self._tool is not None

    @property
    def tool(self) -> ir.Tool:
        """The tool's IR, decoded on first use; `CacheDataError` when the stored text is
        not the IR of a tool of this name."""
        if self._tool is None:
            if self._stored is None:
                raise CacheDataError("the entry holds no IR")
            try:
                tool = decode_tool(json_value(bytes(self._stored), "the IR"))
            except RecursionError:
                raise CacheDataError("the IR nests too deeply") from None
            if tool.name != self.name:
                raise CacheDataError("the IR is another tool's")
            self._tool = tool
        return self._tool

    @property
    def stored(self) -> bytes | None:
        """The IR as JSON text (UTF-8), encoded on first use; None without IR. (An entry
        read from a file holds a view of the file's bytes until asked.)"""
        if self._stored is None and self._tool is not None:
            self._stored = ir_text(self._tool)
        elif isinstance(self._stored, memoryview):
            self._stored = bytes(self._stored)
        return self._stored

    def located_problems(self, definition: ToolDefinition) -> list[Diagnostic]:
        return _located(definition, self.problems)

    def located_warnings(self, definition: ToolDefinition) -> list[Diagnostic]:
        return _located(definition, self.warnings)

    def __reduce__(self) -> Any:
        """Between a forked share and its parent (`shares`): the IR as its text, which the
        parent decodes only if it needs the tool, and writes as it is to a cache file."""
        fields = (self.problems, self.claims, self.warnings, self.has_output)
        return (Entry, (self.name, *fields, None, self.stored, self.chunks))


def ir_text(tool: ir.Tool) -> bytes:
    """A tool's IR as compact JSON text; lone surrogates (which JSON strings may escape) are
    kept as they are."""
    text = json.dumps(encode_tool(tool), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


def _detached(definition: ToolDefinition, found: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    return tuple(
        replace(d, source="", pointer=relative(d.pointer, definition.pointer)) for d in found
    )


def _located(definition: ToolDefinition, found: Iterable[Diagnostic]) -> list[Diagnostic]:
    return [
        replace(d, source=definition.source, pointer=definition.pointer + d.pointer) for d in found
    ]
