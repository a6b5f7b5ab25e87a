"""Which checker checks a language's programs, and the declarations it is given.

Both tables are keyed by the runtime's language. A checker is imported when first needed
(a host that never checks never imports one); a language with no checker, or whose checker
cannot be imported or run here, is not checked, and the registry says why once in its log.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from .outcome import CheckerFactory

FACTORIES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "python": ("codegen.codemode.checkers.python_checker", "python_checker"),
        "typescript": ("codegen.codemode.checkers.typescript_checker", "typescript_checker"),
    }
)
"""language -> (module, factory): `factory(declarations, limits)` (`outcome.CheckerFactory`)."""


class NoChecker(Exception):
    """No checker for this language here; the message says why."""


def checker_factory(language: str) -> CheckerFactory:
    """The factory of `language`'s checker; `NoChecker` when there is none here."""
    if type(language) is not str or language not in FACTORIES:
        raise NoChecker(f"no program checker for {language!r}")
    module, name = FACTORIES[language]
    try:
        factory: CheckerFactory = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise NoChecker(f"the {language} checker cannot be loaded: {error}") from None
    return factory


def declarations_renderer(language: str) -> Callable[[Any], str]:
    """The SDK body of `language`'s model-facing section: the declarations a checker holds
    a program against (what `catalog.describe` and the full section show)."""
    if language == "python":
        from ...render.sections.python import render_python_section_sdk

        return render_python_section_sdk
    if language == "typescript":
        from ...render.sections.typescript import render_typescript_section_sdk

        return render_typescript_section_sdk
    raise NoChecker(f"no declarations for {language!r}")
