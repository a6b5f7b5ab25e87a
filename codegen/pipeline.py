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
from ._support.recursion_limit import deep_recursion
from ._support.run_memos import run_memos
from .build.builder import (
    Assembled,
    Reusable,
    SchemaInput,
    assemble_catalog,
    build_catalog,
    build_tool_alone,
)
from .errors import Diagnostic, InvalidInputError, has_errors, sort_diagnostics
from .load.definitions import ToolDefinition
from .load.sources import load_sources, load_value
from .normalize import Normalized, normalize_schema
from .validate.checks import check_depth, check_schema, check_unique_names, draft_of

if TYPE_CHECKING:
    from .incremental.cache import Entry, ToolCache


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
        entries = cached_entries(definitions, cache)
        if entries is None:
            return None
        problems = gathered_problems(definitions, diagnostics, entries)
        if has_errors(problems):
            return Compiled(None, definitions, sort_diagnostics(problems))
        assembled = assemble_catalog(reusable_members(definitions, entries))
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
    definitions: Sequence[ToolDefinition], entries: Sequence[Entry]
) -> list[Reusable]:
    """The entries as members for `build.builder.assemble_catalog` (no errors among them); a
    member built again in place is prepared again from its definition."""
    members = []
    for definition, entry in zip(definitions, entries, strict=True):
        assert entry.claims is not None  # only a definition with errors has none
        again = partial(_prepared_again, definition)
        members.append(Reusable(definition.name, entry.has_output, entry.claims, again))
    return members


def gathered_problems(
    definitions: Sequence[ToolDefinition],
    diagnostics: Iterable[Diagnostic],
    entries: Sequence[Entry],
) -> list[Diagnostic]:
    """The load diagnostics, the uniqueness problems and each entry's own problems, placed
    at its definition: what `compile_definitions` reports before building."""
    problems = list(diagnostics)
    problems.extend(check_unique_names(definitions))
    for definition, entry in zip(definitions, entries, strict=True):
        problems.extend(entry.located_problems(definition))
    return problems


def cached_entries(
    definitions: tuple[ToolDefinition, ...],
    cache: ToolCache,
    languages: Sequence[str] = (),
    jobs: int | None = 1,
) -> list[Entry] | None:
    """Every definition's cache entry; the misses compiled and built alone (in shares
    across processes, `jobs` as `shares.share_count` takes it), with their chunks for
    `languages`, and added to the cache. None when a definition has no key."""
    keys = []
    for definition in definitions:
        key = cache.key(definition)
        if key is None:
            return None
        keys.append(key)
    found = [cache.get(key) for key in keys]
    missing: dict[str, int] = {}  # a key first missed at index (a definition given twice)
    for index, entry in enumerate(found):
        if entry is None:
            missing.setdefault(keys[index], index)
    made: dict[str, Entry] = {}
    if missing:
        built = tool_entries([definitions[i] for i in missing.values()], languages, True, jobs)
        for key, entry in zip(missing, built, strict=True):
            cache.put(key, entry)
            made[key] = entry
    return [made[key] if entry is None else entry for entry, key in zip(found, keys, strict=True)]


def tool_entries(
    definitions: Sequence[ToolDefinition],
    languages: Sequence[str],
    keep_ir: bool,
    jobs: int | None,
) -> list[Entry]:
    """Each definition validated, normalized and built alone, with its chunk of text for
    each of `languages`: in shares across processes when `shares.share_count` allows more
    than one (`jobs`: None for every usable core). Without `keep_ir` an entry holds only
    its text, which is all an assembled SDK needs and much cheaper to send back."""
    from .incremental.shares import map_in_shares, share_count
    from .render.targets import preload

    shares = share_count(len(definitions), jobs)
    if shares > 1:
        for language in languages:
            preload(language)  # imported once, before the fork, not in every process
    work = partial(_entries_of, languages=tuple(languages), keep_ir=keep_ir)
    return map_in_shares(work, definitions, shares)


def _entries_of(
    definitions: Sequence[ToolDefinition], languages: tuple[str, ...], keep_ir: bool
) -> list[Entry]:
    from .incremental.cache import Entry
    from .render.targets import target

    chunkers = [(language, target(language).chunk) for language in languages]
    # Stage by stage over the block, as the one-go pipeline runs over the catalog: each
    # stage's code stays hot, a fifth cheaper than taking every tool through all stages.
    prepared = [_prepare(definition) for definition in definitions]
    prebuilts = [
        None if has_errors(found) else build_tool_alone(schema_input)
        for schema_input, found in prepared
    ]
    entries = []
    for definition, (_, found), prebuilt in zip(definitions, prepared, prebuilts, strict=True):
        entry = Entry.of(definition, found, prebuilt)
        if prebuilt is not None and chunkers:
            entry.chunks.update((language, chunk(prebuilt.tool)) for language, chunk in chunkers)
            if not keep_ir:
                entry = entry.text_only()
        entries.append(entry)
    return entries


def _prepared_again(definition: ToolDefinition) -> SchemaInput:
    return _prepare(definition)[0]


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


def as_catalog(value: Any) -> ir.Catalog:
    """Accept an IR catalog, `ToolDefinition`s, or tool data in any loadable format."""
    if isinstance(value, ir.Catalog):
        return value
    if isinstance(value, Sequence) and value and all(isinstance(v, ToolDefinition) for v in value):
        return require_catalog(compile_definitions(value))
    return require_catalog(compile_value(value))
