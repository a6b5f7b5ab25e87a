"""Shared fixtures: paths, the golden cases, the corpus, and golden-file snapshots.

Golden outputs are real files under `snapshots/<target>/<case>.<ext>`, pinned with a small
subclass of syrupy's `SingleFileSnapshotExtension`; `pytest --snapshot-update` rewrites them.
Extra corpora can be added with `CODEGEN_EXTRA_CORPUS=dir1:dir2`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
SNAPSHOTS = ROOT / "snapshots"
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = ROOT / "tests" / "corpus"

GOLDEN_CASES = sorted(p.stem for p in SCHEMAS.glob("*.json"))


def corpus_files() -> list[Path]:
    """Every tool file of the vendored corpus and of any extra corpus directory."""
    roots = [CORPUS]
    roots += [Path(p) for p in os.environ.get("CODEGEN_EXTRA_CORPUS", "").split(os.pathsep) if p]
    files: list[Path] = []
    for root in roots:
        files.extend(sorted(p for p in root.rglob("*.json")))
    return files


CORPUS_FILES = corpus_files()
EVERY_FILE = [SCHEMAS / f"{case}.json" for case in GOLDEN_CASES] + CORPUS_FILES
"""Every golden case and every corpus file: the inputs the whole-pipeline checks run on."""


def corpus_id(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix() if path.is_relative_to(CORPUS) else str(path)


def golden_extension(
    target: str, extension: str, name: str | None = None
) -> type[SingleFileSnapshotExtension]:
    """A syrupy extension that stores one snapshot per parametrized case as
    `snapshots/<target>/<name or case id>.<extension>`, byte for byte."""

    class GoldenFile(SingleFileSnapshotExtension):
        _write_mode = WriteMode.BINARY
        file_extension = extension

        @classmethod
        def dirname(cls, *, test_location: PyTestLocation) -> str:
            return str(SNAPSHOTS / target)

        @classmethod
        def get_snapshot_name(cls, *, test_location: PyTestLocation, index: Any = 0) -> str:
            if name is not None:
                return name
            test = test_location.testname
            return test[test.index("[") + 1 : -1] if "[" in test else test

        def serialize(self, data: Any, **kwargs: Any) -> bytes:
            return data.encode("utf-8") if isinstance(data, str) else bytes(data)

    GoldenFile.__name__ = f"GoldenFile_{target}_{extension.replace('.', '_')}"
    return GoldenFile


@pytest.fixture
def golden(snapshot: Any) -> Any:
    """`golden("python", "py") == text` compares with (or writes) the golden file named
    after the test's parameter (or `name`)."""

    def use(target: str, extension: str, name: str | None = None) -> Any:
        return snapshot.use_extension(golden_extension(target, extension, name))

    return use


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Run the suite (or any set of directories) on every core by default, as `-n auto`
    would; a run of single files or tests stays in one process, where starting workers
    would cost more than it saves. Serial too when asked (`-n 0`, `-p no:xdist`), under
    `--pdb`, and when rewriting snapshots (`--snapshot-update` must see every test of a
    snapshot file in one process)."""
    if (
        config.pluginmanager.hasplugin("xdist")
        and config.getoption("numprocesses", None) is None
        and not hasattr(config, "workerinput")
        and "PYTEST_XDIST_WORKER" not in os.environ
        and not config.getoption("usepdb", False)
        and not config.getoption("update_snapshots", False)
        and all(Path(arg.partition("::")[0]).is_dir() for arg in config.args)
    ):
        config.option.numprocesses = "auto"
