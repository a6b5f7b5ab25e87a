"""The TypeScript checker: a warm TypeScript compiler in a Node process, one per declarations
text.

Chosen by the numbers of `bench/bench_program_check_ts.py`: warm, a check against 3,000
tools' declarations (3.9 MB) adds about 6 ms (p50; p95 about 23) with TypeScript 7's native
`tsc --api` and 10 to 19 ms (p95 37 to 69) with TypeScript 5's compiler API, because the
declarations and the libraries are parsed once and each check parses and checks only the
program; `tsc --noEmit` started per run re-reads the declarations every time (275 ms with
TypeScript 7, 3 s with TypeScript 5), and TypeScript 7's language server, as fast as its
API, gives messages without the syntax tree. The process answers what messages alone cannot:
whether a mistake is certain (`typescript_check_server.js`). It runs on the `typescript`
package the runtime would use, 5, 6 or 7.

The checker parses untrusted text, so it runs contained (`typescript_server.py`), and each
request has a deadline: a process that misses it, exits or breaks the protocol is killed,
the check's outcome says so (the run goes on unchecked), and the next check starts a new
one. Declarations the compiler cannot read, or a sandbox that cannot work here, leave every
run unchecked with a note.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from typing import Any

from ..checks.outcome import CheckLimits, CheckOutcome, CheckStatus
from ..checks.typescript_declarations import (
    CheckableDeclarations,
    NotCheckable,
    checkable_declarations,
)
from ..checks.typescript_diagnostics import diagnostics_of
from ..sandbox.launchers import SandboxUnavailable
from .lsp import LanguageServer, ServerFailed, start_lasting
from .typescript_server import CheckerUnavailable, Compiler, find_compiler, start_server

log = logging.getLogger("codegen.codemode.checks")


class TypeScriptChecker:
    """Checks TypeScript programs against one declarations text (see the module's
    docstring). `compiler`: the Node and `typescript` package to use (default: `node` on
    PATH and its global `typescript`)."""

    language = "typescript"

    def __init__(
        self,
        declarations: str,
        limits: CheckLimits | None = None,
        compiler: Compiler | None = None,
    ) -> None:
        self.limits = limits or CheckLimits()
        self.declarations: CheckableDeclarations = checkable_declarations(declarations)
        self.compiler = compiler or find_compiler()
        self._lock = threading.Lock()
        self._server: LanguageServer | None = None
        self._finalizer = weakref.finalize(self, _stop_all, [None])
        self._unusable = ""
        """Why no check can run (declarations the compiler refuses, no sandbox): said by
        every outcome from then on."""
        self.starts = 0
        """How many processes this checker started (a benchmark's cold starts)."""

    # --- ProgramChecker ----------------------------------------------------------------------

    async def check(self, program: str) -> CheckOutcome:
        return await asyncio.to_thread(self.check_now, program)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    def warm(self) -> None:
        """Start the process and have it read the declarations (and check a trivial
        program, so the first real check finds the compiler warm)."""
        with self._lock:
            if self._unusable:
                return
            try:
                self._running()
            except (ServerFailed, OSError) as failure:
                self._stop()
                log.warning("run_code check: %s", _note("crashed", failure, self.limits))
            except _Unusable:
                pass

    # --- blocking ----------------------------------------------------------------------------

    def check_now(self, program: str) -> CheckOutcome:
        started = time.monotonic()
        try:
            program.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no compiler reads it
            return CheckOutcome("skipped", note="the program was not checked: it is not UTF-8 text")
        with self._lock:
            if self._unusable:
                return CheckOutcome("skipped", note=self._unusable)
            try:
                server = self._running()
                deadline = time.monotonic() + self.limits.timeout
                found = server.request("check", {"program": program}, deadline)
            except _Unusable:
                return CheckOutcome("skipped", note=self._unusable)
            except (ServerFailed, OSError) as failure:
                self._stop()
                timeout = isinstance(failure, ServerFailed) and failure.timeout
                status: CheckStatus = "timeout" if timeout else "crashed"
                note = _note(status, failure, self.limits)
                log.warning("run_code check: %s", note)
                return CheckOutcome(status, note=note, elapsed=time.monotonic() - started)
        return CheckOutcome(
            "checked",
            diagnostics_of(found, self.declarations),
            elapsed=time.monotonic() - started,
        )

    def close(self) -> None:
        with self._lock:
            self._stop()
        self._finalizer()

    def _running(self) -> LanguageServer:
        """The warm process, started (and its declarations read, by the start deadline)
        when there is none or it has exited."""
        server = self._server
        if server is not None and server.process.poll() is None:
            return server
        self._stop()
        deadline = time.monotonic() + self.limits.start_timeout
        try:
            compiler, limits = self.compiler, self.limits
            server = start_lasting(
                lambda: start_server(compiler, limits.memory_bytes, limits.sandbox)
            )
        except SandboxUnavailable as error:
            self._unusable = f"the program was not checked: {error}"
            raise _Unusable from None
        self.starts += 1
        self._server = server
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _stop_all, [server])
        try:
            server.request("initialize", {"declarations": self.declarations.text}, deadline)
        except ServerFailed as failure:
            if failure.timeout or server.process.poll() is not None:
                raise
            self._stop()  # an answer: the compiler refuses the declarations, every time
            said = str(failure).removeprefix("initialize failed: ")
            self._unusable = f"the program was not checked: {_first_line(said)}"
            raise _Unusable from None
        server.request("check", {"program": "return 1"}, deadline)
        return server

    def _stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None


class _Unusable(Exception):
    """No check can run with these declarations here (`TypeScriptChecker._unusable`)."""


def _stop_all(servers: list[Any]) -> None:
    for server in servers:
        if server is not None:
            server.stop()


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0][:500]


def _note(status: str, failure: BaseException, limits: CheckLimits) -> str:
    if status == "timeout":
        return (
            f"the program was not checked: the checker took longer than {limits.timeout:g} s "
            "and was stopped"
        )
    return f"the program was not checked: the checker failed ({_first_line(str(failure))})"


def typescript_checker(
    declarations: str,
    limits: CheckLimits,
    node: str | None = None,
    typescript: str | None = None,
) -> TypeScriptChecker:
    """The factory the registry calls (`checks.checkers.FACTORIES`), with the runtime's
    `node` and `typescript` (from `limits.programs`, unless given): `CheckerUnavailable` when there is no
    Node or `typescript` package here, `NotCheckable` for a text that is not a TypeScript
    section."""
    given = dict(limits.programs)
    node = node or given.get("node")
    typescript = typescript or given.get("typescript")
    return TypeScriptChecker(declarations, limits, find_compiler(node, typescript))


__all__ = [
    "CheckerUnavailable",
    "NotCheckable",
    "TypeScriptChecker",
    "typescript_checker",
]
