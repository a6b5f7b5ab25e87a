"""The per-tool cache: a cached compile and render give exactly the uncached bytes and
diagnostics, reuse what did not change, survive a round trip through disk, and never let a
stale, torn or foreign file change the output."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.engine import Engine, compile_definitions
from codegen.incremental import cache as cache_module
from codegen.incremental.cache import SHARDS, ToolCache
from codegen.load.definitions import ToolDefinition
from codegen.load.sources import load_sources, load_value
from codegen.pipeline import Compiled
from codegen.render.python.sdk import render_python_sdk
from codegen.render.sections.framing import render_python_section, render_typescript_section
from codegen.render.typescript.sdk import render_typescript_sdk
from conftest import SCHEMAS
from support.engine_strategies import COLLIDING, obj


def rendered(compiled: Compiled, memo: ToolCache | None = None) -> tuple[str, ...]:
    assert compiled.catalog is not None, compiled.errors
    return (
        render_python_sdk(compiled.catalog, memo),
        render_typescript_sdk(compiled.catalog, memo),
        render_python_section(compiled.catalog, memo),
        render_typescript_section(compiled.catalog, memo),
    )


def definitions_of(value: Any) -> tuple[ToolDefinition, ...]:
    loaded = load_value(value, "tools.json")
    assert not loaded.diagnostics
    return loaded.tools


def test_only_tools_whose_names_were_taken_are_built_again() -> None:
    definitions = definitions_of(COLLIDING)
    memo = ToolCache()
    first = compile_definitions(definitions, cache=memo)
    second = compile_definitions(definitions, cache=memo)
    assert first.catalog is not None and second.catalog is not None
    reused = {
        one.name
        for one, two in zip(first.catalog.tools, second.catalog.tools, strict=True)
        if one is two
    }
    # Only `read-file` is built again: alone it has the stem `ReadFile`, which the catalog
    # gives `read_file` (its canonical spelling), so it takes a tagged stem.
    assert reused == {"alone", "get", "get_args_user", "read_file"}


def test_a_changed_tool_is_the_only_one_compiled_again() -> None:
    tools = [
        {"name": f"tool_{i}", "description": f"Tool {i}.", "inputSchema": obj(q={"type": "string"})}
        for i in range(20)
    ]
    memo = ToolCache()
    compile_definitions(definitions_of(tools), cache=memo)
    assert memo.misses == 20
    tools[7] = {**tools[7], "description": "Changed."}
    changed = definitions_of(tools)
    compiled = compile_definitions(changed, cache=memo)
    assert memo.misses == 21 and memo.hits == 19
    assert rendered(compiled, memo) == rendered(compile_definitions(changed))
    assert "Changed." in rendered(compiled, memo)[0]


def test_property_order_is_part_of_the_key() -> None:
    forward = {"name": "t", "inputSchema": obj(a={"type": "string"}, b={"type": "integer"})}
    backward = {"name": "t", "inputSchema": obj(b={"type": "integer"}, a={"type": "string"})}
    memo = ToolCache()
    first = rendered(compile_definitions(definitions_of(forward), cache=memo), memo)[0]
    second = rendered(compile_definitions(definitions_of(backward), cache=memo), memo)[0]
    assert first.index("    a: ") < first.index("    b: ")
    assert second.index("    b: ") < second.index("    a: ")


def test_a_moved_tool_still_hits_and_its_diagnostics_follow_it() -> None:
    warned = {"name": "w", "inputSchema": obj(x={"type": "string", "frobnicate": 1})}
    other = {"name": "o", "inputSchema": obj()}
    memo = ToolCache()
    before = compile_definitions(definitions_of({"tools": [warned, other]}), cache=memo)
    after = compile_definitions(definitions_of({"tools": [other, warned]}), cache=memo)
    assert memo.hits == 2
    [was] = before.warnings
    [now] = after.warnings
    assert was.pointer == "/tools/0/inputSchema/properties/x/frobnicate"
    assert now.pointer == "/tools/1/inputSchema/properties/x/frobnicate"
    assert now.source == "tools.json"


def test_errors_are_cached_with_their_diagnostics() -> None:
    broken = {"name": "b", "inputSchema": {"type": "object", "properties": {"x": {"type": 5}}}}
    memo = ToolCache()
    first = compile_definitions(definitions_of(broken), cache=memo)
    second = compile_definitions(definitions_of(broken), cache=memo)
    plain = compile_definitions(definitions_of(broken))
    assert first.catalog is None and second.catalog is None
    assert first.diagnostics == second.diagnostics == plain.diagnostics
    assert memo.hits == 1


def test_definitions_that_are_not_plain_data_have_no_key() -> None:
    odd = ToolDefinition("t", None, {"type": "object", "examples": [lambda: 1]})
    assert ToolCache().key(odd) is None


def test_keys_tell_numbers_booleans_and_strings_apart() -> None:
    memo = ToolCache()
    keys = {
        memo.key(ToolDefinition("t", None, {"type": "object", "default": value}))
        for value in (1, 1.0, True, "1", None, [1], (1,))
    }
    assert len(keys) == 7


# --- on disk --------------------------------------------------------------------------------


def test_disk_round_trip_gives_the_same_bytes(tmp_path: Path) -> None:
    loaded = load_sources([str(SCHEMAS)])
    expected = rendered(compile_definitions(loaded.tools, loaded.diagnostics))
    writer = ToolCache(tmp_path)
    rendered(compile_definitions(loaded.tools, loaded.diagnostics, writer), writer)
    assert writer.save() is True
    assert writer.save() is False  # nothing new since
    assert [p.name for p in tmp_path.iterdir()] == [SHARDS]
    assert all(p.suffix == ".json" and len(p.stem) == 2 for p in (tmp_path / SHARDS).iterdir())
    reader = ToolCache(tmp_path)
    compiled = compile_definitions(loaded.tools, loaded.diagnostics, reader)
    assert reader.hits == len(loaded.tools) and reader.misses == 0
    assert rendered(compiled, reader) == expected


def test_an_interrupted_save_leaves_the_old_shards_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shards are written like every output (`write.write_bytes`: a temporary file renamed
    over the old one), so a save that fails midway keeps what was there and leaves no
    temporary file; `save_or_warn` turns the failure into a warning."""
    import os

    writer = ToolCache(tmp_path)
    compile_definitions(definitions_of(COLLIDING), cache=writer)
    assert writer.save() is True
    before = {p.name: p.read_bytes() for p in (tmp_path / SHARDS).iterdir()}
    compile_definitions(definitions_of({"name": "added", "inputSchema": obj()}), cache=writer)

    def fail(source: Any, target: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    errors = io.StringIO()
    with redirect_stderr(errors):
        writer.save_or_warn()
    assert "codegen: warning: cache not written: " in errors.getvalue()
    assert "No space left on device" in errors.getvalue()
    assert {p.name: p.read_bytes() for p in (tmp_path / SHARDS).iterdir()} == before
    monkeypatch.undo()
    assert writer.save() is True
    assert len(ToolCache(tmp_path)) == len(COLLIDING) + 1


@pytest.mark.parametrize(
    "content",
    [b"", b"not a pickle", pickle.dumps(("another build", {})), b"[1, 2, 3]\n"],
    ids=["empty", "garbage", "a-pickle", "wrong-shape"],
)
def test_a_bad_cache_file_is_a_cold_cache(tmp_path: Path, content: bytes) -> None:
    """(`tests/incremental/test_cache_files.py` plants every other kind of bad file.)"""
    (tmp_path / SHARDS).mkdir()
    for shard in ("00", "7f", "ff"):
        (tmp_path / SHARDS / f"{shard}.json").write_bytes(content)
        (tmp_path / SHARDS / f"{shard}.pickle").write_bytes(content)  # not a shard's name
    definitions = definitions_of(COLLIDING)
    memo = ToolCache(tmp_path)
    errors = io.StringIO()
    with redirect_stderr(errors):
        compiled = compile_definitions(definitions, cache=memo)
    assert errors.getvalue().count("codegen: warning: cache file ") == 3
    assert memo.hits == 0
    assert rendered(compiled, memo) == rendered(compile_definitions(definitions))


def test_a_changed_generator_never_serves_old_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    definitions = definitions_of(COLLIDING)
    writer = ToolCache(tmp_path)
    compile_definitions(definitions, cache=writer)
    writer.save()
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda: "a newer build")
    reader = ToolCache(tmp_path)
    compile_definitions(definitions, cache=reader)
    assert reader.hits == 0


def test_capacity_keeps_the_most_recently_used(tmp_path: Path) -> None:
    memo = ToolCache(tmp_path, capacity=2)
    for index in range(4):
        compile_definitions(definitions_of({"name": f"t{index}", "inputSchema": obj()}), cache=memo)
    memo.save()
    assert len(ToolCache(tmp_path)) == 2


def test_cli_sdk_with_a_cache(tmp_path: Path) -> None:
    def run(*extra: str) -> str:
        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            assert (
                main(
                    ["sdk", str(SCHEMAS), "--lang", "typescript", "-o", str(tmp_path / "x"), *extra]
                )
                == 0
            )
        return (tmp_path / "x").read_text(encoding="utf-8")

    plain = run()
    assert run("--cache", str(tmp_path / "cache")) == plain
    assert any((tmp_path / "cache" / SHARDS).glob("*.json"))
    assert run("--cache", str(tmp_path / "cache")) == plain


def test_an_unwritable_cache_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("in the way")
    errors = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(errors):
        status = main(
            [
                "sdk",
                str(SCHEMAS),
                "--lang",
                "python",
                "-o",
                str(tmp_path / "out.py"),
                "--cache",
                str(blocker / "sub"),
            ]
        )
    assert status == 0
    assert "warning: cache not written" in errors.getvalue()
    assert "Traceback" not in errors.getvalue()


def test_build_reads_the_cache_key_and_check_leaves_the_cache_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "defs.json").write_text(json.dumps(COLLIDING), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.codegen]\nsources = ["defs.json"]\nout = "gen"\ncache = ".codegen-cache"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        assert main(["build", "--quiet", "--check"]) == 1
        assert not (tmp_path / ".codegen-cache").exists()
        assert main(["build", "--quiet"]) == 0
        assert any((tmp_path / ".codegen-cache" / SHARDS).glob("*.json"))
        assert main(["build", "--quiet", "--check"]) == 0
    uncached = tmp_path / "plain"
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        assert (
            main(
                [
                    "build",
                    "--quiet",
                    "defs.json",
                    "-o",
                    str(uncached),
                    "--cache",
                    str(tmp_path / "c2"),
                ]
            )
            == 0
        )
    for path in (tmp_path / "gen").iterdir():
        assert path.read_bytes() == (uncached / path.name).read_bytes()


def test_in_memory_definitions_keep_their_identity_free_keys() -> None:
    one = definitions_of({"name": "t", "inputSchema": obj()})[0]
    two = dataclasses.replace(one, pointer="/elsewhere", input_pointer="/elsewhere/inputSchema")
    memo = ToolCache()
    assert memo.key(one) == memo.key(two)
    assert memo.key(one) != memo.key(dataclasses.replace(one, source="other.json"))


# --- SDK text without the IR (Engine.render through a cache) ------------------------------


def test_a_warm_render_from_disk_loads_no_ir(tmp_path: Path) -> None:
    tools = [
        {
            "name": f"tool_{i}",
            "inputSchema": obj(q={"type": "string"}, n=obj(k={"type": "integer"})),
        }
        for i in range(30)
    ]
    writer = ToolCache(tmp_path)
    Engine(writer).render(definitions_of(tools), (), ["python", "typescript"])
    writer.save()
    tools[3] = {**tools[3], "description": "Changed."}
    changed = definitions_of(tools)
    reader = ToolCache(tmp_path)
    rendered = Engine(reader).render(changed, (), ["python", "typescript"])
    expected = compile_definitions(changed)
    assert expected.catalog is not None
    assert rendered.texts == {
        "python": render_python_sdk(expected.catalog),
        "typescript": render_typescript_sdk(expected.catalog),
    }
    assert reader.hits == 29 and reader.misses == 1
    loaded = [slot.entry.loaded for slot in reader._slots.values() if slot.entry.built]
    assert loaded.count(True) == 1  # only the changed tool, built just now


def test_saving_after_one_change_rewrites_one_shard(tmp_path: Path) -> None:
    tools = [{"name": f"tool_{i}", "inputSchema": obj(q={"type": "string"})} for i in range(60)]
    writer = ToolCache(tmp_path)
    Engine(writer).render(definitions_of(tools), (), ["python"])
    writer.save()
    # a write is a new file renamed over the old one: a rewritten shard has a new inode
    shards = {p.name: p.stat().st_ino for p in (tmp_path / SHARDS).iterdir()}
    assert len(shards) > 10
    tools[7] = {**tools[7], "description": "Changed."}
    changed = ToolCache(tmp_path)
    Engine(changed).render(definitions_of(tools), (), ["python"])
    assert changed.save() is True
    after = {p.name: p.stat().st_ino for p in (tmp_path / SHARDS).iterdir()}
    rewritten = [name for name in after if after[name] != shards.get(name)]
    assert len(rewritten) == 1
