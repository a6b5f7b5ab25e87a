"""The cache on disk is data, never code, and believed only when sealed under the user's
key: a cache folder that comes with a repository cannot run anything, nor decide what a
build compares against. A folder sealed under another key (another user or machine) is
ignored with one note and rebuilt; any shard file the toolkit did not write under this key
(torn, random, edited, a pickle) and any sealed file of the wrong shape (nested without end,
a record under another key) is ignored with one warning naming it, rebuilt, and changes no
output byte. The key is the user's: `CODEGEN_CACHE_KEY`, else a 0600 file in the user's cache
folder, never a symbolic link nor a file others can use; without one, the cache stays in
memory. Every IR and chunk the renderers make survives the encoding unchanged."""

from __future__ import annotations

import io
import json
import os
import pickle
import random
import shlex
import shutil
import threading
from collections.abc import Callable
from contextlib import redirect_stderr
from dataclasses import fields
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, given, settings

from codegen import ir
from codegen.cli import main
from codegen.engine import Engine, compile_definitions
from codegen.incremental import cache_file, cache_key, ir_codec, seal
from codegen.incremental.cache import SHARDS, ToolCache
from codegen.incremental.cache_key import CacheKey, user_cache_key
from codegen.incremental.checked import CacheDataError
from codegen.incremental.chunk_codec import decode_chunk, storable
from codegen.incremental.tool_entry import ir_text
from codegen.load.definitions import ToolDefinition
from codegen.load.sources import load_sources, load_value
from codegen.pipeline import compile_catalog
from codegen.render.python.sdk import render_python_sdk
from codegen.render.sections.framing import render_python_section, render_typescript_section
from codegen.render.targets import TARGETS
from codegen.render.typescript.sdk import render_typescript_sdk
from conftest import EVERY_FILE, SCHEMAS
from support.robustness_strategies import catalogs

LANGUAGES = tuple(TARGETS)


def os_system_pickle(marker: Path) -> bytes:
    """A pickle that runs a shell command when loaded, as the issue's repro plants it."""

    class Payload:
        def __reduce__(self) -> Any:
            return (os.system, (f"id > {shlex.quote(str(marker))}",))

    return pickle.dumps(Payload())


# --- the repro: a repository's cache folder never runs code -----------------------


def test_a_planted_pickle_in_a_repositorys_cache_never_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`build --check` (the pre-commit hook), `build` and `sdk` read the folder the table's
    `cache` names: a pickle planted there, under the old folder's name or the new one's,
    runs nothing, and the outputs are a cold run's."""
    marker = tmp_path / "PWNED"
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text(
        '[tool.codegen]\nsources=["tools.json"]\ncache=".codegen-cache"\nout="generated"\n'
    )
    (repo / "tools.json").write_text(
        '[{"name":"hello","description":"x","inputSchema":{"type":"object"}}]\n'
    )
    payload = os_system_pickle(marker)
    for folder, name in (("tools-v3", "00.pickle"), (SHARDS, "00.pickle"), (SHARDS, "00.json")):
        (repo / ".codegen-cache" / folder).mkdir(parents=True, exist_ok=True)
        (repo / ".codegen-cache" / folder / name).write_bytes(payload)
    monkeypatch.chdir(repo)
    assert main(["build", "--check"]) == 1  # the outputs do not exist yet
    assert not marker.exists()
    assert main(["sdk", "--lang", "python"]) == 0
    assert main(["build"]) == 0
    assert main(["build", "--check"]) == 0
    assert main(["build", "-o", "cold", "--cache", str(tmp_path / "fresh")]) == 0
    assert not marker.exists()
    errors = capsys.readouterr().err
    assert "Traceback" not in errors
    shard = Path(".codegen-cache", SHARDS, "00.json").as_posix()
    assert f"codegen: warning: cache file {shard} ignored: " in errors
    for path in (repo / "cold").iterdir():
        assert (repo / "generated" / path.name).read_bytes() == path.read_bytes()


# --- every malformed shard: one warning, a cold run's bytes, rebuilt ----------------------


def _definitions() -> tuple[tuple[ToolDefinition, ...], Any]:
    loaded = load_sources([str(SCHEMAS)])
    return loaded.tools, loaded.diagnostics


def _outputs(cache: ToolCache | None) -> tuple[Any, ...]:
    """Every text through `cache`: both SDKs assembled from chunks (`Engine.render`), then
    the compiled catalog rendered with the cache as memo, prompt sections included."""
    definitions, diagnostics = _definitions()
    texts = Engine(cache).render(definitions, diagnostics, LANGUAGES)
    compiled = compile_definitions(definitions, diagnostics, cache)
    assert compiled.catalog is not None
    return (
        texts.texts,
        texts.diagnostics,
        compiled.diagnostics,
        render_python_sdk(compiled.catalog, cache),
        render_typescript_sdk(compiled.catalog, cache),
        render_python_section(compiled.catalog, cache),
        render_typescript_section(compiled.catalog, cache),
    )


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[Any, ...]]:
    """A cache folder written by a run over every golden case, and a cold run's outputs."""
    folder = tmp_path_factory.mktemp("written")
    writer = ToolCache(folder)
    cold = _outputs(None)
    assert _outputs(writer) == cold
    writer.save()
    return folder, cold


def _content(path: Path) -> bytes:
    """A shard file's content: what follows its seal."""
    return path.read_bytes()[seal.LENGTH :]


def _lines(path: Path) -> list[bytes]:
    return _content(path).split(b"\n")


def _resealed(content: bytes) -> bytes:
    """`content` sealed under the suite's key, as if this user's codegen wrote it."""
    return seal.sealed(user_cache_key(), content)


def _with(path: Path, edit: Callable[[list[Any], list[bytes]], None]) -> bytes:
    """The shard's content with its records (decoded) and IR lines changed by `edit`."""
    lines = _lines(path)
    records = json.loads(lines[1].decode("utf-8", "surrogatepass"))
    edit(records, lines)
    header = json.loads(lines[0])
    header["records"] = len(records)
    lines[0] = json.dumps(header).encode()
    lines[1] = json.dumps(records, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return b"\n".join(lines)


def _set(index: int, value: Any) -> Callable[[list[Any], list[bytes]], None]:
    def edit(records: list[Any], lines: list[bytes]) -> None:
        records[0][index] = value

    return edit


def _other_shard_key(records: list[Any], lines: list[bytes]) -> None:
    key = records[0][0]
    records[0][0] = ("00" if key[:2] != "00" else "01") + key[2:]


def _python_chunk(records: list[Any], lines: list[bytes]) -> None:
    records[0][7]["python"] = [1, 2, 3, 4]


def _unknown_target(records: list[Any], lines: list[bytes]) -> None:
    records[0][7]["cobol"] = ["IDENTIFICATION DIVISION."]


def _twice(records: list[Any], lines: list[bytes]) -> None:
    records.append(records[0])
    lines.insert(3, lines[2])


def _ir(line: bytes) -> Callable[[list[Any], list[bytes]], None]:
    def edit(records: list[Any], lines: list[bytes]) -> None:
        lines[2] = line

    return edit


def _ir_of_another_tool(records: list[Any], lines: list[bytes]) -> None:
    tool = json.loads(lines[2])
    tool["name"] += "_other"
    lines[2] = json.dumps(tool).encode()


def _header(**changes: Any) -> Callable[[list[Any], list[bytes]], None]:
    def edit(records: list[Any], lines: list[bytes]) -> None:
        header = json.loads(lines[0])
        header.update(changes)
        lines[0] = json.dumps(header).encode()

    return edit


def _one_record(path: Path, records_line: bytes) -> bytes:
    """The shard's header announcing one record, then `records_line` and an empty IR line."""
    header = json.loads(_lines(path)[0])
    header["records"] = 1
    return json.dumps(header).encode() + b"\n" + records_line + b"\n\n"


def _version(version: int) -> Callable[[Path], bytes]:
    def mutate(path: Path) -> bytes:
        lines = _lines(path)
        header = json.loads(lines[0])
        header["version"] = version
        lines[0] = json.dumps(header).encode()
        return b"\n".join(lines)

    return mutate


def _sealed(mutate: Callable[[Path], bytes]) -> Callable[[Path], bytes]:
    """A change of the content, sealed again under the reader's key: what the structural
    checks behind the seal catch (a bug, or a key that leaked)."""
    return lambda path: _resealed(mutate(path))


def _half(path: Path) -> bytes:
    return path.read_bytes()[: len(path.read_bytes()) // 2]


MUTATIONS: dict[str, tuple[Callable[[Path], bytes], str]] = {
    # Files this user's codegen did not seal: the seal is what refuses them.
    "empty": (lambda path: b"", "does not start with a seal"),
    "truncated": (_half, "seal does not match its content"),
    "random bytes": (lambda path: random.Random(35).randbytes(5000), "does not start with a seal"),
    "a pickle named as a shard": (
        lambda path: os_system_pickle(path.parent / "PWNED"),
        "does not start with a seal",
    ),
    "unsealed content": (_content, "does not start with a seal"),
    "a changed time of use": (
        lambda path: path.read_bytes()[: seal.LENGTH] + _with(path, _set(1, 12345.0)),
        "seal does not match its content",
    ),
    # Sealed under this key, yet not what the cache writes: the structural checks.
    "sealed: empty": (_sealed(lambda path: b""), "it is empty"),
    "sealed: a line short": (_sealed(lambda path: b"\n".join(_lines(path)[:-2]) + b"\n"), "torn"),
    "sealed: random bytes": (_sealed(lambda path: random.Random(35).randbytes(5000)), ""),
    "json of the wrong shape": (_sealed(lambda path: b'{"tools": [1, 2, 3]}\n'), "no header"),
    "a header alone": (_sealed(lambda path: _lines(path)[0] + b"\n"), "announces"),
    "nested without end": (
        _sealed(lambda path: _one_record(path, b"[" * 200_000)),
        "records line",
    ),
    "another format version": (_sealed(_version(3)), "cache format 3"),
    "another shard's name": (
        _sealed(lambda path: _with(path, _header(shard="zz"))),
        "another shard",
    ),
    "a key of another shard": (
        _sealed(lambda path: _with(path, _other_shard_key)),
        "belongs to shard",
    ),
    "a record stored twice": (_sealed(lambda path: _with(path, _twice)), "stored twice"),
    "a field of the wrong type": (_sealed(lambda path: _with(path, _set(6, "yes"))), "output flag"),
    "an infinite time": (_sealed(lambda path: _with(path, _set(1, 1e400))), "time of use"),
    "claims without IR": (_sealed(lambda path: _with(path, _ir(b""))), "claims without IR"),
    "a chunk of the wrong shape": (
        _sealed(lambda path: _with(path, _python_chunk)),
        "Python chunk",
    ),
    "a chunk of an unknown target": (
        _sealed(lambda path: _with(path, _unknown_target)),
        "target",
    ),
    # Found when the record is used: its IR (decoded only when needed) or its name.
    "IR of the wrong shape": (
        _sealed(lambda path: _with(path, _ir(b'{"name": 1}'))),
        "IR is unusable",
    ),
    "IR nested without end": (_sealed(lambda path: _with(path, _ir(b"[" * 200_000))), "nests"),
    "IR that is not JSON": (
        _sealed(lambda path: _with(path, _ir(b"\xff\xfe"))),
        "IR is unusable",
    ),
    "IR of another tool": (
        _sealed(lambda path: _with(path, _ir_of_another_tool)),
        "another tool's",
    ),
    "a record under another tool's key": (
        _sealed(lambda path: _with(path, _set(2, "not_its_name"))),
        "name is not its definition's",
    ),
}


def _shard_with_a_built_record(folder: Path) -> Path:
    for path in sorted((folder / SHARDS).iterdir()):
        records = json.loads(_lines(path)[1])
        if records[0][4] is not None and records[0][7]:
            return path
    raise AssertionError("no shard holds a built tool")


@pytest.mark.parametrize("mutation", MUTATIONS, ids=list(MUTATIONS))
def test_a_malformed_shard_is_ignored_with_one_warning_and_rebuilt(
    mutation: str, written: tuple[Path, tuple[Any, ...]], tmp_path: Path
) -> None:
    template, cold = written
    folder = tmp_path / "cache"
    shutil.copytree(template, folder)
    shard = _shard_with_a_built_record(folder)
    mutate, reason = MUTATIONS[mutation]
    shard.write_bytes(mutate(shard))
    errors = io.StringIO()
    with redirect_stderr(errors):
        reader = ToolCache(folder)
        assert _outputs(reader) == cold
        reader.save()
    warnings = [line for line in errors.getvalue().splitlines() if "cache file" in line]
    assert len(warnings) == 1, errors.getvalue()
    assert warnings[0].startswith(f"codegen: warning: cache file {shard.as_posix()} ignored: ")
    assert reason in warnings[0]
    assert warnings[0].endswith("; its tools are built again")
    assert not (shard.parent / "PWNED").exists()
    # Saving replaced the file: the next run reads every entry back, without a word.
    errors = io.StringIO()
    with redirect_stderr(errors):
        again = ToolCache(folder)
        assert _outputs(again) == cold
    assert errors.getvalue() == ""
    assert again.misses == 0


@pytest.mark.parametrize("kind", ["symbolic link", "fifo", "folder"])
def test_a_shard_that_is_not_a_regular_file_is_never_read(
    kind: str, written: tuple[Path, tuple[Any, ...]], tmp_path: Path
) -> None:
    """A link could lead anywhere, a FIFO would block the run, a folder is no file."""
    template, cold = written
    folder = tmp_path / "cache"
    shutil.copytree(template, folder)
    shard = _shard_with_a_built_record(folder)
    elsewhere = tmp_path / "elsewhere.json"
    shard.rename(elsewhere)
    if kind == "symbolic link":
        shard.symlink_to(elsewhere)
    elif kind == "fifo":
        os.mkfifo(shard)
    else:
        shard.mkdir()
    errors = io.StringIO()
    with redirect_stderr(errors):
        reader = ToolCache(folder)
        assert _outputs(reader) == cold
        if kind == "folder":
            shard.rmdir()  # the only thing a save cannot replace
        reader.save()
    [warning] = errors.getvalue().splitlines()
    expected = "is a symbolic link" if kind == "symbolic link" else "not a regular file"
    assert f"cache file {shard.as_posix()} ignored: it " in warning and expected in warning
    assert shard.is_file() and not shard.is_symlink()
    assert len(ToolCache(folder)) == len(ToolCache(template))


def test_another_builds_shards_are_ignored_silently(
    written: tuple[Path, tuple[Any, ...]], tmp_path: Path
) -> None:
    """Every upgrade of the toolkit leaves such files: they are stale, not wrong."""
    template, cold = written
    folder = tmp_path / "cache"
    shutil.copytree(template, folder)
    for shard in (folder / SHARDS).iterdir():
        shard.write_bytes(_resealed(_with(shard, _header(fingerprint="another build"))))
    errors = io.StringIO()
    with redirect_stderr(errors):
        reader = ToolCache(folder)
        assert _outputs(reader) == cold
    assert errors.getvalue() == ""
    assert reader.hits > 0 and reader.misses == len(_definitions()[0])


def test_a_shard_folder_that_is_a_symbolic_link_is_neither_read_nor_written(
    written: tuple[Path, tuple[Any, ...]], tmp_path: Path
) -> None:
    template, cold = written
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / SHARDS).symlink_to(template / SHARDS)
    before = {path.name: path.read_bytes() for path in (template / SHARDS).iterdir()}
    errors = io.StringIO()
    with redirect_stderr(errors):
        reader = ToolCache(tmp_path / "cache")
        assert _outputs(reader) == cold
        assert reader.save() is False
    assert reader.misses == len(_definitions()[0])  # nothing read from the link
    [warning] = errors.getvalue().splitlines()
    assert warning.startswith(f"codegen: warning: cache folder {(tmp_path / 'cache' / SHARDS)}")
    assert "is a symbolic link; the cache is neither read nor written" in warning
    assert {path.name: path.read_bytes() for path in (template / SHARDS).iterdir()} == before


# --- the seal: a well-formed cache is believed only under the user's key -----------------


def _copy(template: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "cache"
    shutil.copytree(template, folder)
    return folder


def _read_back(folder: Path, quiet: bool = False) -> tuple[ToolCache, tuple[Any, ...], str]:
    """A fresh cache over `folder`, every output through it, then saved; and its stderr."""
    errors = io.StringIO()
    with redirect_stderr(errors):
        reader = ToolCache(folder, quiet=quiet)
        outputs = _outputs(reader)
        reader.save()
    return reader, outputs, errors.getvalue()


def _seal_names(folder: Path) -> set[bytes]:
    """The key names the shard files of `folder` are sealed under."""
    return {path.read_bytes()[: seal.LENGTH].split(b" ")[1] for path in (folder / SHARDS).iterdir()}


@pytest.mark.parametrize("reader_key", ["CODEGEN_CACHE_KEY", "key file"])
def test_a_cache_sealed_under_another_key_is_ignored_with_one_note_and_rebuilt(
    reader_key: str,
    written: tuple[Path, tuple[Any, ...]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cache folder another user or machine wrote (committed to a repository, restored
    in CI without the key): every file is well formed, and none is believed."""
    template, cold = written
    folder = _copy(template, tmp_path)
    if reader_key == "CODEGEN_CACHE_KEY":
        monkeypatch.setenv("CODEGEN_CACHE_KEY", "another secret")
    else:
        monkeypatch.delenv("CODEGEN_CACHE_KEY")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    reader, outputs, errors = _read_back(folder)
    assert outputs == cold
    assert reader.misses == len(_definitions()[0])
    assert errors == (
        f"codegen: note: cache folder {(folder / SHARDS).as_posix()} was written with another "
        "key (another user or machine): its entries are ignored and rebuilt\n"
    )
    # Saving sealed every file again under this user's key: all of it is believed now.
    assert _seal_names(folder) == {user_cache_key().name.encode()}
    again, outputs, errors = _read_back(folder)
    assert (outputs, errors, again.misses) == (cold, "", 0)


def test_quiet_leaves_the_note_about_another_key_out(
    written: tuple[Path, tuple[Any, ...]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    template, cold = written
    monkeypatch.setenv("CODEGEN_CACHE_KEY", "another secret")
    reader, outputs, errors = _read_back(_copy(template, tmp_path), quiet=True)
    assert (outputs, errors) == (cold, "")
    assert reader.misses == len(_definitions()[0])


PLANTED = "Planted = 'by whoever edited the cache'"


def _planted_declaration(records: list[Any], lines: list[bytes]) -> None:
    """Other valid text for the first record's Python SDK: one declaration more."""
    declarations = records[0][7]["python"][0]
    declarations.append(PLANTED)


def test_an_entry_edited_after_it_was_written_is_ignored(
    written: tuple[Path, tuple[Any, ...]], tmp_path: Path
) -> None:
    """A record's text swapped for other valid text passes every structural check; only
    the seal tells that this user's codegen did not write it."""
    template, cold = written
    folder = _copy(template, tmp_path)
    shard = _shard_with_a_built_record(folder)
    edited = _with(shard, _planted_declaration)
    shard.write_bytes(shard.read_bytes()[: seal.LENGTH] + edited)
    _, outputs, errors = _read_back(folder)
    assert outputs == cold
    assert errors == (
        f"codegen: warning: cache file {shard.as_posix()} ignored: its seal does not match its "
        "content (it was changed after it was written); its tools are built again\n"
    )
    # The same edit sealed under the key is believed: it is valid text, the seal alone
    # refused it.
    shard.write_bytes(_resealed(edited))
    _, believed, errors = _read_back(folder)
    assert errors == "" and PLANTED in believed[0]["python"]


def test_a_cloned_repositorys_cache_decides_nothing_for_build_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A repository that commits its cache folder: `build --check` on another machine reads
    none of it (one note), compares against what the tools compile to, and writes nothing."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text(
        '[tool.codegen]\nsources=["tools.json"]\ncache=".codegen-cache"\nout="generated"\n'
    )
    (repo / "tools.json").write_text(
        '[{"name":"hello","description":"x","inputSchema":{"type":"object"}}]\n'
    )
    monkeypatch.chdir(repo)
    monkeypatch.setenv("CODEGEN_CACHE_KEY", "the author's machine")
    assert main(["build"]) == 0
    committed = {path: path.read_bytes() for path in Path(".codegen-cache").rglob("*.json")}
    capsys.readouterr()
    monkeypatch.setenv("CODEGEN_CACHE_KEY", "a reviewer's machine")
    assert main(["build", "--check"]) == 0
    errors = capsys.readouterr().err.splitlines()
    shards = Path(".codegen-cache", SHARDS).as_posix()
    assert [line for line in errors if "cache" in line] == [
        f"codegen: note: cache folder {shards} was written with another key (another user or "
        "machine): its entries are ignored and rebuilt"
    ]
    assert {path: path.read_bytes() for path in Path(".codegen-cache").rglob("*.json")} == committed


# --- the key: the user's, never the repository's ------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No `CODEGEN_CACHE_KEY`; the user's cache folder, home and account's home all in
    `tmp_path` (`xdg`, `home`, `account`), so the real home is never touched."""
    monkeypatch.delenv("CODEGEN_CACHE_KEY")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(cache_key, "_account_home", lambda: str(tmp_path / "account"))
    return tmp_path


def _small_run(folder: Path) -> tuple[ToolCache, str]:
    """One small catalog's Python SDK through a cache over `folder`, twice, then saved."""
    loaded = load_sources([str(SCHEMAS / "mcp_tools_list.json")])
    errors = io.StringIO()
    with redirect_stderr(errors):
        reader = ToolCache(folder)
        for _ in range(2):
            rendered = Engine(reader).render(loaded.tools, loaded.diagnostics, ["python"])
            assert rendered.texts is not None
        reader.save()
    return reader, errors.getvalue()


def test_the_key_file_is_found_in_the_users_cache_folder(home: Path) -> None:
    """`$XDG_CACHE_HOME` when absolute, else `$HOME/.cache` when absolute, else the
    account's home: a relative folder would be the working folder, a repository's."""
    xdg, user, account = (str(home / name) for name in ("xdg", "home", "account"))
    cases = [
        ({"XDG_CACHE_HOME": xdg, "HOME": user}, Path(xdg, "codegen")),
        ({"XDG_CACHE_HOME": "xdg", "HOME": user}, Path(user, ".cache", "codegen")),
        ({"HOME": user}, Path(user, ".cache", "codegen")),
        ({"XDG_CACHE_HOME": "", "HOME": "home"}, Path(account, ".cache", "codegen")),
        ({}, Path(account, ".cache", "codegen")),
    ]
    for environment, folder in cases:
        assert cache_key.key_file_path(environment) == str(folder / "cache.key"), environment


@pytest.mark.parametrize("links", ["hard links", "no hard links"])
def test_the_key_file_is_made_once_0600_in_a_0700_folder(
    links: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if links == "no hard links":

        def refused(source: str, target: str) -> None:
            raise PermissionError(1, "Operation not permitted")

        monkeypatch.setattr(os, "link", refused)
    _, errors = _small_run(home / "cache")
    assert errors == ""
    folder = home / "xdg" / "codegen"
    assert os.listdir(folder) == ["cache.key"]  # no temporary file left behind
    status = (folder / "cache.key").lstat()
    assert (status.st_mode & 0o7777, folder.stat().st_mode & 0o777) == (0o600, 0o700)
    assert status.st_uid == os.geteuid()
    text = (folder / "cache.key").read_bytes()
    assert len(text) == 65 and text.endswith(b"\n") and bytes.fromhex(text[:64].decode())
    assert _seal_names(home / "cache") == {CacheKey.of(text).name.encode()}
    assert not (home / "home").exists() and not (home / "account").exists()
    # Made once: the next run reads it, and its text as CODEGEN_CACHE_KEY is the same key.
    reader, errors = _small_run(home / "cache")
    assert (errors, reader.misses, (folder / "cache.key").read_bytes()) == ("", 0, text)
    monkeypatch.setenv("CODEGEN_CACHE_KEY", text.decode().strip())
    assert _small_run(home / "cache")[0].misses == 0


def test_processes_racing_to_make_the_key_all_use_the_winners(home: Path) -> None:
    start = threading.Barrier(8)
    names: list[str] = []

    def make() -> None:
        start.wait()
        names.append(user_cache_key().name)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    folder = home / "xdg" / "codegen"
    assert len(names) == 8 and set(names) == {CacheKey.of((folder / "cache.key").read_bytes()).name}
    assert os.listdir(folder) == ["cache.key"]
    assert cache_key._made_key_file(str(folder / "cache.key")) is None  # it never replaces one


def _key_file_unfit(kind: str, path: Path, elsewhere: Path) -> str:
    """Make the key file at `path` unfit in the way `kind` names; what the warning says."""
    elsewhere.write_text("a secret\n")
    elsewhere.chmod(0o600)
    if kind == "symbolic link":
        path.symlink_to(elsewhere)
        return "is a symbolic link, which is never followed"
    if kind == "folder":
        path.mkdir()
        return "is not a regular file"
    if kind == "fifo":
        os.mkfifo(path)
        return "is not a regular file"
    if kind == "empty":
        path.write_text("\n")
        path.chmod(0o600)
        return "is empty"
    if kind == "another user's":
        shutil.copy(elsewhere, path)
        os.chown(path, 12345, 12345)
        return "belongs to another user"
    mode = int(kind.split()[-1], 8)
    shutil.copy(elsewhere, path)
    path.chmod(mode)
    return f"is open to other users (mode {mode:04o}: `chmod 600` it)"


@pytest.mark.parametrize(
    "kind",
    [
        "symbolic link",
        "folder",
        "fifo",
        "empty",
        pytest.param(
            "another user's",
            marks=pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root"),
        ),
        "mode 0620",
        "mode 0602",
        "mode 0640",
        "mode 0604",
        "mode 0660",
    ],
)
def test_a_key_file_that_is_not_the_users_alone_is_refused(kind: str, home: Path) -> None:
    """Never followed, never replaced, never trusted: the cache stays in memory, with one
    warning saying what is wrong and how to fix it."""
    folder = home / "xdg" / "codegen"
    folder.mkdir(parents=True, mode=0o700)
    key = folder / "cache.key"
    problem = _key_file_unfit(kind, key, home / "elsewhere")
    reader, errors = _small_run(home / "cache")
    shards = (home / "cache" / SHARDS).as_posix()
    assert errors == (
        f"codegen: warning: cache folder {shards} is neither read nor written: the cache key "
        f"{key} {problem}; remove it (a new key is made), or set CODEGEN_CACHE_KEY to a secret\n"
    )
    assert not (home / "cache").exists() and reader.save() is False
    assert reader.hits > 0  # the cache in memory still serves the run
    assert (home / "elsewhere").read_text() == "a secret\n"


def test_codegen_cache_key_is_honoured(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key CI jobs sharing a cache folder share as a secret: no key file is made, and
    white space around it is no part of it."""
    monkeypatch.setenv("CODEGEN_CACHE_KEY", "a CI secret")
    _, errors = _small_run(home / "cache")
    assert errors == "" and not (home / "xdg").exists()
    assert _seal_names(home / "cache") == {CacheKey.of(b"a CI secret").name.encode()}
    monkeypatch.setenv("CODEGEN_CACHE_KEY", "  a CI secret\n")
    assert _small_run(home / "cache")[0].misses == 0


@pytest.mark.parametrize("where", ["no home", "a cache folder that cannot be made"])
def test_without_a_key_the_cache_stays_in_memory_with_one_warning(
    where: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if where == "no home":
        monkeypatch.setenv("XDG_CACHE_HOME", "relative")
        monkeypatch.setenv("HOME", "relative")
        monkeypatch.setattr(cache_key, "_account_home", lambda: "")
        fix = "set CODEGEN_CACHE_KEY to a secret"
    else:
        (home / "file").write_text("")
        monkeypatch.setenv("XDG_CACHE_HOME", str(home / "file" / "xdg"))
        fix = f"make {home / 'file' / 'xdg' / 'codegen'} writable, or set CODEGEN_CACHE_KEY"
    reader, errors = _small_run(home / "cache")
    [warning] = errors.splitlines()
    shards = (home / "cache" / SHARDS).as_posix()
    assert warning.startswith(f"codegen: warning: cache folder {shards} is neither read nor ")
    assert fix in warning
    assert not (home / "cache").exists() and reader.save() is False
    assert reader.hits > 0


# --- the encoding: every IR and chunk comes back equal ------------------------------------


def _sections() -> dict[str, Callable[[ir.Tool], Any]]:
    from codegen.render.sections import python as python_section
    from codegen.render.sections import typescript as typescript_section

    return {
        "python-section": python_section.section_chunk,
        "typescript-section": typescript_section.section_chunk,
    }


def assert_round_trip(catalog: ir.Catalog) -> None:
    """Each tool's IR and each of its chunks, through the bytes the cache writes and back:
    equal values of the same classes."""
    makers = {name: target.chunk for name, target in TARGETS.items()} | _sections()
    for tool in catalog.tools:
        decoded = ir_codec.decode_tool(json.loads(ir_text(tool).decode("utf-8", "surrogatepass")))
        assert decoded == tool
        assert ir.describe(ir.Catalog((decoded,))) == ir.describe(ir.Catalog((tool,)))
        for target, make in makers.items():
            chunk = make(tool)
            assert storable(target, chunk)
            text = json.dumps(chunk, ensure_ascii=False).encode("utf-8", "surrogatepass")
            back = decode_chunk(target, json.loads(text.decode("utf-8", "surrogatepass")))
            assert back == chunk and type(back) is type(chunk)
            assert [type(part) for part in back] == [type(part) for part in chunk]


@pytest.mark.parametrize("path", EVERY_FILE, ids=lambda p: p.stem)
def test_every_golden_case_and_corpus_file_survives_the_encoding(path: Path) -> None:
    """(`tests/test_engine.py` checks the whole path too: a disk cache written in shares
    and read back warm gives every one-go byte.)"""
    loaded = load_sources([str(path)])
    compiled = compile_catalog(loaded.tools, loaded.diagnostics)
    if compiled.catalog is not None:
        assert_round_trip(compiled.catalog)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(value=catalogs(max_tools=4))
def test_hostile_catalogs_survive_the_encoding(value: Any) -> None:
    loaded = load_value(value, "tools.json")
    compiled = compile_catalog(loaded.tools, loaded.diagnostics)
    if compiled.catalog is not None:
        assert_round_trip(compiled.catalog)


def test_a_shard_file_gives_back_every_entry(written: tuple[Path, tuple[Any, ...]]) -> None:
    template, _ = written
    memory = ToolCache(template)
    sealing = user_cache_key()
    for path in sorted((template / SHARDS).iterdir()):
        data = path.read_bytes()
        fingerprint = json.loads(_lines(path)[0])["fingerprint"]
        records = cache_file.decode_shard(data, fingerprint, path.stem, seal.LENGTH)
        assert cache_file.shard_bytes(sealing, fingerprint, path.stem, records) == data
        for key, _, entry in records:
            same = memory.get(key)
            assert same is not None and entry.name == same.name
            assert (entry.problems, entry.claims, entry.warnings) == (
                same.problems,
                same.claims,
                same.warnings,
            )
            assert entry.chunks == same.chunks
            assert not entry.built or entry.tool == same.tool


def test_the_decoders_cover_every_ir_class_and_field() -> None:
    nodes = {type(ir_codec.decode_node(ir_codec.encode_node(node))) for node in _one_of_each()}
    assert nodes == set(get_args(ir.TypeNode))
    assert set(ir_codec._DOCS_FIELDS) == {item.name for item in fields(ir.Docs)}
    tool_fields = {item.name for item in fields(ir.Tool)} - {"schemas"}
    assert tool_fields | {"input_schema", "output_schema"} == ir_codec._TOOL_KEYS


def _one_of_each() -> list[ir.TypeNode]:
    string = ir.Primitive("string")
    return [
        string,
        ir.AnyType(),
        ir.NeverType(),
        ir.LiteralType(("a", 1, 1.5, True, None)),
        ir.ArrayType(string),
        ir.TupleType((string,), 1, None),
        ir.MapType(string),
        ir.RefType("X"),
        ir.UnionType((string, ir.RefType("X"))),
        ir.UnknownType("why"),
    ]


@pytest.mark.parametrize(
    "data",
    [
        "str",
        ["ref"],
        ["ref", 1],
        ["tuple", ["string"], 2, None],
        ["tuple", ["string"], True, None],
        ["literal", [[1]]],
        ["union", "string"],
        ["__import__", "os"],
        {"node": "AnyType"},
        5,
    ],
)
def test_a_node_that_is_not_one_is_a_data_error(data: Any) -> None:
    with pytest.raises(CacheDataError):
        ir_codec.decode_node(data)
