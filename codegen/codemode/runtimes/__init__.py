"""The run_code runtimes: one fresh worker process per run, whatever the language.

`by_language` picks a language's runtime (`runtime_for`, `create_runtime`, `RUNTIMES`);
`python` and `typescript` are the runtimes, `python_worker.py` and `typescript_worker.js`
the programs their workers run, `node_probe` finds Node and its type stripper,
`typescript_package` the user's `typescript` package and `native_emit` runs TypeScript 7's
`tsc` on a program before its worker gets it, in the run's sandbox (`one_shot`: a command
run once there, held until `process_limits` has set its rlimits). They share
`worker_host` (the host side: a worker per run, the spare, reaping), `conversation` (one
run's messages and limits), `messages` (message sizes and strict decoding) and
`worker_pool` (starting workers in their sandbox, killing their trees). How a worker is
contained is `codegen.codemode.sandbox`'s job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._support.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from ..run_code.run_limits import RuntimeLimits
    from .by_language import RUNTIMES, RuntimeUnavailableError, create_runtime, runtime_for
    from .python import PythonRuntime
    from .typescript import TypeScriptRuntime

_LOCATIONS = {
    "PythonRuntime": "python",
    "RUNTIMES": "by_language",
    "RuntimeLimits": ".run_code.run_limits",
    "RuntimeUnavailableError": "by_language",
    "TypeScriptRuntime": "typescript",
    "create_runtime": "by_language",
    "runtime_for": "by_language",
}

__all__ = [
    "RUNTIMES",
    "PythonRuntime",
    "RuntimeLimits",
    "RuntimeUnavailableError",
    "TypeScriptRuntime",
    "create_runtime",
    "runtime_for",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LOCATIONS, __all__)
