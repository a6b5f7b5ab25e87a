"""The docs name only what exists: every repository path, module and `module.NAME` they
write in backticks is there, in the docs and in the package's docstrings; and the README
carries no test counts or run times (they go stale with every commit; bench/README.md
keeps the measurements, each dated)."""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT

DOCS = [
    ROOT / "templates" / "README.md",
    ROOT / "README.md",
    ROOT / "ARCHITECTURE.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "bench" / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
]
TOP = (
    "codegen/",
    "tests/",
    "bench/",
    "templates/",
    "schemas/",
    "snapshots/",
    "docs/",
    "scripts/",
    ".ci/",
)
PACKAGES = tuple(
    f"{path.name}/"
    for path in sorted((ROOT / "codegen").iterdir())
    if (path / "__init__.py").is_file()
)
CODE = ("codegen", "tests", "bench", "templates", "scripts", ".ci")
TICKED = re.compile(r"`([A-Za-z0-9_.\-/]+)`")
PLACEHOLDER = re.compile(r"\bNAME\b|-N\.")


def file_names() -> set[str]:
    return {
        path.name
        for folder in CODE
        for path in (ROOT / folder).rglob("*")
        if "node_modules" not in path.parts and ".cache" not in path.parts
    }


def problem(token: str, names: set[str]) -> str | None:
    """What is wrong with a backticked token that looks like a path, or None."""
    if PLACEHOLDER.search(token):
        return None
    if token.startswith(TOP):
        if (ROOT / token.rstrip("/")).exists() or made_at_run_time(token):
            return None
        return "no such path"
    if token.startswith(PACKAGES) and "/" in token:
        return _in_package(token)
    if re.fullmatch(r"[a-z0-9_]+\.(py|js|mjs)", token):
        return None if token in names else "no such file anywhere in the repository"
    return None


def made_at_run_time(token: str) -> bool:
    """A path the repository ignores (`bench/.cache/`, `.test-nodes/`): made by a run, so
    absent from a fresh clone, and not a stale name."""
    done = subprocess.run(
        ["git", "check-ignore", "-q", "--no-index", token],
        cwd=ROOT,
        capture_output=True,
    )
    return done.returncode == 0


def _in_package(token: str) -> str | None:
    """`render/python/sdk.py`, `search/`, or `load/json_text.MAX_NESTING` (a module and a name
    it defines), under codegen/."""
    path = ROOT / "codegen" / token.rstrip("/")
    if path.exists():
        return None
    module, dot, name = token.rpartition(".")
    source = ROOT / "codegen" / f"{module}.py"
    if dot and source.is_file():
        return None if name in defined_names(source) else f"{module}.py defines no {name}"
    return "no such path under codegen/"


def defined_names(source: Path) -> set[str]:
    """The functions, classes and assigned names a module defines, at any level."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def mentions() -> Iterator[tuple[str, str]]:
    """(where, token) for every backticked token in the docs and the package's docstrings."""
    for doc in DOCS:
        for match in TICKED.finditer(doc.read_text(encoding="utf-8")):
            yield doc.relative_to(ROOT).as_posix(), match.group(1)
    for source in sorted((ROOT / "codegen").rglob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                text = ast.get_docstring(node) or ""
                for match in TICKED.finditer(text):
                    yield source.relative_to(ROOT).as_posix(), match.group(1)


def test_every_path_the_docs_name_exists() -> None:
    names = file_names()
    found = sorted(
        f"{where}: `{token}`: {why}"
        for where, token in set(mentions())
        if (why := problem(token, names)) is not None
    )
    assert found == []


@pytest.mark.parametrize(
    "token",
    [
        "codegen/nowhere.py",
        "render/nowhere.py",
        "load/json_text.MISSING_LIMIT",
        "nowhere_module.py",
    ],
)
def test_a_stale_path_is_caught(token: str) -> None:
    assert problem(token, file_names()) is not None


def test_the_readme_has_no_test_counts_or_run_times() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    stale = re.findall(
        r"\b\d[\d,]* tests\b|\b\d+ minutes?\b|\d ?ms\b|\b\d[\d.]*[–-]?[\d.]*x\b", text
    )
    assert stale == []


def test_a_folder_a_run_makes_is_not_stale() -> None:
    """`bench/.cache/` is absent from a fresh clone (ignored, made on first use)."""
    names = file_names()
    assert problem("bench/.cache/", names) is None
    assert problem("bench/.cache-that-is-not-ignored/", names) is not None
