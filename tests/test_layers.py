"""The stages import only what comes before them: loading knows nothing of validation, the
renderers take IR and reach into no earlier stage, and nothing in the pipeline reaches the
command-line workflow or Code Mode."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "codegen"


def imported_modules(path: Path) -> set[str]:
    """Every `codegen` module a file imports, as a dotted name relative to the package
    (`render.python`, `validate`), lazy imports inside functions included."""
    package = path.relative_to(PACKAGE).with_suffix("").parts[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(package[: len(package) - node.level + 1])
            if node.module:
                found.add(".".join([*base, node.module]))
            else:
                found.update(".".join([*base, alias.name]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("codegen."):
            found.add(node.module.removeprefix("codegen."))  # type: ignore[union-attr]
    return found


def _modules(pattern: str) -> list[Path]:
    return sorted(PACKAGE.glob(pattern))


RULES = [
    ("load.py", {"validate", "normalize", "build_ir", "pipeline"}),
    ("formats.py", {"validate", "normalize.normalize_schema", "build_ir", "pipeline"}),
    ("envelope.py", {"validate", "build_ir", "pipeline"}),
    ("render/*.py", {"build_ir", "validate", "normalize", "pipeline", "recursion", "load"}),
    ("build_ir.py", {"validate", "pipeline", "render", "load"}),
    ("*.py", {"workflow", "codemode", "serve", "cli"}),
]


@pytest.mark.parametrize("pattern, forbidden", RULES, ids=[rule[0] for rule in RULES])
def test_no_module_imports_a_later_stage(pattern: str, forbidden: set[str]) -> None:
    exempt = {"cli.py", "__init__.py", "__main__.py", "client.py"}
    for path in _modules(pattern):
        if pattern == "*.py" and path.name in exempt:
            continue
        imported = imported_modules(path)
        leaks = {
            name
            for name in imported
            for stage in forbidden
            if name == stage or name.startswith(stage + ".")
        }
        assert not leaks, f"{path.relative_to(PACKAGE)} imports {sorted(leaks)}"


def test_the_import_reader_sees_relative_and_lazy_imports() -> None:
    found = imported_modules(PACKAGE / "render" / "catalog.py")
    assert {"ir", "render.targets", "runmemo"} <= found
    assert "build_ir" in imported_modules(PACKAGE / "schema_spelling.py")
