"""Where long work says how far it got, without knowing who listens.

A batch run on tens of thousands of tools takes a minute; the loops that do the work (the
pipeline's stages, the shares, the renderers' per-tool chunks) are deep below the command
that could show it. So they report to the reporter of the current run, if there is one:
`begin` a stage of `total` items, `advance` by the items done. Outside `reporting()` (every
library call, every run whose output is not a terminal) nothing listens and a report costs
one context-variable read. The command line attaches its status line
(`workflow.progress.Progress`), which decides what is worth drawing.

The reporter sits in a context variable, so threads and tasks see their own; a forked child
`detach`es it, so progress only ever comes from the process that owns the terminal.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol


class Reporter(Protocol):
    """What listens to a run's progress."""

    def begin(self, label: str, total: int) -> None:
        """A stage starts: `label` says what it does, `total` how many items it works
        (0: a step that is not counted)."""

    def advance(self, count: int) -> None:
        """`count` more items of the current stage are done."""

    def clear(self) -> None:
        """Take back whatever was drawn: other output follows."""


_REPORTER: ContextVar[Reporter | None] = ContextVar("codegen_progress", default=None)


@contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    """Send the progress of the work inside to `reporter` (None: to nobody)."""
    token = _REPORTER.set(reporter)
    try:
        yield
    finally:
        _REPORTER.reset(token)


def current() -> Reporter | None:
    """The reporter listening in this context, if any."""
    return _REPORTER.get()


def active() -> bool:
    """Whether anyone listens: work that costs something to count asks first."""
    return _REPORTER.get() is not None


def begin(label: str, total: int = 0) -> None:
    reporter = _REPORTER.get()
    if reporter is not None:
        reporter.begin(label, total)


def advance(count: int = 1) -> None:
    reporter = _REPORTER.get()
    if reporter is not None:
        reporter.advance(count)


def clear() -> None:
    reporter = _REPORTER.get()
    if reporter is not None:
        reporter.clear()


def detach() -> None:
    """Stop reporting in this context: a forked child's work must never draw on the
    parent's terminal."""
    _REPORTER.set(None)
