"""TypeScript 7's native `tsc` turning one program into JavaScript before the worker gets it,
in the run's sandbox.

TypeScript 7 has no JavaScript API the worker could load, and the worker may start no
process (Node's permission model refuses it), so the host runs `tsc` once per program, a
native compiler parsing what a model wrote: in the same sandbox as the worker (the
runtime's `sandbox` setting; `none` runs it as the host's user, as it runs the worker),
through `one_shot.py`, which holds it until its limits are set. It sees its own folder
(the binary insists on finding its `lib.d.ts` beside it), `tsc_globals.d.ts` and nothing
else of the host; it reads the program (wrapped as the worker runs it, `PROGRAM_HEAD` ...
`PROGRAM_TAIL`) from a pipe and writes the JavaScript, with the source map inline (which the
worker reads to give errors the program's line numbers), to another. No host path is
written and the program is never a command-line argument.

It is given only the program and the stub of global types, so it reads no library, type
package or import (`--noLib`, `--types`, `--noResolve`) and checks nothing (`--noCheck`):
only syntax errors are reported. The `.cts` name fixes the module format, so no
`package.json` decides it. Its CPU seconds and data are bounded by the run's limits (Go's
runtime is held to two threads, `GOMAXPROCS`, well within the run's process count), and it
is killed with its sandbox at the run's deadline or cancellation.
"""

from __future__ import annotations

import os
import re
import signal as signals
import sys
from pathlib import Path

from ..run_code.code_runtime import CodeRunFailed
from ..run_code.run_limits import RuntimeLimits
from ..sandbox.launchers import Launcher, WorkerImage
from .one_shot import OUTPUT_BYTES, Finished, Held, hold

PROGRAM_HEAD = '(async function (tools, catalog, ToolCallError) {"use strict";\n'
"""What the worker puts before a program it compiles itself (`HEADER` in
`typescript_worker.js`): the program is the body of an async function, line 1 its first."""
PROGRAM_TAIL = "\n})"

GLOBALS = os.path.realpath(Path(__file__).resolve().parent / "tsc_globals.d.ts")
"""The global types the compiler needs to exist, without a library: nothing is checked."""

SOURCE, EMITTED = "program.cts", "program.cjs"
"""The names the compiler reads the program from and writes its JavaScript to."""

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

ENVIRONMENT = {"PATH": os.defpath, "LANG": "C.UTF-8", "GOMAXPROCS": "2"}
"""No secret of the host's; Go's runtime held to two threads running Go code at once."""

_DIAGNOSTIC = re.compile(r"^program\.cts\((\d+),(\d+)\): error TS\d+: (.*)$", re.MULTILINE)
_OUT_OF_MEMORY = re.compile(r"^fatal error: (runtime: )?out of memory", re.MULTILINE)
"""Go's report of a failed allocation (its heap, or the metadata of a new heap arena)."""
_STACK_OVERFLOW = re.compile(r"^fatal error: stack overflow", re.MULTILINE)
"""Go's report of a goroutine stack past its 1 GB limit (a parser recursing that deep)."""


def compiler_image(tsc: str, version: str) -> WorkerImage:
    """What the compiler's sandbox holds: its folder and the global types, read-only. Go's
    runtime waits with epoll."""
    return WorkerImage(
        tsc,
        (os.path.dirname(tsc), GLOBALS),
        ("--version",),
        sys.executable,
        epoll=True,
        answer=f"Version {version}",
    )


async def hold_compiler(compiler: Launcher, limits: RuntimeLimits) -> Held:
    """The compiler started through `compiler` (the launcher of `compiler_image`) and held
    until it gets a program (`emit`); a spare can be made ahead of the run."""
    return await hold(compiler, [*OPTIONS, GLOBALS, SOURCE], ENVIRONMENT, limits, (SOURCE, EMITTED))


async def emit(held: Held, program: str, limits: RuntimeLimits, version: str) -> str:
    """The JavaScript of `program` as the worker runs it, its source map inline, from a held
    compiler (`hold_compiler`), which is disposed of at the end. `CodeRunFailed`:
    "exception" for a syntax error (with the program's line, as the worker reports one) or
    a compile that outgrew the run's memory, "timeout" for one that outlasted its CPU
    seconds, "worker-exit" when the compiler fails otherwise."""
    source = (PROGRAM_HEAD + program + PROGRAM_TAIL).encode("utf-8", "surrogatepass")
    finished = await held.finish(source)
    _check(finished, limits, version, held.launcher.executable)
    return finished.output.decode("utf-8", "surrogatepass")


def _check(finished: Finished, limits: RuntimeLimits, version: str, tsc: str) -> None:
    """`CodeRunFailed` unless the compiler emitted the program without a syntax error."""
    compiling = f"compiling the program took TypeScript {version}'s tsc more than"
    if _OUT_OF_MEMORY.search(finished.said):
        memory = limits.memory_bytes // (1024 * 1024)
        raise CodeRunFailed("exception", f"{compiling} {memory} MB")
    if _STACK_OVERFLOW.search(finished.said):
        raise CodeRunFailed(
            "exception",
            f"TypeScript {version}'s tsc overflowed its stack: the program nests too deeply",
        )
    if finished.signal in (signals.SIGXCPU, signals.SIGKILL):
        raise CodeRunFailed("timeout", f"{compiling} {limits.cpu_seconds} CPU seconds")
    problem = _DIAGNOSTIC.search(finished.said)
    if problem is not None:
        line, message = int(problem.group(1)) - 1, problem.group(3)
        raise CodeRunFailed("exception", f"SyntaxError: {message} (line {line})")
    if finished.output_cut:
        raise CodeRunFailed(
            "exception", f"the program compiles to more than {OUTPUT_BYTES // (1024 * 1024)} MB"
        )
    if not finished.output:
        detail = finished.said.strip()[-300:] or f"exit status {finished.status}"
        raise CodeRunFailed(
            "worker-exit", f"TypeScript {version}'s tsc ({tsc}) emitted nothing: {detail}"
        )
