"""The audit's escape probes against both sandboxes, in both languages, with the host
running as root and as an unprivileged user (see `escape_probes.py` for what each probe
does and must show). On today's machines the root host was the hole: its sandbox's uid was
the host's uid 0, which may write the kernel's settings."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from escape_probes import problems, run_all
from sandbox_checks import python_for, staged
from unprivileged import run_as_user

from typescript_nodes import SETUPS

LANGUAGES = ("python", "typescript")
SANDBOXES = ("bubblewrap", "namespaces")

pytestmark = pytest.mark.slow


def this_host_options(language: str, sandbox: str) -> dict[str, Any]:
    if language == "python":
        return {"python": python_for(sandbox)}
    setup = SETUPS["transpile"]
    if sandbox == "bubblewrap":
        return {
            "node": staged(setup["node"]),
            "typescript": staged(setup["typescript"]),
            "stripper": "typescript",
        }
    return dict(setup)


def assert_contained(report: dict[str, Any]) -> None:
    context = report["context"]
    found = {
        name: said
        for name, outcome in report["outcomes"].items()
        if (said := problems(name, outcome, context))
    }
    assert not found, (context, found)


@pytest.mark.skipif(os.geteuid() != 0, reason="the host must run as root for this half")
@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_escape_probes_with_a_root_host(sandbox: str, language: str) -> None:
    report = run_all(language, sandbox, this_host_options(language, sandbox))
    assert report["context"]["host_uid"] == 0
    assert_contained(report)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_escape_probes_with_an_unprivileged_host(sandbox: str, language: str) -> None:
    if os.geteuid() == 0:
        report = run_as_user(language, sandbox)
    else:
        report = run_all(language, sandbox, this_host_options(language, sandbox))
    assert report["context"]["host_uid"] != 0
    assert_contained(report)


def test_the_probes_see_the_hole_in_an_unsandboxed_run() -> None:
    """The probes are not blind: without a sandbox (as root here) the program's setting
    files open for writing and it may write into the host's /dev/shm."""
    if os.geteuid() != 0:
        pytest.skip("only root may open the kernel's settings for writing")
    report = run_all("python", "none", {"python": sys.executable}, ["sysctl", "identity"])
    found = problems("sysctl", report["outcomes"]["sysctl"], report["context"])
    assert any("core_pattern" in each for each in found), found
    assert problems("identity", report["outcomes"]["identity"], report["context"])
