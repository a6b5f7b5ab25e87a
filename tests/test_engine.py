"""The one compile engine: every way of working a catalog gives the bytes and diagnostics of
the one-go pipeline.

One property of one object, `codegen.engine.Engine`: for each catalog, its `render` (each
language's SDK) and its `compile` (the IR catalog, checked through every renderer including
the model-facing sections) equal what `pipeline.compile_catalog` and the renderers give,
whatever the strategy: in one go, in shares across 2 or 3 processes, through a cache in
memory (cold, then warm), or through a cache on disk (cold in shares, saved, then read back
warm by a new cache object in one process)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from codegen.engine import Engine
from codegen.incremental.cache import ToolCache
from codegen.load.sources import load_sources, load_value
from conftest import CORPUS, EVERY_FILE, ROOT
from support.engine_strategies import (
    COLLIDING,
    LANGUAGES,
    assert_every_strategy_agrees,
    one_go,
    sdks_of,
)
from support.robustness_strategies import catalogs


@pytest.mark.parametrize("path", EVERY_FILE, ids=lambda p: p.stem)
def test_every_strategy_agrees_on_every_golden_case_and_corpus_file(
    path: Path, tmp_path: Path
) -> None:
    loaded = load_sources([str(path)])
    assert_every_strategy_agrees(loaded.tools, loaded.diagnostics, tmp_path)


def test_every_strategy_agrees_on_the_whole_corpus(tmp_path: Path) -> None:
    loaded = load_sources([str(CORPUS)], namespace=True)
    assert len(loaded.tools) > 300
    assert_every_strategy_agrees(loaded.tools, loaded.diagnostics, tmp_path)


def test_every_strategy_numbers_colliding_names_as_one_go_does(tmp_path: Path) -> None:
    loaded = load_value(COLLIDING, "tools.json")
    texts, _ = one_go(loaded.tools, ())
    assert texts is not None
    assert "class ReadFileArgs(" in texts["python"] and "class ReadFile__" in texts["python"]
    assert_every_strategy_agrees(loaded.tools, (), tmp_path)


def test_definitions_without_a_cache_key_take_the_one_go_path(tmp_path: Path) -> None:
    """An in-memory caller's own objects are not plain data: nothing is cached, nothing
    differs."""
    loaded = load_value(COLLIDING, "tools.json")
    odd = list(loaded.tools)
    schema = {"type": "object", "properties": {"q": {"type": "string", "x-host": _NotData()}}}
    odd[0] = dataclasses.replace(odd[0], input_schema=schema)
    cache = ToolCache()
    texts, expected = one_go(odd, ())
    rendered = Engine(cache).render(odd, (), LANGUAGES)
    assert (rendered.texts, rendered.diagnostics) == (sdks_of(texts), expected)
    assert len(cache) == 0


class _NotData:
    def __repr__(self) -> str:
        return "<not data>"

    def __reduce__(self) -> Any:
        raise TypeError("not picklable")


@pytest.mark.slow
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(value=catalogs(max_tools=8))
def test_every_strategy_agrees_on_hostile_catalogs(tmp_path_factory: Any, value: Any) -> None:
    loaded = load_value(value, "tools.json")
    assert_every_strategy_agrees(loaded.tools, loaded.diagnostics, tmp_path_factory.mktemp("e"))


def test_the_command_line_and_the_library_go_through_the_engine() -> None:
    """No caller picks a strategy itself: only the engine imports the per-tool machinery."""
    root = ROOT / "codegen"

    def users(text: str) -> list[str]:
        return sorted(
            str(path.relative_to(root))
            for path in root.rglob("*.py")
            if text in path.read_text(encoding="utf-8")
        )

    assert users("incremental.entries") == ["engine.py"]
    assert users("incremental.assembly") == ["engine.py"]
    assert users("compile_catalog(") == ["engine.py", "pipeline.py"]
