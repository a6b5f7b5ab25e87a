"""`codegen diff`: what changed between two tool catalogs, and whether it breaks callers.

A change to a tool definition is a change to an API that agents and generated SDKs call, so
a reviewer needs to know which edits are safe. The comparison runs on the IR, not on the
JSON: two schemas that spell the same type differently (`$ref` or inline, `enum` order,
`type: [..]` or `anyOf`) compare equal, and named types are matched by their place and
structure, never by their generated names, which move when unrelated tools change.

Arguments are what callers send, outputs what they receive, so the same edit breaks in
opposite directions: a widened argument type (a new enum value, a new optional argument) is
safe and a narrowed one breaks callers; for an output it is the other way round. The rules:

| change | arguments | output |
| --- | --- | --- |
| field added | breaking if required | safe |
| field removed | breaking | breaking |
| became required | breaking | safe |
| became optional | safe | breaking (may be absent) |
| values/arms added (widened) | safe | breaking |
| values/arms removed (narrowed) | breaking | safe |
| type changed otherwise | breaking | breaking |
| no longer accepts other keys | breaking | safe |
| description, title, default, deprecation, annotations | safe | safe |

Tools removed and output schemas removed break callers; tools and output schemas added do
not. The report is deterministic: tools in code-point order of their names, changes in
schema order.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .. import ir
from .._support import progress as reports
from ..errors import UsageError
from .progress import Console
from .strict import strict_failure

Part = Literal["tool", "args", "output"]
Status = Literal["added", "removed", "changed"]

DIFF_VERSION = 1
"""Version of the JSON report's layout."""


@dataclass(frozen=True, slots=True)
class Change:
    """One difference, located by the part of the tool (`args`, `output` or the `tool`
    itself) and the path of field keys inside it (`[]` array items, `{}` map values,
    `[n]` tuple items, `*` other keys of an object)."""

    kind: str
    breaking: bool
    part: Part
    path: tuple[str, ...] = ()
    old: str | None = None
    new: str | None = None
    added: tuple[ir.Scalar, ...] = ()
    removed: tuple[ir.Scalar, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolDiff:
    name: str
    status: Status
    changes: tuple[Change, ...]

    @property
    def breaking(self) -> bool:
        return any(change.breaking for change in self.changes)


@dataclass(frozen=True, slots=True)
class CatalogDiff:
    """Only tools with a difference are listed; `unchanged` counts the others."""

    tools: tuple[ToolDiff, ...]
    unchanged: int

    def count(self, status: Status) -> int:
        return sum(1 for tool in self.tools if tool.status == status)

    @property
    def breaking_changes(self) -> int:
        return sum(1 for tool in self.tools for change in tool.changes if change.breaking)

    @property
    def breaking(self) -> bool:
        return self.breaking_changes > 0


# --- comparison --------------------------------------------------------------------------

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


def _scalar_text(value: ir.Scalar) -> str:
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
            return "literal(" + ",".join(sorted(_scalar_text(v) for v in node.values)) + ")"
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
        return " | ".join(_scalar_text(v) for v in resolved.values)
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
        old_keys = {_scalar_text(v): v for v in old.values}
        new_keys = {_scalar_text(v): v for v in new.values}
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


# --- wording -----------------------------------------------------------------------------


def path_text(path: tuple[str, ...]) -> str:
    """`options.mode`, `items[].id`, `tags{}`: keys joined by dots, containers as suffixes."""
    text = ""
    for segment in path:
        if segment in ("[]", "{}") or (segment.startswith("[") and segment.endswith("]")):
            text += segment
        else:
            text += ("." if text else "") + segment
    return text


def describe(change: Change, code: Callable[[str], str]) -> str:
    """One sentence for a change; `code` marks names, types and values up."""
    output = change.part == "output"
    noun = "output field" if output else "argument"
    where = code(path_text(change.path)) if change.path else ""
    subject = f"{noun} {where}" if change.path else ("the output" if output else "the arguments")
    values = ", ".join(code(_scalar_text(v)) for v in change.removed or change.added)
    old = code(change.old) if change.old is not None else "none"
    new = code(change.new) if change.new is not None else "none"
    kind = change.kind
    if kind == "tool-added":
        return "tool added"
    if kind == "tool-removed":
        return "tool removed"
    if kind == "title-changed":
        return f"title changed from {old} to {new}"
    if kind == "description-changed":
        return "description changed"
    if kind == "annotation-changed":
        return f"annotation {where} changed from {old} to {new}"
    if kind == "output-added":
        return f"output schema added: {new}"
    if kind == "output-removed":
        return f"output schema removed (was {old})"
    if kind == "field-added-required":
        return f"new required {noun} {where}: {new}"
    if kind == "field-added-optional":
        return f"new optional {noun} {where}: {new}"
    if kind == "field-removed":
        return f"{noun} {where} removed (was {old})"
    if kind == "field-required":
        return f"{subject} became required"
    if kind == "field-optional":
        return f"{subject} became optional" + (" (may be absent)" if output else "")
    if kind == "enum-narrowed":
        return f"{subject}: values removed: {values}"
    if kind == "enum-widened":
        return f"{subject}: values added: {values}"
    if kind == "enum-changed":
        removed = ", ".join(code(_scalar_text(v)) for v in change.removed)
        added = ", ".join(code(_scalar_text(v)) for v in change.added)
        return f"{subject}: values removed: {removed}; added: {added}"
    if kind == "type-changed":
        return f"{subject}: type changed from {old} to {new}"
    if kind == "type-widened":
        return f"{subject}: type widened from {old} to {new}"
    if kind == "type-narrowed":
        return f"{subject}: type narrowed from {old} to {new}"
    if kind == "extra-closed":
        return f"{subject} no longer accept{'s' * bool(change.path)} other keys"
    if kind == "extra-opened":
        return f"{subject} now accept{'s' * bool(change.path)} other keys"
    if kind == "field-description":
        return f"{subject}: description changed"
    if kind == "field-default":
        return f"{subject}: default changed from {old} to {new}"
    if kind == "field-deprecated":
        return f"{subject} is now deprecated"
    if kind == "field-undeprecated":
        return f"{subject} is no longer deprecated"
    raise AssertionError(f"unknown change kind {kind!r}")  # pragma: no cover


_BACKTICKS = re.compile("`+")


def code_span(text: str) -> str:
    """Markdown inline code that holds any text: hidden characters shown as escapes,
    line breaks as `\\n`, fenced by more backticks than the text contains."""
    from ..render.text import escape_hidden

    shown = escape_hidden(text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t"))
    longest = max((len(m) for m in _BACKTICKS.findall(shown)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown.strip() else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"


def _plain(text: str) -> str:
    return f"`{text}`"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def render_markdown(diff: CatalogDiff) -> str:
    """A review summary for a pull request: a verdict, then added, removed and changed
    tools, each breaking change marked."""
    total = len(diff.tools) + diff.unchanged
    lines = ["# Tool catalog changes", ""]
    if not diff.tools:
        lines += [f"No changes: {_plural(total, 'tool')}, all unchanged.", ""]
        return "\n".join(lines)
    verdict = (
        f"**{_plural(diff.breaking_changes, 'breaking change')}.**"
        if diff.breaking
        else "**No breaking changes.**"
    )
    counts = (
        f"{_plural(diff.count('added'), 'tool')} added, {diff.count('removed')} removed, "
        f"{diff.count('changed')} changed, {diff.unchanged} unchanged."
    )
    lines += [f"{verdict} {counts}", ""]
    for status, title in (("added", "Added"), ("removed", "Removed")):
        listed = [tool for tool in diff.tools if tool.status == status]
        if listed:
            lines += [f"## {title}", ""]
            mark = " — **breaking**" if status == "removed" else ""
            lines += [f"- {code_span(tool.name)}{mark}" for tool in listed]
            lines.append("")
    changed = [tool for tool in diff.tools if tool.status == "changed"]
    if changed:
        lines += ["## Changed", ""]
        for tool in changed:
            heading = f"### {code_span(tool.name)}" + (" — breaking" if tool.breaking else "")
            lines += [heading, ""]
            for change in tool.changes:
                text = describe(change, code_span)
                lines.append(f"- **breaking**: {text}" if change.breaking else f"- {text}")
            lines.append("")
    return "\n".join(lines)


def _change_json(change: Change) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": change.kind,
        "breaking": change.breaking,
        "in": change.part,
        "path": list(change.path),
    }
    if change.old is not None:
        data["old"] = change.old
    if change.new is not None:
        data["new"] = change.new
    if change.removed:
        data["removed"] = list(change.removed)
    if change.added:
        data["added"] = list(change.added)
    data["message"] = describe(change, _plain)
    return data


def render_json(diff: CatalogDiff) -> str:
    """The same report as data, for bots and CI annotations."""
    report = {
        "version": DIFF_VERSION,
        "breaking": diff.breaking,
        "summary": {
            "added": diff.count("added"),
            "removed": diff.count("removed"),
            "changed": diff.count("changed"),
            "unchanged": diff.unchanged,
            "breaking_changes": diff.breaking_changes,
        },
        "tools": [
            {
                "name": tool.name,
                "status": tool.status,
                "breaking": tool.breaking,
                "changes": [_change_json(change) for change in tool.changes],
            }
            for tool in diff.tools
        ],
    }
    return json.dumps(report, indent=2, ensure_ascii=False) + "\n"


RENDERERS: Mapping[str, Callable[[CatalogDiff], str]] = {"md": render_markdown, "json": render_json}


# --- command -----------------------------------------------------------------------------


def run_diff(args: argparse.Namespace) -> int:
    """The `diff` command: the command line over `[tool.codegen]` (`config.HONOURED_BY`)."""
    from .._support.user_files import display_path
    from ..engine import compile_sources
    from .config import Given, project_settings

    console = Console(quiet=args.quiet, verbose=args.verbose)
    settings = project_settings(
        "diff",
        Given(
            sources=tuple(args.sources) or None,
            namespace=args.namespace,
            input_format=args.input_format,
            strict=args.strict,
        ),
    )
    if settings.config is not None:
        console.detail(f"using [tool.codegen] from {display_path(settings.config.path)}")
        for warning in settings.config.warnings:
            console.note(warning)
    fmt, namespace = settings.input_format, settings.namespace
    roots = getattr(args, "ref_roots", ())
    if args.git is None:
        sources = list(args.sources)  # OLD and NEW are always named
        if len(sources) != 2:
            raise UsageError("diff: expected two sources, OLD and NEW (or --git REV [SOURCES...])")
    else:
        sources = list(settings.sources)
        if not sources:
            raise UsageError(
                "diff: --git needs SOURCES, or 'sources' in [tool.codegen] of pyproject.toml"
            )
    started = time.monotonic()
    if args.git is None:
        console.progress.phase(f"old ({sources[0]})")
        old = compile_sources([sources[0]], fmt, namespace, require_tools=False, ref_roots=roots)
        console.progress.phase(f"new ({sources[1]})")
        new = compile_sources([sources[1]], fmt, namespace, require_tools=False, ref_roots=roots)
    else:
        from .gitrev import compile_at_revision

        console.progress.phase(f"old ({args.git})")
        old = compile_at_revision(args.git, sources, fmt, namespace, roots)
        console.progress.phase("new (working tree)")
        new = compile_sources(sources, fmt, namespace, require_tools=False, ref_roots=roots)
    console.progress.phase("")
    diagnostics = (*old.diagnostics, *new.diagnostics)
    console.diagnostics(diagnostics, warnings=settings.strict or None)
    if old.catalog is None or new.catalog is None:
        errors = len(old.errors) + len(new.errors)
        console.error(f"diff: {_plural(errors, 'error')} in the sources; nothing compared")
        return 1
    failure = strict_failure("diff", diagnostics, settings.strict)
    if failure is not None:
        console.error(failure)
        return 1
    console.detail(
        f"compiled {len(old.catalog.tools)} old and {len(new.catalog.tools)} new tools "
        f"in {time.monotonic() - started:.2f} s"
    )

    result = diff_catalogs(old.catalog, new.catalog)
    console.progress.clear()
    text = RENDERERS[args.diff_format](result)
    if args.output:
        from .._support.atomic_write import write_text

        write_text(args.output, text)
    else:
        import sys

        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()
    console.detail(
        f"{_plural(len(result.tools), 'tool')} changed, "
        f"{_plural(result.breaking_changes, 'breaking change')}"
    )
    if result.breaking and args.fail_on_breaking:
        console.error(f"diff: {_plural(result.breaking_changes, 'breaking change')}")
        return 1
    return 0
