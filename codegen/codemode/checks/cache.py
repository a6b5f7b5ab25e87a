"""The registry's warm checkers: one per (language, declarations bytes, limits).

A run's visible tool set is matched by identity first (the same `ToolSpec` objects, as
discovery matches them), so a run costs no rendering once its tool set has been seen; the
declarations are rendered once per tool set (in a thread: thousands of tools take seconds),
and a checker is made once per distinct declarations text, so scopes that see the same SDK
share one, and a change of tools that leaves the SDK's bytes alone keeps it warm. The last
`CHECKERS_KEPT` checkers are kept; one pushed out is closed by whoever pushed it.

Everything here is blocking and thread-safe: the registry calls it in a thread.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .checkers import NoChecker, checker_factory, declarations_renderer
from .outcome import CheckLimits, ProgramChecker

log = logging.getLogger("codegen.codemode.checks")

CHECKERS_KEPT = 4
"""Declarations texts whose checkers are kept warm (scopes that see different tools)."""
TOOL_SETS_KEPT = 8
"""Tool sets whose declarations are remembered."""


@dataclass
class _ToolSet:
    language: str
    specs: tuple[Any, ...]
    lock: threading.Lock = field(default_factory=threading.Lock)
    digest: str | None = None
    declarations: str | None = None


class CheckerCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._making = threading.Lock()
        self._tool_sets: list[_ToolSet] = []
        self._checkers: OrderedDict[tuple[str, str, CheckLimits], ProgramChecker] = OrderedDict()
        self._missing: dict[str, str] = {}
        """Languages with no checker here, and why (said once in the log)."""

    def checker(
        self,
        language: str,
        specs: Sequence[Any],
        catalog: Callable[[], Any],
        limits: CheckLimits,
    ) -> tuple[ProgramChecker | None, list[ProgramChecker]]:
        """The warm checker of this tool set (None when the language has none here), and
        the checkers pushed out to make room, for the caller to close."""
        if language in self._missing:
            return None, []
        tool_set = self._tool_set(language, tuple(specs))
        with tool_set.lock:
            if tool_set.declarations is None:
                try:
                    render = declarations_renderer(language)
                except NoChecker as missing:
                    self._unavailable(language, str(missing))
                    return None, []
                tool_set.declarations = render(catalog())
                tool_set.digest = hashlib.sha256(tool_set.declarations.encode()).hexdigest()
            declarations, digest = tool_set.declarations, tool_set.digest
        assert digest is not None
        key = (language, digest, limits)
        with self._making:
            with self._lock:
                found = self._checkers.get(key)
                if found is not None:
                    self._checkers.move_to_end(key, last=False)
                    return found, []
            try:
                made = checker_factory(language)(declarations, limits)
            except Exception as error:  # not installed, cannot start: not checked here
                self._unavailable(language, str(error) or type(error).__name__)
                return None, []
            with self._lock:
                self._checkers[key] = made
                self._checkers.move_to_end(key, last=False)
                evicted = []
                while len(self._checkers) > CHECKERS_KEPT:
                    evicted.append(self._checkers.popitem(last=True)[1])
        return made, evicted

    def _tool_set(self, language: str, specs: tuple[Any, ...]) -> _ToolSet:
        with self._lock:
            for found in self._tool_sets:
                if (
                    found.language == language
                    and len(found.specs) == len(specs)
                    and all(a is b for a, b in zip(found.specs, specs, strict=True))
                ):
                    return found
            made = _ToolSet(language, specs)
            self._tool_sets = [made, *self._tool_sets[: TOOL_SETS_KEPT - 1]]
            return made

    def _unavailable(self, language: str, why: str) -> None:
        with self._lock:
            if language not in self._missing:
                self._missing[language] = why
                log.warning(
                    "run_code programs in %s are not checked before they run: %s", language, why
                )

    def unavailable(self, language: str) -> str | None:
        """Why `language`'s programs are not checked here, once that is known."""
        return self._missing.get(language)

    def drain(self) -> list[ProgramChecker]:
        """Every checker, forgotten: for the caller to close."""
        with self._lock:
            checkers = list(self._checkers.values())
            self._checkers.clear()
            self._tool_sets = []
        return checkers
