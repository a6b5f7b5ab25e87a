"""Finding the differences on the IR: named types matched by place and structure, never by
their generated names; arguments and outputs break in opposite directions (the table in
`workflow.diff`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ... import ir
from ..._support import progress as reports
from .changes import CatalogDiff, Change, Part, ToolDiff

_Named = Mapping[str, ir.NamedType]
_Resolved = ir.TypeNode | ir.ObjectType


def _named(catalog: ir.Catalog) -> dict[str, ir.NamedType]:
    return {named.name: named for named in catalog.types}


def _deref(node: ir.TypeNode, types: _Named) -> _Resolved:
    """Follow references and aliases to an object type or a structural node."""
    seen: set[str] = set()
    current: ir.TypeNode = node
    while isinstance(current, ir.RefType) and current.name not in seen:
        seen.add(current.name)
        named = types.get(current.name)
        if named is None:
            return current
        if isinstance(named, ir.ObjectType):
            return named
        current = named.target
    return current


def scalar_text(value: ir.Scalar) -> str:
    return json.dumps(value, ensure_ascii=False)


def _literal_kind(value: ir.Scalar) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


class _Shapes:
    """Canonical text of a type's structure (names left out), so types can be compared
    and union arms matched whatever the generated names are."""

    def __init__(self, types: _Named) -> None:
        self.types = types
        self.cache: dict[str, str] = {}

    def of(self, node: ir.TypeNode, stack: tuple[str, ...] = ()) -> str:
        """`stack` holds the names being spelled; a reference back into it is written as
        its distance (`@1` is the innermost), which is the same whatever the names are."""
        if not isinstance(node, ir.RefType):
            return self._node(node, stack)
        if node.name in stack:
            return f"@{len(stack) - stack.index(node.name)}"
        if not stack and node.name in self.cache:
            return self.cache[node.name]
        named = self.types.get(node.name)
        inner = (*stack, node.name)
        if named is None:
            text = f"ref({node.name})"
        elif isinstance(named, ir.AliasType):
            text = self.of(named.target, inner)
        else:
            fields = ",".join(
                f"{json.dumps(f.key)}{'' if f.required else '?'}:{self.of(f.type, inner)}"
                for f in sorted(named.fields, key=lambda f: f.key)
            )
            extra = "closed" if named.extra is None else self.of(named.extra, inner)
            text = f"{{{fields};{extra}}}"
        if not stack:
            self.cache[node.name] = text
        return text

    def _node(self, node: ir.TypeNode, stack: tuple[str, ...]) -> str:
        if isinstance(node, ir.Primitive):
            return node.kind
        if isinstance(node, ir.AnyType | ir.UnknownType):
            return "any"
        if isinstance(node, ir.NeverType):
            return "never"
        if isinstance(node, ir.LiteralType):
            return "literal(" + ",".join(sorted(scalar_text(v) for v in node.values)) + ")"
        if isinstance(node, ir.ArrayType):
            return f"array<{self.of(node.items, stack)}>"
        if isinstance(node, ir.MapType):
            return f"map<{self.of(node.values, stack)}>"
        if isinstance(node, ir.TupleType):
            items = ",".join(self.of(item, stack) for item in node.items)
            rest = "closed" if node.rest is None else self.of(node.rest, stack)
            return f"tuple<{items};{node.min_items};{rest}>"
        if isinstance(node, ir.UnionType):
            return "union(" + "|".join(sorted(self.of(arm, stack) for arm in node.arms)) + ")"
        raise AssertionError(f"unexpected IR node {node!r}")  # pragma: no cover


def spell(node: ir.TypeNode, types: _Named, depth: int = 0) -> str:
    """A short, target-neutral spelling of a type for the report: objects are `object`,
    because their generated names mean nothing to a reviewer."""
    resolved = _deref(node, types)
    if depth > 8:
        return "…"
    if isinstance(resolved, ir.ObjectType):
        return "object"
    if isinstance(resolved, ir.LiteralType):
        return " | ".join(scalar_text(v) for v in resolved.values)
    if isinstance(resolved, ir.ArrayType):
        inner = spell(resolved.items, types, depth + 1)
        return f"array<{inner}>"
    if isinstance(resolved, ir.MapType):
        return f"map<{spell(resolved.values, types, depth + 1)}>"
    if isinstance(resolved, ir.TupleType):
        items = ", ".join(spell(item, types, depth + 1) for item in resolved.items)
        return f"[{items}{', …' if resolved.rest is not None else ''}]"
    if isinstance(resolved, ir.UnionType):
        return " | ".join(spell(arm, types, depth + 1) for arm in resolved.arms)
    if isinstance(resolved, ir.UnknownType):
        return "any"
    return ir.type_text(resolved)


def _arms(
    node: ir.TypeNode, types: _Named, seen: frozenset[str] = frozenset()
) -> list[ir.TypeNode]:
    """The arms of a union, nested unions and aliases of unions flattened."""
    if isinstance(node, ir.RefType):
        if node.name in seen:
            return [node]
        seen = seen | {node.name}
    resolved = _deref(node, types)
    if isinstance(resolved, ir.UnionType):
        arms: list[ir.TypeNode] = []
        for arm in resolved.arms:
            arms.extend(_arms(arm, types, seen))
        return arms
    return [node]


def _widening_breaks(part: Part) -> bool:
    """Accepting more breaks no caller of an argument but every reader of an output."""
    return part == "output"


class _Comparer:
    """Compares one tool's old and new types, collecting `Change`s in schema order."""

    def __init__(self, old_types: _Named, new_types: _Named, old: _Shapes, new: _Shapes) -> None:
        self.old_types = old_types
        self.new_types = new_types
        self.old_shapes = old
        self.new_shapes = new
        self.changes: list[Change] = []
        self.seen: set[tuple[str, str, Part]] = set()

    def add(self, kind: str, breaking: bool, part: Part, path: tuple[str, ...], **kw: Any) -> None:
        self.changes.append(Change(kind, breaking, part, path, **kw))

    def compare(
        self, old: ir.TypeNode, new: ir.TypeNode, part: Part, path: tuple[str, ...]
    ) -> None:
        if isinstance(old, ir.RefType) and isinstance(new, ir.RefType):
            key = (old.name, new.name, part)
            if key in self.seen:  # recursion: each pair of named types is compared once
                return
            self.seen.add(key)
        o = _deref(old, self.old_types)
        n = _deref(new, self.new_types)
        if isinstance(o, ir.ObjectType) and isinstance(n, ir.ObjectType):
            self.objects(o, n, part, path)
            return
        if self.old_shapes.of(old) == self.new_shapes.of(new):
            return
        if isinstance(o, ir.UnionType) or isinstance(n, ir.UnionType):
            self.unions(old, new, part, path)
        elif isinstance(o, ir.LiteralType) and isinstance(n, ir.LiteralType):
            self.literals(o, n, part, path)
        elif isinstance(o, ir.ArrayType) and isinstance(n, ir.ArrayType):
            self.compare(o.items, n.items, part, (*path, "[]"))
        elif isinstance(o, ir.MapType) and isinstance(n, ir.MapType):
            self.compare(o.values, n.values, part, (*path, "{}"))
        elif (
            isinstance(o, ir.TupleType)
            and isinstance(n, ir.TupleType)
            and len(o.items) == len(n.items)
            and o.min_items == n.min_items
            and (o.rest is None) == (n.rest is None)
        ):
            for index, (a, b) in enumerate(zip(o.items, n.items, strict=True)):
                self.compare(a, b, part, (*path, f"[{index}]"))
            if o.rest is not None and n.rest is not None:
                self.compare(o.rest, n.rest, part, (*path, f"[{len(o.items)}:]"))
        else:
            self.retyped(old, new, part, path)

    def retyped(
        self, old: ir.TypeNode, new: ir.TypeNode, part: Part, path: tuple[str, ...]
    ) -> None:
        """A type that is neither the same structure nor one of the cases above: widened,
        narrowed, or simply changed."""
        width = self._width(old, new)
        texts = {"old": spell(old, self.old_types), "new": spell(new, self.new_types)}
        if width == "wider":
            self.add("type-widened", _widening_breaks(part), part, path, **texts)
        elif width == "narrower":
            self.add("type-narrowed", not _widening_breaks(part), part, path, **texts)
        else:
            self.add("type-changed", True, part, path, **texts)

    def _width(self, old: ir.TypeNode, new: ir.TypeNode) -> str | None:
        o = _deref(old, self.old_types)
        n = _deref(new, self.new_types)
        if isinstance(n, ir.AnyType | ir.UnknownType):
            return "wider"
        if isinstance(o, ir.AnyType | ir.UnknownType):
            return "narrower"
        if isinstance(o, ir.Primitive) and isinstance(n, ir.Primitive):
            if (o.kind, n.kind) == ("integer", "number"):
                return "wider"
            if (o.kind, n.kind) == ("number", "integer"):
                return "narrower"
        if (
            isinstance(o, ir.LiteralType)
            and isinstance(n, ir.Primitive)
            and all(_fits(v, n.kind) for v in o.values)
        ):
            return "wider"
        if (
            isinstance(o, ir.Primitive)
            and isinstance(n, ir.LiteralType)
            and all(_fits(v, o.kind) for v in n.values)
        ):
            return "narrower"
        return None

    def literals(
        self, old: ir.LiteralType, new: ir.LiteralType, part: Part, path: tuple[str, ...]
    ) -> None:
        old_keys = {scalar_text(v): v for v in old.values}
        new_keys = {scalar_text(v): v for v in new.values}
        removed = tuple(v for k, v in old_keys.items() if k not in new_keys)
        added = tuple(v for k, v in new_keys.items() if k not in old_keys)
        if removed and added:
            self.add("enum-changed", True, part, path, added=added, removed=removed)
        elif removed:
            self.add("enum-narrowed", not _widening_breaks(part), part, path, removed=removed)
        elif added:
            self.add("enum-widened", _widening_breaks(part), part, path, added=added)

    def unions(self, old: ir.TypeNode, new: ir.TypeNode, part: Part, path: tuple[str, ...]) -> None:
        """Arms are matched by structure; an arm that changed in place (the one object of
        `Options | null`, say) is compared field by field instead of reported as a swap."""
        old_arms = {self.old_shapes.of(arm): arm for arm in _arms(old, self.old_types)}
        new_arms = {self.new_shapes.of(arm): arm for arm in _arms(new, self.new_types)}
        removed = [arm for shape, arm in old_arms.items() if shape not in new_arms]
        added = [arm for shape, arm in new_arms.items() if shape not in old_arms]
        if len(removed) == 1 and len(added) == 1:
            a, b = _deref(removed[0], self.old_types), _deref(added[0], self.new_types)
            if type(a) is type(b) and not isinstance(a, ir.Primitive):
                self.compare(removed[0], added[0], part, path)
                return
        old_literals = [_deref(a, self.old_types) for a in removed]
        new_literals = [_deref(a, self.new_types) for a in added]
        if (
            len(old_literals) == len(new_literals) == 1
            and isinstance(old_literals[0], ir.LiteralType)
            and isinstance(new_literals[0], ir.LiteralType)
        ):
            self.literals(old_literals[0], new_literals[0], part, path)
            return
        if not removed:
            width = "wider"
        elif not added:
            width = "narrower"
        else:
            width = None
        texts = {"old": spell(old, self.old_types), "new": spell(new, self.new_types)}
        if width == "wider":
            self.add("type-widened", _widening_breaks(part), part, path, **texts)
        elif width == "narrower":
            self.add("type-narrowed", not _widening_breaks(part), part, path, **texts)
        else:
            self.retyped(old, new, part, path)

    def objects(
        self, old: ir.ObjectType, new: ir.ObjectType, part: Part, path: tuple[str, ...]
    ) -> None:
        old_fields = {f.key: f for f in old.fields}
        new_fields = {f.key: f for f in new.fields}
        output = part == "output"
        for item in new.fields:
            where = (*path, item.key)
            before = old_fields.get(item.key)
            if before is None:
                kind = "field-added-required" if item.required else "field-added-optional"
                self.add(
                    kind,
                    item.required and not output,
                    part,
                    where,
                    new=spell(item.type, self.new_types),
                )
                continue
            if before.required and not item.required:
                self.add("field-optional", output, part, where)
            elif item.required and not before.required:
                self.add("field-required", not output, part, where)
            self.compare(before.type, item.type, part, where)
            self.docs(before.docs, item.docs, part, where)
        for item in old.fields:
            if item.key not in new_fields:
                self.add(
                    "field-removed",
                    True,
                    part,
                    (*path, item.key),
                    old=spell(item.type, self.old_types),
                )
        if old.extra is not None and new.extra is None:
            self.add("extra-closed", not output, part, path)
        elif old.extra is None and new.extra is not None:
            self.add("extra-opened", False, part, path)
        elif old.extra is not None and new.extra is not None:
            self.compare(old.extra, new.extra, part, (*path, "*"))

    def docs(self, old: ir.Docs, new: ir.Docs, part: Part, path: tuple[str, ...]) -> None:
        if old.description != new.description or old.title != new.title:
            self.add("field-description", False, part, path)
        if old.default != new.default:
            self.add("field-default", False, part, path, old=old.default, new=new.default)
        if old.deprecated != new.deprecated:
            kind = "field-deprecated" if new.deprecated else "field-undeprecated"
            self.add(kind, False, part, path)


def _fits(value: ir.Scalar, kind: str) -> bool:
    literal = _literal_kind(value)
    return literal == kind or (literal == "integer" and kind == "number")


def _annotations(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError:  # pragma: no cover - the IR stores valid JSON
        return {"": text}
    return value if isinstance(value, dict) else {"": value}


def compare_tools(
    old: ir.Tool,
    new: ir.Tool,
    old_types: _Named,
    new_types: _Named,
    old_shapes: _Shapes,
    new_shapes: _Shapes,
) -> tuple[Change, ...]:
    """Every difference between two versions of one tool."""
    comparer = _Comparer(old_types, new_types, old_shapes, new_shapes)
    if old.title != new.title:
        comparer.add("title-changed", False, "tool", (), old=old.title, new=new.title)
    if old.description != new.description:
        comparer.add("description-changed", False, "tool", ())
    old_notes, new_notes = _annotations(old.annotations), _annotations(new.annotations)
    for key in sorted(old_notes.keys() | new_notes.keys()):
        if old_notes.get(key) != new_notes.get(key):
            comparer.add(
                "annotation-changed",
                False,
                "tool",
                (key,),
                old=None if key not in old_notes else json.dumps(old_notes[key]),
                new=None if key not in new_notes else json.dumps(new_notes[key]),
            )
    comparer.compare(old.args, new.args, "args", ())
    if old.output is None and new.output is not None:
        comparer.add("output-added", False, "output", (), new=spell(new.output, new_types))
    elif old.output is not None and new.output is None:
        comparer.add("output-removed", True, "output", (), old=spell(old.output, old_types))
    elif old.output is not None and new.output is not None:
        comparer.compare(old.output, new.output, "output", ())
    return tuple(comparer.changes)


def diff_catalogs(old: ir.Catalog, new: ir.Catalog) -> CatalogDiff:
    """Tools matched by name; every difference found, in a deterministic order (each tool
    counted when a run's progress is reported)."""
    old_tools = {tool.name: tool for tool in old.tools}
    new_tools = {tool.name: tool for tool in new.tools}
    old_types, new_types = _named(old), _named(new)
    old_shapes, new_shapes = _Shapes(old_types), _Shapes(new_types)
    names = sorted(old_tools.keys() | new_tools.keys())
    tools: list[ToolDiff] = []
    unchanged = 0
    reports.begin("comparing tools", len(names))
    for name in names:
        reports.advance()
        before, after = old_tools.get(name), new_tools.get(name)
        if before is None and after is not None:
            tools.append(ToolDiff(name, "added", (Change("tool-added", False, "tool"),)))
        elif after is None and before is not None:
            tools.append(ToolDiff(name, "removed", (Change("tool-removed", True, "tool"),)))
        elif before is not None and after is not None:
            changes = compare_tools(before, after, old_types, new_types, old_shapes, new_shapes)
            if changes:
                tools.append(ToolDiff(name, "changed", changes))
            else:
                unchanged += 1
    return CatalogDiff(tuple(tools), unchanged)
