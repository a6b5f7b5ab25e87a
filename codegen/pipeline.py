"""The pipeline's stage sequence: load -> validate -> normalize -> build.

`prepare` takes one tool through validation and normalization; `compile_catalog` runs the
stages over a whole catalog in one go and returns a `Compiled` holding the IR catalog (None
when there are errors), the definitions and every diagnostic, sorted. Nothing here raises
for bad input; `require_catalog` turns errors into `InvalidInputError` for callers that want
an exception. How a catalog is worked (in one go, tool by tool through a cache, in shares
across processes) is `codegen.engine`'s choice, never the caller's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from . import ir
from ._support import progress
from ._support.recursion_limit import deep_recursion
from ._support.run_memos import run_memos
from .errors import Diagnostic, InvalidInputError, has_errors, sort_diagnostics
from .ir_build.builder import SchemaInput, build_catalog, build_schema_types
from .load.definitions import ToolDefinition
from .load.formats import PLAIN_SCHEMA
from .load.relocate import relocated
from .normalize import Normalized, normalize_schema
from .validate.checks import check_depth, check_schema, check_unique_names, draft_of


@dataclass(frozen=True, slots=True)
class Compiled:
    """A pipeline run: the catalog (None when an error stopped it), the definitions it
    was built from, and every diagnostic."""

    catalog: ir.Catalog | None
    definitions: tuple[ToolDefinition, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        return self.catalog is not None

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.is_error)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if not d.is_error)


@dataclass(frozen=True, slots=True)
class Rendered:
    """Each language's SDK text (None when the definitions have errors) and every
    diagnostic, sorted."""

    texts: dict[str, str] | None
    diagnostics: tuple[Diagnostic, ...]


def compile_catalog(
    definitions: Iterable[ToolDefinition], diagnostics: Iterable[Diagnostic] = ()
) -> Compiled:
    """Validate, normalize and build loaded definitions in one go: the stage sequence over
    a whole catalog. `codegen.engine.Engine` decides when to run it and when to work tool
    by tool (through a cache, or in shares); every way gives this result."""
    definitions = tuple(definitions)
    problems = [*diagnostics, *check_unique_names(definitions)]
    return placed(_stages(definitions, definitions, problems, build_catalog))


def compile_schemas(
    definitions: Iterable[ToolDefinition], diagnostics: Iterable[Diagnostic] = ()
) -> Compiled:
    """Plain JSON Schema documents (`load.formats.PLAIN_SCHEMA` definitions) validated,
    normalized and built as types alone (`build_schema_types`): the catalog holds one
    "tool" per schema whose `args` is its named root type. A tool definition among them is
    an error: a run reads tools or plain schemas, never both."""
    definitions = tuple(definitions)
    problems = list(diagnostics)
    problems.extend(
        Diagnostic(
            definition.source,
            definition.pointer,
            "a tool definition among plain JSON Schemas: read them in separate runs",
        )
        for definition in definitions
        if definition.format != PLAIN_SCHEMA
    )
    schemas = [definition for definition in definitions if definition.format == PLAIN_SCHEMA]
    return placed(_stages(definitions, schemas, problems, build_schema_types))


def placed(compiled: Compiled) -> Compiled:
    """The run with each diagnostic about a definition bundled from another file shown in
    that file (`load.relocate`): every way of compiling ends here."""
    moved = relocated(compiled.definitions, compiled.diagnostics)
    if moved is compiled.diagnostics:
        return compiled
    return replace(compiled, diagnostics=sort_diagnostics(moved))


def placed_texts(definitions: Sequence[ToolDefinition], rendered: Rendered) -> Rendered:
    """`placed` for SDK texts assembled tool by tool."""
    moved = relocated(definitions, rendered.diagnostics)
    if moved is rendered.diagnostics:
        return rendered
    return replace(rendered, diagnostics=sort_diagnostics(moved))


def _stages(
    definitions: tuple[ToolDefinition, ...],
    built: Sequence[ToolDefinition],
    problems: list[Diagnostic],
    build: Callable[[list[SchemaInput]], tuple[ir.Catalog, list[Diagnostic]]],
) -> Compiled:
    """Each of `built` validated and normalized (`prepare`), then all of them built by
    `build` unless an error was found (`problems` holds those found before)."""
    inputs = []
    with deep_recursion(), run_memos():
        progress.begin("checking tools", len(built))
        for definition in built:
            schema_input, found = prepare(definition)
            problems.extend(found)
            inputs.append(schema_input)
            progress.advance()
        if has_errors(problems):
            return Compiled(None, definitions, sort_diagnostics(problems))
        catalog, warnings = build(inputs)
    problems.extend(warnings)
    return Compiled(catalog, definitions, sort_diagnostics(problems))


def is_plain(definitions: Iterable[ToolDefinition]) -> bool:
    """Whether a run's definitions are plain JSON Schemas (then `compile_schemas` takes
    them): the loader never mixes them with tools."""
    return any(definition.format == PLAIN_SCHEMA for definition in definitions)


def prepared_again(definition: ToolDefinition) -> SchemaInput:
    """A tool prepared again, for a build that must redo it in place."""
    return prepare(definition)[0]


def prepare(tool: ToolDefinition) -> tuple[SchemaInput, list[Diagnostic]]:
    """One tool validated and normalized: the build's input and the problems found."""
    problems: list[Diagnostic] = []
    normalized_input = _normalized(tool, tool.input_schema, tool.input_pointer, problems)
    normalized_output = (
        _normalized(tool, tool.output_schema, tool.output_pointer, problems)
        if tool.output_schema is not None
        else None
    )
    return SchemaInput(
        name=tool.name,
        description=tool.description,
        title=tool.title,
        source=tool.source,
        input=normalized_input,
        input_pointer=tool.input_pointer,
        output=normalized_output,
        output_pointer=tool.output_pointer,
        annotations=tool.annotations,
        raw_input=tool.input_schema,
        raw_output=tool.output_schema,
    ), problems


def _normalized(
    tool: ToolDefinition, schema: Any, pointer: str, problems: list[Diagnostic]
) -> Normalized:
    """Validate then normalize; the BFCL dialect is translated first because it is not
    JSON Schema until then."""
    draft, _ = draft_of(schema)
    if tool.dialect == "bfcl":
        # A decoded document is never nested too deep (`json_text` refuses it).
        too_deep = [] if tool.decoded else check_depth(schema, tool.source, pointer)
        if too_deep:  # before normalizing, whose pointer per level would be quadratic
            problems.extend(too_deep)
            return Normalized({}, {})
        normalized = normalize_schema(schema, draft, "bfcl")
        problems.extend(check_schema(normalized.schema, tool.source, pointer))
        return normalized
    found = check_schema(schema, tool.source, pointer, decoded=tool.decoded)
    problems.extend(found)
    if has_errors(found):
        return Normalized({}, {})
    return normalize_schema(schema, draft)


def require_catalog(compiled: Compiled) -> ir.Catalog:
    """The catalog, or `InvalidInputError` carrying the diagnostics."""
    if compiled.catalog is None:
        raise InvalidInputError(compiled.diagnostics)
    return compiled.catalog
