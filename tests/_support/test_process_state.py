"""A library call leaves the process as it found it: the garbage collector, the recursion
limit and every module-level cache or table. Process-wide settings belong to the command
line alone (`cli.main`)."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import codegen
from codegen._support.recursion_limit import RECURSION_LIMIT, deep_recursion
from codegen._support.run_memos import active_tables, per_run, run_memos
from codegen.engine import Engine
from codegen.incremental.cache import ToolCache
from codegen.load.sources import load_value


def _catalog(tag: str) -> dict[str, Any]:
    """Tools whose names, keys and descriptions are new for every `tag`, so a cache keyed
    by them would have to grow."""
    nested = {"type": "object", "properties": {f"inner_{tag}": {"type": ["string", "null"]}}}
    return {
        "tools": [
            {
                "name": f"tool_{tag}_{index}",
                "description": f"Tool {index} of {tag}.\nSecond line {tag}.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        f"key_{tag}": {"type": "string", "description": f"about {tag}"},
                        f"odd-{tag}": nested,
                        "choice": {"anyOf": [{"type": "integer"}, {"const": tag}]},
                    },
                    "required": [f"key_{tag}"],
                },
                "outputSchema": {"type": "object", "properties": {f"out_{tag}": nested}},
            }
            for index in range(3)
        ]
    }


def _every_public_call(tag: str) -> None:
    value = _catalog(tag)
    compiled = codegen.compile_value(value)
    catalog = codegen.compile_definitions(compiled.definitions).catalog
    assert catalog is not None
    codegen.render_python_sdk(catalog)
    codegen.render_typescript_sdk(catalog)
    for language in ("python", "typescript"):
        codegen.render_sdk_section(catalog, language)
        codegen.run_code_tool(language)
        codegen.render_catalog(catalog, "md", language)
    codegen.render_catalog(catalog, "json")
    codegen.render_catalog(catalog, "html")
    schema = value["tools"][0]["inputSchema"]
    codegen.json_schema_to_py(schema)
    codegen.json_schema_to_ts(schema)
    loaded = load_value(value)
    rendered = Engine(ToolCache()).render(
        loaded.tools, loaded.diagnostics, ["python", "typescript"]
    )
    assert rendered.texts is not None


def _codegen_modules() -> Iterator[tuple[str, Any]]:
    for name, module in sorted(sys.modules.items()):
        if name == "codegen" or name.startswith("codegen."):
            yield name, module


def _module_state() -> dict[str, int]:
    """The size of every cache and mutable container held by a module of the toolkit."""
    sizes: dict[str, int] = {}
    for name, module in _codegen_modules():
        for attribute, value in list(vars(module).items()):
            where = f"{name}.{attribute}"
            if callable(getattr(value, "cache_info", None)):
                sizes[where] = value.cache_info().currsize
            elif isinstance(value, dict | list | set) and not attribute.startswith("__"):
                sizes[where] = len(value)
    return sizes


@pytest.fixture
def limit_and_gc() -> Iterator[None]:
    previous_limit, was_enabled = sys.getrecursionlimit(), gc.isenabled()
    yield
    sys.setrecursionlimit(previous_limit)
    (gc.enable if was_enabled else gc.disable)()


@pytest.mark.parametrize("collector", [True, False], ids=["gc-on", "gc-off"])
@pytest.mark.parametrize("limit", [1000, 3000, 50_000])
def test_library_calls_leave_the_process_as_they_found_it(
    collector: bool, limit: int, limit_and_gc: None
) -> None:
    _every_public_call("warm")  # templates compiled, reserved names read: fixed-size work
    sys.setrecursionlimit(limit)
    (gc.enable if collector else gc.disable)()
    before = _module_state()
    _every_public_call("fresh")
    _every_public_call("other")
    assert gc.isenabled() is collector
    assert sys.getrecursionlimit() == limit
    assert active_tables() == 0
    after = _module_state()
    grown = {k: (before.get(k), v) for k, v in after.items() if before.get(k) != v}
    assert not grown, f"module state changed by library calls: {grown}"


def test_the_command_line_restores_what_it_tuned(
    limit_and_gc: None, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from codegen.cli import main

    source = tmp_path / "tools.json"
    source.write_text('{"name": "t", "inputSchema": {"type": "object"}}', encoding="utf-8")
    sys.setrecursionlimit(1000)
    gc.enable()
    assert main(["sdk", str(source), "--lang", "python"]) == 0
    assert "TArgs" in capsys.readouterr().out
    assert gc.isenabled() and sys.getrecursionlimit() == 1000


def test_memos_live_for_one_scope() -> None:
    calls: list[str] = []

    @per_run
    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    assert upper("a") == upper("a") == "A" and calls == ["a", "a"]  # no scope: no memo
    with run_memos():
        assert upper("b") == upper("b") == "B"
        with run_memos():  # nested scopes share the outer tables
            assert upper("b") == "B"
        assert active_tables() == 1
    assert calls == ["a", "a", "b"]
    assert active_tables() == 0
    with run_memos():
        upper("b")  # a new scope starts empty
    assert calls == ["a", "a", "b", "b"]


def test_deep_recursion_is_restored_after_overlapping_calls_in_threads(
    limit_and_gc: None,
) -> None:
    """Two calls overlap: the first to leave must not lower the limit under the second."""
    sys.setrecursionlimit(1000)
    inside, leave_first = threading.Event(), threading.Event()
    seen: list[int] = []

    def first() -> None:
        with deep_recursion():
            inside.set()
            leave_first.wait(10)

    def second() -> None:
        inside.wait(10)
        with deep_recursion():
            leave_first.set()
            worker.join(10)  # the first call has returned
            seen.append(sys.getrecursionlimit())
            seen.append(_depth(3000))

    worker = threading.Thread(target=first)
    other = threading.Thread(target=second)
    worker.start()
    other.start()
    other.join(20)
    assert seen == [RECURSION_LIMIT, 3000]
    assert sys.getrecursionlimit() == 1000


def test_a_limit_changed_inside_a_call_is_left_alone(limit_and_gc: None) -> None:
    sys.setrecursionlimit(1000)
    with deep_recursion():
        sys.setrecursionlimit(40_000)  # the host's own decision, made meanwhile
    assert sys.getrecursionlimit() == 40_000


def _depth(levels: int) -> int:
    return 0 if levels == 0 else 1 + _depth(levels - 1)
