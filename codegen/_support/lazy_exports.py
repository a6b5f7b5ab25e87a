"""Lazy package exports: a name is imported from its module on first use, so importing a
package costs only the modules a caller touches (the CLI's start-up depends on it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    package: str, namespace: dict[str, Any], locations: Mapping[str, str], exported: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__`: `locations` maps each exported name to the
    submodule that defines it; a name once loaded is kept in the package's `namespace`."""

    def __getattr__(name: str) -> Any:
        if name in locations:
            from importlib import import_module

            value = getattr(import_module(f".{locations[name]}", package), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return list(exported)

    return __getattr__, __dir__
