"""Readers of JSON data decoded from a cache file, each checking the type it expects.

A cache folder may come with a repository, so nothing decoded from it is trusted: every
value is checked by one of these before it becomes part of an entry, and anything else
raises `CacheDataError`. Messages name the part and the kind of value found, never the
value itself: a file's text has no place in a terminal.

The readers of arrays check their items' types with `map` and `set` (in C) rather than item
by item: a warm build reads thousands of them.
"""

from __future__ import annotations

import json
from itertools import chain
from typing import Any

import jiter


class CacheDataError(ValueError):
    """Data read from a cache file that is not what the cache writes."""


_STRING = frozenset({str})
_LIST = frozenset({list})


def json_value(line: bytes, what: str) -> Any:
    """One line's JSON value: by `jiter` (Rust: a cache's lines of chunks in 0.55 of the
    standard library's time, of IR in 0.67), else by the standard library, which also takes
    what `jiter` refuses (a lone surrogate, kept as it is; nesting deeper than 200 levels)
    and says what is wrong."""
    try:
        return jiter.from_json(line, cache_mode="keys")
    except ValueError:
        pass
    try:
        return json.loads(line.decode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:
        raise CacheDataError(f"{what} is not UTF-8 text") from None
    except ValueError as error:
        raise CacheDataError(f"{what} is not JSON ({error})") from None
    except RecursionError:
        raise CacheDataError(f"{what} nests too deeply") from None


def text(value: Any, what: str) -> str:
    if type(value) is not str:
        raise CacheDataError(f"{what} is a string, not {kind(value)}")
    return value


def optional_text(value: Any, what: str) -> str | None:
    if value is not None and type(value) is not str:
        raise CacheDataError(f"{what} is a string or null, not {kind(value)}")
    return value


def texts(value: Any, what: str) -> tuple[str, ...]:
    """An array of strings, as a tuple."""
    if type(value) is not list or not set(map(type, value)) <= _STRING:
        raise CacheDataError(f"{what} is not an array of strings")
    return tuple(value)


def flag(value: Any, what: str) -> bool:
    if type(value) is not bool:
        raise CacheDataError(f"{what} is a boolean, not {kind(value)}")
    return value


def rows(value: Any, width: int, what: str) -> list[list[Any]]:
    """An array of arrays of `width` items each."""
    if (
        type(value) is not list
        or not set(map(type, value)) <= _LIST
        or not set(map(len, value)) <= {width}
    ):
        raise CacheDataError(f"{what} is not an array of arrays of {width} items")
    return value


def pairs(value: Any, what: str) -> tuple[tuple[str, str], ...]:
    """An array of two-string arrays, as a tuple of pairs."""
    found = tuple(map(tuple, rows(value, 2, what)))
    if not set(map(type, chain.from_iterable(found))) <= _STRING:
        raise CacheDataError(f"{what} is not an array of pairs of strings")
    return found


def array(value: Any, what: str) -> list[Any]:
    if type(value) is not list:
        raise CacheDataError(f"{what} is an array, not {kind(value)}")
    return value


_KINDS = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def kind(value: Any) -> str:
    """What a value is, for a message."""
    return _KINDS.get(type(value), "another value")
