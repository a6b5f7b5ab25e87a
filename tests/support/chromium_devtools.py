"""A headless Chromium driven over the DevTools protocol, with the standard library only.

Chromium's `--remote-debugging-pipe` reads protocol messages on fd 3 and writes them on fd 4,
each a JSON object ended by a NUL byte; no WebSocket, port or client library is needed. A
small Python stub puts the two pipe ends on fds 3 and 4 and executes Chromium in its place
(so the process this module started is the browser). Every wait is bounded by a generous
deadline and nothing measures time: a slow machine only waits longer.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

DEADLINE = 120.0
"""Seconds any one wait may take before the test fails (never a measurement)."""

_STUB = (
    "import os, sys\n"
    "read, write = int(sys.argv[1]), int(sys.argv[2])\n"
    "os.dup2(read, 3)\n"
    "os.dup2(write, 4)\n"
    "os.close(read)\n"
    "os.close(write)\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)
"""Runs in the child: the pipe ends (at fds >= 10, so neither is 3 or 4) onto fds 3 and 4."""


class DevToolsError(Exception):
    """The browser answered a command with an error, closed the pipe, or took too long."""


class Browser:
    """One headless Chromium; `page()` opens a tab and attaches to it."""

    def __init__(self, executable: str, flags: Sequence[str], profile: Path, log: Path) -> None:
        to_browser_read, to_browser_write = os.pipe()
        from_browser_read, from_browser_write = os.pipe()
        child_read = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD_CLOEXEC, 10)
        child_write = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._log = log
        with open(log, "wb") as stderr:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _STUB,
                    str(child_read),
                    str(child_write),
                    executable,
                    *flags,
                    f"--user-data-dir={profile}",
                    "--remote-debugging-pipe",
                    "about:blank",
                ],
                pass_fds=(child_read, child_write),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
            )
        os.close(child_read)
        os.close(child_write)
        self._write = to_browser_write
        self._read = from_browser_read
        self._buffer = b""
        self._last_id = 0
        self.events: list[dict[str, Any]] = []

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """One command's result; events that arrive meanwhile go to `events`."""
        self._last_id += 1
        message: dict[str, Any] = {"id": self._last_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        data = json.dumps(message).encode("utf-8") + b"\0"
        while data:
            data = data[os.write(self._write, data) :]
        deadline = time.monotonic() + DEADLINE
        while True:
            answer = self._next(deadline, method)
            if answer.get("id") != self._last_id:
                self.events.append(answer)
                continue
            if "error" in answer:
                raise DevToolsError(f"{method}: {answer['error']}")
            result: dict[str, Any] = answer.get("result", {})
            return result

    def _next(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DevToolsError(f"no answer to {waiting_for} within {DEADLINE:.0f} s")
            ready, _, _ = select.select([self._read], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise DevToolsError(f"the browser closed the pipe: {self.stderr()}")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    def stderr(self) -> str:
        return self._log.read_text(errors="replace")[-2000:]

    def page(self, *, javascript: bool = True) -> Page:
        """A new tab, attached; without JavaScript when asked (before anything loads)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log"):
            page.send(f"{domain}.enable")
        if not javascript:
            page.send("Emulation.setScriptExecutionDisabled", {"value": True})
        return page

    def close(self) -> None:
        """Ask the browser to quit; kill its process group (which this module started) if
        it does not."""
        try:
            with contextlib.suppress(DevToolsError, OSError):
                self.send("Browser.close")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=DEADLINE)
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            os.close(self._write)
            os.close(self._read)


class Page:
    """One attached tab."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def evaluate(self, expression: str) -> Any:
        """The expression's value (JSON-serializable), evaluated in the page; DevTools
        evaluates even where the page's own scripts are disabled."""
        answer = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in answer:
            raise DevToolsError(f"{expression}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def wait_for(self, expression: str, what: str) -> Any:
        """Poll until the expression is truthy; its value."""
        deadline = time.monotonic() + DEADLINE
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise DevToolsError(f"{what}: still false after {DEADLINE:.0f} s")
            time.sleep(0.05)

    def open(self, url: str) -> None:
        """Navigate and wait until the document has loaded."""
        answer = self.send("Page.navigate", {"url": url})
        if answer.get("errorText"):
            raise DevToolsError(f"{url}: {answer['errorText']}")
        self.wait_for(
            f"document.readyState === 'complete' && document.URL === {json.dumps(url)}",
            f"loading {url}",
        )

    def type(self, text: str) -> None:
        """Key presses into the focused element, one character at a time."""
        for char in text:
            self.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": char, "text": char})
            self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": char})

    def backspace(self, times: int) -> None:
        for _ in range(times):
            for kind in ("rawKeyDown", "keyUp"):
                self.send(
                    "Input.dispatchKeyEvent",
                    {
                        "type": kind,
                        "key": "Backspace",
                        "code": "Backspace",
                        "windowsVirtualKeyCode": 8,
                        "nativeVirtualKeyCode": 8,
                    },
                )

    def problems(self) -> list[str]:
        """Errors this tab reported: uncaught exceptions, console errors, and log entries at
        error level (a Content-Security-Policy violation is one)."""
        found = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            params = event.get("params", {})
            if event.get("method") == "Runtime.exceptionThrown":
                found.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif event.get("method") == "Log.entryAdded":
                entry = params.get("entry", {})
                if entry.get("level") == "error":
                    found.append(f"{entry.get('source')}: {entry.get('text')}")
            elif event.get("method") == "Runtime.consoleAPICalled" and params.get("type") in (
                "error",
                "assert",
            ):
                found.append(json.dumps(params.get("args", []))[:500])
        return found


@contextlib.contextmanager
def browser(executable: str, flags: Sequence[str], directory: Path) -> Iterator[Browser]:
    """A browser for the duration of the block, with its profile and log in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    started = Browser(executable, flags, directory / "profile", directory / "chromium.log")
    try:
        yield started
    finally:
        started.close()
