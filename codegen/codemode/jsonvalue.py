"""Lossless JSON snapshots: arguments and results cross the executor as frozen JSON.

A tool call's arguments are copied the moment the call is created, so nothing the caller
does afterwards (or a listener, or the handler itself) can change what policies saw. Only
values that survive a JSON round trip exactly are accepted: dicts with string keys, lists,
strings, booleans, None, integers and finite floats. Tuples, sets, bytes, NaN, infinities,
non-string keys, cycles and arbitrary objects are refused with the path of the first bad value.
"""

from __future__ import annotations

import math
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


def snapshot(value: Any, *, freeze: bool = True) -> Any:
    """A lossless JSON copy of `value` (frozen unless `freeze=False`). Iterative, so deep
    values cost no recursion; raises `NotJsonError` for anything that is not JSON."""
    holder: list[Any] = [None]
    dict_type = FrozenDict if freeze else dict
    list_type = FrozenList if freeze else list
    # (value, path, depth, container, slot); containers are filled after their children
    pending: list[tuple[Any, str, int, Any, Any]] = [(value, "$", 0, holder, 0)]
    active: set[int] = set()  # containers on the current path: meeting one again is a cycle
    finish: list[tuple[Any, Any, Any]] = []
    while pending:
        item, path, depth, container, slot = pending.pop()
        if container is _LEAVE:
            active.discard(slot)
            continue
        if depth > MAX_DEPTH:
            raise NotJsonError(path, f"nested deeper than {MAX_DEPTH} levels")
        if item is None or isinstance(item, bool | str):
            container[slot] = item
        elif isinstance(item, int):
            container[slot] = int(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise NotJsonError(path, f"{item!r} is not a finite number")
            container[slot] = float(item)
        elif isinstance(item, dict):
            if id(item) in active:
                raise NotJsonError(path, "the value contains itself")
            copy: dict[str, Any] = {}
            pending.append((None, path, depth, _LEAVE, id(item)))
            for key, child in item.items():
                if not isinstance(key, str):
                    raise NotJsonError(path, f"key {key!r} is not a string")
                copy[key] = None
                pending.append(
                    (
                        child,
                        f"{path}.{key}" if key.isidentifier() else f"{path}[{key!r}]",
                        depth + 1,
                        copy,
                        key,
                    )
                )
            active.add(id(item))
            finish.append((container, slot, copy))
        elif isinstance(item, list):
            if id(item) in active:
                raise NotJsonError(path, "the value contains itself")
            items: list[Any] = [None] * len(item)
            pending.append((None, path, depth, _LEAVE, id(item)))
            for index, child in enumerate(item):
                pending.append((child, f"{path}[{index}]", depth + 1, items, index))
            active.add(id(item))
            finish.append((container, slot, items))
        else:
            raise NotJsonError(path, f"{type(item).__name__} is not a JSON value")
    for container, slot, built in reversed(finish):
        container[slot] = dict_type(built) if isinstance(built, dict) else list_type(built)
    return holder[0]


def thaw(value: Any) -> Any:
    """A plain, mutable copy of a (frozen) JSON value."""
    return snapshot(value, freeze=False)
