"""The render-target registry: one entry per language, read by every place that dispatches
per language, and the same text as each renderer called directly."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from codegen.codemode.presentation.languages import RUN_CODE_FLAVORS, SDK_RENDERERS
from codegen.engine import compile_sources
from codegen.render import catalog as docs
from codegen.render.python.black_layout import flat
from codegen.render.python.sdk import python_sdk_from_chunks, render_python_sdk, type_expr
from codegen.render.sections.framing import render_python_section, render_typescript_section
from codegen.render.targets import TARGET_NAMES, TARGETS, UnknownTargetError, target
from codegen.render.typescript.sdk import (
    render_typescript_sdk,
    spell,
    typescript_sdk_from_chunks,
)
from codegen.workflow.config import parse_languages
from conftest import SCHEMAS

CASES = ("nested_objects", "defaults_constraints", "tool_names")


def _catalog(case: str) -> Any:
    compiled = compile_sources([str(SCHEMAS / f"{case}.json")])
    assert compiled.catalog is not None
    return compiled.catalog


def test_the_code_mode_tables_are_built_from_the_targets() -> None:
    assert TARGET_NAMES == ("python", "typescript")
    assert tuple(SDK_RENDERERS) == tuple(RUN_CODE_FLAVORS) == TARGET_NAMES
    assert all(SDK_RENDERERS[name] is TARGETS[name].section for name in TARGET_NAMES)
    assert parse_languages(["typescript", "python"]) == TARGET_NAMES


@pytest.mark.parametrize("name", ["__class__", "keys", "", "Python", "rust", 1, None])
def test_lookups_are_own_key_only(name: object) -> None:
    with pytest.raises(UnknownTargetError, match="known: python, typescript") as info:
        target(name)
    assert isinstance(info.value, ValueError) and info.value.exit_code == 2


@pytest.mark.parametrize("case", CASES)
def test_each_target_gives_what_its_renderer_gives(case: str) -> None:
    catalog = _catalog(case)
    python, typescript = TARGETS["python"], TARGETS["typescript"]
    assert python.render(catalog, None) == render_python_sdk(catalog)
    assert typescript.render(catalog, None) == render_typescript_sdk(catalog)
    assert python.section(catalog) == render_python_section(catalog)
    assert typescript.section(catalog) == render_typescript_section(catalog)
    chunks = [python.chunk(tool) for tool in catalog.tools]
    assert python.assemble(chunks) == python_sdk_from_chunks(chunks) == render_python_sdk(catalog)
    chunks = [typescript.chunk(tool) for tool in catalog.tools]
    assert typescript.assemble(chunks) == typescript_sdk_from_chunks(chunks)
    for tool in catalog.tools:
        assert python.spell(tool.args) == flat(type_expr(tool.args))
        assert typescript.spell(tool.args) == spell(tool.args)


def test_the_catalog_spells_through_the_target() -> None:
    catalog = _catalog("defaults_constraints")
    for name in TARGET_NAMES:
        text = docs.render_catalog(catalog, "md", name)
        assert f"```{TARGETS[name].fence}\n" in text
        page = docs.tool_pages(catalog, name)[0]
        assert page.args_type == TARGETS[name].spell(catalog.tools[0].args)
        assert page.types == TARGETS[name].declarations(catalog.tools[0])
    with pytest.raises(UnknownTargetError):
        docs.render_catalog(catalog, "md", "rust")


def test_the_registry_imports_no_renderer() -> None:
    code = (
        "import sys, codegen.render.targets as t\n"
        "assert t.TARGET_NAMES\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('codegen.render.'))\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['codegen.render.targets']"
