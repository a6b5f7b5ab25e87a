"""A host that runs as an unprivileged uid: the escape probes (`escape_probes.py`) run in a
separate Python process started as `PROBE_ID` by a root test process, with copies of this
toolkit, the probes, and the Node set-up where that uid can reach them; `codegen serve` runs
so too (`serve_argv`), with copies of the installed packages it imports.

The uid needs no account: the kernel checks numbers, and nothing here looks the user up.
Where the tests do not run as root they already run as a normal user, and the probes run in
the test process itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import codegen
from support.sandbox_checks import copy_reachable, reachable_python, stage, staged
from support.typescript_nodes import SETUPS, staged_options

PROBE_ID = 64123
"""The uid and gid of the unprivileged host (far from system and login ranges)."""

DRIVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
import escape_probes
language, sandbox, options = json.loads(sys.argv[2])
print(json.dumps(escape_probes.run_all(language, sandbox, options)))
"""


def _toolkit() -> str:
    """A folder holding copies of the `codegen` package and the probes."""
    folder = Path(stage()) / "toolkit"
    if not folder.exists():
        target = staged(str(Path(codegen.__file__).parent))
        folder.mkdir(mode=0o755)
        os.symlink(target, folder / "codegen")
        probes = staged(str(Path(__file__).with_name("escape_probes.py")))
        os.symlink(probes, folder / "escape_probes.py")
    return str(folder)


def options_for(language: str, sandbox: str, python: str) -> dict[str, Any]:
    if language == "python":
        return {"python": python}
    setup = dict(SETUPS["emit" if language == "typescript7" else "transpile"])
    setup.update(staged_options(setup))
    return setup


def run_as_user(language: str, sandbox: str) -> dict[str, Any]:
    """The probes' report from a host running as `PROBE_ID` (the tests must run as root)."""
    python = reachable_python()
    options = options_for(language, sandbox, python)
    done = subprocess.run(
        [python, "-I", "-c", DRIVER, _toolkit(), json.dumps([language, sandbox, options])],
        user=PROBE_ID,
        group=PROBE_ID,
        extra_groups=[],
        env={"PATH": os.defpath, "LANG": "C.UTF-8"},
        cwd=stage(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["context"]["host_uid"] == PROBE_ID
    return report


SERVE_IMPORTS = (
    "codegen.cli, codegen.serve.command, codegen.serve.mcp_server, codegen.serve.upstream, "
    "codegen.mcp.transports, codegen.serve.http, codegen.codemode.registry, "
    "codegen.codemode.runtimes.python, mcp, mcp.server.lowlevel, mcp.server.stdio, "
    "mcp.server.subscriptions, mcp.server.streamable_http_manager, "
    "mcp.server.transport_security, mcp.client.streamable_http, mcp.shared._httpx_utils, "
    "uvicorn, uvicorn.protocols.http.auto, uvicorn.protocols.websockets.auto, "
    "uvicorn.lifespan.on, uvicorn.loops.auto, starlette.applications, starlette.routing, "
    "anyio, jsonschema, jinja2, mcp_types.version"
)
"""What `serve` imports, lazily included (uvicorn's protocols): the packages they live in
are the ones copied."""


@cache
def site_packages() -> str:
    """Copies (hard links) of the installed packages `codegen serve` and the MCP fixture
    servers import, and of every distribution's metadata, in a folder `PROBE_ID` reaches."""
    listing = (
        f"import sys, json\nimport {SERVE_IMPORTS}\n"
        "roots = set()\n"
        "for module in list(sys.modules.values()):\n"
        "    path = getattr(module, '__file__', None) or ''\n"
        "    if 'site-packages' in path:\n"
        "        head, _, rest = path.partition('site-packages/')\n"
        "        roots.add(head + 'site-packages/' + rest.split('/')[0])\n"
        "print(json.dumps(sorted(roots)))\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", listing], capture_output=True, text=True, check=True
    )
    entries = [Path(p) for p in json.loads(found.stdout)]
    folder = Path(stage()) / "site"
    folder.mkdir(mode=0o755)
    for place in {entry.parent for entry in entries}:
        entries += [p for p in place.iterdir() if p.name.endswith(".dist-info")]
    for entry in entries:
        if entry.name != "codegen" and not (folder / entry.name).exists():
            copy_reachable(str(entry), str(folder / entry.name))
    return str(folder)


SERVE = (
    "import sys\nsys.path[:0] = sys.argv[1].split(':')\n"
    "sys.argv = ['codegen', *sys.argv[2:]]\n"
    "from codegen.cli import main\nsys.exit(main())\n"
)
FIXTURE = (
    "import runpy, sys\nsys.path[:0] = sys.argv[1].split(':')\n"
    "runpy.run_path(sys.argv[2], run_name='__main__')\n"
)


def search_path() -> str:
    return f"{_toolkit()}:{site_packages()}"


def serve_argv(*arguments: str) -> list[str]:
    """`codegen serve ARGUMENTS` for a process started as `PROBE_ID`."""
    return [reachable_python(), "-I", "-c", SERVE, search_path(), "serve", *arguments]


def script_argv(path: Path, *arguments: str) -> list[str]:
    """A script that takes the search path as its first argument (as `SERVE` does), with
    `ARGUMENTS`, for a process started as `PROBE_ID`."""
    return [reachable_python(), "-I", staged(str(path)), search_path(), *arguments]


def fixture_server(path: Path) -> dict[str, Any]:
    """An `mcpServers` entry that runs a fixture server as `PROBE_ID` can."""
    return {
        "command": reachable_python(),
        "args": ["-I", "-c", FIXTURE, search_path(), staged(str(path))],
    }


def as_user() -> dict[str, Any]:
    """`subprocess` arguments that start a process as `PROBE_ID`."""
    return {"user": PROBE_ID, "group": PROBE_ID, "extra_groups": []}


def user_folder(name: str) -> Path:
    """A folder `PROBE_ID` owns, for its home, configs and working directories."""
    folder = Path(stage()) / name
    folder.mkdir(mode=0o755)
    os.chown(folder, PROBE_ID, PROBE_ID)
    return folder
