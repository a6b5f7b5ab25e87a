"""`codegen.codemode` reads top down: no module of the package imports, directly or through
others, a module that imports it back. Every import counts: at module level, inside a
function, and those only a type checker reads (`if TYPE_CHECKING:`)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import codegen.codemode

PACKAGE = Path(codegen.codemode.__file__).parent
NAME = "codegen.codemode"


def imported_modules(path: Path) -> set[str]:
    """The modules of the package that the file at `path` imports, anywhere in it."""
    module = f"{NAME}.{path.stem}"
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.rsplit(".", node.level)[0]
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            names = [target] + [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name.startswith(NAME + ".") and (PACKAGE / f"{name[len(NAME) + 1 :]}.py").exists():
                found.add(name)
    return found - {module}


def import_graph() -> dict[str, set[str]]:
    return {
        f"{NAME}.{path.stem}": imported_modules(path)
        for path in sorted(PACKAGE.glob("*.py"))
        if path.name != "__init__.py"
    }


def test_the_codemode_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 10 and graph[f"{NAME}.registry"], graph
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        raise AssertionError(f"import cycle: {' -> '.join(error.args[1])}") from None
    # The facade sits on top of what it assembles.
    for lower in ("executor", "bridge", "prompt", "scopes", "specs", "execution"):
        assert order.index(f"{NAME}.{lower}") < order.index(f"{NAME}.registry")


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The checker itself: a cycle made only of a function-level import and a type-only
    import is still a cycle."""
    first = tmp_path / "first.py"
    first.write_text("def f():\n    from .second import g\n")
    second = tmp_path / "second.py"
    second.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .first import f\n"
    )
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path
    try:
        graph = {f"{NAME}.{p.stem}": imported_modules(p) for p in (first, second)}
    finally:
        PACKAGE = saved
    assert graph == {f"{NAME}.first": {f"{NAME}.second"}, f"{NAME}.second": {f"{NAME}.first"}}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError:
        return
    raise AssertionError("the cycle was not found")
