"""What the sandbox tests of both runtimes share: the sandboxes, a tool binding, the host
secret that must never reach a program, the checks that no sandboxed process is left, and
the programs a sandbox's unprivileged uid can reach.

On a root host bubblewrap runs as a uid of its own and binds only what that uid may reach; the
interpreter, Node or `typescript` package of a test set-up may live under a folder closed to
it (pyenv under /root, a virtual environment in a checkout there). `python_for` and
`staged` give the tests a copy they can reach (hard links where the file system allows),
so every sandbox is tested, as root too, with the same programs."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from functools import cache
from typing import Any

import psutil
import pytest

from codegen.codemode.run_code.code_runtime import Bindings, CodeRunFailed
from codegen.codemode.sandbox.identities import STRANGER
from codegen.codemode.sandbox.launchers import host_is_root, unreachable
from support.processes import left_processes

SANDBOXES = ("auto", "bubblewrap", "namespaces")
SECRET = "codegen-test-secret-2f6c1d"
"""Put in the host's environment; no sandboxed program may see it."""


async def answer(name: str, arguments: Any) -> Any:
    return {"tool": name, "args": arguments}


BINDINGS = Bindings(("echo",), answer)


def assert_no_process_left() -> None:
    for _ in range(100):
        left = left_processes()
        if not left:
            return
        psutil.wait_procs(left, timeout=0.1)
    assert not left_processes(), "sandboxed processes left running"


def text_of(outcome: Any) -> str:
    if isinstance(outcome, CodeRunFailed):
        return f"{outcome.kind}: {outcome} {outcome.logs}"
    return f"{outcome.result!r} {outcome.logs}"


@pytest.fixture(autouse=True, scope="module")
def host_secret() -> Iterator[None]:
    os.environ["CODEGEN_HOST_SECRET"] = SECRET
    yield
    os.environ.pop("CODEGEN_HOST_SECRET", None)


def reachable(path: str) -> bool:
    """Whether the sandbox's uid on a root host may reach `path` (always, on another host)."""
    return not host_is_root() or unreachable(path, *STRANGER) is None


@cache
def stage() -> str:
    """A folder every user may enter, removed when the tests end."""
    folder = tempfile.mkdtemp(prefix="codegen-stage-")
    os.chmod(folder, 0o755)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


@cache
def staged(path: str) -> str:
    """`path` (a file or a folder) where the sandbox's uid may reach it: itself when it
    can, else a copy in `stage()`."""
    real = os.path.realpath(path)
    if reachable(real):
        return real
    target = os.path.join(stage(), f"{len(os.listdir(stage()))}-{os.path.basename(real)}")
    copy_reachable(real, target)
    return target


def copy_reachable(source: str, target: str) -> None:
    """A copy of `source` (hard links where the file system allows) that every user may
    read, folders entered."""
    real = os.path.realpath(source)
    if os.path.isdir(real):
        shutil.copytree(
            real,
            target,
            copy_function=_link_or_copy,
            symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    else:
        _link_or_copy(real, target)
    # folders are new; a file may be a hard link to the original: only read bits are
    # added, and only where missing
    paths = [(target, os.path.isdir(target))]
    for root, folders, files in os.walk(target):
        paths += [(os.path.join(root, name), True) for name in folders]
        paths += [(os.path.join(root, name), False) for name in files]
    for path, folder in paths:
        if os.path.islink(path):
            continue
        mode = os.stat(path).st_mode
        wanted = 0o755 if folder else mode | 0o444
        if mode & 0o7777 != wanted & 0o7777:
            os.chmod(path, wanted)


@cache
def reachable_python() -> str:
    """A Python the sandbox's uid can run: this one, else the system's."""
    for candidate in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        real = os.path.realpath(candidate)
        if not os.path.exists(real) or not reachable(real):
            continue
        version = subprocess.run(
            [real, "-c", "import sys; print(sys.version_info >= (3, 11))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if version.stdout.strip() == "True":
            return real
    raise AssertionError(
        "bubblewrap on a root host needs a Python 3.11+ that every user may run "
        "(install Debian's python3)"
    )


def python_for(sandbox: str) -> str | None:
    """The worker's Python for `sandbox`: a reachable one for bubblewrap on a root host;
    None (the runtime's own choice, which finds a reachable twin itself) for `auto`."""
    if sandbox == "auto":
        return None
    return reachable_python() if sandbox == "bubblewrap" and host_is_root() else sys.executable
