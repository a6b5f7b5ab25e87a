"""Which code runtime runs a language's programs: one factory per language name.

A host that lets its user pick the program language (`codegen serve --lang`) asks here
instead of importing a concrete runtime, so a new runtime is one entry in `RUNTIMES` and
nothing else changes. A language with an SDK renderer but no runtime yet (or a runtime
whose module cannot be imported here) is refused with `RuntimeUnavailableError`, naming the
languages that do have one; no language ever falls back to another.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from ..errors import CodegenError

RuntimeFactory = Callable[[str], Any]
"""`factory(sandbox)`: a runtime (`language`, async `run`, async `aclose`) contained by
the sandbox setting (`auto`, `bubblewrap`, `namespaces`, `none`)."""


class RuntimeUnavailableError(CodegenError):
    """No runtime runs programs in this language here."""

    exit_code = 2

    def __init__(self, language: object, known: tuple[str, ...], reason: str = "") -> None:
        self.language = language
        self.known = known
        names = ", ".join(f'"{name}"' for name in known)
        because = f": {reason}" if reason else ""
        super().__init__(
            f"no code runtime for language {language!r}{because} (languages with a runtime: {names})"
        )


def _python(sandbox: str) -> Any:
    from .python_runtime import PythonRuntime

    return PythonRuntime(sandbox=sandbox)


RUNTIMES: Mapping[str, RuntimeFactory] = MappingProxyType({"python": _python})


def runtime_languages() -> tuple[str, ...]:
    return tuple(RUNTIMES)


def create_runtime(language: str, sandbox: str = "auto") -> Any:
    """A new runtime for `language`; own-key lookup only, no fallback."""
    if type(language) is not str or language not in RUNTIMES:
        from .languages import known_languages

        reason = (
            "its SDK can be rendered, but programs in it cannot run yet"
            if language in known_languages()
            else ""
        )
        raise RuntimeUnavailableError(language, runtime_languages(), reason)
    return RUNTIMES[language](sandbox)
