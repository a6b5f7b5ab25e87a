"""The model-facing SDK section: instructions for `run_code`, then the SDK as a model reads
it in a fence (`sections.python`, `sections.typescript`: each tool once, in its exact call form).

The instructions are fixed text per language, and the SDK's own first part never depends on
the tool set, so the section's first bytes stay the same when tools change (the provider's
prefix cache survives). No text from a schema can close the fence: the SDK renderers never
emit a run of three backticks.
"""

from __future__ import annotations

from ... import ir
from ..chunks import ChunkMemo
from ..templates import render
from .python import render_python_section_sdk as render_python_model_sdk
from .typescript import render_typescript_section_sdk


def render_python_section(catalog: ir.Catalog, memo: ChunkMemo | None = None) -> str:
    return render("prompt/python.md.jinja", sdk=render_python_model_sdk(catalog, memo))


def render_typescript_section(catalog: ir.Catalog, memo: ChunkMemo | None = None) -> str:
    return render("prompt/typescript.md.jinja", sdk=render_typescript_section_sdk(catalog, memo))
