"""The fast path of strict JSON decoding: `jiter` (Rust) for documents that decode cleanly.

`json_text.loads` decodes with the standard library and a Python hook per object (to refuse
duplicate keys), then walks the whole value to measure its nesting; on a large catalog that
is most of the decoding time. `jiter` refuses duplicate keys, `NaN` and `Infinity` itself and
stops at 200 levels of nesting (inside `json_text.MAX_NESTING`), so a document it decodes is
one the strict decoder accepts, with the same value, and needs no walk.

It never explains a refusal: on any error the caller runs the standard-library decoder,
whose messages (with line, column and JSON pointer) are the ones users see. That also covers
what `jiter` refuses but the standard library accepts (a lone surrogate escape, nesting
between 200 and `MAX_NESTING` levels), so the accepted documents and their values do not
depend on which path decoded them.
"""

from __future__ import annotations

from typing import Any

import jiter

NOT_DECODED: Any = object()
"""What `try_loads` returns when the caller must decode with the standard library."""

NESTING_LIMIT = 200
"""The deepest nesting `jiter` decodes (its recursion limit); `json_text` relies on it being
at most `json_text.MAX_NESTING`, and the tests check it."""


def try_loads(text: str, utf8: bytes | None = None) -> Any:
    """The value of a strict JSON document, or `NOT_DECODED`. `utf8`: the same document as
    UTF-8 bytes, when the caller has them (saves encoding `text` again)."""
    try:
        data = utf8 if utf8 is not None else text.encode("utf-8")
        # No string cache: values are never shared between documents, so a value (and
        # anything pickled from it, such as a cache key) depends only on its own text.
        return jiter.from_json(
            data, allow_inf_nan=False, catch_duplicate_keys=True, cache_mode=False
        )
    except (ValueError, UnicodeError):
        return NOT_DECODED
