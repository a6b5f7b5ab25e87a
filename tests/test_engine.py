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
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from test_cache import COLLIDING

from codegen.engine import Engine
from codegen.errors import Diagnostic
from codegen.incremental.cache import ToolCache
from codegen.load.definitions import ToolDefinition
from codegen.load.sources import load_sources, load_value
from codegen.pipeline import Compiled, compile_catalog
from codegen.render.targets import TARGETS
from conftest import CORPUS, EVERY_FILE
from robustness_strategies import catalogs

LANGUAGES = tuple(TARGETS)

Outcome = tuple[dict[str, str] | None, tuple[Diagnostic, ...]]


def one_go(definitions: Sequence[ToolDefinition], diagnostics: Sequence[Diagnostic]) -> Outcome:
    compiled = compile_catalog(definitions, diagnostics)
    if compiled.catalog is None:
        return None, compiled.diagnostics
    return _every_text(compiled), compiled.diagnostics


def _every_text(compiled: Compiled, memo: ToolCache | None = None) -> dict[str, str]:
    """Every text a catalog renders to: each language's SDK and its section."""
    assert compiled.catalog is not None
    texts = {}
    for language, target in TARGETS.items():
        texts[language] = target.render(compiled.catalog, memo)
        texts[f"{language} section"] = target.section(compiled.catalog, memo)
    return texts


def _sdks(texts: dict[str, str] | None) -> dict[str, str] | None:
    return None if texts is None else {language: texts[language] for language in LANGUAGES}


def strategies(tmp_path: Path) -> Iterator[tuple[str, Engine]]:
    """(name, engine) in the order they run; the caches carry over between runs of the
    same engine, so a later run of it is warm."""
    yield "one go", Engine()
    yield "shares of 2", Engine(jobs=2)
    yield "shares of 3", Engine(jobs=3)
    memory = Engine(ToolCache())
    yield "memory cache, cold", memory
    yield "memory cache, warm", memory
    disk = Engine(ToolCache(tmp_path / "cache"), jobs=2)
    yield "disk cache, cold, in shares", disk
    disk.save()
    yield "disk cache read back, warm", Engine(ToolCache(tmp_path / "cache"))


def assert_every_strategy_agrees(
    definitions: Sequence[ToolDefinition],
    diagnostics: Sequence[Diagnostic],
    tmp_path: Path,
) -> None:
    texts, expected = one_go(definitions, diagnostics)
    for name, engine in strategies(tmp_path):
        rendered = engine.render(definitions, diagnostics, LANGUAGES)
        assert rendered.diagnostics == expected, name
        assert rendered.texts == _sdks(texts), name
        compiled = engine.compile(definitions, diagnostics)
        assert compiled.diagnostics == expected, name
        if texts is None:
            assert compiled.catalog is None, name
        else:
            assert _every_text(compiled, engine.cache) == texts, name
    warm = ToolCache(tmp_path / "cache")
    Engine(warm).render(definitions, diagnostics, LANGUAGES)
    assert warm.misses == 0 and warm.hits == len(definitions)


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
    assert (rendered.texts, rendered.diagnostics) == (_sdks(texts), expected)
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
    root = Path(__file__).resolve().parent.parent / "codegen"

    def users(text: str) -> list[str]:
        return sorted(
            str(path.relative_to(root))
            for path in root.rglob("*.py")
            if text in path.read_text(encoding="utf-8")
        )

    assert users("incremental.entries") == ["engine.py"]
    assert users("incremental.assembly") == ["engine.py"]
    assert users("compile_catalog(") == ["engine.py", "pipeline.py"]
