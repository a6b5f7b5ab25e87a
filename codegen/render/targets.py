"""Render targets: the one registry of the languages the toolkit writes.

A `Target` says everything a caller needs to produce a language: the SDK file's suffix,
the SDK itself, its per-tool chunks and how they are assembled (for the cache), the
model-facing prompt section, and how a type and a literal are spelled (for the docs catalog).
The command line, `codegen build`, the cached render, the docs catalog and Code Mode's
dispatch tables (`codemode.languages`) all read `TARGETS`, so adding a language is one entry
here plus its renderer modules. The entries name their functions by module and attribute,
imported on first call: `codegen --help` and `codegen validate` load no renderer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..errors import CodegenError

if TYPE_CHECKING:
    from .. import ir
    from .chunks import ChunkMemo


class UnknownTargetError(CodegenError, ValueError):
    """A language with no entry in `TARGETS` (a usage error on the command line)."""

    exit_code = 2

    def __init__(self, name: object) -> None:
        self.name = name
        known = ", ".join(TARGETS)
        super().__init__(f"unknown target language {name!r}; known: {known}")


class _Deferred:
    """A renderer function named by module and attribute, looked up at each call (after the
    first, a dictionary lookup), so the registry imports nothing and a patched module
    attribute is what runs."""

    __slots__ = ("_module", "_name")

    def __init__(self, module: str, name: str) -> None:
        self._module = f"{__package__}.{module}"
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    def load(self) -> Callable[..., Any]:
        """The function, its module imported if it was not yet."""
        module = sys.modules.get(self._module) or import_module(self._module)
        function: Callable[..., Any] = getattr(module, self._name)
        return function

    def __repr__(self) -> str:
        return f"{self._module}.{self._name}"


@dataclass(frozen=True, slots=True)
class Target:
    """One language the toolkit writes."""

    name: str
    suffix: str
    """The SDK file's suffix: `.py`, `.d.ts`."""
    fence: str
    """The Markdown info string of a code block in this language."""
    any_type: str
    """The type of any JSON value: what a tool without an output schema returns."""
    render: Callable[[ir.Catalog, ChunkMemo | None], str]
    """The SDK of a catalog, reusing a memo's chunks."""
    chunk: Callable[[ir.Tool], Any]
    """One tool's part of the SDK."""
    assemble: Callable[[Sequence[Any]], str]
    """The SDK around the tools' chunks, in catalog order."""
    section: Callable[..., str]
    """The model-facing prompt section (`run_code` instructions, then the SDK) of a catalog,
    with an optional chunk memo."""
    spell: Callable[[ir.TypeNode], str]
    """One type, as the SDK spells it in an annotation."""
    literal: Callable[[str], str]
    """A JSON value's text as a literal of the language (for notes: defaults, examples)."""
    declarations: Callable[[ir.Tool], str]
    """A tool's named types, declared as the SDK declares them."""


def _python_type(node: ir.TypeNode) -> str:
    from .python import black_layout
    from .python import sdk as python

    return black_layout.flat(python.type_expr(node))


def _python_declarations(tool: ir.Tool) -> str:
    from .python import sdk as python

    return "\n\n\n".join(python.tool_declarations(tool))


def _typescript_declarations(tool: ir.Tool) -> str:
    from .typescript import sdk as typescript

    return "\n\n".join(typescript.tool_declarations(tool))


def _json_text(text: str) -> str:
    """JSON text is already a TypeScript literal."""
    return text


TARGETS: Mapping[str, Target] = MappingProxyType(
    {
        "python": Target(
            name="python",
            suffix=".py",
            fence="python",
            any_type="Any",
            render=_Deferred("python.sdk", "render_python_sdk"),
            chunk=_Deferred("python.sdk", "python_chunk"),
            assemble=_Deferred("python.sdk", "python_sdk_from_chunks"),
            section=_Deferred("sections.framing", "render_python_section"),
            spell=_python_type,
            literal=_Deferred("python.strings", "json_to_py"),
            declarations=_python_declarations,
        ),
        "typescript": Target(
            name="typescript",
            suffix=".d.ts",
            fence="ts",
            any_type="JsonValue",
            render=_Deferred("typescript.sdk", "render_typescript_sdk"),
            chunk=_Deferred("typescript.sdk", "typescript_chunk"),
            assemble=_Deferred("typescript.sdk", "typescript_sdk_from_chunks"),
            section=_Deferred("sections.framing", "render_typescript_section"),
            spell=_Deferred("typescript.sdk", "spell"),
            literal=_json_text,
            declarations=_typescript_declarations,
        ),
    }
)
"""Every target by name, in output order."""

TARGET_NAMES = tuple(TARGETS)
"""The target languages, in output order: `python`, `typescript`."""


def preload(name: str) -> None:
    """Import the modules a target's chunks and SDK come from now: a process about to
    fork workers imports them once for all of them."""
    found = target(name)
    for function in (found.chunk, found.assemble):
        if isinstance(function, _Deferred):
            function.load()


def target(name: object) -> Target:
    """The target called `name`; own keys only (`"__class__"` or `"keys"` never resolve)."""
    if type(name) is str and name in TARGETS:
        return TARGETS[name]
    raise UnknownTargetError(name)
