"""A host that runs as an unprivileged uid: the escape probes (`escape_probes.py`) run in a
separate Python process started as `PROBE_ID` by a root test process, with copies of this
toolkit, the probes, and the Node set-up where that uid can reach them.

The uid needs no account: the kernel checks numbers, and nothing here looks the user up.
Where the tests do not run as root they already run as a normal user, and the probes run in
the test process itself."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from sandbox_checks import reachable_python, stage, staged

import codegen
from typescript_nodes import SETUPS

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
    setup = SETUPS["transpile"]
    return {
        "node": staged(setup["node"]),
        "typescript": staged(setup["typescript"]),
        "stripper": "typescript",
    }


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
