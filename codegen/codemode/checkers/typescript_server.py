"""Where the TypeScript checker runs: which Node and `typescript` package, and how its
process is started and contained.

The package is the one the TypeScript runtime would use (`runtimes/typescript_package.py`):
the folder configured, else the global packages of the Node that runs it, never the working
directory. TypeScript 5 and 6 check in the Node process (their compiler API); TypeScript 7's
native `tsc --api` runs as its child, driven through the package's own client. Without a
package there is no checker (`CheckerUnavailable`, said once by the registry).

The checker is a parser of untrusted text, so its process is contained like a run's worker:
the runtime's sandbox (`sandbox/launchers.py`: bubblewrap, or codegen's own namespaces; no
network, only Node, the script and the package, read-only), Node's permission model (no
file writes, no addons, no child process but TypeScript 7's compiler), a V8 heap of three
quarters of `memory_bytes` and, set before it starts, RLIMIT_DATA of `memory_bytes` on every
process of it (the memory it writes: Node and Go reserve far more address space than they
use, which RLIMIT_AS would count) and no core files.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..._support.program_lookup import find_program
from ..runtimes.node_probe import NodeUnavailable, node_version, permission_flag
from ..runtimes.typescript_package import TypeScriptPackage, find_typescript, inspect_package
from ..sandbox.launchers import WorkerImage, check_mode, image_launcher
from .lsp import LanguageServer

SCRIPT = os.path.realpath(Path(__file__).resolve().parent / "typescript_check_server.js")
"""The checker's program, a script Node runs."""

TRAMPOLINE = (
    "import os, resource, sys\n"
    "limit, uid, gid = map(int, sys.argv[1:4])\n"
    "resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "if uid >= 0:\n"
    "    os.setgroups([]); os.setgid(gid); os.setuid(uid)\n"
    "os.execv(sys.argv[4], sys.argv[4:])\n"
)
"""`python -I -S -c <this> LIMIT UID GID COMMAND...`: the limits every process of the
checker inherits, and on a root host bubblewrap's own uid, set before the exec (no
`preexec_fn` in a threaded host)."""


class CheckerUnavailable(Exception):
    """No Node or no `typescript` package here; the message says what to install."""


@dataclass(frozen=True)
class Compiler:
    """The Node and the `typescript` package a checker runs on."""

    node: str
    """Node's real path."""
    version: tuple[int, int, int]
    package: TypeScriptPackage

    @property
    def kind(self) -> str:
        """`native` (TypeScript 7's `tsc`) or `script` (TypeScript 5 or 6 in Node)."""
        return "native" if self.package.tsc else "script"

    def describe(self) -> str:
        return f"TypeScript {self.package.version} on Node {'.'.join(map(str, self.version))}"

    def paths(self) -> tuple[str, ...]:
        """What the sandbox holds besides Node: the script and the package (and TypeScript
        7's platform package, the folder of its `tsc`)."""
        found = [SCRIPT, self.package.directory]
        if self.package.tsc:
            found.append(str(Path(self.package.tsc).parent.parent))
        return tuple(found)

    def arguments(self, memory_bytes: int) -> list[str]:
        heap = max(64, memory_bytes * 3 // 4 // (1024 * 1024))
        flags = [f"--max-old-space-size={heap}", "--no-addons", "--no-warnings"]
        if self.version >= (20, 0, 0):
            flags += [permission_flag(self.version), "--allow-fs-read=*"]
            if self.package.tsc:
                flags.append("--allow-child-process")
        command = [*flags, SCRIPT, self.kind, self.package.directory]
        return command + ([self.package.tsc] if self.package.tsc else [])


def find_compiler(node: str | None = None, typescript: str | None = None) -> Compiler:
    """The Node (`node`, else `node` on PATH's absolute folders) and the `typescript`
    package (`typescript`, else Node's global packages) a checker runs on;
    `CheckerUnavailable` saying what is missing. Found once per process and setting (a
    tool set's checker is made often); what is missing is looked for again."""
    return _found(node, typescript)


@cache
def _found(node: str | None, typescript: str | None) -> Compiler:
    found = find_program(node or "node")
    if found is None:
        raise CheckerUnavailable(
            "TypeScript programs are checked with Node.js and the `typescript` package, and "
            f"there is no {'Node at ' + repr(node) if node else '`node` on PATH'}"
        )
    executable = os.path.realpath(found)
    try:
        version = node_version(executable)
    except NodeUnavailable as error:
        raise CheckerUnavailable(str(error)) from None
    directory = find_typescript(typescript, found, executable)
    if directory is None:
        where = f"in {typescript!r}" if typescript else f"among the global packages of {found}"
        raise CheckerUnavailable(
            f"TypeScript programs are checked with the `typescript` package, and there is none "
            f"{where} (`npm install -g typescript` with that Node, or pass its folder)"
        )
    package = inspect_package(directory)
    if isinstance(package, str):
        raise CheckerUnavailable(package)
    return Compiler(executable, version, package)


ENVIRONMENT = {"PATH": os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
"""Nothing of the host's environment: no secret, no NODE_OPTIONS."""


def start_server(compiler: Compiler, memory_bytes: int, sandbox: str) -> LanguageServer:
    """The checker's process, started under its limits in the `sandbox` setting;
    `SandboxUnavailable` when that sandbox cannot work here."""
    mode = check_mode(sandbox)
    arguments = compiler.arguments(memory_bytes)
    image = WorkerImage(
        compiler.node, compiler.paths(), ("-e", "console.log('ok')"), sys.executable, epoll=True
    )
    launcher = image_launcher(mode, image)
    spawn = launcher.spawn(arguments, ENVIRONMENT)
    try:
        user = spawn.credentials.get("user", -1)
        group = spawn.credentials.get("group", -1)
        command = [sys.executable, "-I", "-S", "-c", TRAMPOLINE, str(memory_bytes)]
        command += [str(user), str(group), *spawn.argv]
        return LanguageServer(command, ENVIRONMENT, "/", spawn.descriptors)
    finally:
        spawn.close()
