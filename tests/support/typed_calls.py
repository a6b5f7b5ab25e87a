"""Python checkers over caller files: what each line must get (`Expectations`), each checker's
findings (`mypy --strict`, `pyright` strict), and the comparison of the two. Shared by the
typed-call tests and the call shapes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Expectations:
    """What each line of one caller file must get from a checker."""

    clean: set[int] = field(default_factory=set)
    reported: dict[int, str] = field(default_factory=dict)
    """line -> a word the report must contain ("" for any report)."""


def check_findings(
    findings: dict[str, dict[int, list[str]]], expected: dict[str, Expectations]
) -> None:
    problems = []
    for name, expect in expected.items():
        found = findings.get(name, {})
        for line in sorted(expect.clean):
            if line in found:
                problems.append(f"{name}:{line}: a correct call is reported: {found[line]}")
        for line, word in sorted(expect.reported.items()):
            if line not in found:
                problems.append(f"{name}:{line}: a wrong call is not reported")
            elif word and not any(word in message for message in found[line]):
                problems.append(f"{name}:{line}: the report does not name {word!r}: {found[line]}")
    for name, lines in findings.items():
        if name not in expected or set(lines) - expected[name].clean - set(expected[name].reported):
            problems.append(f"{name}: reports outside the calls: {lines}")
    assert not problems, "\n".join(problems[:40]) + f"\n({len(problems)} problems)"


def mypy_findings(directory: Path, files: list[str]) -> dict[str, dict[int, list[str]]]:
    """`mypy --strict` over `files` (in `directory`): file -> line -> error messages."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--hide-error-context",
            "--no-incremental",
            "--cache-dir",
            str(directory / ".mypy_cache"),
            *files,
        ],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
    )
    findings: dict[str, dict[int, list[str]]] = {}
    for line in run.stdout.splitlines():
        match = re.match(r"([^:]+):(\d+): (error|note): (.*)", line)
        assert match, line
        if match[3] == "error":
            findings.setdefault(match[1], {}).setdefault(int(match[2]), []).append(match[4])
    assert run.returncode in (0, 1), run.stderr
    return findings


def pyright_findings(directory: Path, files: list[str]) -> dict[str, dict[int, list[str]]]:
    """`pyright` strict (the directory's `pyrightconfig.json`) over `files`: file -> line ->
    error messages."""
    pyright = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    run = subprocess.run(
        [pyright, "--outputjson", "--project", str(directory), *files],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(run.stdout)
    findings: dict[str, dict[int, list[str]]] = {}
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] != "error":
            continue
        name = Path(diagnostic["file"]).name
        line = diagnostic["range"]["start"]["line"] + 1
        findings.setdefault(name, {}).setdefault(line, []).append(diagnostic["message"])
    return findings
