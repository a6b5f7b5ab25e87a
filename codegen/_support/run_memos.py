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

import inspect
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


_MISSING: Any = object()
"""What a memo table holds for an argument it has not seen."""


def per_run(function: Callable[P, R]) -> Callable[P, R]:
    """Remember `function`'s results by its positional arguments inside `run_memos()`. A
    hit costs a context-variable read and two dictionary lookups: these functions run once
    per field of a catalog, so a function of one argument gets a wrapper of one argument.
    Lookups use `get`, not `KeyError`: most calls are misses (names and descriptions are
    mostly distinct), and raising an exception per miss cost more than the lookups."""
    tables_of = _TABLES.get
    if _one_argument(function):

        def memoized_one(argument: Any) -> Any:
            tables = tables_of()
            if tables is None:
                return function(argument)  # type: ignore[call-arg]
            table = tables.get(function)
            if table is not None:
                found = table.get(argument, _MISSING)
                if found is not _MISSING:
                    return found
            result = function(argument)  # type: ignore[call-arg]
            tables.setdefault(function, {})[argument] = result
            return result

        return wraps(function)(memoized_one)  # type: ignore[return-value]

    @wraps(function)
    def memoized(*args: P.args, **kwargs: P.kwargs) -> R:
        tables = tables_of()
        if tables is None or kwargs:
            return function(*args, **kwargs)
        table = tables.get(function)
        if table is not None:
            found: R = table.get(args, _MISSING)
            if found is not _MISSING:
                return found
        result = function(*args, **kwargs)
        tables.setdefault(function, {})[args] = result
        return result

    return memoized


def _one_argument(function: Callable[..., Any]) -> bool:
    """Whether `function` takes exactly one positional argument and nothing else."""
    parameters = list(inspect.signature(function).parameters.values())
    return (
        len(parameters) == 1
        and parameters[0].kind
        in (parameters[0].POSITIONAL_ONLY, parameters[0].POSITIONAL_OR_KEYWORD)
        and parameters[0].default is parameters[0].empty
    )


def active_tables() -> int:
    """How many memo tables the current scope holds (0 outside any scope); for tests."""
    tables = _TABLES.get()
    return 0 if tables is None else len(tables)
