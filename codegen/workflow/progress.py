"""Progress on a terminal, silence everywhere else.

Long runs (a catalog of thousands of tools, a server that is slow to answer) should show
that they are alive, but a log file or a CI transcript must not fill with carriage returns.
So progress is drawn only when the stream is a TTY and the user did not ask for `--quiet`,
on one line that is rewritten in place and erased before anything else is printed.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterable
from types import TracebackType
from typing import TextIO

from ..errors import Diagnostic

_ERASE = "\r\x1b[K"


class Progress:
    """One status line on `stream`, throttled to `interval` seconds between redraws."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool | None = None,
        interval: float = 0.1,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty()) if callable(isatty) else False
        self.enabled = enabled
        self.interval = interval
        self._shown = False
        self._last = 0.0

    def update(self, message: str, *, force: bool = False) -> None:
        """Show `message`; skipped when the previous redraw is too recent (unless `force`)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and self._shown and now - self._last < self.interval:
            return
        self._last = now
        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 10)
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


class Console:
    """What the workflow commands print on stderr, by verbosity: errors always, notes and
    warnings unless `--quiet`, details only with `--verbose`; the progress line is erased
    first so messages never land in the middle of it."""

    def __init__(
        self, *, quiet: bool = False, verbose: bool = False, stream: TextIO | None = None
    ) -> None:
        self.quiet = quiet
        self.verbose = verbose and not quiet
        self.stream = stream if stream is not None else sys.stderr
        self.progress = Progress(self.stream)
        self.progress.enabled = self.progress.enabled and not quiet

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

    def diagnostics(self, diagnostics: Iterable[Diagnostic]) -> None:
        """`source:pointer: level: message` lines; warnings are left out under `--quiet`."""
        for diagnostic in diagnostics:
            if diagnostic.is_error or not self.quiet:
                self._write(diagnostic.format())
