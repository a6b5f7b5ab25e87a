"""Shared fixtures: paths, the golden cases, the corpus, and golden-file snapshots.

Golden outputs are real files under `snapshots/<target>/<case>.<ext>`, pinned with a small
subclass of syrupy's `SingleFileSnapshotExtension`; `pytest --snapshot-update` rewrites them.
Extra corpora can be added with `CODEGEN_EXTRA_CORPUS=dir1:dir2`.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.location import PyTestLocation

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # A shell starts a background job (`cmd &`, as CI runners and nohup loops do) with
    # SIGINT ignored, and every child inherits that: the tests that interrupt a codegen
    # process (Ctrl-C must leave no worker and no file) would see it ignore the signal.
    signal.signal(signal.SIGINT, signal.default_int_handler)

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


USED_GOLDEN: set[str] = set()
"""The golden files this process's tests compared with (paths under `snapshots/`)."""


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
                found = name
            else:
                test = test_location.testname
                found = test[test.index("[") + 1 : -1] if "[" in test else test
            USED_GOLDEN.add(f"{target}/{found}.{extension}")
            return found

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


TEST_CACHE_KEY = "the test suite's cache key"
"""`CODEGEN_CACHE_KEY` for the whole session (and every process a test starts), so no test
makes a key file in the real home's cache folder; a test of the key file itself removes it
and points `XDG_CACHE_HOME` and `HOME` at a temporary folder."""


@pytest.fixture(autouse=True, scope="session")
def cache_key_of_the_suite() -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CODEGEN_CACHE_KEY", TEST_CACHE_KEY)
        yield


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


# --- every golden file is some test's ------------------------------------------------------


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that compare with golden files carry the `golden` mark (`make snap`).

    Workers take tests in this order. Modules whose tests are all `slow` come first, those
    with the fewest tests (the longest each: builds, type checkers over corpora, Hypothesis)
    first of all, then the rest; each module's tests stay together and in order. Long
    tests started early leave no worker alone on one at the end of the run."""
    counts: dict[Path, list[int]] = {}
    for item in items:
        if "golden" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.golden)
        count = counts.setdefault(item.path, [0, 0])
        count[0] += 1
        count[1] += item.get_closest_marker("slow") is not None
    items.sort(
        key=lambda item: (-counts[item.path][1] / counts[item.path][0], counts[item.path][0])
    )


def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist: a worker's golden files, gathered by the controller."""
    USED_GOLDEN.update(node.workeroutput.get("golden", ()))


def _ran_every_golden_test(config: pytest.Config) -> bool:
    """A run whose selection cannot have left a golden test out: every test directory,
    no mark but `golden`, no keyword, nothing deselected or ignored."""
    return (
        not config.getoption("keyword", "")
        and config.getoption("markexpr", "") in ("", "golden")
        and not config.getoption("deselect", None)
        and not config.getoption("ignore", None)
        and not config.getoption("ignore_glob", None)
        and all(Path(arg).resolve() in (ROOT / "tests", ROOT) for arg in config.args)
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A golden file that no test compared with fails a whole, passing run: it is left from
    a test renamed or removed, and nothing checks it any more."""
    config = session.config
    if hasattr(config, "workerinput"):
        config.workeroutput["golden"] = sorted(USED_GOLDEN)  # type: ignore[attr-defined]
        return
    if exitstatus != 0 or not _ran_every_golden_test(config) or not USED_GOLDEN:
        return
    on_disk = {p.relative_to(SNAPSHOTS).as_posix() for p in SNAPSHOTS.rglob("*") if p.is_file()}
    orphans = sorted(on_disk - USED_GOLDEN)
    if orphans:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                "golden files no test compares with (remove them, or the test that should "
                f"use them is gone): {', '.join(orphans)}",
                red=True,
            )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
