"""Build: normalized schemas to the frozen IR, with every type name decided here.

Takes normalized tool schemas and returns a `Catalog` plus warnings. A keyword that changes
a type but that no target can express (`not`, `if`/`then`/`else`, `dependentSchemas`, a remote
`$ref`, ...) degrades only the node that holds it to `UnknownType`, with a warning naming the
JSON pointer. Every name a tool's build claims starts with the tool's stem (`names`), so a
tool's names never depend on another tool (unless their stems coincide, which `tool_stems`
settles).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from .. import ir
from .._support import progress
from ..errors import Diagnostic, join_pointer
from ..identifiers import (
    STEM_SEPARATOR,
    NameAllocator,
    camel_case,
    module_type_names,
    plain_stem,
    tool_stems,
    type_base,
)
from ..normalize import DOC_KEYWORDS, TYPE_KEYWORDS, Normalized
from .doc_keywords import extract_docs, json_text, matches_every_key, merge_docs
from .identity import NodeTable, ShapeKeys
from .leaves import LeafUnions, plain_leaf_type
from .limits import (
    ARMS_LIMIT,
    DEPTH_LIMIT,
    INLINE_LIMIT,
    LITERAL_LIMIT,
    UNION_LIMIT,
    inline_depth,
    merge_budget,
    merge_weight,
    oversized_literal,
    unspellable,
)
from .merge import MergeConflict, merge_schemas
from .name_hints import arm_hints, home_hint
from .refs import RefResolver, Resolved
from .unions import PRIMITIVES, dedupe, union, widened

_COMPLETE = DEPTH_LIMIT + 1
"""`_ToolBuilder.lacking` when the node being built reached no cycle of unions back to a
node still being built (otherwise the outermost such node's depth)."""
_SIMPLE_ROOTS = (ir.RefType, ir.Primitive, ir.AnyType, ir.UnknownType, ir.NeverType)
"""Root types spelled inline in a signature; any other root type becomes a named alias."""
_MEASURED = (ir.UnionType, ir.ArrayType, ir.MapType, ir.TupleType)
"""Nodes whose spelling can outgrow a parser's limits (`_spellable`). Classes in a tuple, not
`A | B`, which would build a union object on every check."""
_SCALARS = (str, int, float, bool)
_DEGRADING = ("$dynamicRef", "$recursiveRef")
"""Keywords a type cannot follow. `not`, `if`/`then`/`else` and `dependentSchemas` only
narrow what the other keywords allow: the type is built from the others and a note states
the condition (`doc_keywords.narrowing_notes`); only `not: {}` (nothing) is `Never`."""
_DEGRADING_SET = frozenset(_DEGRADING)
_ANY = ir.AnyType()
"""The one any-type node the walk returns (IR nodes are immutable and compare by value): most
objects are open, and each would otherwise make its own for its extra keys."""
_KNOWN = frozenset(
    DOC_KEYWORDS
    | set().union(*TYPE_KEYWORDS.values())
    | {
        "type",
        "enum",
        "const",
        "$ref",
        "$defs",
        "definitions",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "$dynamicRef",
        "$recursiveRef",
        "$recursiveAnchor",
        "example",
        "nullable",
        "discriminator",
        "id",
        "dependencies",
        "dependentRequired",
        "unevaluatedProperties",
        "unevaluatedItems",
        "optional",
    }
)


class SchemaInput(NamedTuple):
    """One tool's schemas after normalization, with where they sit in their source."""

    name: str
    description: str | None
    title: str | None
    source: str
    input: Normalized
    input_pointer: str
    output: Normalized | None
    output_pointer: str
    annotations: Any = None
    raw_input: Any = None
    raw_output: Any = None


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
        builder = _ToolBuilder(tool, allocator, diagnostics, leaf_unions)
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
    builder = _ToolBuilder(tool, allocator, diagnostics, {})
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
        builder = _ToolBuilder(member.prepare(), allocator, diagnostics, leaf_unions)
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
        builder = _ToolBuilder(schema, allocator, diagnostics, leaf_unions)
        root_name = name or type_base(schema.name, "Schema")  # a bundle's, never declared
        start = _named_definition(schema.input.schema, root_name) if name else None
        root = builder.root(
            schema.input, root_name, schema.input_pointer, root_name, "", True, start
        )
        if not name:
            builder.types = [t for t in builder.types if t.name != root_name]
            root = _ANY
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
    builder = _ToolBuilder(tool, NameAllocator(frozenset()), [], {}, inline_objects=True)
    return builder.root(tool.input, "Schema", "", "Schema", "Schema")


class _Scope(NamedTuple):
    """The schema document being built: its resolver, origins and pointer in the source; the
    root's name, and the prefix its nested types' names start from (`Stem_Args`)."""

    normalized: Normalized
    resolver: RefResolver
    pointer: str
    root_name: str
    root_hint: str
    stem: str


class _ToolBuilder:
    """Builds one tool's types. What it remembers per schema node is keyed by the node's
    identity in `NodeTable`s, which hold the nodes they key, so an entry can never pass to
    another node allocated where a freed one was: that includes the nodes the build makes
    itself (union arms merged with the keywords beside them, `allOf` merges). `busy` and
    `levels` are plain dicts: an entry lives only while its node's frame is on the stack,
    which holds the node. (A plain class: a dataclass costs start-up time for no gain.)"""

    def __init__(
        self,
        tool: SchemaInput,
        allocator: NameAllocator,
        diagnostics: list[Diagnostic],
        leaf_unions: LeafUnions,
        inline_objects: bool = False,
    ) -> None:
        self.tool = tool
        self.leaf_unions = leaf_unions
        self.allocator = allocator
        self.diagnostics = diagnostics
        self.inline_objects = inline_objects
        self.types: list[ir.NamedType] = []
        self.names: NodeTable[str] = NodeTable()
        self.memo: NodeTable[ir.TypeNode] = NodeTable()
        self.depths: NodeTable[int] = NodeTable()
        self.busy: dict[int, int] = {}
        self.levels: dict[int, int] = {}
        self.merging: set[int] = set()
        """`$ref` targets whose keywords an `allOf` merge on the stack has taken in since the
        walk last entered a node of the document: being built as much as a `busy` node,
        though never walked themselves (`_being_built`)."""
        self.frames: list[int] = []
        self.lacking = _COMPLETE
        self.partial: NodeTable[tuple[ir.TypeNode, int]] = NodeTable()
        self.pending: dict[int, list[tuple[int, Any, ir.TypeNode]]] = {}
        self.containers = 0
        self.root_referenced = False
        self.aliased: NodeTable[str] = NodeTable()
        self.merged: NodeTable[dict[str, Any]] = NodeTable()
        self.merge_notes: NodeTable[tuple[str, ...]] = NodeTable()
        self.origins: NodeTable[str] = NodeTable()
        """Source pointers of the nodes the build made, beside `Normalized.origins`, which
        the build never writes."""
        self.shapes = ShapeKeys(())
        self.merged_arms: dict[Hashable, dict[str, Any] | None] = {}
        """Each union arm merged with the keywords beside its union, by the arm (or its
        `$ref`'s target) and those keywords (`shapes`): made once, so a merged node is
        walked once and named once however many merged unions reach it (None: dropped)."""
        self.merged_all_ofs: dict[Hashable, dict[str, Any]] = {}
        """The merge of each `allOf` node the build made, by its content (`_made_key`)."""
        self.merges = 0
        """Merges the build of the current document has made (`merge_weight`)."""
        self.merge_budget = 0
        """How many it may make (`limits.merge_budget`)."""
        self.checked: set[int] = set()
        """`allOf` merges whose unknown keywords were reported at their arms."""
        self.merge_limited: set[str] = set()
        """Pointers already warned of for the merge budget."""
        self.scope: _Scope | None = None

    # --- entry points ---------------------------------------------------------------------

    def build(self, stem: str, args_name: str, output_name: str) -> ir.Tool:
        tool = self.tool
        nested = stem + STEM_SEPARATOR
        args = self.root(tool.input, args_name, tool.input_pointer, nested + "Args", nested)
        output = (
            self.root(tool.output, output_name, tool.output_pointer, nested + "Output", nested)
            if tool.output is not None
            else None
        )
        return ir.Tool(
            name=tool.name,
            description=tool.description,
            title=tool.title,
            args=args,
            output=output,
            types=tuple(self.types),
            annotations=json_text(tool.annotations) if tool.annotations is not None else None,
            schemas=ir.RawSchemas(tool.raw_input, tool.raw_output),
            source=tool.source,
        )

    def root(
        self,
        normalized: Normalized,
        name: str,
        pointer: str,
        hint: str,
        defs_prefix: str,
        named: bool = False,
        start: Any = None,
    ) -> ir.TypeNode:
        """The root type `name`; its nested types' names start from `hint`, those of its
        `$defs` from `defs_prefix`. `named`: the root is a named type whatever it is (a
        plain schema's root: an alias even for a primitive). `start`: the node the root's
        type is built from, when not the document's root (the definition a root that is only
        a `$ref` names)."""
        resolver = RefResolver(normalized.schema)
        self.scope = _Scope(normalized, resolver, pointer, name, hint, defs_prefix)
        for table in (self.memo, self.depths, self.partial, self.aliased, self.names):
            if table:  # most are empty: a tool's first root, or a root of plain fields
                table.clear()
        self.busy.clear()
        self.levels.clear()
        self.merging.clear()
        self.frames.clear()
        self.lacking = _COMPLETE
        self.pending.clear()
        self.shapes = ShapeKeys(normalized.origins)
        self.merged_arms.clear()
        self.merged_all_ofs.clear()
        self.merges = 0
        self.merge_budget = merge_budget(len(normalized.origins))
        start = normalized.schema if start is None else start
        self.names.put(start, name)
        self.root_referenced = False
        result = self.node(start, hint, 0, home=True)
        if (isinstance(result, ir.RefType) and result.name == name) or self.inline_objects:
            return result
        if isinstance(result, _SIMPLE_ROOTS) and not self.root_referenced and not named:
            return result
        # Every other root gets its name too, so a tool's signature always reads
        # `(args: XArgs) -> XOutput` in every target.
        self.types.append(ir.AliasType(name, result, extract_docs(start)))
        return ir.RefType(name)

    def definitions(self, root: Any = None) -> None:
        """Every `$defs` entry at the root of the document `root` built last, as a named
        type whether the root uses it or not (a plain schema's types): an object is named
        as a reference to it names it, any other type gets an alias of that name. `root`:
        the entry the root's type was built from, already declared."""
        assert self.scope is not None
        entries = self.scope.normalized.schema.get("$defs")
        if not isinstance(entries, dict):
            return
        for key, entry in entries.items():
            if not isinstance(entry, dict) or entry is root:
                continue
            pointer = join_pointer("", "$defs", key)
            hint = home_hint(pointer, self.scope.root_hint, self.scope.stem)
            result = self.node(entry, hint, 0, home=True)
            if not isinstance(result, ir.RefType):
                alias = self.allocator.claim(hint)
                self.types.append(ir.AliasType(alias, result, extract_docs(entry)))

    # --- diagnostics ----------------------------------------------------------------------

    def where(self, node: Any, *tokens: str | int) -> str:
        assert self.scope is not None
        return join_pointer(self.scope.pointer + self.origin(node), *tokens)

    def origin(self, node: Any, fallback: str = "") -> str:
        """Where `node` came from in its schema document (the node it was made from, for a
        node the build made)."""
        assert self.scope is not None
        made = self.origins.get(id(node))
        return made if made is not None else self.scope.normalized.origin(node, fallback)

    def degrade(self, node: Any, keyword: str | None, reason: str) -> ir.UnknownType:
        """`node` becomes any value, with a warning at `node`'s `keyword` (or `node`)."""
        self.diagnostics.append(
            Diagnostic(
                self.tool.source,
                self.where(node) if keyword is None else self.where(node, keyword),
                f"{reason}; typed as any value",
                "warning",
            )
        )
        return ir.UnknownType(reason)

    def warn(self, node: Any, keyword: str, message: str) -> None:
        self.diagnostics.append(
            Diagnostic(self.tool.source, self.where(node, keyword), message, "warning")
        )

    # --- the walk ---------------------------------------------------------------------------

    def node(self, schema: Any, hint: str, inline: int, home: bool = False) -> ir.TypeNode:
        """The type of one normalized schema node; `hint` is the name it would take as a
        named type, `inline` how many inline containers enclose it."""
        if not isinstance(schema, dict):
            return _ANY
        leaf = self._leaf(schema)
        if leaf is not None:
            return leaf
        return self._walked(schema, hint, inline, home)

    def _walked(self, schema: dict[str, Any], hint: str, inline: int, home: bool) -> ir.TypeNode:
        """`node` for a dict that is not a plain leaf (or one the shortcut declined): the
        memo, cycle and depth bookkeeping around `_node`."""
        key = id(schema)
        if key in self.memo:
            result = self.memo[key]
            if inline and key not in self.depths:
                self.depths.put(schema, inline_depth(result))
            if inline and inline + self.depths[key] > INLINE_LIMIT:
                return self._too_deep(schema)
            return result
        if key in self.partial:
            # Built already, inside a cycle of unions whose head is still being built: the
            # same partial value again (the head's union gathers the rest), and whatever
            # reaches it is partial too.
            result, head = self.partial[key]
            if self.frames[head] != self.containers:
                # Reached through a container: a reference to the value it will have.
                if self.inline_objects:
                    return _ANY
                if key not in self.aliased:
                    self.aliased.put(schema, self.allocator.claim(hint))
                return ir.RefType(self.aliased[key])
            self.lacking = min(self.lacking, head)
            if inline and inline + inline_depth(result) > INLINE_LIMIT:
                return self._too_deep(schema)
            return result
        if key in self.busy:
            return self._cycle(schema, hint, self.busy[key] == self.containers)
        if len(self.busy) >= DEPTH_LIMIT:
            return self.degrade(schema, None, f"schema nested deeper than {DEPTH_LIMIT} levels")
        level = len(self.busy)
        self.busy[key] = self.containers
        self.levels[key] = level
        self.frames.append(self.containers)
        outer = self.lacking
        self.lacking = _COMPLETE
        merging = self.merging
        if merging and self._in_document(schema):
            self.merging = set()  # targets merged above may merge again below (`_in_document`)
        try:
            result = self._node(schema, hint, inline, home)
        finally:
            self.merging = merging
            del self.busy[key]
            del self.levels[key]
            self.frames.pop()
            head = self.lacking
            self.lacking = min(outer, head) if head < level else outer
        if isinstance(result, _MEASURED):
            result = self._spellable(schema, result)
        if head < level:
            # Part of a cycle of unions that reaches a node still being built: its value
            # is that node's, known once that node is built (`_settle`).
            self.partial.put(schema, (result, head))
            waiting = self.pending.setdefault(head, [])
            waiting.append((key, schema, result))
            for entry in self.pending.pop(level, ()):
                self.partial.put(entry[1], (self.partial[entry[0]][0], head))
                waiting.append(entry)
            return result
        raw = result
        if key in self.aliased:
            name = self.aliased[key]
            self.types.append(ir.AliasType(name, result, extract_docs(schema)))
            result = ir.RefType(name)
        self.memo.put(schema, result)
        if head == level:
            self._settle(level, raw, result)
        return result

    def _too_deep(self, schema: dict[str, Any]) -> ir.TypeNode:
        # A node built once and reached again, deeper, through a `$ref` or a shared
        # subschema: its containers would stack past the limit.
        return self.degrade(
            schema,
            None,
            f"containers nested deeper than {INLINE_LIMIT} levels through a reference",
        )

    def _settle(self, level: int, raw: ir.TypeNode, result: ir.TypeNode) -> None:
        """Every node of a cycle of unions admits the same values: once the cycle's
        outermost node is built (`raw`, spelled `result`), each node that waited for it
        takes that value; one that recursion through a container named gets its own alias
        of every arm (`A = string | B`, `B = number | A | list[B]`: `B` is `string | number
        | list[B]`), without itself as an arm."""
        for key, schema, own in self.pending.pop(level, ()):
            del self.partial[key]
            name = self.aliased.get(key)
            if name is None:
                self.memo.put(schema, result)
                continue
            value = union([own, raw])
            arms = value.arms if isinstance(value, ir.UnionType) else (value,)
            value = union([arm for arm in arms if arm != ir.RefType(name)])
            self.types.append(ir.AliasType(name, value, extract_docs(schema)))
            self.memo.put(schema, ir.RefType(name))

    def _spellable(self, schema: dict[str, Any], node: ir.TypeNode) -> ir.TypeNode:
        """`node`, or any value with a warning when its Python spelling would hold a union
        wider than `ARMS_LIMIT` or nest deeper than `EXPRESSION_LIMIT`: code that the
        parsers of Python or `pyright` would refuse is never emitted."""
        reason = unspellable(node)
        return node if reason is None else self.degrade(schema, None, reason)

    def _leaf(self, schema: Any) -> ir.TypeNode | None:
        """What the walk gives for a plain primitive node or a short union of them (most
        nodes of real catalogs: strings, numbers, booleans and their nullables), without
        its bookkeeping; None for any other node, or one too deep for the shortcut."""
        if len(self.busy) + 1 >= DEPTH_LIMIT:
            return None
        return plain_leaf_type(schema, self.leaf_unions)

    def _cycle(self, schema: dict[str, Any], hint: str, degenerate: bool) -> ir.TypeNode:
        """A node reached again while it is being built: objects already have a name;
        anything else becomes a named alias. A cycle that passes through no object or array
        (`X = X | string`, `{"$ref": "#"}`) adds no value to the type: it is never here, and
        the nodes built since this one wait for its value (`lacking`, `_settle`), so a cycle
        of unions (`A = string | B`, `B = number | A`) gives every member every arm."""
        if degenerate:
            self.lacking = min(self.lacking, self.levels[id(schema)])
            self.warn(
                schema,
                "$ref",
                "reference cycle through no object or array; the reference adds no value",
            )
            return ir.NeverType()
        if id(schema) in self.names:
            if self.scope is not None and self.names[id(schema)] == self.scope.root_name:
                self.root_referenced = True
            return ir.RefType(self.names[id(schema)])
        if self.inline_objects:
            return _ANY
        if id(schema) not in self.aliased:
            self.aliased.put(schema, self.allocator.claim(hint))
        return ir.RefType(self.aliased[id(schema)])

    def _node(self, schema: dict[str, Any], hint: str, inline: int, home: bool) -> ir.TypeNode:
        if not _KNOWN.issuperset(schema):
            self._check_keywords(schema)
        if "not" in schema and schema["not"] == {}:
            return ir.NeverType()  # nothing is valid, whatever the other keywords say
        if not _DEGRADING_SET.isdisjoint(schema):
            keyword = next(k for k in _DEGRADING if k in schema)
            return self.degrade(schema, keyword, f"{keyword!r} cannot be expressed")
        if "$ref" in schema:
            return self._ref(schema, inline)
        if "allOf" in schema:
            return self._all_of(schema, hint, inline, home)
        if "anyOf" in schema and "oneOf" in schema:
            return self.degrade(schema, "oneOf", "anyOf and oneOf on one node cannot be expressed")
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                alternatives = _required_alternatives(schema, keyword)
                if alternatives is not None:
                    return self._required_choice(schema, keyword, alternatives, hint, inline, home)
                return self._union(schema, keyword, hint, inline)
        if "const" in schema:
            return self._literal(schema, [schema["const"]])
        if isinstance(schema.get("enum"), list):
            return self._bounded(schema, "enum", self._literal(schema, schema["enum"]))
        kind = schema.get("type")
        if not isinstance(kind, str):
            kind = _inferred_type(schema)
        if kind in ("object", "array"):
            self.containers += 1
            try:
                if kind == "object":
                    return self._object(schema, hint, inline, home)
                return self._array(schema, hint, inline)
            finally:
                self.containers -= 1
        if kind in ("string", "number", "integer", "boolean", "null"):
            return PRIMITIVES[kind]
        return _ANY

    def _check_keywords(self, schema: dict[str, Any], place: Any = None) -> None:
        """A warning for each unknown keyword of `schema`, at `place` (the node of the
        document it was written in; `schema` itself by default). An `allOf` merge's are
        reported at its arms (`_all_of`), where they are written."""
        if place is None and id(schema) in self.checked:
            return
        for keyword in schema:
            if keyword not in _KNOWN and not keyword.startswith(("x-", "$")):
                where = schema if place is None else place
                self.warn(where, keyword, f"unknown keyword {keyword!r} ignored")

    # --- references -----------------------------------------------------------------------

    def _ref(self, schema: dict[str, Any], inline: int) -> ir.TypeNode:
        assert self.scope is not None
        ref = schema["$ref"]
        target = self.scope.resolver.resolve(ref) if isinstance(ref, str) else "bad $ref"
        if isinstance(target, str):
            return self.degrade(schema, "$ref", target)
        assert self.scope is not None
        hint = home_hint(target.pointer, self.scope.root_hint, self.scope.stem)
        return self.node(target.node, hint, inline, home=True)

    # --- combinators ----------------------------------------------------------------------

    def _all_of(
        self, schema: dict[str, Any], hint: str, inline: int, home: bool = False
    ) -> ir.TypeNode:
        assert self.scope is not None
        arms: list[dict[str, Any]] = [{k: v for k, v in schema.items() if k != "allOf"}]
        sources: list[Any] = [schema]  # the node of the document each arm comes from
        written: list[Any] = [schema]  # where its keywords are written (a `$ref`'s target)
        said = [schema.get("description")]  # descriptions written here, not a target's own
        owned: list[Any] = []  # the descriptions of the targets merged in
        # (arm, its node of the document, whether written here): taken, and spliced in,
        # at the front
        pending = deque((arm, arm, True) for arm in schema["allOf"])
        seen: set[int] = set()
        while pending:
            arm, source, here = pending.popleft()
            if arm is True or arm == {}:
                continue
            if not isinstance(arm, dict):
                return ir.NeverType()
            if "$ref" in arm:
                target = self.scope.resolver.resolve(arm["$ref"])
                if isinstance(target, str):
                    return self.degrade(schema, "allOf", target)
                if self._being_built(target.node):
                    return self.degrade(
                        schema, "allOf", "allOf through a recursive $ref cannot be merged"
                    )
                beside = {k: v for k, v in arm.items() if k != "$ref"}
                if here:
                    said.append(beside.get("description"))
                    if id(target.node) not in seen:
                        owned.append(target.node.get("description"))
                here = False  # what the target holds is its own
                if id(target.node) in seen:
                    # Reached again (a diamond: two arms sharing a base): its keywords are
                    # already in, and A and A is A. Only what stands beside this $ref is new.
                    if not beside:
                        continue
                    arm = beside
                else:
                    seen.add(id(target.node))
                    arm = {**target.node, **beside}
                    written.append(target.node)
            elif here:
                said.append(arm.get("description"))
            if "allOf" in arm:
                pending.extendleft((inner, inner, here) for inner in reversed(arm["allOf"]))
                arm = {k: v for k, v in arm.items() if k != "allOf"}
            arms.append(arm)
            sources.append(source)
            if len(written) < len(arms):
                written.append(source)
        merged = self._merged_all_of(schema, arms, sources, [*said, *owned])
        if not isinstance(merged, dict):
            return merged
        if not _KNOWN.issuperset(merged) and id(merged) not in self.checked:
            self.checked.add(id(merged))  # `origins` holds it, so its id is its own
            for arm, place in zip(arms, written, strict=True):
                self._check_keywords({k: v for k, v in arm.items() if k in place}, place)
        self.merged.put(schema, merged)
        if id(schema) in self.names:
            self.names.put(merged, self.names[id(schema)])
        return self._merged_node(merged, seen, hint, inline, home)

    def _merged_all_of(
        self,
        schema: dict[str, Any],
        arms: list[dict[str, Any]],
        sources: list[Any],
        said: list[Any],
    ) -> dict[str, Any] | ir.UnknownType | ir.NeverType:
        """The merge of an `allOf` node's (flattened) `arms`, each from the node of the
        document at the same index of `sources` (where a conflict is reported). Arms that
        contradict each other admit no value: never. Of the descriptions `said` (written at
        this node: its own, its arms', beside its `$ref`s; then those of the targets merged
        in, declared nowhere else), the first is the merged node's, the others its first
        notes. A node the build made (the `allOf` of a property two merged objects both
        declare) is merged once per distinct content (`merged_all_ofs`): merged objects
        that refer to each other crosswise make such nodes anew for every path,
        exponentially many."""
        key = self._made_key(schema)
        if key is not None and key in self.merged_all_ofs:
            return self.merged_all_ofs[key]
        spent = self._merges_spent(schema, "allOf")
        if spent is not None:
            return spent
        notes: list[str] = []
        try:
            merged = merge_schemas(arms, notes)
        except MergeConflict as conflict:
            source = sources[conflict.arm]
            if source is not schema and self._located(source):
                where = self.where(source)
            else:
                where = self.where(schema, "allOf")
            if not conflict.empty:
                self.diagnostics.append(
                    Diagnostic(
                        self.tool.source, where, f"{conflict}; typed as any value", "warning"
                    )
                )
                return ir.UnknownType(str(conflict))
            message = f"{conflict}, so no value is valid; typed as never"
            self.diagnostics.append(Diagnostic(self.tool.source, where, message, "warning"))
            return ir.NeverType()
        self.merges += merge_weight(merged)
        described = [t for t in dict.fromkeys(said) if isinstance(t, str) and t.strip()]
        if described:
            merged["description"] = described[0]  # a target's own yields to the place's
        described = described[1:]
        if notes or described:
            # sorted: which arm or keyword came first must not change the text
            self.merge_notes.put(merged, (*described, *sorted(dict.fromkeys(notes))))
        self.origins.put(merged, self.origin(schema))
        if key is not None:
            self.merged_all_ofs[key] = merged
        return merged

    def _located(self, node: Any) -> bool:
        """Whether `node` has a place of its own in the source (a node of the document, or
        one the build made and recorded)."""
        assert self.scope is not None
        return id(node) in self.origins or id(node) in self.scope.normalized.origins

    def _made_key(self, schema: dict[str, Any]) -> Hashable | None:
        """The content key of a node the build made and no name is decided for, which any
        other made node alike may share; None for a node of the document (its own place,
        memoized by identity) or a named one (its name belongs to its place)."""
        if self._in_document(schema) or id(schema) in self.names:
            return None
        return self.shapes.key(schema)

    def _merged_node(
        self, merged: dict[str, Any], targets: set[int], hint: str, inline: int, home: bool
    ) -> ir.TypeNode:
        """The type of an `allOf` merge that took in the `$ref` targets `targets`. While it
        is built they count as being built: a reference back to one inside it (`A = anyOf
        [A]` merged with the keywords beside a union) is a recursion, not a merge to make
        again, which would make a new node each time and never end."""
        self.merging.update(targets)
        try:
            return self.node(merged, hint, inline, home)
        finally:
            self.merging.difference_update(targets)

    def _being_built(self, node: Any) -> bool:
        """Whether `node` is being built: walked (`busy`) or merged into a node that is."""
        return id(node) in self.busy or id(node) in self.merging

    def _in_document(self, schema: dict[str, Any]) -> bool:
        """Whether `schema` is a node of the document, not one the build made. Each is on
        the stack at most once (`busy`), so a target merged above one may be merged again
        below it: a recursion through it meets it in `busy` and is named (`parent: allOf
        [Node]` inside `Node`), and since between two such nodes a target merges at most
        once, merges still nest a bounded number of levels."""
        assert self.scope is not None
        return id(schema) in self.scope.normalized.origins

    def _union(self, schema: dict[str, Any], keyword: str, hint: str, inline: int) -> ir.TypeNode:
        assert self.scope is not None
        arms_schemas = schema[keyword]
        if len(arms_schemas) > UNION_LIMIT:
            return self.degrade(
                schema,
                keyword,
                f"a union of {len(arms_schemas)} arms is larger than the limit of {UNION_LIMIT}",
            )
        kinds = sum(1 for arm in arms_schemas if not _literal_arm(arm))
        if kinds > ARMS_LIMIT:  # before building, so no named arm type is left unused
            return self.degrade(
                schema, keyword, f"a union of {kinds} arms is wider than the limit of {ARMS_LIMIT}"
            )
        base = {k: v for k, v in schema.items() if k != keyword and k not in _NOT_BESIDE}
        ref_names: dict[int, str] = {}
        if base:
            merged_arms = self._arms_with_base(schema, keyword, base, ref_names)
            if isinstance(merged_arms, ir.UnknownType):
                return merged_arms
            arms_schemas = merged_arms
        hints = arm_hints(hint, arms_schemas)
        if ref_names:
            hints = [
                hint + ref_names[id(arm)] if ref_names.get(id(arm)) else arm_hint
                for arm, arm_hint in zip(arms_schemas, hints, strict=True)
            ]
        arms = [
            self.node(arm, arm_hint, inline)
            for arm, arm_hint in zip(arms_schemas, hints, strict=True)
        ]
        return self._bounded(schema, keyword, union(arms))

    def _arms_with_base(
        self, schema: dict[str, Any], keyword: str, base: dict[str, Any], ref_names: dict[int, str]
    ) -> list[Any] | ir.UnknownType:
        """The arms of a union with the keywords beside it (`base`) merged into each, less
        those that contradict them; each `$ref` arm merged by `_all_of` gets the name of
        its target in `ref_names`. Each (arm, base) pair is merged once per build
        (`merged_arms`): merged unions over `$ref`s that fan out reach the same pair by
        many paths. Degraded when the schema's merge budget is spent."""
        shapes = _shapes_refs(base)
        base_key = self.shapes.items(base)
        merged_arms = []
        for arm in schema[keyword]:
            if not isinstance(arm, dict):
                merged_arms.append(arm)
                continue
            target = self._mergeable_target(arm) if shapes else None
            key = self._arm_key(arm, target, base_key)
            if key not in self.merged_arms:
                made = self._arm_with_base(schema, keyword, base, arm, target)
                if isinstance(made, ir.UnknownType):
                    return made
                self.merged_arms[key] = made
            combined = self.merged_arms[key]
            if combined is None:
                continue  # its type or const contradicts the base's: no value
            if target is not None:
                ref_names.setdefault(id(combined), camel_case(arm["$ref"].rpartition("/")[2]))
            merged_arms.append(combined)
        return merged_arms

    def _arm_key(
        self, arm: dict[str, Any], target: Resolved | None, base_key: Hashable
    ) -> Hashable:
        """What an arm merged with the keywords beside its union is made from: the arm
        and those keywords, or for a mergeable `$ref` its target, what stands beside the
        reference (documentation) and those keywords."""
        if target is None:
            return ("arm", self.shapes.key(arm), base_key)
        beside = tuple((k, self.shapes.key(v)) for k, v in arm.items() if k != "$ref")
        return ("ref", self.shapes.key(target.node), beside, base_key)

    def _arm_with_base(
        self,
        schema: dict[str, Any],
        keyword: str,
        base: dict[str, Any],
        arm: dict[str, Any],
        target: Resolved | None,
    ) -> dict[str, Any] | ir.UnknownType | None:
        """One arm of `schema`'s union with the keywords beside it (`base`) merged in; None
        when they contradict it, the union degraded when its merge budget is spent."""
        if target is not None:
            # The keywords beside the union hold in every arm, a referenced one too:
            # `allOf` merges the target with them (shared properties first).
            combined: dict[str, Any] | None = {"allOf": [base, arm]}
        else:
            spent = self._merges_spent(schema, keyword)
            if spent is not None:
                return spent
            combined = self._merged_arm(keyword, base, arm)
        if combined is not None:
            self.origins.put(combined, self.origin(arm, self.origin(schema)))
        return combined

    def _merged_arm(
        self, keyword: str, base: dict[str, Any], arm: dict[str, Any]
    ) -> dict[str, Any] | None:
        """A union arm that is not a mergeable `$ref`, with the keywords beside the union
        merged in; None when they contradict it (no value is both)."""
        try:
            # Keywords that cannot share one value (two `format`s) keep the base's: the
            # arm's own show in the union's notes (`extract_docs`).
            merged = merge_schemas([base, arm])
        except MergeConflict as conflict:
            if conflict.empty:
                return None
            # The arm admits values; typed alone, it admits more than it should rather
            # than losing valid calls.
            reason = str(conflict).replace("allOf arms disagree", "they disagree")
            self.diagnostics.append(
                Diagnostic(
                    self.tool.source,
                    self.where(arm),
                    f"the keywords beside {keyword} cannot be merged into this "
                    f"arm ({reason}); it is typed without them",
                    "warning",
                )
            )
            return arm
        self.merges += merge_weight(merged)
        return merged

    def _merges_spent(self, schema: dict[str, Any], keyword: str) -> ir.UnknownType | None:
        """None while the document's build has made fewer merges than its budget; past
        it, the node that needs one more degrades, with one warning per place (many merged
        paths can reach one place)."""
        if self.merges < self.merge_budget:
            return None
        reason = (
            f"more than {self.merge_budget} schema merges (allOf, keywords beside a union) "
            "in one schema, the limit for its size"
        )
        where = self.where(schema, keyword)
        if where in self.merge_limited:
            return ir.UnknownType(reason)
        self.merge_limited.add(where)
        return self.degrade(schema, keyword, reason)

    def _mergeable_target(self, arm: dict[str, Any]) -> Resolved | None:
        """The target of a union arm that is a local `$ref` `_all_of` can merge with the
        keywords beside the union: not one that is being built, or merged into a node that
        is (a recursive reference stays a reference)."""
        assert self.scope is not None
        ref = arm.get("$ref")
        if not isinstance(ref, str):
            return None
        target = self.scope.resolver.resolve(ref)
        if not isinstance(target, Resolved) or self._being_built(target.node):
            return None
        return target

    def _required_choice(
        self,
        schema: dict[str, Any],
        keyword: str,
        alternatives: list[list[str]],
        hint: str,
        inline: int,
        home: bool,
    ) -> ir.TypeNode:
        """An object whose `anyOf`/`oneOf` arms only list required keys (`"oneOf":
        [{"required": ["id"]}, {"required": ["name"]}]`): one type with those keys optional
        and a note saying which must be present, instead of one near-copy of the object
        per arm."""
        assert self.scope is not None
        stripped = {k: v for k, v in schema.items() if k != keyword}
        self.origins.put(stripped, self.origin(schema))
        if id(schema) in self.names:
            self.names.put(stripped, self.names[id(schema)])
        result = self.node(stripped, hint, inline, home)
        if not isinstance(result, ir.RefType):
            return result
        for index in range(len(self.types) - 1, -1, -1):
            named = self.types[index]
            if isinstance(named, ir.ObjectType) and named.name == result.name:
                note = _choice_note(keyword, alternatives)
                docs = replace(named.docs, notes=(*named.docs.notes, note))
                self.types[index] = replace(named, docs=docs)
                break
        return result

    def _bounded(self, schema: dict[str, Any], keyword: str, node: ir.TypeNode) -> ir.TypeNode:
        """`node` with a literal of more than `LITERAL_LIMIT` values widened to the types of
        its values, with a warning."""
        literal = oversized_literal(node)
        if literal is None:
            return node
        arms = node.arms if isinstance(node, ir.UnionType) else (node,)
        self.warn(
            schema,
            keyword,
            f"{len(literal.values)} literal values are more than the limit of {LITERAL_LIMIT}; "
            "typed by the types of the values",
        )
        return union([widened(literal.values) if arm is literal else arm for arm in arms])

    def _literal(self, schema: dict[str, Any], values: list[Any]) -> ir.TypeNode:
        scalars = [v for v in values if v is None or isinstance(v, _SCALARS)]
        others = [v for v in values if not (v is None or isinstance(v, _SCALARS))]
        if not others:
            return ir.LiteralType(tuple(dedupe(scalars))) if scalars else ir.NeverType()
        kinds: list[ir.TypeNode] = [ir.LiteralType(tuple(dedupe(scalars)))] if scalars else []
        if any(isinstance(v, list) for v in others):
            kinds.append(ir.ArrayType(_ANY))
        if any(isinstance(v, dict) for v in others):
            kinds.append(ir.MapType(_ANY))
        return union(kinds)

    # --- containers -----------------------------------------------------------------------

    def _array(self, schema: dict[str, Any], hint: str, inline: int) -> ir.TypeNode:
        if inline >= INLINE_LIMIT:
            return self.degrade(schema, "items", f"arrays nested deeper than {INLINE_LIMIT} levels")
        prefix = schema.get("prefixItems")
        items = schema.get("items", True)
        if self.scope is not None and hint == self.scope.root_hint:
            hint += "Item"  # the root's own name goes to the alias of the whole array
        if isinstance(prefix, list):
            built = tuple(
                self.node(arm, f"{hint}{i + 1}", inline + 1) for i, arm in enumerate(prefix)
            )
            max_items = schema.get("maxItems")
            closed = (
                items is False
                or items == {"not": {}}
                or (isinstance(max_items, int) and max_items <= len(prefix))
            )
            rest = None if closed else self.node(items, hint, inline + 1)
            minimum = schema.get("minItems", 0)
            minimum = min(minimum, len(prefix)) if isinstance(minimum, int) else 0
            return ir.TupleType(built, max(minimum, 0), rest)
        if items is False or items == {"not": {}}:
            return ir.TupleType((), 0, None)
        return ir.ArrayType(self.node(items, hint, inline + 1))

    def _prefix(self, name: str) -> str:
        """What the names of an object's field types start from: its name, or for the root
        (`StemArgs`) the root's hint (`Stem_Args`), which keeps the stem's separator."""
        assert self.scope is not None
        return self.scope.root_hint if name == self.scope.root_name else name

    def _object(self, schema: dict[str, Any], hint: str, inline: int, home: bool) -> ir.TypeNode:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        extra = self._extra(schema, hint, inline)
        if self.inline_objects or (not properties and extra is not None):
            if inline >= INLINE_LIMIT:
                return self.degrade(
                    schema, "additionalProperties", f"maps nested deeper than {INLINE_LIMIT} levels"
                )
            return ir.MapType(_ANY if extra is None or self.inline_objects else extra)
        name = self.names.get(id(schema)) or self.allocator.claim(hint)
        self.names.put(schema, name)
        required = schema.get("required")
        required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
        required_keys = frozenset(required)  # a set: `in` on the list is quadratic
        fields = []
        for key, prop in properties.items():
            leaf = self._leaf(prop)
            if leaf is not None:  # before naming a type it will not need
                fields.append(ir.Field(key, leaf, key in required_keys, extract_docs(prop)))
                continue
            field_hint = self._prefix(name) + (camel_case(key) or "Field")
            # `_leaf` has just declined `prop`: the walk proper, not `node`, which would ask again
            field_type = (
                self._walked(prop, field_hint, 0, False) if isinstance(prop, dict) else _ANY
            )
            merged = self.merged.get(id(prop), prop)
            docs = extract_docs(merged, self.merge_notes.get(id(merged), ()))
            if isinstance(prop, dict) and "$ref" in prop:
                target = self.scope.resolver.resolve(prop["$ref"]) if self.scope else None
                if isinstance(target, Resolved) and target.node is not prop:
                    docs = merge_docs(docs, extract_docs(target.node))
            fields.append(ir.Field(key, field_type, key in required_keys, docs))
        for key in required:
            if key in properties:
                continue
            if extra is None:
                self.warn(
                    schema,
                    "required",
                    f"required key {key!r} is not in properties and the object is closed",
                )
                continue
            fields.append(
                ir.Field(key, extra, True, ir.Docs(notes=("required but not described",)))
            )
        docs = extract_docs(schema, self.merge_notes.get(id(schema), ())) if home else ir.EMPTY_DOCS
        self.types.append(ir.ObjectType(name, tuple(fields), extra, docs))
        return ir.RefType(name)

    def _extra(self, schema: dict[str, Any], hint: str, inline: int) -> ir.TypeNode | None:
        """Type of undeclared keys: None when closed."""
        additional = schema.get("additionalProperties", schema.get("unevaluatedProperties", True))
        patterns = schema.get("patternProperties")
        pattern_types = (
            [self.node(s, f"{hint}Value", inline + 1) for s in patterns.values()]
            if isinstance(patterns, dict)
            else []
        )
        if additional is False or additional == {"not": {}}:
            if not pattern_types:
                return None
            return self._bounded(schema, "patternProperties", union(pattern_types))
        if additional is True or additional == {}:
            if isinstance(patterns, dict) and any(map(matches_every_key, patterns)):
                # Every key matches such a pattern, so every value is one of its values.
                return self._bounded(schema, "patternProperties", union(pattern_types))
            return _ANY
        value = self.node(additional, f"{hint}Value", inline + 1)
        if not pattern_types:
            return value
        return self._bounded(schema, "patternProperties", union([*pattern_types, value]))


_NOT_BESIDE = DOC_KEYWORDS | {"$defs", "definitions"}
"""Keywords of a union's node that its arms do not take in: documentation, and the
definitions a `$ref` finds in the document, never in a merged node (copied into every
merge, they would cost each one their size)."""
_REF_NEUTRAL = frozenset({"type", "discriminator"})
"""Keywords beside a union that a referenced arm needs no merging for."""


def _shapes_refs(base: dict[str, Any]) -> bool:
    """Whether the keywords beside a union say more than a referenced arm already does
    (properties, `required`, bounds): then each `$ref` arm is merged with them."""
    return any(k not in _REF_NEUTRAL and not k.startswith("x-") for k in base)


def _required_alternatives(schema: dict[str, Any], keyword: str) -> list[list[str]] | None:
    """The key sets of a union whose arms say nothing but `required` (each naming at least
    one key), on a node that declares properties; None for any other union."""
    arms = schema.get(keyword)
    properties = schema.get("properties")
    if not isinstance(arms, list) or not arms or not isinstance(properties, dict) or not properties:
        return None
    alternatives = []
    for arm in arms:
        if not isinstance(arm, dict) or arm.keys() != {"required"}:
            return None
        keys = arm["required"]
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
            return None
        alternatives.append(list(dict.fromkeys(keys)))
    return alternatives


def _choice_note(keyword: str, alternatives: list[list[str]]) -> str:
    """`exactly one of "a", "b" is required` (`oneOf`) or `at least one of ...` (`anyOf`)."""
    quantity = "exactly one" if keyword == "oneOf" else "at least one"
    if all(len(keys) == 1 for keys in alternatives):
        listed = ", ".join(json_text(keys[0]) for keys in alternatives)
        return f"{quantity} of {listed} is required"
    listed = "; ".join(" and ".join(json_text(k) for k in keys) for keys in alternatives)
    return f"{quantity} of these key sets is required: {listed}"


def _inferred_type(schema: dict[str, Any]) -> str | None:
    """The type a node without `type` clearly means: the one family its keywords belong to."""
    families = {
        kind
        for kind, keywords in TYPE_KEYWORDS.items()
        if kind != "integer" and any(k in schema for k in keywords)
    }
    if "format" in schema and len(families) > 1:
        families.discard("string")
    return families.pop() if len(families) == 1 else None


def _literal_arm(schema: Any) -> bool:
    """Whether a union arm is a `const` or `enum`, which fold into one literal arm."""
    return isinstance(schema, dict) and ("const" in schema or isinstance(schema.get("enum"), list))
