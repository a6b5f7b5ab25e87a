"""`hypothesis-jsonschema` made to run, and to run fast, with current Hypothesis (`prepare`).

Its 0.23 drives objects with the `many(...).more()` of older Hypothesis; current Hypothesis
only iterates `many` inside a `with` block: `_LegacyMany` keeps the old surface on top of the
new one, in that module's own reference only.

It also makes the strategy of an object's property value while it draws the object: every
key drawn canonicalises that property's subschema again and builds a fresh strategy for it. For the unrolled draft-07 meta-schema and the large corpus schemas
that is most of the time a test spends. A strategy is a pure description of what to draw,
so building it once per (subschema, alphabet, formats) and reusing it draws exactly the same
values from the same choices; only the repeated building goes away.
"""

from __future__ import annotations

import json
from typing import Any

_CACHE: dict[tuple[str, int, int], tuple[Any, Any, Any]] = {}
"""(subschema as canonical JSON, id of the alphabet, id of the formats) -> (strategy,
alphabet, formats); the last two are kept so their ids are not reused."""


class _LegacyMany:
    """The `cu.many(...)` interface `hypothesis-jsonschema` 0.23 calls (`more()`,
    `reject()`), on top of the context-manager `many` of current Hypothesis."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from hypothesis.internal.conjecture import utils

        self._many = utils.many(*args, **kwargs)
        self._elements = iter(self._many.__enter__())

    def more(self) -> bool:
        if next(self._elements, StopIteration) is StopIteration:
            self._many.__exit__(None)
            return False
        return True

    def reject(self, why: str | None = None) -> None:
        self._many.reject(why)


def prepare() -> None:
    """Give `hypothesis-jsonschema` the `many` it calls when Hypothesis lost it, and build
    each of its sub-strategies once (idempotent)."""
    import types

    from hypothesis.internal.conjecture import utils
    from hypothesis_jsonschema import _from_schema

    if not hasattr(utils.many, "more") and _from_schema.cu is utils:  # type: ignore[attr-defined]
        _from_schema.cu = types.SimpleNamespace(many=_LegacyMany)  # type: ignore[attr-defined,assignment]
    namespace = vars(_from_schema)
    build = namespace["__from_schema"]
    if getattr(build, "memoized", False):
        return

    def memoized(schema: Any, *, alphabet: Any, custom_formats: Any) -> Any:
        try:
            text = json.dumps(schema, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError):
            return build(schema, alphabet=alphabet, custom_formats=custom_formats)
        key = (text, id(alphabet), id(custom_formats))
        found = _CACHE.get(key)
        if found is None:
            strategy = build(schema, alphabet=alphabet, custom_formats=custom_formats)
            found = _CACHE[key] = (strategy, alphabet, custom_formats)
        return found[0]

    memoized.memoized = True  # type: ignore[attr-defined]
    namespace["__from_schema"] = memoized
