"""TypeScript 7's native `tsc` turning one program into JavaScript, on the host, before the
worker gets it.

TypeScript 7 has no JavaScript API the worker could load, and the worker may start no
process (Node's permission model refuses it), so the host runs `tsc` once per program
(about 10 ms): in a private temporary folder, with a minimal environment, given only the
program (wrapped as the worker runs it, `PROGRAM_HEAD` ... `PROGRAM_TAIL`) and a stub of the
global types, so it reads no library, type package or import (`--noLib`, `--types`,
`--noResolve`) and checks nothing (`--noCheck`): only syntax errors are reported. The `.cts`
name fixes the module format, so no `package.json` decides it. Its data and CPU seconds are
bounded by the run's limits, and it is killed at the run's deadline or cancellation. Nothing
of the program runs on the host: `tsc` reads its text and writes JavaScript, with the source
map inline, which the worker reads to give errors the program's line numbers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
import shutil
import signal as signals
import tempfile
from pathlib import Path

from ..code_runtime import CodeRunFailed
from ..run_limits import RuntimeLimits

PROGRAM_HEAD = '(async function (tools, catalog, ToolCallError) {"use strict";\n'
"""What the worker puts before a program it compiles itself (`HEADER` in
`typescript_worker.js`): the program is the body of an async function, line 1 its first."""
PROGRAM_TAIL = "\n})"

GLOBALS = "".join(
    f"interface {name}{'<T>' if name == 'Array' else ''} {{}}\n"
    for name in (
        "Array",
        "Boolean",
        "CallableFunction",
        "Function",
        "IArguments",
        "NewableFunction",
        "Number",
        "Object",
        "RegExp",
        "String",
    )
)
"""The global types the compiler needs to exist, without a library: nothing is checked."""

OPTIONS = (
    "--noCheck",
    "--noLib",
    "--noResolve",
    "--types",
    "",
    "--target",
    "esnext",
    "--module",
    "preserve",
    "--inlineSourceMap",
    "--newLine",
    "lf",
    "--pretty",
    "false",
)

_DIAGNOSTIC = re.compile(r"^program\.cts\((\d+),(\d+)\): error TS\d+: (.*)$", re.MULTILINE)


async def emit(tsc: str, program: str, limits: RuntimeLimits, version: str) -> str:
    """The JavaScript of `program` as the worker runs it, its source map inline.
    `CodeRunFailed`: "exception" for a syntax error (with the program's line, as the worker
    reports one) or a compile that outgrew the run's memory, "timeout" for one that outlasted
    its CPU seconds, "worker-exit" when the compiler fails otherwise."""
    folder = Path(tempfile.mkdtemp(prefix="codegen-tsc-"))
    try:
        (folder / "globals.d.ts").write_text(GLOBALS, encoding="utf-8")
        source = PROGRAM_HEAD + program + PROGRAM_TAIL
        (folder / "program.cts").write_text(source, encoding="utf-8", errors="surrogatepass")
        said, code = await _compile(tsc, folder, limits)
        if code in (-signals.SIGXCPU, -signals.SIGKILL):
            raise CodeRunFailed(
                "timeout",
                f"compiling the program took TypeScript {version}'s tsc more than "
                f"{limits.cpu_seconds} CPU seconds",
            )
        if "fatal error: runtime: out of memory" in said:  # Go's own report
            raise CodeRunFailed(
                "exception",
                f"compiling the program took TypeScript {version}'s tsc more than "
                f"{limits.memory_bytes // (1024 * 1024)} MB",
            )
        problem = _DIAGNOSTIC.search(said)
        if problem is not None:
            line, message = int(problem.group(1)) - 1, problem.group(3)
            raise CodeRunFailed("exception", f"SyntaxError: {message} (line {line})")
        try:
            return (folder / "program.cjs").read_text(encoding="utf-8", errors="surrogatepass")
        except OSError:
            detail = said.strip()[-300:] or f"exit status {code}"
            raise CodeRunFailed(
                "worker-exit", f"TypeScript {version}'s tsc ({tsc}) emitted nothing: {detail}"
            ) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def _compile(tsc: str, folder: Path, limits: RuntimeLimits) -> tuple[str, int]:
    """What `tsc` printed (stdout and stderr) and its exit status."""
    try:
        process = await asyncio.create_subprocess_exec(
            tsc,
            *OPTIONS,
            "globals.d.ts",
            "program.cts",
            cwd=folder,
            env={"PATH": os.defpath, "LANG": "C.UTF-8"},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as error:
        raise CodeRunFailed("worker-exit", f"{tsc} could not start: {error}") from None
    try:
        _confine(process.pid, limits)
        output, _ = await process.communicate()
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signals.SIGKILL)
            await asyncio.shield(process.wait())
    return output.decode("utf-8", "replace"), process.returncode or 0


def _confine(pid: int, limits: RuntimeLimits) -> None:
    """The run's memory (as data: the Go runtime reserves address space it never uses) and
    CPU seconds, and no core file."""
    if not hasattr(resource, "prlimit"):
        return
    settings = [
        (resource.RLIMIT_DATA, limits.memory_bytes, limits.memory_bytes),
        (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    with contextlib.suppress(ProcessLookupError):
        for which, soft, hard in settings:
            resource.prlimit(pid, which, (soft, hard))
