"""What failed, in words: the innermost exceptions of (nested) exception groups, each with
its type, its message and the notes added on its way out.

A task group reports "unhandled errors in a TaskGroup (1 sub-exception)", which names
nothing; the exceptions inside it, and the notes code added to say where it was (which
upstream, which step), are what a reader needs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Failure:
    """One innermost exception and the notes of every group it came out through, outermost
    first, then its own."""

    error: BaseException
    notes: tuple[str, ...]

    def text(self) -> str:
        """`Type: message (note; note)`, on one line."""
        message = " ".join(str(self.error).split())
        said = f"{type(self.error).__name__}: {message}" if message else type(self.error).__name__
        return f"{said} ({'; '.join(self.notes)})" if self.notes else said


def innermost(error: BaseException) -> list[Failure]:
    """The exceptions at the leaves of `error` (itself when it is no group), in order."""
    found: list[Failure] = []
    pending: list[tuple[BaseException, tuple[str, ...]]] = [(error, ())]
    while pending:
        each, above = pending.pop()
        notes = (*above, *(str(note) for note in getattr(each, "__notes__", ())))
        if isinstance(each, BaseExceptionGroup) and each.exceptions:
            pending.extend((inner, notes) for inner in reversed(each.exceptions))
        else:
            found.append(Failure(each, notes))
    return found


def failure_text(error: BaseException) -> str:
    """Every innermost exception of `error` as `Type: message (notes)`, `; `-joined."""
    failures = innermost(error)
    if len(failures) == 1:
        return failures[0].text()
    return f"{len(failures)} failures: " + "; ".join(failure.text() for failure in failures)
