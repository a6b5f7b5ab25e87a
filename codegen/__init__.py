"""codegen: typed SDKs from JSON-Schema tool definitions, byte-identical on every run.

The public API is imported lazily so `import codegen` (and the CLI) stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._support.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .codemode.presentation.languages import render_sdk_section
    from .codemode.run_code.definition import run_code_tool
    from .engine import compile_definitions, compile_sources, compile_value
    from .errors import CodegenError, Diagnostic, InvalidInputError, UsageError
    from .ir import Catalog
    from .load.definitions import ToolDefinition
    from .load.sources import load_sources
    from .pipeline import Compiled
    from .render.catalog import render_catalog
    from .render.python.sdk import render_python_sdk
    from .render.typescript.sdk import render_typescript_sdk
    from .schema_spelling import json_schema_to_py, json_schema_to_ts

_LOCATIONS = {
    "Catalog": "ir",
    "CodegenError": "errors",
    "Compiled": "pipeline",
    "Diagnostic": "errors",
    "InvalidInputError": "errors",
    "ToolDefinition": "load.definitions",
    "UsageError": "errors",
    "compile_definitions": "engine",
    "compile_sources": "engine",
    "compile_value": "engine",
    "json_schema_to_py": "schema_spelling",
    "json_schema_to_ts": "schema_spelling",
    "load_sources": "load.sources",
    "render_catalog": "render.catalog",
    "render_python_sdk": "render.python.sdk",
    "render_sdk_section": "codemode.presentation.languages",
    "render_typescript_sdk": "render.typescript.sdk",
    "run_code_tool": "codemode.run_code.definition",
}

__all__ = [
    "Catalog",
    "CodegenError",
    "Compiled",
    "Diagnostic",
    "InvalidInputError",
    "ToolDefinition",
    "UsageError",
    "compile_definitions",
    "compile_sources",
    "compile_value",
    "json_schema_to_py",
    "json_schema_to_ts",
    "load_sources",
    "render_catalog",
    "render_python_sdk",
    "render_sdk_section",
    "render_typescript_sdk",
    "run_code_tool",
]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _LOCATIONS, __all__)
