"""The pipeline in one place: load -> validate -> normalize -> build.

`compile_sources` and `compile_definitions` return a `Compiled` holding the IR catalog (None
when there are errors), the loaded definitions and every diagnostic, sorted. Nothing here
raises for bad input; `require_catalog` turns errors into `InvalidInputError` for callers
that want an exception.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO

from . import ir
from .build_ir import (
    Assembled,
    Reusable,
    SchemaInput,
    assemble_catalog,
    build_catalog,
    build_tool_alone,
)
from .errors import Diagnostic, InvalidInputError, has_errors, sort_diagnostics
from .load import load_sources, load_value
from .model import ToolDefinition
from .normalize import Normalized, normalize_schema
from .recursion import deep_recursion
from .runmemo import run_memos
from .validate import check_depth, check_schema, check_unique_names, draft_of

if TYPE_CHECKING:
    from .cache import Entry, ToolCache


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


def compile_sources(
    sources: Sequence[str],
    fmt: str = "auto",
    namespace: bool = False,
    stdin: BinaryIO | None = None,
    cache: ToolCache | None = None,
    require_tools: bool = True,
) -> Compiled:
    """Files, directories or `-` to the IR. Raises `UsageError` only for unreadable sources;
    sources without a tool are an error unless `require_tools` is false."""
    loaded = load_sources(
        sources, fmt=fmt, namespace=namespace, stdin=stdin, require_tools=require_tools
    )
    return compile_definitions(loaded.tools, loaded.diagnostics, cache)


def compile_value(value: Any, source: str = "<memory>", fmt: str = "auto") -> Compiled:
    """An already-decoded value (a tool, a list, `{"tools": [...]}`) to the IR."""
    loaded = load_value(value, source, fmt)
    return compile_definitions(loaded.tools, loaded.diagnostics)


def compile_definitions(
    definitions: Iterable[ToolDefinition],
    diagnostics: Iterable[Diagnostic] = (),
    cache: ToolCache | None = None,
) -> Compiled:
    """Validate, normalize and build loaded definitions. With a `cache`, tools whose
    definitions it has seen are not compiled again; the result is the same."""
    definitions = tuple(definitions)
    if cache is not None:
        cached = _compile_cached(definitions, diagnostics, cache)
        if cached is not None:
            return cached
    problems = list(diagnostics)
    inputs = []
    with deep_recursion(), run_memos():
        problems.extend(check_unique_names(definitions))
        for tool in definitions:
            schema_input, found = _prepare(tool)
            problems.extend(found)
            inputs.append(schema_input)
        if has_errors(problems):
            return Compiled(None, definitions, sort_diagnostics(problems))
        catalog, warnings = build_catalog(inputs)
    problems.extend(warnings)
    return Compiled(catalog, definitions, sort_diagnostics(problems))


def _compile_cached(
    definitions: tuple[ToolDefinition, ...], diagnostics: Iterable[Diagnostic], cache: ToolCache
) -> Compiled | None:
    """Each tool from the cache or compiled and built alone, then assembled; None (compile
    normally) when a definition is not plain data and so has no key."""
    with deep_recursion(), run_memos():
        gathered = cached_entries(definitions, diagnostics, cache)
        if gathered is None:
            return None
        entries, fresh, problems = gathered
        if has_errors(problems):
            return Compiled(None, definitions, sort_diagnostics(problems))
        assembled = assemble_catalog(reusable_members(definitions, entries, fresh))
        tools = []
        for index, tool in zip(assembled.order, assembled.rebuilt, strict=True):
            tools.append(cache.tool(entries[index]) if tool is None else tool)
    problems.extend(assembled_warnings(definitions, entries, assembled))
    catalog = ir.Catalog(tuple(tools))
    return Compiled(catalog, definitions, sort_diagnostics(problems))


def assembled_warnings(
    definitions: Sequence[ToolDefinition], entries: Sequence[Entry], assembled: Assembled
) -> list[Diagnostic]:
    """The build warnings of an assembled catalog: a rebuilt tool's own, a reused tool's
    from its entry, placed at the definition."""
    found: list[Diagnostic] = []
    for index, (definition, entry) in enumerate(zip(definitions, entries, strict=True)):
        if index in assembled.warnings:
            found.extend(assembled.warnings[index])
        else:
            found.extend(entry.located_warnings(definition))
    return found


def reusable_members(
    definitions: Sequence[ToolDefinition], entries: Sequence[Entry], fresh: dict[int, SchemaInput]
) -> list[Reusable]:
    """The cached entries as members for `build_ir.assemble_catalog` (no errors among them)."""
    members = []
    for index, (definition, entry) in enumerate(zip(definitions, entries, strict=True)):
        assert entry.claims is not None  # only a definition with errors has none
        again = partial(_prepared_again, definition, fresh.get(index))
        members.append(Reusable(definition.name, entry.has_output, entry.claims, again))
    return members


def cached_entries(
    definitions: tuple[ToolDefinition, ...], diagnostics: Iterable[Diagnostic], cache: ToolCache
) -> tuple[list[Entry], dict[int, SchemaInput], list[Diagnostic]] | None:
    """Every definition's cache entry (compiled and built alone on a miss), the normalized
    inputs of the misses by index, and the load, uniqueness and per-tool problems; None when
    a definition has no key."""
    from .cache import Entry

    problems = list(diagnostics)
    problems.extend(check_unique_names(definitions))
    entries: list[Entry] = []
    fresh: dict[int, SchemaInput] = {}
    for index, definition in enumerate(definitions):
        key = cache.key(definition)
        if key is None:
            return None
        entry = cache.get(key)
        if entry is None:
            schema_input, found = _prepare(definition)
            prebuilt = None if has_errors(found) else build_tool_alone(schema_input)
            entry = Entry.of(definition, found, prebuilt)
            cache.put(key, entry)
            fresh[index] = schema_input
        entries.append(entry)
        problems.extend(entry.located_problems(definition))
    return entries, fresh, problems


def _prepared_again(definition: ToolDefinition, known: SchemaInput | None) -> SchemaInput:
    return known if known is not None else _prepare(definition)[0]


def _prepare(tool: ToolDefinition) -> tuple[SchemaInput, list[Diagnostic]]:
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
        # A decoded document is never nested too deep (`jsontext` refuses it).
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


def as_catalog(value: Any) -> ir.Catalog:
    """Accept an IR catalog, `ToolDefinition`s, or tool data in any loadable format."""
    if isinstance(value, ir.Catalog):
        return value
    if isinstance(value, Sequence) and value and all(isinstance(v, ToolDefinition) for v in value):
        return require_catalog(compile_definitions(value))
    return require_catalog(compile_value(value))
