"""`TypeScriptRuntime`: run_code programs in TypeScript, one fresh Node process per run.

The worker (`typescript_worker.js`, a script Node runs; in a sandbox it is bound read-only
at its own path) strips the program's types (see `node_probe.py`; with TypeScript 7 its
`tsc` has emitted the JavaScript first, in a sandbox of its own: `native_emit.py`), runs it
as the body of an async function with `tools` and `ToolCallError`, and talks to the host
over the same pipes and protocol as the Python worker; everything on the host side (limits,
pending calls, cancellation, the sandbox, the spare, reaping) is shared (`worker_host.py`,
`conversation.py`).

Node cannot set its own rlimits, so the host sets them on the worker's process tree
(`prlimit`) once it is ready and before its program is sent: CPU seconds (counted from
there: loading the type stripper ahead of the run costs the program nothing), address
space (`memory_bytes` more than the worker holds when it is ready), no core files, and in
a sandbox the process, file-size and open-file limits. Node's permission
model refuses child processes, worker threads and native addons (a seat belt, like the
Python worker's refusals; the sandbox is the boundary). Without a sandbox, a small
launcher sets PR_SET_PDEATHSIG before it becomes Node, so the worker dies with its host.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import resource
import signal as signals
import sys
from pathlib import Path

from ..run_code.code_runtime import CodeRunFailed
from ..run_code.run_limits import DESCRIPTORS, RuntimeLimits
from ..sandbox.launchers import Launcher, image_launcher
from .messages import FILE_BYTES
from .native_emit import compiler_image, emit, hold_compiler
from .node_probe import NodeInstall, Stripper, check_stripper, probe_node
from .one_shot import Held
from .process_limits import Setting, apply_to_tree, usage
from .worker_host import WorkerRuntime
from .worker_pool import READ, WRITE, SparePool, Started, discard, start_worker

DIE_WITH_HOST = """\
import os, sys
if sys.platform.startswith("linux"):
    import ctypes
    ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
if os.getppid() != int(sys.argv[1]):
    os._exit(0)  # the host died before the line above
os.execv(sys.argv[2], sys.argv[2:])
"""
"""Without a sandbox: the worker's launcher, `python -I -S -c <this> HOST_PID NODE ARGS...`;
the death signal survives `execv`."""

OUT_OF_MEMORY = re.compile(r"heap out of memory|process out of memory|Fatal process OOM")
"""What V8 writes to stderr before it aborts for want of memory."""

WORKER = os.path.realpath(Path(__file__).resolve().parent / "typescript_worker.js")
"""The worker script. A file, not `node -e`: that would make `require` and every built-in
module a global of the program."""


def worker_environment() -> dict[str, str]:
    """A minimal environment: no secrets of the host process leak into programs, and no
    `NODE_OPTIONS` of the host's changes how the worker runs."""
    return {"PATH": os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


class TypeScriptRuntime(WorkerRuntime):
    """Runs each TypeScript program in a fresh Node worker, contained by the `sandbox`
    setting. `node` is the binary (default: `node` on PATH). `stripper` says how types are
    stripped: "auto" (Node's own where it has it, else the `typescript` package), "node" or
    "typescript" (TypeScript 5's `transpileModule` or TypeScript 7's `tsc`, which also
    compile enums and namespaces). `typescript` is the package's directory (default: the
    Node installation's global package; never the working directory's)."""

    language = "typescript"
    trial_program = "const one: number = 1;\nreturn one"

    def __init__(
        self,
        limits: RuntimeLimits | None = None,
        node: str | None = None,
        typescript: str | None = None,
        stripper: str = "auto",
        sandbox: str = "auto",
        spare: bool = True,
    ) -> None:
        super().__init__(limits, sandbox, spare)
        self.node = node
        self.typescript = typescript
        self.stripper: Stripper = check_stripper(stripper)
        self.install: NodeInstall | None = None
        """The Node in use, once the first run has probed it."""
        self.compiler: Launcher | None = None
        """TypeScript 7's compiler in the run's sandbox, when it compiles the programs."""
        self._compilers: SparePool[Held] = SparePool()
        """With `spare`, one compiler held ahead of the next run's program."""

    def _make_launcher(self) -> Launcher:
        install = probe_node(self.node, self.typescript, self.stripper)
        chosen = image_launcher(self.sandbox, install.image(WORKER))
        if install.tsc is not None and install.typescript is not None:
            image = compiler_image(install.tsc, install.typescript.version)
            self.compiler = image_launcher(self.sandbox, image)
        self.install = install
        if not chosen.sandboxed:  # started through DIE_WITH_HOST, a Python program
            return Launcher("none", sys.executable, (), ())
        return chosen

    def _prepares(self) -> bool:
        return self.compiler is not None

    async def _prepare(self, program: str) -> str:
        """TypeScript 7's JavaScript of `program`, from the spare compiler if one is held
        (with `spare`, the next one is started once this compile is done)."""
        install, compiler = self.install, self.compiler
        assert install is not None and install.typescript is not None and compiler
        start = self._compilers.take() or asyncio.ensure_future(self._hold_compiler())
        try:
            held = await start
        except asyncio.CancelledError:
            discard(start)
            raise
        except OSError as error:
            tsc = compiler.executable
            raise CodeRunFailed("worker-exit", f"{tsc} could not start: {error}") from None
        try:
            return await emit(held, program, self.limits, install.typescript.version)
        finally:
            if self.spare:
                self._compilers.refill(asyncio.ensure_future(self._hold_compiler()))

    async def _hold_compiler(self) -> Held:
        assert self.compiler is not None
        return await hold_compiler(self.compiler, self.limits)

    async def wait_spare(self) -> None:
        await super().wait_spare()
        await self._compilers.wait()

    async def aclose(self) -> None:
        await self._compilers.aclose()
        await super().aclose()

    async def _start(self, chosen: Launcher) -> Started:
        install = self.install
        assert install is not None, "the launcher is made first"
        arguments = [
            *install.flags(self.limits.memory_bytes),
            WORKER,
            READ,
            WRITE,
            install.stripper,
        ]
        if not chosen.sandboxed:
            host = ["-I", "-S", "-c", DIE_WITH_HOST, str(os.getpid()), install.executable]
            arguments = [*host, *arguments]
        started = await start_worker(chosen, arguments, worker_environment(), self.limits)
        try:
            limit_tree(started.process.pid, self.limits, chosen.sandboxed, started.run_as)
        except OSError as error:
            started.dispose()
            raise OSError(f"the worker's limits could not be set: {error}") from None
        return started

    def explain_exit(self, code: int, stderr: str) -> tuple[str, str] | None:
        if code in (-signals.SIGABRT, -signals.SIGTRAP) and OUT_OF_MEMORY.search(stderr):
            heap = self.limits.memory_bytes * 3 // 4 // (1024 * 1024)
            return (
                "exception",
                f"the program ran out of memory (its JavaScript heap is limited to {heap} MB)",
            )
        return None


def limit_tree(
    root: int, limits: RuntimeLimits, sandboxed: bool, run_as: tuple[int, int] | None = None
) -> None:
    """Set the run's rlimits on `root` and its descendants (the sandbox's processes and the
    worker). CPU seconds and address space count from now: each process may use
    `cpu_seconds` more than it has used to start, and map `memory_bytes` more than it holds
    (Node reserves 0.7 to 10 GB of address space it does not use, depending on its version
    and whether WebAssembly is loaded). A root host whose sandbox runs as `run_as` and that
    lacks CAP_SYS_RESOURCE (as in many containers) sets them as that uid."""
    if not hasattr(resource, "prlimit"):
        return  # not Linux: only the V8 heap limit and the wall clock apply
    fixed = [(resource.RLIMIT_CORE, 0, 0)]
    if sandboxed:  # inside its user namespace RLIMIT_NPROC counts the sandbox's processes
        fixed += [
            (resource.RLIMIT_NPROC, limits.processes, limits.processes),
            (resource.RLIMIT_FSIZE, FILE_BYTES, FILE_BYTES),
            (resource.RLIMIT_NOFILE, DESCRIPTORS, DESCRIPTORS),
        ]

    def settings_for(pid: int) -> list[Setting]:
        used, mapped = usage(pid)
        cpu = limits.cpu_seconds + math.ceil(used)
        address_space = mapped + limits.memory_bytes
        return [
            (resource.RLIMIT_CPU, cpu, cpu + 1),
            (resource.RLIMIT_AS, address_space, address_space),
            *fixed,
        ]

    apply_to_tree(root, settings_for, run_as)
