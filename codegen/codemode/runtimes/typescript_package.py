"""The user's `typescript` package: where it is, which version, and how it compiles.

TypeScript 5 and 6 are JavaScript: the worker loads the package and calls its
`transpileModule`. TypeScript 7 (what `npm install typescript` installs since 7.0) is a
native compiler with no JavaScript transpile API: its `tsc` binary comes in a platform
package npm installs beside it (`@typescript/typescript-<platform>-<arch>`), and it emits
each program's JavaScript in the run's sandbox before the worker gets it (`native_emit.py`).

The package comes from the directory the user configured (the package itself, or a folder
holding `node_modules/typescript`), else from the global packages of the Node installation
that runs the worker: `<prefix>/lib/node_modules` for `node` as PATH names it and as its
real path (a symbolic link in `/opt/homebrew/bin` and its target in the Cellar have different
prefixes), and for a Node in `/usr` also `/usr/local/lib/node_modules`, where Debian's npm
puts global packages. Never from the working directory: MCP clients start servers in the
user's workspace, which a cloned repository controls, and a planted
`node_modules/typescript` would run inside every TypeScript worker. The package is the
user's, never this toolkit's: nothing here ships it.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NATIVE_MAJOR = 7
"""The first TypeScript whose compiler is a native program rather than JavaScript."""


@dataclass(frozen=True)
class TypeScriptPackage:
    """A `typescript` package found, and what compiles programs with it."""

    directory: str
    """The package directory's real path."""
    version: str
    """Its `package.json` version, as written (`5.9.3`, `7.0.2`)."""
    tsc: str | None
    """TypeScript 7's native compiler (the real path of the platform package's binary);
    None for a JavaScript compiler, which the worker loads."""

    @property
    def native(self) -> bool:
        return major_of(self.version) >= NATIVE_MAJOR

    def describe(self) -> str:
        how = (
            "its native tsc, before the worker"
            if self.tsc
            else "its transpileModule, in the worker"
        )
        return f"TypeScript {self.version} ({how})"


def major_of(version: str) -> int:
    match = re.match(r"\d+", version)
    return int(match.group()) if match else 0


def global_folders(found: str, real: str) -> list[Path]:
    """Where the Node installation whose binary PATH names `found` (real path `real`) keeps
    its global packages."""
    folders: list[Path] = []
    for binary in (found, real):
        prefix = Path(os.path.abspath(binary)).parent.parent
        folders.append(prefix / "lib" / "node_modules")
        if prefix == Path("/usr"):
            folders.append(Path("/usr/local/lib/node_modules"))
    return list(dict.fromkeys(folders))


def candidate_folders(configured: str | None, found: str, real: str) -> list[Path]:
    """The folders that may be the package, in the order they are tried."""
    if configured:
        start = Path(configured).expanduser().resolve()
        return [start, start / "node_modules" / "typescript"]
    return [folder / "typescript" for folder in global_folders(found, real)]


def find_typescript(configured: str | None, found: str, real: str | None = None) -> str | None:
    """The real path of the first `typescript` package directory among the candidates
    (`candidate_folders`), else None."""
    for candidate in candidate_folders(configured, found, real or os.path.realpath(found)):
        if _manifest(candidate) is not None:
            return os.path.realpath(candidate)
    return None


def inspect_package(directory: str) -> TypeScriptPackage | str:
    """The package in `directory` (a real path `find_typescript` gave), or why it cannot
    compile programs here."""
    manifest = _manifest(Path(directory))
    version = str((manifest or {}).get("version", ""))
    if major_of(version) < NATIVE_MAJOR:
        if not (Path(directory) / "lib" / "typescript.js").is_file():
            return f"the `typescript` package in {directory} ({version or 'no version'}) has no lib/typescript.js"
        return TypeScriptPackage(directory, version, None)
    tsc = native_compiler(Path(directory), version)
    if tsc is None:
        name = platform_package()
        return (
            f"the `typescript` package in {directory} is {version}, a native compiler, and "
            f"its binary for this platform ({name} {version}) is not installed beside it "
            "(npm installs it unless optional dependencies are left out)"
        )
    return TypeScriptPackage(directory, version, tsc)


def platform_package() -> str:
    """The npm package holding TypeScript 7's binary for this machine, named as Node names
    the platform and architecture (`@typescript/typescript-linux-x64`)."""
    system = "win32" if sys.platform == "win32" else sys.platform.rstrip("0123456789")
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "loongarch64": "loong64"}.get(
        machine, "arm" if machine.startswith("arm") and machine != "arm64" else machine
    )
    return f"@typescript/typescript-{system}-{arch}"


def native_compiler(directory: Path, version: str) -> str | None:
    """The real path of the `tsc` binary of the platform package of the same version, where
    Node's resolution from the package finds it: nested in the package's `node_modules`, or
    beside the package in the `node_modules` holding it."""
    scope, name = platform_package().split("/")
    places = [directory / "node_modules"]
    if directory.parent.name == "node_modules":
        places.append(directory.parent)
    for place in places:
        package = place / scope / name
        manifest = _manifest(package, name=f"{scope}/{name}")
        binary = package / "lib" / ("tsc.exe" if sys.platform == "win32" else "tsc")
        if manifest and manifest.get("version") == version and os.access(binary, os.X_OK):
            return os.path.realpath(binary)
    return None


def _manifest(directory: Path, name: str = "typescript") -> dict[str, Any] | None:
    try:
        manifest = json.loads((directory / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(manifest, dict) and manifest.get("name") == name:
        return manifest
    return None
