"""One shard file of the cache on disk: its layout, and reading it as untrusted data.

A cache folder may come with a repository (`[tool.codegen] cache` names a folder in it), so
a shard is data that cannot run anything when read, and is believed only when sealed under
this user's key (`seal`, `cache_key`): a file sealed under another key raises
`seal.OtherKey`, one whose seal does not verify `CacheFileError`. A sealed file is still
decoded strictly: lines of JSON, decoded into a closed set of classes (`ir_codec`,
`chunk_codec`, `checked`), never unpickled. Its layout:

    codegen-hmac-sha256 <key name> <HMAC-SHA256 of every following byte>
    {"format": "codegen tool cache", "version": 5, "fingerprint": ..., "shard": "ab",
     "records": N}
    [[key, used, name, problems, claims, warnings, has_output, {target: chunk}], ...]
    (claims flattened: [base, name, base, name, ...]; diagnostics [pointer, message, level])
    the IR of record 1 as JSON (`ir_codec`), or an empty line when it has errors
    ...
    the IR of record N

The seal comes first: a file of another key is set aside on its key's name, before anything
is hashed; then its code is verified over the whole file. Then the header: a file from
another build of the toolkit is skipped there. The records are checked in full when the file
is read; each IR line is decoded and checked only when its tool is needed
(`tool_entry.Entry.tool`). A file that is not this layout, or whose records say anything the
cache would not write (a key outside its shard, a field of the wrong type, a chunk of an
unknown target), raises `CacheFileError`, and the cache ignores the whole file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Sequence
from itertools import chain
from math import isfinite
from typing import Any

from ..errors import Diagnostic, Level
from .cache_key import CacheKey
from .checked import CacheDataError, json_value, rows
from .chunk_codec import decode_chunk, storable
from .seal import BrokenSeal, sealed, unsealed
from .tool_entry import Entry

VERSION = 5
"""The layout's version; also in every key and in the cache folder's name (`tools-v5`), so a
toolkit never reads another version's files (version 3 wrote pickles, 4 no seal)."""
FORMAT = "codegen tool cache"
MAX_FILE_BYTES = 256 << 20
"""Largest shard read: far above what 50,000 cached tools spread over 256 shards take, and
a bound on what a planted file can make the toolkit allocate."""
_HEADER_KEYS = frozenset({"format", "version", "fingerprint", "shard", "records"})
_KEY = re.compile(r"[0-9a-f]{64}")
_LEVELS: dict[str, Level] = {"error": "error", "warning": "warning"}
_STRING = frozenset({str})
_NUMBERS = (int, float)

Record = tuple[str, float, Entry]
"""One stored entry: its key, when it was last used (seconds since the epoch), the entry."""


class CacheFileError(Exception):
    """A shard file the cache ignores; the message says what is wrong with it."""


class StaleFile(Exception):
    """A shard written by another build of the toolkit: ignored without a warning (every
    upgrade makes them)."""


# --- writing ------------------------------------------------------------------------------


def shard_bytes(key: CacheKey, fingerprint: str, shard: str, records: Sequence[Record]) -> bytes:
    """The file of one shard, sealed under `key`."""
    return sealed(key, shard_content(fingerprint, shard, records))


def shard_content(fingerprint: str, shard: str, records: Sequence[Record]) -> bytes:
    """What a shard's seal covers. Entries without their IR (text only) are left out."""
    kept = [(key, used, entry) for key, used, entry in records if _writable(entry)]
    header = {
        "format": FORMAT,
        "version": VERSION,
        "fingerprint": fingerprint,
        "shard": shard,
        "records": len(kept),
    }
    table = [
        [
            key,
            used,
            entry.name,
            _diagnostics_data(entry.problems),
            None if entry.claims is None else list(chain.from_iterable(entry.claims)),
            _diagnostics_data(entry.warnings),
            entry.has_output,
            {target: chunk for target, chunk in entry.chunks.items() if storable(target, chunk)},
        ]
        for key, used, entry in kept
    ]
    lines = [_json_bytes(header), _json_bytes(table)]
    lines.extend(entry.stored or b"" for _, _, entry in kept)
    lines.append(b"")
    return b"\n".join(lines)


def _writable(entry: Entry) -> bool:
    return not entry.built or entry.stored is not None


def _diagnostics_data(found: tuple[Diagnostic, ...]) -> list[list[str]]:
    return [[d.pointer, d.message, d.level] for d in found]


def _json_bytes(value: Any) -> bytes:
    """Compact JSON on one line (JSON escapes every line break inside strings)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


# --- reading ------------------------------------------------------------------------------


def read_shard(path: str, key: CacheKey, fingerprint: str, shard: str) -> list[Record]:
    """The records of the shard file at `path`. `OtherKey` when it was sealed under another
    key, `StaleFile` when another build of the toolkit wrote it, `CacheFileError` when it is
    anything but a shard this one writes under `key`."""
    data = read_limited(path, MAX_FILE_BYTES)
    try:
        start = unsealed(key, data)
    except BrokenSeal as error:
        raise CacheFileError(str(error)) from None
    return decode_shard(data, fingerprint, shard, start)


def read_limited(path: str, limit: int) -> bytes:
    """A regular file's bytes, at most `limit` of them. A symbolic link, a folder, a FIFO
    or a device is refused without being read (a FIFO would block, a device never end)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise CacheFileError("it is a symbolic link") from None
        raise CacheFileError(f"it cannot be read: {error.strerror or error}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise CacheFileError("it is not a regular file")
        if status.st_size > limit:
            raise CacheFileError(f"it is larger than {limit} bytes")
        parts = []
        left = limit + 1
        while left > 0:
            part = os.read(descriptor, min(left, 1 << 20))
            if not part:
                break
            parts.append(part)
            left -= len(part)
    except OSError as error:
        raise CacheFileError(f"it cannot be read: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
    if left <= 0:
        raise CacheFileError(f"it is larger than {limit} bytes")
    return b"".join(parts)


def decode_shard(data: bytes, fingerprint: str, shard: str, start: int = 0) -> list[Record]:
    """The records of a shard's content: `data` from `start` on (past the seal, which is
    not copied away: a warm run reads tens of megabytes). See the module's docstring."""
    end = data.find(b"\n", start)
    if end < 0:
        raise CacheFileError("it holds no header line" if len(data) > start else "it is empty")
    count = _header(_json_value(data[start:end], "its header line"), fingerprint, shard)
    if not data.endswith(b"\n"):
        raise CacheFileError("it does not end with a line break (a torn or truncated file)")
    records_end = data.find(b"\n", end + 1)
    ir_lines = _lines(data, records_end + 1) if records_end > 0 else []
    if records_end < 0 or len(ir_lines) != count:
        follow = len(ir_lines) + (records_end > 0)
        raise CacheFileError(
            f"its header announces {count} records, but {follow} lines follow it "
            "(a torn or truncated file)"
        )
    table = _json_value(data[end + 1 : records_end], "its records line")
    if type(table) is not list or len(table) != count:
        raise CacheFileError(f"its records line is not an array of {count} records")
    records = []
    seen: set[str] = set()
    for index, (row, ir_line) in enumerate(zip(table, ir_lines, strict=True)):
        try:
            record = _record(row, ir_line, shard)
        except CacheDataError as error:
            raise CacheFileError(f"record {index + 1}: {error}") from None
        if record[0] in seen:
            raise CacheFileError(f"record {index + 1}: its key is stored twice")
        seen.add(record[0])
        records.append(record)
    return records


def _lines(data: bytes, start: int) -> list[memoryview]:
    """The lines from `start` on, each without the line feed that ends it: views of `data`,
    not copies (most IR lines are never decoded)."""
    lines = []
    view = memoryview(data)
    find = data.find
    while (end := find(b"\n", start)) >= 0:
        lines.append(view[start:end])
        start = end + 1
    return lines


def _json_value(line: bytes, what: str) -> Any:
    try:
        return json_value(line, what)
    except CacheDataError as error:
        raise CacheFileError(str(error)) from None


def _header(header: Any, fingerprint: str, shard: str) -> int:
    """The number of records a header announces, once it is this cache's header."""
    if type(header) is not dict or header.get("format") != FORMAT:
        raise CacheFileError("it is not a codegen cache file (it has no header)")
    if header.keys() != _HEADER_KEYS:
        raise CacheFileError("its header has other keys than " + ", ".join(sorted(_HEADER_KEYS)))
    version = header["version"]
    if version != VERSION or type(version) is not int:
        shown = version if type(version) is int else "another"
        raise CacheFileError(f"it is in cache format {shown}, where this folder holds {VERSION}")
    if type(header["fingerprint"]) is not str:
        raise CacheFileError("its header's fingerprint is not a string")
    if header["fingerprint"] != fingerprint:
        raise StaleFile
    if header["shard"] != shard:
        raise CacheFileError(f"its header names another shard than {shard!r}, its file name")
    count = header["records"]
    if type(count) is not int or count < 0:
        raise CacheFileError("its header's record count is not a count")
    return count


def _record(row: Any, ir_line: memoryview, shard: str) -> Record:
    """One record, every field checked (inline where a warm render reads thousands)."""
    if type(row) is not list or len(row) != 8:
        raise CacheDataError("it is not an array of 8 fields")
    key, used, name, problems, claims, warnings, has_output, chunks = row
    if type(key) is not str or _KEY.fullmatch(key) is None:
        raise CacheDataError("its key is not a SHA-256 digest in hexadecimal")
    if key[:2] != shard:
        raise CacheDataError(f"its key belongs to shard {key[:2]!r}, not to this file's")
    if type(name) is not str:
        raise CacheDataError("its name is not a string")
    if type(used) not in _NUMBERS or not isfinite(used):
        raise CacheDataError("its time of use is not a finite number")
    if type(has_output) is not bool:
        raise CacheDataError("its output flag is not a boolean")
    if type(chunks) is not dict:
        raise CacheDataError("its chunks are not an object")
    if claims is not None and (
        type(claims) is not list or len(claims) % 2 or not set(map(type, claims)) <= _STRING
    ):
        raise CacheDataError("its claims are not an array of strings, two by two")
    if (claims is not None) != bool(ir_line):
        raise CacheDataError("it has claims without IR, or IR without claims")
    if claims is None and (chunks or warnings or has_output):
        raise CacheDataError("it has errors, yet chunks, build warnings or an output")
    if claims is not None:
        pairs = iter(claims)
        claims = tuple(zip(pairs, pairs, strict=True))
    problems = () if problems == [] else _diagnostics(problems, "its problems")
    warnings = () if warnings == [] else _diagnostics(warnings, "its warnings")
    texts = {target: decode_chunk(target, chunk) for target, chunk in chunks.items()}
    entry = Entry(name, problems, claims, warnings, has_output, None, ir_line or None, texts)
    return key, used, entry


def _diagnostics(value: Any, what: str) -> tuple[Diagnostic, ...]:
    found = []
    for pointer, message, level in rows(value, 3, what):
        if type(level) is not str or level not in _LEVELS:
            raise CacheDataError(f"an item of {what} has a level other than error or warning")
        if type(pointer) is not str or type(message) is not str:
            raise CacheDataError(f"an item of {what} is not [pointer, message, level]")
        found.append(Diagnostic("", pointer, message, _LEVELS[level]))
    return tuple(found)
