"""The audit's escape probes against both sandboxes, in both languages, with the host
running as root and as an unprivileged user (see `escape_probes.py` for what each probe
does and must show). On today's machines the root host was the hole: its sandbox's uid was
the host's uid 0, which may write the kernel's settings."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from support.escape_probes import problems, run_all
from support.sandbox_checks import python_for
from support.typescript_nodes import SETUPS, staged_options
from support.unprivileged import run_as_user

LANGUAGES = ("python", "typescript", "typescript7")
"""Python's worker, TypeScript's (TypeScript 5 compiles in it) and TypeScript 7's compile
step (its native tsc before the worker)."""
SANDBOXES = ("bubblewrap", "namespaces")

pytestmark = pytest.mark.slow


def this_host_options(language: str, sandbox: str) -> dict[str, Any]:
    if language == "python":
        return {"python": python_for(sandbox)}
    setup = dict(SETUPS["emit" if language == "typescript7" else "transpile"])
    if sandbox == "bubblewrap":
        setup.update(staged_options(setup))
    return setup


def assert_contained(report: dict[str, Any]) -> None:
    context = report["context"]
    found = {
        name: said
        for name, outcome in report["outcomes"].items()
        if (said := problems(name, outcome, context))
    }
    assert not found, (context, found)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_escape_probes_with_this_host(sandbox: str, language: str) -> None:
    """The host the tests run as: root on CI (the half that was the hole), where the other
    test adds the unprivileged half."""
    report = run_all(language, sandbox, this_host_options(language, sandbox))
    assert report["context"]["host_uid"] == os.geteuid()
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


def test_the_compile_probes_see_the_hole_in_an_unsandboxed_compile() -> None:
    """The compile probes are not blind either: a compiler started without a sandbox (as
    every one was before the compile step ran in the run's sandbox) shares the host's
    namespaces, runs without the filter, as the host's uid, and can open the planted
    secret. Only `compile_reads` and `compile_options` pass there (see their notes)."""
    report = run_all("typescript7", "none", this_host_options("typescript7", "none"))
    context = report["context"]
    said = {name: problems(name, outcome, context) for name, outcome in report["outcomes"].items()}
    identity = said["compile_identity"]
    assert any("shares the host's ['user', 'pid', 'mnt', 'net']" in each for each in identity)
    assert any("runs in the host's pid namespace" in each for each in identity), identity
    assert any(each.endswith("Seccomp 0, NoNewPrivs 0") for each in identity), identity
    assert any("can open the host's" in each and "secret.ts" in each for each in identity)
    if os.geteuid() == 0:
        assert any("runs as ['0', '0', '0', '0']" in each for each in identity), identity
    assert not [each for each in identity if "compilers left" in each or "secret's text" in each]


def test_the_probes_see_the_hole_in_an_unsandboxed_run() -> None:
    """The probes are not blind: without a sandbox the program keeps the host's identity
    (no seccomp, no new uid), and, where the host is root, the kernel's settings open for
    writing."""
    report = run_all("python", "none", {"python": sys.executable}, ["sysctl", "identity"])
    found = problems("sysctl", report["outcomes"]["sysctl"], report["context"])
    assert not any("the probe failed" in each for each in found), found
    if os.geteuid() == 0:
        assert any("core_pattern" in each for each in found), found
    said = problems("identity", report["outcomes"]["identity"], report["context"])
    assert any(each.startswith("Seccomp is") for each in said), said
    assert any(each.startswith("uid ") for each in said), said
