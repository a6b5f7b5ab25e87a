"""`allOf` merging: several schemas that must all hold, folded into one schema.

Properties are combined (a key declared by several arms gets an `allOf` of its schemas),
`required` lists are united, bounds take the tightest value, `enum`s intersect, and an
object closed by any arm stays closed. Two different `type`s, two different `const`s or two
unions cannot be folded into one schema; the caller degrades that node and says why.
"""

from __future__ import annotations

from typing import Any

from .normalize import DOC_KEYWORDS

_LOWER_BOUNDS = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
_UPPER_BOUNDS = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)


class MergeConflict(Exception):
    """The arms say things one schema cannot say at once."""


def merge_schemas(schemas: list[dict[str, Any]]) -> dict[str, Any]:
    """Fold dict schemas (the first one's documentation wins) into one new dict. Values in
    the result are its own copies, so `_combine` extends them in place: the cost stays
    linear in the size of all arms, however many there are."""
    result: dict[str, Any] = {}
    required: set[Any] = set()
    for schema in schemas:
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
            else:
                result[key] = _combine(key, result[key], value)
    return result


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


def _combine(key: str, first: Any, second: Any) -> Any:
    if key == "properties" and isinstance(first, dict) and isinstance(second, dict):
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
        raise MergeConflict(f"allOf arms require different types ({first} and {second})")
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
    if key in ("anyOf", "oneOf"):
        raise MergeConflict(f"allOf arms hold two {key} unions")
    raise MergeConflict(f"allOf arms disagree on {key!r}")


def _numbers(*values: Any) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
