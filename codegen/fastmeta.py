"""Meta-schema checks in Rust (`jsonschema-rs`) for the bulk of a large catalog.

`metacheck`'s compiled closures answer "valid?" in tens of microseconds per schema;
`jsonschema-rs` answers in a few, but importing it costs about 11 ms. So a run starts with
`metacheck` and switches to the Rust validator once it has checked `SWITCH_AFTER` schemas,
where the import has paid for itself; a one-tool run never imports it.

The Rust validators are built from the very meta-schema documents `jsonschema` uses
(`metacheck.meta_documents`), with formats not asserted, as `jsonschema` does by default;
the test suite checks that both agree on the corpus, the golden cases and random schemas.
Only decoded documents are given to it (plain JSON values), and it never has the last word
on a problem: a schema it calls invalid is checked again by `jsonschema`, whose messages
the diagnostics carry. Anything it cannot take (a draft it lacks, a string that is not
valid Unicode) goes to `metacheck`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from . import metacheck

SWITCH_AFTER = 800
"""Schemas checked with `metacheck` before a run imports the Rust validator (its import
costs about what `metacheck` spends on this many schemas)."""


class MetaChecker:
    """`is_valid(draft, schema)` for one run: True, False, or None when no fast check can
    answer (the caller then asks `jsonschema`)."""

    def __init__(self, switch_after: int = SWITCH_AFTER) -> None:
        self.switch_after = switch_after
        self.checked = 0

    def is_valid(self, draft: str, schema: Any) -> bool | None:
        self.checked += 1
        if self.checked > self.switch_after:
            check = rust_check(draft)
            if check is not None:
                try:
                    return bool(check(schema))
                except (ValueError, TypeError, OverflowError, RecursionError):
                    pass  # e.g. a lone surrogate, which Rust strings cannot hold
        return metacheck.is_valid(draft, schema)


@cache
def rust_check(draft: str) -> Callable[[Any], bool] | None:
    """The Rust validator of a draft's meta-schema, or None without `jsonschema-rs` or for a
    draft it does not implement."""
    uri = metacheck.META_URIS.get(draft)
    if uri is None:
        return None
    try:
        import jsonschema_rs
    except ImportError:
        return None
    documents = metacheck.meta_documents()
    registry = jsonschema_rs.Registry(list(documents.items()))
    validator = jsonschema_rs.validator_for(
        documents[uri], registry=registry, validate_formats=False
    )
    is_valid: Callable[[Any], bool] = validator.is_valid
    return is_valid
