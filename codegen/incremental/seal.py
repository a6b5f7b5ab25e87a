"""A shard file's seal: an HMAC-SHA256 of everything after it under the user's key
(`cache_key`), so only files this user's codegen wrote are believed.

A shard's structure can be checked, its meaning cannot: what a well-formed record says a
tool compiles to is only known by compiling the tool again. A repository that ships a cache
folder could otherwise decide what `codegen build --check` compares against. The seal is the
file's first line, and covers the rest of the file whole (its header with the format
version, fingerprint and shard name, every record, every IR line), so no record can be
edited, dropped, added or moved to another shard without the code failing to verify:

    codegen-hmac-sha256 <key name: 16 hex digits> <code: 64 hex digits>

The key's name tells a file sealed under another key (another user or machine: a cache
committed to a repository, or restored in CI without the key), which is normal, from a file
changed after this user's codegen wrote it, which is not.
"""

from __future__ import annotations

import re

from .cache_key import CacheKey

PREFIX = b"codegen-hmac-sha256 "
LENGTH = len(PREFIX) + 16 + 1 + 64 + 1
"""Bytes of the seal line, its line feed included; the content starts there."""
_SEAL = re.compile(rb"codegen-hmac-sha256 ([0-9a-f]{16}) ([0-9a-f]{64})\n")


class BrokenSeal(Exception):
    """A file with no seal, or whose code does not match its content under this key."""


class OtherKey(Exception):
    """A file sealed under another key than this user's."""


def sealed(key: CacheKey, content: bytes) -> bytes:
    """The file holding `content`, its seal first."""
    import hmac

    code = hmac.digest(key.secret, content, "sha256").hex()
    return b"%s%s %s\n%s" % (PREFIX, key.name.encode("ascii"), code.encode("ascii"), content)


def unsealed(key: CacheKey, data: bytes) -> int:
    """Where the content of the sealed file `data` starts, once its code verifies (compared
    in constant time). `OtherKey` or `BrokenSeal` when it does not."""
    import hmac

    found = _SEAL.fullmatch(data, 0, LENGTH)
    if found is None:
        raise BrokenSeal("it does not start with a seal (a codegen-hmac-sha256 line)")
    if found[1] != key.name.encode("ascii"):
        raise OtherKey
    expected = hmac.digest(key.secret, memoryview(data)[LENGTH:], "sha256").hex()
    if not hmac.compare_digest(expected.encode("ascii"), found[2]):
        raise BrokenSeal(
            "its seal does not match its content (it was changed after it was written)"
        )
    return LENGTH
