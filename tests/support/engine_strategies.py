"""The compile engine's strategies side by side: in one go, in shares, through a cache in
memory and on disk; `assert_every_strategy_agrees` checks that each gives the bytes and
diagnostics of the one-go pipeline. And `COLLIDING`, tools whose type names would meet
without stems. Shared by the engine, cache and external-`$ref` tests."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from codegen.engine import Engine
from codegen.errors import Diagnostic
from codegen.incremental.cache import ToolCache
from codegen.load.definitions import ToolDefinition
from codegen.pipeline import Compiled, compile_catalog
from codegen.render.targets import TARGETS

LANGUAGES = tuple(TARGETS)


Outcome = tuple[dict[str, str] | None, tuple[Diagnostic, ...]]


def one_go(definitions: Sequence[ToolDefinition], diagnostics: Sequence[Diagnostic]) -> Outcome:
    compiled = compile_catalog(definitions, diagnostics)
    if compiled.catalog is None:
        return None, compiled.diagnostics
    return every_text(compiled), compiled.diagnostics


def every_text(compiled: Compiled, memo: ToolCache | None = None) -> dict[str, str]:
    """Every text a catalog renders to: each language's SDK and its section."""
    assert compiled.catalog is not None
    texts = {}
    for language, target in TARGETS.items():
        texts[language] = target.render(compiled.catalog, memo)
        texts[f"{language} section"] = target.section(compiled.catalog, memo)
    return texts


def sdks_of(texts: dict[str, str] | None) -> dict[str, str] | None:
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
        assert rendered.texts == sdks_of(texts), name
        compiled = engine.compile(definitions, diagnostics)
        assert compiled.diagnostics == expected, name
        if texts is None:
            assert compiled.catalog is None, name
        else:
            assert every_text(compiled, engine.cache) == texts, name
    warm = ToolCache(tmp_path / "cache")
    Engine(warm).render(definitions, diagnostics, LANGUAGES)
    assert warm.misses == 0 and warm.hits == len(definitions)


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


COLLIDING = [
    {"name": "read_file", "inputSchema": obj(options=obj(deep=obj(x={"type": "string"})))},
    {"name": "read-file", "inputSchema": obj(options=obj(flag={"type": "boolean"}))},
    {"name": "get", "inputSchema": obj(user_args=obj(id={"type": "integer"}))},
    {"name": "get_args_user", "inputSchema": obj(id={"type": "string"})},
    {"name": "alone", "inputSchema": obj(value=obj(n={"type": "number"}))},
]
"""Tools whose type names would collide without stems: `read_file` and `read-file` share the
stem `ReadFile`, and `get`'s nested `args.user_args` once named `GetArgsUserArgs`, which is
`get_args_user`'s root; the stem's separator now names it `Get_ArgsUserArgs`."""
