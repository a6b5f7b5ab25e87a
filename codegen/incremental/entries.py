"""Each tool compiled and built alone, with its chunks of text: the per-tool work the engine
does when it goes through a cache or spreads a catalog over processes.

An `Entry` (see `cache`) holds one tool's problems, its name claims and build warnings, its
IR and its chunks. `tool_entries` makes them (in shares across processes when asked),
`cached_entries` takes them from a `ToolCache` and makes only the misses; the `assembly`
module puts a catalog (or its SDK text) back together from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial

from .._support import progress
from ..errors import Diagnostic, has_errors
from ..ir_build.builder import Assembled, Reusable, build_tool_alone
from ..load.definitions import ToolDefinition
from ..pipeline import prepare, prepared_again
from ..render.targets import preload, target
from ..validate.checks import check_unique_names
from .cache import Entry, ToolCache
from .shares import map_in_shares, share_count


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
        again = partial(prepared_again, definition)
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
    # The IR is what a compile takes (no `languages`); a render takes the chunks.
    texts = frozenset(languages) or None
    found = [
        cache.get(key, definition.name, texts)
        for key, definition in zip(keys, definitions, strict=True)
    ]
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
    shares = share_count(len(definitions), jobs)
    if shares > 1:
        for language in languages:
            preload(language)  # imported once, before the fork, not in every process
    work = partial(_entries_of, languages=tuple(languages), keep_ir=keep_ir)
    progress.begin("compiling tools", len(definitions))
    return map_in_shares(work, definitions, shares)


def _entries_of(
    definitions: Sequence[ToolDefinition], languages: tuple[str, ...], keep_ir: bool
) -> list[Entry]:
    chunkers = [(language, target(language).chunk) for language in languages]
    # Stage by stage over the block, as the one-go pipeline runs over the catalog: each
    # stage's code stays hot, a fifth cheaper than taking every tool through all stages.
    prepared = [prepare(definition) for definition in definitions]
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
