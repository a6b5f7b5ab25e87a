"""The SDK languages, one entry each, so the CLI, `codegen build` and the cached render
agree on what a language's SDK is made of. Renderers are imported only when a language is
asked for: `codegen --help` and `codegen validate` never load one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .. import ir
    from .chunks import ChunkMemo

LANGUAGES = ("python", "typescript")
"""The SDK languages, in output order."""


class SdkRenderer(NamedTuple):
    suffix: str
    """The file suffix: `.py`, `.d.ts`."""
    render: Callable[[ir.Catalog, ChunkMemo | None], str]
    """The SDK of a catalog, reusing a memo's chunks."""
    section: Callable[[ir.Catalog, ChunkMemo | None], str]
    """The model-facing section: `run_code` instructions, then the SDK."""
    chunk: Callable[[ir.Tool], Any]
    """One tool's text in the SDK."""
    assemble: Callable[[Sequence[Any]], str]
    """The SDK around the tools' chunks, in catalog order."""


def sdk_renderer(language: str) -> SdkRenderer:
    """The renderer of one of `LANGUAGES`."""
    from .section import render_python_section, render_typescript_section

    if language == "python":
        from .python import python_chunk, python_sdk_from_chunks, render_python_sdk

        return SdkRenderer(
            ".py", render_python_sdk, render_python_section, python_chunk, python_sdk_from_chunks
        )
    if language == "typescript":
        from .typescript import render_typescript_sdk, typescript_chunk, typescript_sdk_from_chunks

        return SdkRenderer(
            ".d.ts",
            render_typescript_sdk,
            render_typescript_section,
            typescript_chunk,
            typescript_sdk_from_chunks,
        )
    raise ValueError(f"unknown SDK language {language!r}; known: {', '.join(LANGUAGES)}")
