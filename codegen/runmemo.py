"""Memos that live for one library call, never for the process.

Names, keys and descriptions repeat across a catalog's tools, so the pipeline and the
renderers remember what they computed for them. A module-level cache would keep growing in
a long-lived host (a server regenerating SDKs as tools change) and would outlive the inputs
it was filled from. Instead, each public entry point opens `run_memos()`: functions marked
`@per_run` remember their results in tables that belong to that call and are dropped when it
returns. Scopes nest (an inner call shares the outer call's tables); outside any scope a
`@per_run` function just computes. The tables sit in a context variable, so threads and
asyncio tasks each see their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_TABLES: ContextVar[dict[Any, dict[Any, Any]] | None] = ContextVar(
    "codegen_run_memos", default=None
)


@contextmanager
def run_memos() -> Iterator[None]:
    """One call's memo tables: created on entry (unless a caller's scope is open), dropped
    on exit."""
    if _TABLES.get() is not None:
        yield
        return
    token = _TABLES.set({})
    try:
        yield
    finally:
        _TABLES.reset(token)


def per_run(function: Callable[P, R]) -> Callable[P, R]:
    """Remember `function`'s results by its positional arguments inside `run_memos()`."""
    tables_of = _TABLES.get

    @wraps(function)
    def memoized(*args: P.args, **kwargs: P.kwargs) -> R:
        tables = tables_of()
        if tables is None or kwargs:
            return function(*args, **kwargs)
        table = tables.get(function)
        if table is None:
            table = tables[function] = {}
        try:
            result: R = table[args]
        except KeyError:
            result = table[args] = function(*args, **kwargs)
        return result

    return memoized


def active_tables() -> int:
    """How many memo tables the current scope holds (0 outside any scope); for tests."""
    tables = _TABLES.get()
    return 0 if tables is None else len(tables)
