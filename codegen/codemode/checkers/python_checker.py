"""The Python checker: `ty` (Astral's type checker, written in Rust) kept warm as a language
server, one per declarations text.

Chosen by the numbers in `bench/README.md` (`bench/bench_program_check.py`): warm, a check
of a program against 3,000 tools' declarations takes about a millisecond, because the server
keeps the parsed stub and re-reads only the program; pyright's and mypy's daemons take one to
three orders of magnitude longer at that size.

The server's folder holds the checkable stub (`python_stub`) and a `ty.toml` naming the
Python version; the program reaches it as an open document, never a file. The server is a
parser of untrusted text, so it runs in the runtime's sandbox (bubblewrap or codegen's own
namespaces: no network, its folder read-only, a fresh uid on a root host), under an address
space limit, with one thread, and each check has a deadline: a server that misses it, exits
or breaks the protocol is killed, the check's outcome says so (the run goes on unchecked),
and the next check starts a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import weakref
from typing import Any

from ..checks.outcome import CheckLimits, CheckOutcome, CheckStatus
from ..checks.python_diagnostics import classified, unknown_literal_names
from ..checks.python_program import CheckableProgram, checkable_program
from ..checks.python_stub import MODULE, CheckableStub, checkable_stub
from .lsp import LanguageServer, ServerFailed, start_lasting

log = logging.getLogger("codegen.codemode.checks")

PROGRAM = "program.py"
TRAMPOLINE = (
    "import os, resource, sys\n"
    "limit, uid, gid = map(int, sys.argv[1:4])\n"
    "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "if uid >= 0:\n"
    "    os.setgroups([]); os.setgid(gid); os.setuid(uid)\n"
    "os.execv(sys.argv[4], sys.argv[4:])\n"
)
"""Sets the limits of the server (and of the sandbox's program that starts it) and, on a
root host, takes the sandbox's own uid, before the exec: no `preexec_fn` in a threaded host,
and the host's interpreter runs it as the host's user."""


class CheckerUnavailable(Exception):
    """`ty` is not installed here."""


def ty_program() -> str:
    """The `ty` binary of the `check` extra (`pip install 'tool-codegen[check]'`)."""
    try:
        from ty import find_ty_bin
    except ImportError:
        raise CheckerUnavailable(
            "the Python checker (ty) is not installed: pip install 'tool-codegen[check]'"
        ) from None
    try:
        return os.path.realpath(find_ty_bin())
    except FileNotFoundError as error:
        raise CheckerUnavailable(f"the Python checker (ty) was not found: {error}") from None


class PythonChecker:
    """Checks Python programs against one declarations text (see the module's docstring)."""

    language = "python"

    def __init__(self, declarations: str, limits: CheckLimits | None = None) -> None:
        self.limits = limits or CheckLimits()
        self.stub: CheckableStub = checkable_stub(declarations)
        self.calls = {each.name: each.call for each in self.stub.tools}
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._folder = tempfile.mkdtemp(prefix="codegen-check-")
        self._finalizer = weakref.finalize(self, _discard, self._folder, [None])
        with open(os.path.join(self._folder, f"{MODULE}.pyi"), "w", encoding="utf-8") as out:
            out.write(self.stub.text)
        with open(os.path.join(self._folder, "ty.toml"), "w", encoding="utf-8") as out:
            version = f"{sys.version_info.major}.{sys.version_info.minor}"
            out.write(f'[environment]\npython-version = "{version}"\npython-platform = "linux"\n')
        self.starts = 0
        """How many servers this checker started (a benchmark's cold starts)."""

    # --- ProgramChecker ----------------------------------------------------------------------

    async def check(self, program: str) -> CheckOutcome:
        return await asyncio.to_thread(self.check_now, program)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    def warm(self) -> None:
        """Start the server and have it read the stub (a trivial program checked)."""
        self.check_now("pass")

    # --- blocking ----------------------------------------------------------------------------

    def check_now(self, program: str) -> CheckOutcome:
        started = time.monotonic()
        made = checkable_program(program, self.stub)
        if made is None:  # a syntax error: the worker reports it with its line
            return CheckOutcome("checked", elapsed=time.monotonic() - started)
        own = unknown_literal_names(made, self.calls)
        with self._lock:
            try:
                items = self._diagnostics(made)
            except (ServerFailed, OSError) as failure:
                self._stop()
                timeout = isinstance(failure, ServerFailed) and failure.timeout
                status: CheckStatus = "timeout" if timeout else "crashed"
                note = _note(status, failure, self.limits)
                log.warning("run_code check: %s", note)
                return CheckOutcome(status, note=note, elapsed=time.monotonic() - started)
        found = classified(items, made, self.stub)
        return CheckOutcome("checked", tuple(own + found), elapsed=time.monotonic() - started)

    def close(self) -> None:
        with self._lock:
            self._stop()
        self._finalizer()

    def _diagnostics(self, made: CheckableProgram) -> list[dict[str, Any]]:
        server = self._server
        if server is None or server.server.process.poll() is not None:
            self._stop()
            self.starts += 1
            server = self._server = _Server(self._folder, self.limits)
            self._finalizer.detach()
            self._finalizer = weakref.finalize(self, _discard, self._folder, [server])
        return server.check(made.text, self.limits)

    def _stop(self) -> None:
        if self._server is not None:
            self._server.server.stop()
            self._server = None


def _discard(folder: str, servers: list[Any]) -> None:
    for server in servers:
        if server is not None:
            with contextlib.suppress(Exception):
                server.server.stop()
    shutil.rmtree(folder, ignore_errors=True)


def _note(status: str, failure: BaseException, limits: CheckLimits) -> str:
    if status == "timeout":
        return (
            f"the program was not checked: the checker took longer than {limits.timeout:g} s "
            "and was stopped"
        )
    return f"the program was not checked: the checker failed ({failure})"


class _Server:
    """One `ty server`, started, initialized and holding the stub (by the start deadline);
    then each check sends the program's text and asks for its diagnostics (by the check's)."""

    def __init__(self, folder: str, limits: CheckLimits) -> None:
        self.uri = "file://" + os.path.join(folder, PROGRAM)
        self.version = 1
        self.server = _start(folder, limits)
        deadline = time.monotonic() + limits.start_timeout
        try:
            answer = self.server.request(
                "initialize",
                {
                    "processId": None,
                    "rootUri": "file://" + folder,
                    "workspaceFolders": [{"uri": "file://" + folder, "name": "checked"}],
                    "capabilities": {
                        "general": {"positionEncodings": ["utf-32", "utf-16"]},
                        "textDocument": {"diagnostic": {"dynamicRegistration": False}},
                    },
                },
                deadline,
            )
            capabilities = (answer or {}).get("capabilities", {})
            self.utf16 = capabilities.get("positionEncoding") != "utf-32"
            self.server.notify("initialized", {})
            document = {"uri": self.uri, "languageId": "python", "version": 1, "text": ""}
            self.server.notify("textDocument/didOpen", {"textDocument": document})
            self._diagnostics(f"import {MODULE}\n", deadline)  # the stub read once, now
        except BaseException:
            self.server.stop()
            raise

    def check(self, text: str, limits: CheckLimits) -> list[dict[str, Any]]:
        items = self._diagnostics(text, time.monotonic() + limits.timeout)
        if not self.utf16:
            return items
        return [_in_characters(item, text) for item in items]

    def _diagnostics(self, text: str, deadline: float) -> list[dict[str, Any]]:
        self.version += 1
        self.server.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": self.uri, "version": self.version},
                "contentChanges": [{"text": text}],
            },
        )
        report = self.server.request(
            "textDocument/diagnostic", {"textDocument": {"uri": self.uri}}, deadline
        )
        items = report.get("items", []) if isinstance(report, dict) else []
        return [item for item in items if isinstance(item, dict)]


def _in_characters(item: dict[str, Any], text: str) -> dict[str, Any]:
    """A diagnostic whose start is in UTF-16 code units, in characters."""
    try:
        start = item["range"]["start"]
        line = text.split("\n")[start["line"]]
        units = start["character"]
    except (KeyError, IndexError, TypeError):
        return item
    column = 0
    while units > 0 and column < len(line):
        units -= 2 if ord(line[column]) > 0xFFFF else 1
        column += 1
    return {**item, "range": {"start": {"line": start["line"], "character": column}}}


def _start(folder: str, limits: CheckLimits) -> LanguageServer:
    """`_started`, from the thread that outlives every check (`lsp.start_lasting`)."""
    return start_lasting(lambda: _started(folder, limits))


def _started(folder: str, limits: CheckLimits) -> LanguageServer:
    """`ty server` in the sandbox `limits.sandbox` names, under the trampoline's rlimits."""
    from ..sandbox.launchers import WorkerImage, check_mode, host_is_root

    ty = ty_program()
    environment = {
        "PATH": os.defpath,
        "LANG": "C.UTF-8",
        "TY_LOG": "error",
        "TY_MAX_PARALLELISM": "1",
    }
    mode = check_mode(limits.sandbox)
    argv = [ty, "server"]
    descriptors: list[int] = []
    run_as = (-1, -1)
    if mode != "none":
        from ..sandbox import launchers

        image = WorkerImage(ty, (folder,), ("--version",), sys.executable, epoll=True)
        paths, links = launchers._view(image)
        kind = "bubblewrap" if mode == "auto" else mode
        launcher = launchers.Launcher(
            kind,
            ty,
            paths,
            links,
            sys.executable,
            host_is_root(),
            True,
        )
        spawn = launcher.spawn(["server"], environment)
        if spawn.run_as is not None:  # the sandbox's own uid reads the folder
            for path in (folder, *(os.path.join(folder, f) for f in os.listdir(folder))):
                os.chown(path, *spawn.run_as)
        argv, descriptors = spawn.argv, spawn.descriptors
        run_as = spawn.run_as or run_as
    else:
        spawn = None
    try:
        command = [sys.executable, "-I", "-S", "-c", TRAMPOLINE, str(limits.memory_bytes)]
        command += [str(run_as[0]), str(run_as[1])]
        return LanguageServer([*command, *argv], environment, folder, descriptors)
    finally:
        if spawn is not None:
            spawn.close()


def python_checker(declarations: str, limits: CheckLimits) -> PythonChecker:
    """The factory the registry calls (`checks.checkers.FACTORIES`)."""
    ty_program()  # fail now, once per tool set, when ty is not installed
    return PythonChecker(declarations, limits)


__all__ = ["CheckerUnavailable", "PythonChecker", "python_checker"]
