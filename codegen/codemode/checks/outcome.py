"""What a program check gives back, the same for every language and checker.

A checker turns its own diagnostics into `ProgramDiagnostic`s on the program's own lines,
each marked `certain` only when no value the checker could not know makes it true (a name
found by search, `Any`, a value read from a result never refuses). The registry decides from
the mode (`refuse`, `warn`, `off`) what a run does with them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

MistakeKind = Literal[
    "unknown-tool",
    "unknown-argument",
    "missing-argument",
    "wrong-type",
    "not-allowed-value",
    "arity",
    "other",
]
"""What a diagnostic says is wrong: the kinds that refuse a run (all but "other", which only
ever warns), as the checker's message is classified."""

CheckMode = Literal["refuse", "warn", "off"]
CHECK_MODES: tuple[CheckMode, ...] = ("refuse", "warn", "off")


@dataclass(frozen=True, slots=True)
class ProgramDiagnostic:
    line: int
    """1-based line of the program as the model wrote it."""
    column: int
    """1-based column, 0 when the checker gives none."""
    kind: MistakeKind
    message: str
    """The checker's message, rewritten to the program's own tool names."""
    certain: bool
    """True only for a definite mistake: the run is refused for it under `refuse`."""
    help: str = ""
    """The closest tool names for an unknown one, the tool's declaration for a wrong call."""


CheckStatus = Literal["checked", "timeout", "crashed", "skipped"]


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    status: CheckStatus
    """`checked`: the diagnostics are the checker's; otherwise the run goes on unchecked and
    `note` says why (a checker that times out or crashes never blocks a run)."""
    diagnostics: tuple[ProgramDiagnostic, ...] = ()
    note: str = ""
    elapsed: float = 0.0
    """Seconds the check took (for the result's note and the benchmarks)."""

    @property
    def refusing(self) -> tuple[ProgramDiagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.certain)


@dataclass(frozen=True, slots=True)
class CheckLimits:
    """What a checker may take: it parses untrusted text, so it runs contained, and one
    that goes past a limit is stopped and the run goes on unchecked, with a note."""

    timeout: float = 2.0
    """Wall-clock seconds one check may take once the checker is warm."""
    start_timeout: float = 20.0
    """Wall-clock seconds a checker may take to start and read the declarations."""
    memory_bytes: int = 2 * 1024**3
    """Address space of the checker's process (RLIMIT_AS)."""
    sandbox: str = "auto"
    """How the checker is contained: the runtime's sandbox setting (`none` runs it with the
    limits above only)."""
    programs: tuple[tuple[str, str], ...] = ()
    """The mounted runtime's own programs a checker should use too (`("node", path)`,
    `("typescript", dir)`), so the check runs the same Node and package as the run."""


class ProgramChecker(Protocol):
    """One language's checker, kept warm for one visible tool set (one declarations text);
    made again when the SDK's bytes change. A checker may also have a blocking `warm()`
    that starts it and reads the declarations (the registry calls it off the run path,
    in a thread, when it has one)."""

    language: str

    async def check(self, program: str) -> CheckOutcome:
        """The program's diagnostics against the declarations this checker was made for."""
        ...

    async def aclose(self) -> None:
        """Stop whatever the checker keeps running."""
        ...


CheckerFactory = Callable[[str, CheckLimits], ProgramChecker]
"""`factory(declarations, limits)`: a checker for one declarations text, the SDK body of the
model-facing section (what `describe` and the full section show). Making one must be cheap
or blocking only (the registry makes it in a thread); starting a process waits for the first
check or `warm()`."""
