"""One layering contract for the whole package: every module's imports (at module level,
inside functions, and type-only ones) go only where its layer may look, and no two modules
import each other, directly or through others.

A layer is a top-level module or subpackage of `codegen` (`load`, `ir_build`, `render`,
`serve`, ...); in `codemode`, `runtimes` and `sandbox` are layers of their own. A package's
`__init__` may re-export anything inside its own package (the lazy facades)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "codegen"

SUBLAYERS = ("codemode.runtimes", "codemode.sandbox", "codemode.checkers")

BASE = {"errors", "_support"}

ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "_support": {"errors"},
    "ir": set(),
    "identifiers": {"_support"},
    "load": BASE,
    "validate": BASE | {"load"},
    "normalize": BASE | {"load"},
    "ir_build": BASE | {"ir", "identifiers", "load", "validate", "normalize"},
    "render": BASE | {"ir", "identifiers"},
    "schema_spelling": BASE | {"ir", "ir_build", "normalize", "validate", "render"},
    "pipeline": BASE | {"ir", "load", "validate", "normalize", "ir_build"},
    "incremental": BASE | {"ir", "load", "validate", "ir_build", "render", "pipeline"},
    "engine": BASE | {"ir", "load", "pipeline", "incremental", "render"},
    "mcp": BASE | {"load"},
    "client": {"mcp"},
    "search": set(),
    "codemode": BASE | {"ir", "load", "validate", "engine", "render", "search"},
    "codemode.sandbox": BASE | {"codemode"},
    "codemode.runtimes": BASE | {"codemode", "codemode.sandbox"},
    "codemode.checkers": BASE | {"codemode", "codemode.sandbox", "codemode.runtimes", "render"},
    "serve": BASE
    | {"load", "validate", "mcp", "codemode", "codemode.runtimes", "codemode.sandbox", "search"},
    "workflow": BASE | {"ir", "load", "pipeline", "engine", "render", "mcp"},
    "install": BASE | {"load", "mcp"},
    "cli": BASE
    | {"load", "engine", "render", "codemode", "serve", "workflow", "install", "search"},
    "__init__": BASE
    | {"ir", "load", "pipeline", "engine", "render", "schema_spelling", "codemode", "search"},
    "__main__": {"cli"},
}
"""Each layer and the layers it may import: the stages in pipeline order, the engine on top
of the stage sequence (`pipeline`) and the per-tool machinery (`incremental`), then Code
Mode, serve, the workflow, `install` (a client's config file: it reads serve's config through
`mcp`, never serve itself) and the command line. Nothing in the pipeline reaches those;
`serve` and `workflow` never import each other: what both need to reach MCP servers (the
`mcpServers` config, the transports, the connection and the listing) is in `mcp`, which
reads config files with `load`'s decoder and derives prefixes by its `--namespace` rule."""


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str:
    if not module:
        return "__init__"
    for sub in SUBLAYERS:
        if module == sub or module.startswith(sub + "."):
            return sub
    return module.split(".")[0]


def imported_modules(path: Path, root: Path = PACKAGE) -> set[str]:
    """The package's modules that the file at `path` imports anywhere in it, as dotted names
    relative to the package (`render.python.sdk`, `ir`)."""
    module = module_name(path, root)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if not module:
        package = []
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module == "codegen" or (node.module or "").startswith("codegen."):
                target = node.module.removeprefix("codegen").removeprefix(".")  # type: ignore[union-attr]
            else:
                continue
            candidates = [target, *(f"{target}.{alias.name}".strip(".") for alias in node.names)]
        elif isinstance(node, ast.Import):
            candidates = [
                alias.name.removeprefix("codegen.")
                for alias in node.names
                if alias.name.startswith("codegen.")
            ]
        else:
            continue
        for name in candidates:
            relative = Path(*name.split(".")) if name else Path()
            if name and (
                (root / relative).with_suffix(".py").is_file()
                or (root / relative / "__init__.py").is_file()
            ):
                found.add(name)
    return found - {module}


def graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    return {module_name(path, root): imported_modules(path, root) for path in root.rglob("*.py")}


def violations(modules: dict[str, set[str]]) -> list[str]:
    """Every import that leaves its layer for one it may not look at."""
    found = []
    for module, imports in sorted(modules.items()):
        own = layer(module)
        for name in sorted(imports):
            target = layer(name)
            facade = module.endswith("__init__") or (name.startswith(module + ".") and module != "")
            if target == own or facade or target in ALLOWED.get(own, set()):
                continue
            found.append(f"{module or 'codegen'} ({own}) imports {name} ({target})")
    return found


def cycle(modules: dict[str, set[str]]) -> list[str] | None:
    """A cycle of module imports, ignoring a package's `__init__` re-exporting its own
    modules (it is the facade on top of them)."""
    edges = {
        module: {name for name in imports if not name.startswith(module + ".") or not module}
        for module, imports in modules.items()
    }
    edges[""] = set()  # the root facade re-exports everything lazily
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as error:
        return list(error.args[1])
    return None


def test_every_layer_imports_only_what_it_may() -> None:
    modules = graph()
    assert len(modules) > 100
    assert {layer(module) for module in modules} <= set(ALLOWED), "a layer missing in ALLOWED"
    assert not violations(modules), "\n".join(violations(modules))


def test_the_allowed_layers_form_no_cycle() -> None:
    graphlib.TopologicalSorter(ALLOWED).prepare()


def test_serve_and_the_workflow_never_import_each_other() -> None:
    """What both need (the `mcpServers` config, reaching an upstream) lives below both."""
    assert "workflow" not in ALLOWED["serve"] and "serve" not in ALLOWED["workflow"]
    assert "mcp" in ALLOWED["serve"] and "mcp" in ALLOWED["workflow"]


def test_no_module_imports_one_that_imports_it_back() -> None:
    found = cycle(graph())
    assert found is None, "import cycle: " + " -> ".join(found or [])


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "text",
    [
        "from ..workflow.config import read_toml\n",
        "def f():\n    from ..workflow import config\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from codegen.workflow.config import x\n",
        "import codegen.workflow.config\n",
    ],
    ids=["module-level", "in-a-function", "type-only", "absolute"],
)
def test_the_checker_catches_serve_importing_the_workflow(tmp_path: Path, text: str) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "serve/__init__.py": "",
            "serve/config.py": text,
            "workflow/__init__.py": "",
            "workflow/config.py": "",
        },
    )
    found = violations(graph(root))
    assert "serve.config (serve) imports workflow.config (workflow)" in found
    assert all(line.startswith("serve.config (serve) imports workflow") for line in found)


def test_the_checker_finds_a_cycle_of_lazy_and_type_only_imports(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "first.py": "def f():\n    from .second import g\n",
            "second.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from .first import f\n",
        },
    )
    assert sorted(cycle(graph(root)) or []) == ["first", "first", "second"]


@pytest.mark.parametrize("package", ["codegen", "codegen.codemode", "codegen.codemode.runtimes"])
def test_every_lazy_export_resolves(package: str) -> None:
    """A package's names are imported on first use from the module its table names: a moved
    module must not leave a name that fails only when someone asks for it."""
    import importlib

    module = importlib.import_module(package)
    assert all(getattr(module, name) is not None for name in module.__all__)
