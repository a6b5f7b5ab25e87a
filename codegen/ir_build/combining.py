"""The walk's combinators: `allOf` merged into one schema (its conflicts warned at the arm
that brings them, its conditions kept as notes), unions of `anyOf`/`oneOf` arms merged with
the keywords beside them, a `required` choice between alternatives."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

from .. import ir
from ..errors import Diagnostic
from ..identifiers import camel_case
from ..normalize import DOC_KEYWORDS
from .doc_keywords import json_text
from .limits import (
    ARMS_LIMIT,
    UNION_LIMIT,
    merge_weight,
)
from .merge import MergeConflict, merge_schemas
from .name_hints import arm_hints
from .refs import Resolved
from .unions import union
from .walk import KNOWN, Walk

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


def _choice_note(keyword: str, alternatives: list[list[str]]) -> str:
    """`exactly one of "a", "b" is required` (`oneOf`) or `at least one of ...` (`anyOf`)."""
    quantity = "exactly one" if keyword == "oneOf" else "at least one"
    if all(len(keys) == 1 for keys in alternatives):
        listed = ", ".join(json_text(keys[0]) for keys in alternatives)
        return f"{quantity} of {listed} is required"
    listed = "; ".join(" and ".join(json_text(k) for k in keys) for keys in alternatives)
    return f"{quantity} of these key sets is required: {listed}"


def _literal_arm(schema: Any) -> bool:
    """Whether a union arm is a `const` or `enum`, which fold into one literal arm."""
    return isinstance(schema, dict) and ("const" in schema or isinstance(schema.get("enum"), list))


class Combining(Walk):
    """The walk's `allOf` merges and unions."""

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
        if not KNOWN.issuperset(merged) and id(merged) not in self.checked:
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
