"""Which code runtime runs a language's programs: one factory per language name.

A host that lets its user pick the program language (`codegen serve --lang`, a script) asks
here instead of importing a concrete runtime, so a new runtime is one entry in `RUNTIMES` and
nothing else changes. `RUNTIMES` has an entry for every language of the dispatch tables
(`languages.py`), so a host that offers a language's `run_code` flavor can run its programs.
A language without a runtime (or whose runtime module cannot be imported here) is refused
with `RuntimeUnavailableError`, naming the languages that do have one; lookups are own-key
only and no language ever falls back to another.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ...errors import CodegenError

if TYPE_CHECKING:
    from ..run_code.run_limits import RuntimeLimits
    from .worker_host import WorkerRuntime

RuntimeFactory = Callable[..., "WorkerRuntime"]
"""`factory(limits, sandbox=..., spare=..., **options)`: a runtime (`language`, async `run`,
async `check`, async `aclose`) contained by the sandbox setting (`auto`, `bubblewrap`,
`namespaces`, `none`)."""


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


def _python(limits: RuntimeLimits | None, **options: Any) -> WorkerRuntime:
    from .python import PythonRuntime

    return PythonRuntime(limits, **options)


def _typescript(limits: RuntimeLimits | None, **options: Any) -> WorkerRuntime:
    from .typescript import TypeScriptRuntime

    return TypeScriptRuntime(limits, **options)


RUNTIMES: Mapping[str, RuntimeFactory] = MappingProxyType(
    {"python": _python, "typescript": _typescript}
)
"""language -> factory. Options besides `sandbox` and `spare`: `python=` for Python;
`node=`, `stripper=` and `typescript=` for TypeScript (see `TypeScriptRuntime`)."""


def runtime_languages() -> tuple[str, ...]:
    return tuple(RUNTIMES)


def runtime_for(
    language: str,
    limits: RuntimeLimits | None = None,
    *,
    sandbox: str = "auto",
    spare: bool = True,
    **options: Any,
) -> WorkerRuntime:
    """A new runtime for `language`. `options` go to that language's runtime; an option it
    does not take is a `TypeError`."""
    if type(language) is not str or language not in RUNTIMES:
        from ..presentation.languages import known_languages

        reason = (
            "its SDK can be rendered, but programs in it cannot run yet"
            if language in known_languages()
            else ""
        )
        raise RuntimeUnavailableError(language, runtime_languages(), reason)
    return RUNTIMES[language](limits, sandbox=sandbox, spare=spare, **options)


def create_runtime(language: str, sandbox: str = "auto") -> WorkerRuntime:
    """A new runtime for `language` with the default limits and a spare worker."""
    return runtime_for(language, sandbox=sandbox)
