"""Lossless JSON snapshots: arguments and results cross the executor as frozen JSON.

A tool call's arguments are copied the moment the call is created, so nothing the caller
does afterwards (or a listener, or the handler itself) can change what policies saw. Only
values that survive a JSON round trip exactly are accepted: dicts with string keys, lists,
strings, booleans, None, integers and finite floats. Tuples, sets, bytes, NaN, infinities,
non-string keys, cycles and arbitrary objects are refused with the path of the first bad value.
"""

from __future__ import annotations

import math
import weakref
from typing import Any, NoReturn

MAX_DEPTH = 512
_LEAVE = object()
"""Stack marker: a container's children are done, it is no longer on the current path."""


class NotJsonError(TypeError):
    """A value that is not lossless JSON; `path` says where (`$`, `$.a[2]`)."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class FrozenDict(dict[str, Any]):
    """A dict that cannot be changed (still a `dict`, so `json` and `jsonschema` accept it)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("tool arguments and results are frozen")

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return thaw(self)  # type: ignore[no-any-return]


class FrozenList(list[Any]):
    """A list that cannot be changed (still a `list`)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("tool arguments and results are frozen")

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return thaw(self)  # type: ignore[no-any-return]


_PLAIN = frozenset({int, str, bool, type(None)})
"""Types copied as they are (exactly these: a subclass is converted)."""
_NUMBERS = frozenset({int, float, bool})


def _all_plain(values: Any) -> bool:
    """Whether every value is copied as it is: a plain type, or a finite float (checked in
    bulk; a mixed or huge-integer collection answers False and is walked one by one)."""
    types = set(map(type, values))
    if types <= _PLAIN:
        return True
    if types <= _NUMBERS:
        try:
            return all(map(math.isfinite, values))
        except OverflowError:
            return False
    return False


def snapshot(value: Any, *, freeze: bool = True) -> Any:
    """A lossless JSON copy of `value` (frozen unless `freeze=False`). Iterative, so deep
    values cost no recursion, and linear: scalars inside a container are checked by type in
    bulk, and a path is spelled only for the value it reports. A frozen value this module
    made is returned as it is (it cannot have changed). Raises `NotJsonError` for anything
    that is not JSON."""
    if freeze and _is_sealed(value):
        return value
    holder: list[Any] = [None]
    dict_type = FrozenDict if freeze else dict
    list_type = FrozenList if freeze else list
    # (value, where, depth, container, slot); `where` is (parent's where, key) or None, the
    # path's pieces, joined only on failure. Containers are filled after their children.
    pending: list[tuple[Any, Any, int, Any, Any]] = [(value, None, 0, holder, 0)]
    active: set[int] = set()  # containers on the current path: meeting one again is a cycle
    finish: list[tuple[Any, Any, Any]] = []
    while pending:
        item, where, depth, container, slot = pending.pop()
        if container is _LEAVE:
            active.discard(slot)
            continue
        if depth > MAX_DEPTH:
            raise NotJsonError(value_path(where), f"nested deeper than {MAX_DEPTH} levels")
        if type(item) in _PLAIN:
            container[slot] = item
        elif isinstance(item, dict):
            if id(item) in active:
                raise NotJsonError(value_path(where), "the value contains itself")
            copy: dict[str, Any] = dict(item)
            if not set(map(type, copy)) <= {str}:
                key = next(k for k in copy if not isinstance(k, str))
                raise NotJsonError(value_path(where), f"key {key!r} is not a string")
            if _all_plain(copy.values()):
                finish.append((container, slot, copy))
                continue
            pending.append((None, where, depth, _LEAVE, id(item)))
            for key, child in copy.items():
                if type(child) not in _PLAIN:
                    pending.append((child, (where, key), depth + 1, copy, key))
            active.add(id(item))
            finish.append((container, slot, copy))
        elif isinstance(item, list):
            if id(item) in active:
                raise NotJsonError(value_path(where), "the value contains itself")
            items: list[Any] = list(item)
            if _all_plain(items):
                finish.append((container, slot, items))
                continue
            pending.append((None, where, depth, _LEAVE, id(item)))
            for index, child in enumerate(items):
                if type(child) not in _PLAIN:
                    pending.append((child, (where, index), depth + 1, items, index))
            active.add(id(item))
            finish.append((container, slot, items))
        else:
            container[slot] = _scalar(item, where)
    for container, slot, built in reversed(finish):
        container[slot] = dict_type(built) if isinstance(built, dict) else list_type(built)
    result = holder[0]
    if freeze and isinstance(result, dict | list):
        identity = id(result)
        _SEALED[identity] = weakref.ref(result, lambda _: _SEALED.pop(identity, None))
    return result


def _scalar(item: Any, where: Any) -> Any:
    """A float, or a subclass of a JSON type, as the plain JSON value; else `NotJsonError`."""
    if isinstance(item, bool):
        return bool(item)
    if isinstance(item, str):
        return str(item)
    if isinstance(item, int):
        return int(item)
    if isinstance(item, float):
        if not math.isfinite(item):
            raise NotJsonError(value_path(where), f"{item!r} is not a finite number")
        return float(item)
    raise NotJsonError(value_path(where), f"{type(item).__name__} is not a JSON value")


def value_path(where: Any) -> str:
    """`$`, `$.a[2]`, `$['a b']` from the (parent, key) chain of a value."""
    pieces: list[str] = []
    while where is not None:
        where, key = where
        if isinstance(key, int):
            pieces.append(f"[{key}]")
        else:
            pieces.append(f".{key}" if key.isidentifier() else f"[{key!r}]")
    return "$" + "".join(reversed(pieces))


_SEALED: dict[int, weakref.ref[Any]] = {}
"""The roots `snapshot` froze, by id: nothing can change them, so a second snapshot is
free (an entry leaves with its value)."""


def _is_sealed(value: Any) -> bool:
    if not isinstance(value, FrozenDict | FrozenList):
        return False
    ref = _SEALED.get(id(value))
    return ref is not None and ref() is value


def thaw(value: Any) -> Any:
    """A plain, mutable copy of a (frozen) JSON value."""
    return snapshot(value, freeze=False)
