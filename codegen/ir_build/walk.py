"""The walk: what one tool's build remembers and how it goes from node to node (`Walk`);
`combining` (allOf merges, unions) and `shaping` (objects, arrays, literals) extend it, and
`builder.ToolBuilder` is the three together."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, NamedTuple

from .. import ir
from ..errors import Diagnostic, join_pointer
from ..identifiers import (
    STEM_SEPARATOR,
    NameAllocator,
)
from ..normalize import DOC_KEYWORDS, TYPE_KEYWORDS, Normalized
from .doc_keywords import extract_docs, json_text
from .identity import NodeTable, ShapeKeys
from .leaves import LeafUnions, plain_leaf_type
from .limits import (
    DEPTH_LIMIT,
    INLINE_LIMIT,
    inline_depth,
    merge_budget,
    unspellable,
)
from .name_hints import home_hint
from .refs import RefResolver
from .unions import PRIMITIVES, union

_COMPLETE = DEPTH_LIMIT + 1
"""`_ToolBuilder.lacking` when the node being built reached no cycle of unions back to a
node still being built (otherwise the outermost such node's depth)."""
_SIMPLE_ROOTS = (ir.RefType, ir.Primitive, ir.AnyType, ir.UnknownType, ir.NeverType)
"""Root types spelled inline in a signature; any other root type becomes a named alias."""
_MEASURED = (ir.UnionType, ir.ArrayType, ir.MapType, ir.TupleType)
"""Nodes whose spelling can outgrow a parser's limits (`_spellable`). Classes in a tuple, not
`A | B`, which would build a union object on every check."""
SCALARS = (str, int, float, bool)
_DEGRADING = ("$dynamicRef", "$recursiveRef")
"""Keywords a type cannot follow. `not`, `if`/`then`/`else` and `dependentSchemas` only
narrow what the other keywords allow: the type is built from the others and a note states
the condition (`doc_keywords.narrowing_notes`); only `not: {}` (nothing) is `Never`."""
_DEGRADING_SET = frozenset(_DEGRADING)
ANY = ir.AnyType()
"""The one any-type node the walk returns (IR nodes are immutable and compare by value): most
objects are open, and each would otherwise make its own for its extra keys."""
KNOWN = frozenset(
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


class _Scope(NamedTuple):
    """The schema document being built: its resolver, origins and pointer in the source; the
    root's name, and the prefix its nested types' names start from (`Stem_Args`)."""

    normalized: Normalized
    resolver: RefResolver
    pointer: str
    root_name: str
    root_hint: str
    stem: str


class Walk:
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
            return ANY
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
                    return ANY
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
            return ANY
        if id(schema) not in self.aliased:
            self.aliased.put(schema, self.allocator.claim(hint))
        return ir.RefType(self.aliased[id(schema)])

    def _node(self, schema: dict[str, Any], hint: str, inline: int, home: bool) -> ir.TypeNode:
        if not KNOWN.issuperset(schema):
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
        return ANY

    def _check_keywords(self, schema: dict[str, Any], place: Any = None) -> None:
        """A warning for each unknown keyword of `schema`, at `place` (the node of the
        document it was written in; `schema` itself by default). An `allOf` merge's are
        reported at its arms (`_all_of`), where they are written."""
        if place is None and id(schema) in self.checked:
            return
        for keyword in schema:
            if keyword not in KNOWN and not keyword.startswith(("x-", "$")):
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

    # --- containers -----------------------------------------------------------------------

    def _prefix(self, name: str) -> str:
        """What the names of an object's field types start from: its name, or for the root
        (`StemArgs`) the root's hint (`Stem_Args`), which keeps the stem's separator."""
        assert self.scope is not None
        return self.scope.root_hint if name == self.scope.root_name else name

    # --- what the combinators and the shapes define (`combining`, `shaping`) -----------

    def _all_of(
        self, schema: dict[str, Any], hint: str, inline: int, home: bool = False
    ) -> ir.TypeNode:
        """(`combining`)"""
        raise NotImplementedError

    def _array(self, schema: dict[str, Any], hint: str, inline: int) -> ir.TypeNode:
        """(`shaping`)"""
        raise NotImplementedError

    def _bounded(self, schema: dict[str, Any], keyword: str, node: ir.TypeNode) -> ir.TypeNode:
        """(`shaping`)"""
        raise NotImplementedError

    def _literal(self, schema: dict[str, Any], values: list[Any]) -> ir.TypeNode:
        """(`shaping`)"""
        raise NotImplementedError

    def _object(self, schema: dict[str, Any], hint: str, inline: int, home: bool) -> ir.TypeNode:
        """(`shaping`)"""
        raise NotImplementedError

    def _required_choice(
        self,
        schema: dict[str, Any],
        keyword: str,
        alternatives: list[list[str]],
        hint: str,
        inline: int,
        home: bool,
    ) -> ir.TypeNode:
        """(`combining`)"""
        raise NotImplementedError

    def _union(self, schema: dict[str, Any], keyword: str, hint: str, inline: int) -> ir.TypeNode:
        """(`combining`)"""
        raise NotImplementedError


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
