"""The `o200k_base` token count, offline: the vocabulary ships with the package.

`tiktoken` downloads a vocabulary on first use, which a sandboxed or offline host cannot do.
This is the official `o200k_base.tiktoken` (gzipped), checked against the SHA-256 tiktoken
itself pins for it, and handed to tiktoken's BPE with o200k's own split pattern: the counts
are tiktoken's. It loads once, on the first count that needs it (about 0.3 s).

A long text is counted in chunks of at most `CHUNK` characters, because BPE is quadratic in
the length of one piece (a program can return a million `a`s). A chunk ends where the split
pattern starts a piece anyway, so the sum is the whole's count; where there is no such place
near, the chunk is cut blind and adds 1 (a cut can change the merges beside it; tested on
random and real texts never to take off more).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

VOCABULARY = Path(__file__).with_name("o200k_base.tiktoken.gz")
SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""The hash tiktoken pins for `o200k_base.tiktoken` (`tiktoken_ext.openai_public`)."""

PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
"""o200k's pre-tokenizer split, as tiktoken defines it."""

LONGEST_TOKEN = 128
"""No o200k token is longer than 128 bytes: a text of n characters is at least n/128."""
CHUNK = 8192
"""Counted in chunks of at most this many characters."""
_NEAR = 1024
"""A chunk ends at the last space or newline after a non-space in its last 1,024 characters."""

Counter = Callable[[str], int]

_lock = threading.Lock()
_loaded: list[Counter | None] = []


def counter() -> Counter | None:
    """The function counting a text's tokens (special tokens as plain text), loaded on first
    use; None when it cannot be (tiktoken missing, the vocabulary damaged): callers fall back
    to the upper bound, and one warning says why."""
    with _lock:
        if not _loaded:
            _loaded.append(_load())
        return _loaded[0]


def _load() -> Counter | None:
    try:
        import tiktoken
    except ImportError as error:
        log.warning("token counts are estimated from above: tiktoken is missing (%s)", error)
        return None
    try:
        raw = gzip.decompress(VOCABULARY.read_bytes())
    except (OSError, EOFError) as error:
        log.warning(
            "token counts are estimated from above: %s is unreadable (%s)", VOCABULARY, error
        )
        return None
    if hashlib.sha256(raw).hexdigest() != SHA256:
        log.warning(
            "token counts are estimated from above: %s is not the official vocabulary", VOCABULARY
        )
        return None
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in raw.splitlines() if line)
    }
    encoding = tiktoken.Encoding(
        "o200k_base", pat_str=PATTERN, mergeable_ranks=ranks, special_tokens={}
    )
    encode = encoding.encode_ordinary
    return lambda text: len(encode(text))


def count(text: str, count_one: Counter, limit: float = float("inf")) -> int:
    """The tokens of `text`, by chunks; once past `limit`, any number over it (the rest is
    not read: a 50 MB text is known to be over a budget from its first chunks)."""
    parts, blind = chunks(text)
    total = blind
    for part in parts:
        total += count_one(part)
        if total - blind > limit:
            return total
    return total


def chunks(text: str) -> tuple[list[str], int]:
    """`text` in chunks of at most `CHUNK` characters, and how many were cut blind."""
    if len(text) <= CHUNK:
        return [text], 0
    parts: list[str] = []
    blind = 0
    start = 0
    while len(text) - start > CHUNK:
        end = start + CHUNK
        cut = _boundary(text, end - _NEAR, end)
        if cut <= start:
            cut = end
            blind += 1
        parts.append(text[start:cut])
        start = cut
    parts.append(text[start:])
    return parts, blind


def _boundary(text: str, low: int, high: int) -> int:
    """The last index in (low, high) where the split pattern surely starts a piece: a space
    after a non-space, or a newline after a letter or digit (after punctuation, the newline
    joins it); -1 when there is none."""
    for index in range(high - 1, low, -1):
        char = text[index]
        if char == " " and not text[index - 1].isspace():
            return index
        if char == "\n" and text[index - 1].isalnum():
            return index
    return -1
