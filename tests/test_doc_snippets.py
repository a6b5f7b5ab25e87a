"""Every Python snippet in README.md and docs/ runs as written, in a fresh interpreter from
the repository root, and prints what the text after it says it prints. A snippet that
cannot run here says why in a marker on the line before it
(`<!-- snippet: not run (REASON) -->`); it must still parse, and a reason that names a
test file names one that exists and runs it."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"<!-- snippet: not run \((?P<reason>[^)]+)\) -->\n$")
FENCE = re.compile(r"^```python\n(?P<code>.*?)^```\n", re.MULTILINE | re.DOTALL)
PRINTS = re.compile(r"\s*It prints:\s*```text\n(?P<text>.*?)^```\n", re.MULTILINE | re.DOTALL)
"""Matched at the end of a fence (`match(text, pos)` anchors there; `\\A` would anchor at
the start of the document and never match)."""


@dataclass(frozen=True)
class Snippet:
    document: Path
    line: int
    code: str
    not_run: str | None
    prints: str | None

    @property
    def id(self) -> str:
        return f"{self.document.relative_to(ROOT).as_posix()}:{self.line}"


def snippets() -> list[Snippet]:
    found = []
    for document in DOCUMENTS:
        text = document.read_text("utf-8")
        for fence in FENCE.finditer(text):
            before = text[: fence.start()]
            marker = NOT_RUN.search(before[before.rfind("\n", 0, len(before) - 1) + 1 :])
            prints = PRINTS.match(text, fence.end())
            found.append(
                Snippet(
                    document,
                    before.count("\n") + 1,
                    fence["code"],
                    marker["reason"] if marker else None,
                    prints["text"] if prints else None,
                )
            )
    return found


SNIPPETS = snippets()


def test_the_documents_have_snippets() -> None:
    runnable = [s for s in SNIPPETS if s.not_run is None]
    assert len(runnable) >= 2, [s.id for s in SNIPPETS]
    assert any(s.document.name == "codemode.md" and s.prints for s in runnable)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.id for s in SNIPPETS])
def test_snippet_runs_as_documented(snippet: Snippet, tmp_path: Path) -> None:
    ast.parse(snippet.code)
    if snippet.not_run is not None:
        for name in re.findall(r"tests/[\w/]+\.py", snippet.not_run):
            assert (ROOT / name).is_file(), f"{snippet.id}: {name} does not exist"
            assert snippet.document.name in (ROOT / name).read_text("utf-8")
        return
    program = tmp_path / "snippet.py"
    program.write_text(snippet.code, encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, str(program)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=600,  # a hang backstop only; a snippet takes seconds
        check=False,
    )
    assert ran.returncode == 0, f"{snippet.id}:\n{ran.stderr[-3000:]}"
    if snippet.prints is not None:
        assert ran.stdout == snippet.prints, snippet.id
