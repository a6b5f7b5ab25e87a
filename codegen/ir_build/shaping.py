"""The walk's shapes: objects (their properties, required keys and other keys), arrays and
tuples, literals, and the bounds a union's arms keep."""

from __future__ import annotations

from typing import Any

from .. import ir
from ..identifiers import camel_case
from .doc_keywords import extract_docs, matches_every_key, merge_docs
from .limits import (
    INLINE_LIMIT,
    LITERAL_LIMIT,
    oversized_literal,
)
from .refs import Resolved
from .unions import dedupe, union, widened
from .walk import ANY, SCALARS, Walk


class Shaping(Walk):
    """The walk's objects, arrays, tuples and literals."""

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
        scalars = [v for v in values if v is None or isinstance(v, SCALARS)]
        others = [v for v in values if not (v is None or isinstance(v, SCALARS))]
        if not others:
            return ir.LiteralType(tuple(dedupe(scalars))) if scalars else ir.NeverType()
        kinds: list[ir.TypeNode] = [ir.LiteralType(tuple(dedupe(scalars)))] if scalars else []
        if any(isinstance(v, list) for v in others):
            kinds.append(ir.ArrayType(ANY))
        if any(isinstance(v, dict) for v in others):
            kinds.append(ir.MapType(ANY))
        return union(kinds)

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

    def _object(self, schema: dict[str, Any], hint: str, inline: int, home: bool) -> ir.TypeNode:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        extra = self._extra(schema, hint, inline)
        if self.inline_objects or (not properties and extra is not None):
            if inline >= INLINE_LIMIT:
                return self.degrade(
                    schema, "additionalProperties", f"maps nested deeper than {INLINE_LIMIT} levels"
                )
            return ir.MapType(ANY if extra is None or self.inline_objects else extra)
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
            field_type = self._walked(prop, field_hint, 0, False) if isinstance(prop, dict) else ANY
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
            return ANY
        value = self.node(additional, f"{hint}Value", inline + 1)
        if not pattern_types:
            return value
        return self._bounded(schema, "patternProperties", union([*pattern_types, value]))
