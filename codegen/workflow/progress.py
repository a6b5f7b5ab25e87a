"""Progress on a terminal, silence everywhere else.

Long runs (a catalog of thousands of tools, a server that is slow to answer) should show
that they are alive, but a log file or a CI transcript must not fill with carriage returns,
and a run on a few tools should stay as quiet as it always was. So the command line attaches
a `Progress` to a run (`_support.progress.reporting`) only when stderr is a terminal and the
user did not ask for `--quiet` (or when `--progress` says so), and the line shows a counted
stage only once the run has one of at least `LONG_RUN` items; it is one line, rewritten in
place and erased before anything else is printed. Standard library only, no `shutil`: a
progress bar library costs a cold start more than the whole run of a small catalog.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from types import TracebackType
from typing import TextIO

from .._support import progress as reports
from ..errors import Diagnostic

_ERASE = "\r\x1b[K"

LONG_RUN = 1000
"""Items of one stage (tools, files) from which a run is long enough to show: about a
second of work for the slowest stage on one core. Below it nothing is drawn, so the common
case stays quiet; from it on, every stage of the run is."""


class Progress:
    """One status line on `stream`, throttled to `interval` seconds between redraws. It is
    a `_support.progress.Reporter`: the stages `begin` and `advance`, and the line says what
    is being done and how far (`checking tools: 12,000 of 30,050 (39%)`), after the
    command's own `phase` (`tools.py (1/7)`) when it set one."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool | None = None,
        interval: float = 0.1,
        threshold: int = LONG_RUN,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty()) if callable(isatty) else False
        self.enabled = enabled
        self.interval = interval
        self.threshold = threshold
        self.long = False
        """Whether the run has had a stage of at least `threshold` items."""
        self._shown = False
        self._last = 0.0
        self._phase = ""
        self._label = ""
        self._total = 0
        self._done = 0

    def phase(self, text: str) -> None:
        """The command's step, shown before the stage its work begins (`""`: none)."""
        self._phase = text
        self._label, self._total, self._done = "", 0, 0
        if self.long:
            self._draw(force=True)

    def begin(self, label: str, total: int) -> None:
        self._label, self._total, self._done = label, total, 0
        if total >= self.threshold:
            self.long = True
        if self.long:
            self._draw(force=True)

    def advance(self, count: int) -> None:
        self._done += count
        if self.long:
            self._draw(force=self._done >= self._total > 0)  # a finished stage shows 100%

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and self._shown and now - self._last < self.interval:
            return
        text = self._label
        if self._total:
            done = min(self._done, self._total)
            text += f": {done:,} of {self._total:,} ({100 * done // self._total}%)"
        self._write(": ".join(part for part in (self._phase, text) if part), now)

    def update(self, message: str, *, force: bool = False) -> None:
        """Show `message`, whatever the stages' sizes (a harvest is long by nature);
        skipped when the previous redraw is too recent (unless `force`)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and self._shown and now - self._last < self.interval:
            return
        self._write(message, now)

    def _write(self, message: str, now: float) -> None:
        self._last = now
        width = max(_columns(self.stream) - 1, 10)
        line = message if len(message) <= width else message[: width - 1] + "…"
        self.stream.write(_ERASE + line)
        self.stream.flush()
        self._shown = True

    def clear(self) -> None:
        """Erase the status line, so the next output starts on a clean line."""
        if self._shown:
            self.stream.write(_ERASE)
            self.stream.flush()
            self._shown = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.clear()


def _columns(stream: TextIO) -> int:
    """The terminal's width (`COLUMNS` first, as `shutil.get_terminal_size` has it), 80
    when unknown."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def run_progress() -> Progress:
    """The line the command line attached to this run, or one that draws nothing."""
    line = reports.current()
    return line if isinstance(line, Progress) else Progress(enabled=False)


class Console:
    """What the workflow commands print on stderr, by verbosity: errors always, notes and
    warnings unless `--quiet`, details only with `--verbose`; the run's progress line
    (`run_progress`) is erased first so messages never land in the middle of it."""

    def __init__(
        self, *, quiet: bool = False, verbose: bool = False, stream: TextIO | None = None
    ) -> None:
        self.quiet = quiet
        self.verbose = verbose and not quiet
        self.stream = stream if stream is not None else sys.stderr
        self.progress = run_progress()

    def _write(self, text: str) -> None:
        self.progress.clear()
        self.stream.write(text if text.endswith("\n") else text + "\n")
        self.stream.flush()

    def error(self, text: str) -> None:
        self._write(text)

    def note(self, text: str) -> None:
        if not self.quiet:
            self._write(text)

    def detail(self, text: str) -> None:
        if self.verbose:
            self._write(text)

    def diagnostics(
        self, diagnostics: Iterable[Diagnostic], *, warnings: bool | None = None
    ) -> None:
        """`source:pointer: level: message` lines; warnings are left out under `--quiet`
        unless `warnings` says (`--strict`: they fail the run, so they are shown)."""
        shown = not self.quiet if warnings is None else warnings
        for diagnostic in diagnostics:
            if diagnostic.is_error or shown:
                self._write(diagnostic.format())
