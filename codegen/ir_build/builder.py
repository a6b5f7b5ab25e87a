"""Build: normalized schemas to the frozen IR, with every type name decided here.

Takes normalized tool schemas and returns a `Catalog` plus warnings. A keyword that changes
a type but that no target can express (`not`, `if`/`then`/`else`, `dependentSchemas`, a remote
`$ref`, ...) degrades only the node that holds it to `UnknownType`, with a warning naming the
JSON pointer. Every name a tool's build claims starts with the tool's stem (`names`), so a
tool's names never depend on another tool (unless their stems coincide, which `tool_stems`
settles).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .. import ir
from .._support import progress
from ..errors import Diagnostic
from ..identifiers import (
    NameAllocator,
    module_type_names,
    plain_stem,
    tool_stems,
    type_base,
)
from ..normalize import DOC_KEYWORDS
from .combining import Combining
from .leaves import LeafUnions
from .shaping import Shaping
from .walk import ANY
from .walk import SchemaInput as SchemaInput


class ToolBuilder(Combining, Shaping):
    """Builds one tool's types: the walk (`walk.Walk`) with its combinators and shapes."""


def build_catalog(tools: Sequence[SchemaInput]) -> tuple[ir.Catalog, list[Diagnostic]]:
    """The IR of a whole catalog, tools in code-point order of their names."""
    ordered = sorted(tools, key=lambda t: t.name)
    stems = tool_stems(t.name for t in ordered)
    allocator = NameAllocator()
    roots = [_claim_roots(allocator, stems[t.name], t.output is not None) for t in ordered]
    diagnostics: list[Diagnostic] = []
    built = []
    leaf_unions: LeafUnions = {}
    progress.begin("building types", len(ordered))
    for tool, (args_name, output_name) in zip(ordered, roots, strict=True):
        builder = ToolBuilder(tool, allocator, diagnostics, leaf_unions)
        built.append(builder.build(stems[tool.name], args_name, output_name))
        progress.advance()
    return ir.Catalog(tuple(built)), diagnostics


class Prebuilt(NamedTuple):
    """A tool built alone, with every name claim its build made (roots first)."""

    tool: ir.Tool
    claims: tuple[tuple[str, str], ...]
    warnings: tuple[Diagnostic, ...]


def _claim_roots(allocator: NameAllocator, stem: str, has_output: bool) -> tuple[str, str]:
    """A tool's root type names, `<Stem>Args` and `<Stem>Output` (`""` without an output),
    claimed before any of its nested names."""
    args_name = allocator.claim(stem + "Args")
    return args_name, allocator.claim(stem + "Output") if has_output else ""


def build_tool_alone(tool: SchemaInput) -> Prebuilt:
    """One tool built with a name allocator of its own; `assemble_catalog` can drop it
    into a catalog when the catalog's other tools leave its names free."""
    allocator = NameAllocator()
    stem = plain_stem(tool.name)
    args_name, output_name = _claim_roots(allocator, stem, tool.output is not None)
    diagnostics: list[Diagnostic] = []
    builder = ToolBuilder(tool, allocator, diagnostics, {})
    built = builder.build(stem, args_name, output_name)
    return Prebuilt(built, tuple(allocator.claims), tuple(diagnostics))


class Reusable(NamedTuple):
    """A catalog member for `assemble_catalog`: the name claims its build alone recorded,
    and how to get its normalized schemas should it need building again."""

    name: str
    has_output: bool
    claims: tuple[tuple[str, str], ...]
    prepare: Callable[[], SchemaInput]


class Assembled(NamedTuple):
    """Members in catalog (name) order, by index into the members given; for each, the
    tool built again in place, or None when its prebuilt tool stands as it is; and the
    warnings of each rebuilt member, by index."""

    order: list[int]
    rebuilt: list[ir.Tool | None]
    warnings: dict[int, list[Diagnostic]]


def assemble_catalog(members: Sequence[Reusable]) -> Assembled:
    """Which tools `build_catalog` would give exactly as they were built alone: those whose
    recorded claims replay unchanged on the catalog's allocator, in order. The others are
    built again in place, on that allocator, as `build_catalog` builds them. Prebuilt tools
    themselves are not needed here, so a caller that only wants their text never loads
    them."""
    order = sorted(range(len(members)), key=lambda i: members[i].name)
    stems = tool_stems(member.name for member in members)
    allocator = NameAllocator()
    roots = [_claim_roots(allocator, stems[members[i].name], members[i].has_output) for i in order]
    rebuilt: list[ir.Tool | None] = []
    warnings: dict[int, list[Diagnostic]] = {}
    leaf_unions: LeafUnions = {}
    for index, (args_name, output_name) in zip(order, roots, strict=True):
        member = members[index]
        root_count = 2 if member.has_output else 1
        own_roots = tuple(name for _, name in member.claims[:root_count])
        wanted = (args_name, output_name) if member.has_output else (args_name,)
        if own_roots == wanted and allocator.replay(member.claims[root_count:]):
            rebuilt.append(None)
            continue
        diagnostics: list[Diagnostic] = []
        builder = ToolBuilder(member.prepare(), allocator, diagnostics, leaf_unions)
        rebuilt.append(builder.build(stems[member.name], args_name, output_name))
        warnings[index] = diagnostics
    return Assembled(order, rebuilt, warnings)


def build_schema_types(schemas: Sequence[SchemaInput]) -> tuple[ir.Catalog, list[Diagnostic]]:
    """The types of plain JSON Schema documents, in the order given: each a "tool" whose
    `args` is its root type, named from its `name` (`type_base`: a title or a file name)
    and always declared (`Email: TypeAlias = str`). Nested types start from the root's name
    (`PersonAddress`); every `$defs` entry at the root is a type too, used or not, named by
    its key alone (`Address`). A document whose root allows any value but has `$defs` is a
    bundle of definitions: they alone are its types (its `args` is any value); a root that is
    only a `$ref` to the definition named like it is that definition (`_named_definition`).
    One allocator numbers a name taken twice (`Address2`). TypeScript's global types are
    not reserved here (`module_type_names`): the types go in a module of their own."""
    allocator = NameAllocator(module_type_names())
    roots = [  # every root's name claimed first; "" for a bundle, which declares no root
        "" if _is_bundle(schema.input.schema) else allocator.claim(type_base(schema.name, "Schema"))
        for schema in schemas
    ]
    diagnostics: list[Diagnostic] = []
    built = []
    leaf_unions: LeafUnions = {}
    for schema, name in zip(schemas, roots, strict=True):
        builder = ToolBuilder(schema, allocator, diagnostics, leaf_unions)
        root_name = name or type_base(schema.name, "Schema")  # a bundle's, never declared
        start = _named_definition(schema.input.schema, root_name) if name else None
        root = builder.root(
            schema.input, root_name, schema.input_pointer, root_name, "", True, start
        )
        if not name:
            builder.types = [t for t in builder.types if t.name != root_name]
            root = ANY
        builder.definitions(start)
        built.append(
            ir.Tool(
                name=schema.name,
                description=schema.description,
                title=schema.title,
                args=root,
                output=None,
                types=tuple(builder.types),
                schemas=ir.RawSchemas(schema.raw_input, None),
                source=schema.source,
            )
        )
    return ir.Catalog(tuple(built)), diagnostics


_BUNDLE_KEYS = DOC_KEYWORDS | {"$defs", "$vocabulary"}
"""What the root of a bundle of definitions holds: its `$defs` and documentation."""


def _named_definition(schema: Any, name: str) -> dict[str, Any] | None:
    """The `$defs` entry a root that is nothing but a `$ref` to it names, when the entry's
    key gives the root's own name (`{"$ref": "#/$defs/Person"}` in `person.json`): the root
    is that entry, declared once as `Person`, not `Person = Person2`."""
    if not isinstance(schema, dict) or not isinstance(schema.get("$ref"), str):
        return None
    if not all(key == "$ref" or key in _BUNDLE_KEYS or key.startswith("x-") for key in schema):
        return None
    prefix = "#/$defs/"
    ref: str = schema["$ref"]
    if not ref.startswith(prefix) or "/" in ref[len(prefix) :]:
        return None
    key = ref[len(prefix) :].replace("~1", "/").replace("~0", "~")
    entries = schema.get("$defs")
    entry = entries.get(key) if isinstance(entries, dict) else None
    if not isinstance(entry, dict) or type_base(key, "Def") != name:
        return None
    return entry


def _is_bundle(schema: Any) -> bool:
    return (
        isinstance(schema, dict)
        and isinstance(schema.get("$defs"), dict)
        and all(key in _BUNDLE_KEYS or key.startswith("x-") for key in schema)
    )


def build_type(schema: Any) -> ir.TypeNode:
    """One type for a schema with no naming context: objects become maps of any value.
    Nothing validated the schema, so its depth is checked first: normalizing a deeper one
    would keep a pointer per level, quadratic in the depth."""
    from ..load.json_text import MAX_NESTING, nesting_depth
    from ..normalize import normalize_schema

    if nesting_depth(schema) > MAX_NESTING:
        return ir.UnknownType(f"schema nested deeper than {MAX_NESTING} levels")
    tool = SchemaInput("schema", None, None, "<schema>", normalize_schema(schema), "", None, "")
    builder = ToolBuilder(tool, NameAllocator(frozenset()), [], {}, inline_objects=True)
    return builder.root(tool.input, "Schema", "", "Schema", "Schema")
