"""`PythonRuntime`: run_code programs in Python, one fresh worker process per run.

The worker (`python_worker.py`) runs as `python -I -S` in the sandbox the `sandbox` setting
chooses (`sandbox/launchers.py`; started by `worker_pool.py`, which keeps one spare ready ahead of the next
run), in its own process group, with a minimal
environment, no inherited file descriptors but its two pipes (stdin and stdout are
`/dev/null`, stderr a pipe the host drains), rlimits on CPU time and address space, process
creation refused, and (on Linux) a SIGKILL for it when the host dies. Tool calls travel over
the pipes as JSON lines; the host decodes each strictly (`decode_message`) and dispatches
calls through the bridge (`Bindings.call`), so every policy applies. Limits, each
configurable: wall-clock timeout, CPU seconds, address space, output size, pending calls. A
violation, an exception, a worker crash or invalid output ends the run with
`CodeRunFailed(kind)`; cancelling the run (its signal, or the task running it, at any point,
spawning included) kills the worker and its children and closes every descriptor the run
opened.

Raw writes to file descriptor 2 (what bypasses `sys.stderr`: C extensions, `os.write(2, ...)`,
interpreter crashes) are read as they come and discarded but for a short tail, which explains
a worker that exits early; they are not logs and do not count towards the output limit,
since nothing of them reaches the model but that tail.

The sandbox is the security boundary; with `sandbox="none"` this isolates mistakes only.
"""

from __future__ import annotations

import logging
import os
import sys
from functools import cache
from pathlib import Path

from ..run_code.run_limits import RuntimeLimits
from ..sandbox.launchers import Launcher, launcher, reachable_twin
from .conversation import WorkerRun
from .messages import FILE_BYTES, MAX_DEPTH, STDERR_TAIL, decode_message
from .worker_host import WorkerRuntime
from .worker_pool import READ, WRITE, Started, start_worker

log = logging.getLogger(__name__)

__all__ = [
    "FILE_BYTES",
    "MAX_DEPTH",
    "STDERR_TAIL",
    "PythonRuntime",
    "RuntimeLimits",
    "decode_message",
    "worker_environment",
    "worker_source",
]

_WorkerRun = WorkerRun
"""The shared conversation with a worker (`conversation.WorkerRun`), by its former name."""


@cache
def worker_source() -> str:
    return (Path(__file__).resolve().parent / "python_worker.py").read_text(encoding="utf-8")


def worker_environment() -> dict[str, str]:
    """A minimal environment: no secrets of the host process leak into programs."""
    return {
        "PATH": os.defpath,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


class PythonRuntime(WorkerRuntime):
    """Runs each program in a fresh worker, contained by the `sandbox` setting (see
    `sandbox/launchers.py`; "auto" by default). With `spare` (the default), the next run's worker is
    started and sandboxed while the current one runs; `aclose()` stops it."""

    language = "python"

    def __init__(
        self,
        limits: RuntimeLimits | None = None,
        python: str | None = None,
        sandbox: str = "auto",
        spare: bool = True,
    ) -> None:
        super().__init__(limits, sandbox, spare)
        self._python_given = python is not None
        self.python = python or sys.executable

    def _make_launcher(self) -> Launcher:
        """The sandbox's launcher for the interpreter. When none was given and bubblewrap
        cannot reach this process's interpreter (a root host, an interpreter under
        `/root`), a system interpreter of the same version that it can reach runs the
        worker instead (`reachable_twin`), so the default sandbox works there too."""
        if not self._python_given and self.sandbox in ("auto", "bubblewrap"):
            twin = reachable_twin(self.python)
            if twin is not None:
                log.info(
                    "run_code: %s is closed to the sandbox's uid; workers run %s", self.python, twin
                )
                self.python = twin
        return launcher(self.sandbox, self.python)

    async def _start(self, chosen: Launcher) -> Started:
        # -S: no site-packages; programs get the standard library, and start faster.
        arguments = ["-I", "-S", "-c", worker_source(), READ, WRITE]
        if not chosen.sandboxed:
            # The worker's parent: it exits at once if that is gone. In a pid namespace the
            # host is invisible, and the sandbox dies with the host instead.
            arguments.append(str(os.getpid()))
        return await start_worker(chosen, arguments, worker_environment(), self.limits)
