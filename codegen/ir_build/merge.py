"""`allOf` merging: several schemas that must all hold, folded into one schema.

Properties are combined (a key declared by several arms gets an `allOf` of its schemas, and
so does each position of two tuples), `required` lists are united, bounds take the tightest
value, integer `multipleOf`s their least common multiple, `enum`s intersect, and an object
closed by any arm stays closed. Two different values of a keyword that changes no type
(`format`, `pattern`, `discriminator`, `x-*`, ...) both hold but cannot be one value: the
first stays and the other becomes a note (see `merge_schemas`). Two different `type`s, two
different `const`s or two unions cannot be folded into one schema; the caller degrades that
node and says why.
"""

from __future__ import annotations

import math
from typing import Any

from ..normalize import DOC_KEYWORDS, TYPE_KEYWORDS
from .doc_keywords import keyword_note, narrowing_notes

_LOWER_BOUNDS = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
_UPPER_BOUNDS = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)


class MergeConflict(Exception):
    """The arms say things one schema cannot say at once. `empty` when they contradict
    each other (two types, two constants), so no value matches them all."""

    def __init__(self, message: str, empty: bool = False) -> None:
        super().__init__(message)
        self.empty = empty
        self.arm = 0
        """The index of the schema whose merge met the conflict (`merge_schemas` sets it)."""


_SHOWN = frozenset({"format", "pattern", "contentMediaType", "contentEncoding", "multipleOf"})
"""Keywords whose first value the merged node's documentation shows; a second value that
cannot be folded in becomes a note."""
_NOTED = frozenset({"discriminator"})
"""Keywords no documentation shows: two different values each become a note."""
_QUIET = frozenset({"$defs", "definitions", "example", "$recursiveAnchor", "$dynamicAnchor"})
"""Keywords that change nothing a caller sees (a `$ref` resolves against the document, not
the merged node): the first value stays."""
_CONDITION = ("if", "then", "else")
"""One condition: its keywords are kept or noted together."""
_FOLDED = frozenset().union(*TYPE_KEYWORDS.values()) | {
    "type",
    "enum",
    "const",
    "$ref",
    "allOf",
    "anyOf",
    "oneOf",
    "$dynamicRef",
    "$recursiveRef",
}
"""Keywords that decide a type: two values `_combine` cannot fold are a conflict. Any other
keyword is an annotation (`markdownDescription`), ignored like it elsewhere: the first
value stays."""


def merge_schemas(schemas: list[dict[str, Any]], notes: list[str] | None = None) -> dict[str, Any]:
    """Fold dict schemas (the first one's documentation wins) into one new dict. Values in
    the result are its own copies, so `_combine` extends them in place: the cost stays
    linear in the size of all arms, however many there are. Constraints that hold together
    but cannot share one keyword (two `pattern`s) are appended to `notes` as text, when
    given."""
    result: dict[str, Any] = {}
    required: set[Any] = set()
    noted: set[str] = set()
    for index, schema in enumerate(schemas):
        if result and not _NARROWING.isdisjoint(schema):
            schema = _conditions_apart(result, schema, notes, noted)
        before = result.get("items", True)  # this schema's `items` may be folded in below
        for key, value in schema.items():
            if key not in result:
                result[key] = _copy(value)
                if key == "required" and isinstance(value, list):
                    required = set(value)  # names: validation has made them strings
            elif key in DOC_KEYWORDS or result[key] == value:
                continue
            elif key == "required" and isinstance(value, list) and isinstance(result[key], list):
                for name in value:
                    if name not in required:
                        required.add(name)
                        result[key].append(name)
            elif key == "prefixItems" and isinstance(value, list) and isinstance(result[key], list):
                result[key] = _tuples(result[key], before, value, schema.get("items", True))
            else:
                try:
                    result[key] = _combine(key, result[key], value, notes)
                except MergeConflict as conflict:
                    conflict.arm = index
                    raise
    return result


_NARROWING = frozenset({"not", *_CONDITION})


def _conditions_apart(
    result: dict[str, Any], schema: dict[str, Any], notes: list[str] | None, noted: set[str]
) -> dict[str, Any]:
    """`schema` without the conditions (`not`, `if`/`then`/`else`) that differ from those
    `result` holds: one node holds one of each, so each becomes a note stating it in full
    (it only narrows: the type holds without it), `result`'s too, so their order is the
    notes' (sorted), not the arms'; `noted` names the groups noted so far. Without `notes`,
    `result`'s stays and the others are left to the caller."""
    groups = {"not": ("not",), "if": _CONDITION}
    apart: dict[str, Any] = {}
    for group, keys in groups.items():
        theirs = {k: schema[k] for k in keys if k in schema}
        ours = {k: result[k] for k in keys if k in result}
        if theirs and (group in noted or (ours and theirs != ours)):
            apart.update(theirs)
            if notes is not None and ours:
                noted.add(group)
                notes.extend(t for t in narrowing_notes(ours) if t not in notes)
                for key in ours:
                    del result[key]
    if not apart:
        return schema
    if notes is not None:
        notes.extend(text for text in narrowing_notes(apart) if text not in notes)
    return {k: v for k, v in schema.items() if k not in apart}


def _tuples(first: list[Any], first_rest: Any, second: list[Any], second_rest: Any) -> list[Any]:
    """Two `prefixItems` that both hold: position by position, and each position past the
    shorter tuple also holds that tuple's `items` (none past one that allows no more)."""
    shorter = min(len(first), len(second))
    pairs = [
        a if a == b else {"allOf": [a, b]}
        for a, b in zip(first[:shorter], second[:shorter], strict=True)
    ]
    longer, rest = (first, second_rest) if len(first) > shorter else (second, first_rest)
    if rest is False or rest == {"not": {}}:
        return pairs
    if rest is True or rest == {}:
        return [*pairs, *longer[shorter:]]
    return [*pairs, *({"allOf": [item, rest]} for item in longer[shorter:])]


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


def _combine(key: str, first: Any, second: Any, notes: list[str] | None = None) -> Any:
    if (
        key in ("properties", "patternProperties", "dependentSchemas")
        and isinstance(first, dict)
        and isinstance(second, dict)
    ):
        for name, schema in second.items():  # `first` is the result's own copy
            first[name] = (
                {"allOf": [first[name], schema]}
                if name in first and first[name] != schema
                else schema
            )
        return first
    if key == "type":
        if {first, second} == {"number", "integer"}:
            return "integer"
        raise MergeConflict(
            f"allOf arms require different types ({first} and {second})", empty=True
        )
    if key == "additionalProperties":
        if first is False or second is False:
            return False
        if first is True or first == {}:
            return second
        if second is True or second == {}:
            return first
        return {"allOf": [first, second]}
    if key in _LOWER_BOUNDS and _numbers(first, second):
        return max(first, second)
    if key in _UPPER_BOUNDS and _numbers(first, second):
        return min(first, second)
    if key == "enum" and isinstance(first, list) and isinstance(second, list):
        # Scalars through a set (same equality as `in`); containers, rare in enums, by scan.
        scalars = {v for v in second if not isinstance(v, dict | list)}
        containers = [v for v in second if isinstance(v, dict | list)]
        return [v for v in first if v in (containers if isinstance(v, dict | list) else scalars)]
    if key == "allOf" and isinstance(first, list) and isinstance(second, list):
        first.extend(second)  # the result's own copy
        return first
    if key in ("items", "propertyNames", "contains") and isinstance(first, dict | bool):
        return {"allOf": [first, second]}
    if key == "uniqueItems":
        return first or second
    if key == "multipleOf" and _numbers(first, second):
        if all(isinstance(v, int) and v > 0 for v in (first, second)):
            return math.lcm(first, second)
        _note(notes, key, second)
        return first
    if key == "dependentRequired" and isinstance(first, dict) and isinstance(second, dict):
        for name, keys in second.items():
            if isinstance(first.get(name), list) and isinstance(keys, list):
                first[name] = list(dict.fromkeys([*first[name], *keys]))
            else:
                first.setdefault(name, keys)
        return first
    if key in _SHOWN:
        _note(notes, key, second)
        return first
    if key in _NOTED or key.startswith("x-"):
        _note(notes, key, first)
        _note(notes, key, second)
        return first
    if key in _QUIET or key not in _FOLDED:
        return first
    if key == "const":
        raise MergeConflict(f"allOf arms disagree on {key!r}", empty=True)
    if key in ("anyOf", "oneOf"):
        raise MergeConflict(f"allOf arms hold two {key} unions")
    raise MergeConflict(f"allOf arms disagree on {key!r}")


def _note(notes: list[str] | None, key: str, value: Any) -> None:
    if notes is not None:
        text = keyword_note(key, value)
        if text is not None and text not in notes:
            notes.append(text)


def _numbers(*values: Any) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
