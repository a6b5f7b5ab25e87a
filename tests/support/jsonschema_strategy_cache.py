"""Build each `hypothesis-jsonschema` sub-strategy once instead of once per draw.

`hypothesis-jsonschema` (0.23) makes the strategy of an object's property value while it
draws the object: every key drawn canonicalises that property's subschema again and builds
a fresh strategy for it. For the unrolled draft-07 meta-schema and the large corpus schemas
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


def install() -> None:
    """Memoize `hypothesis_jsonschema._from_schema.__from_schema` (idempotent)."""
    from hypothesis_jsonschema import _from_schema

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
