"""Work in shares across forked processes (`codegen.incremental.shares`, `codegen sdk
--jobs`): results in order, a failed child costs time and never output, no child is left
behind. That the SDK is the same bytes and diagnostics for any split is the engine's
property (`test_engine.py`)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from codegen.incremental import shares
from support.sdk_checks import run_cli

# These tests call `map_in_shares` themselves, in a test process that always runs other
# threads (pytest-xdist's worker has execnet's), so CPython 3.12+ warns at each fork. The
# command never forks so (`share_count` refuses: `test_a_process_with_other_threads_never_forks`);
# a child here only works its blocks, writes its results and leaves with `os._exit`.
pytestmark = pytest.mark.filterwarnings(
    "ignore:This process .* is multi-threaded, use of fork:DeprecationWarning"
)

LANGUAGES = ["python", "typescript"]
PATIENCE = 120.0
"""Seconds a test waits for a child to show up: generous, since a busy machine may start it
late; only a broken fork would ever use it all."""


def doubled(items: Sequence[int]) -> list[int]:
    return [2 * item for item in items]


def in_child(action: Callable[[], Any]) -> Callable[[Sequence[int]], list[int]]:
    """`doubled`, except that in a forked child `action` runs first (it may raise, exit or
    return a result to send instead)."""
    parent = os.getpid()

    def work(items: Sequence[int]) -> list[int]:
        if os.getpid() != parent:
            replaced = action()
            if replaced is not None:
                return replaced  # type: ignore[no-any-return]
        return doubled(items)

    return work


def both_working(
    work: Callable[[Sequence[int]], list[int]],
) -> tuple[Callable[[Sequence[int]], list[int]], Callable[[], int]]:
    """`work` wrapped so that this process works no block until a child has taken one
    (the child may also take them all), which proves the split happened whatever the
    machine's load; and a function giving the pid of that child, once this process has
    waited for it."""
    parent = os.getpid()
    read_end, write_end = os.pipe()
    child_pid: list[int] = []

    def wrapped(items: Sequence[int]) -> list[int]:
        if os.getpid() != parent:
            os.write(write_end, os.getpid().to_bytes(4, "little"))
        elif not child_pid:
            ready = _wait_readable(read_end)
            assert ready, "no child took a block"
            child_pid.append(int.from_bytes(os.read(read_end, 4), "little"))
        return work(items)

    return wrapped, lambda: child_pid[0]


def _wait_readable(fd: int) -> bool:
    import select

    readable, _, _ = select.select([fd], [], [], PATIENCE)
    return bool(readable)


# --- map_in_shares ------------------------------------------------------------------------


@pytest.mark.parametrize("count", [0, 1, 2, 3, 7, 100, 1_000])
@pytest.mark.parametrize("share_total", [1, 2, 3, 4])
def test_results_come_back_in_item_order(count: int, share_total: int) -> None:
    items = list(range(count))
    assert shares.map_in_shares(doubled, items, share_total) == doubled(items)


def test_a_child_really_works_a_share() -> None:
    work, _ = both_working(lambda items: [os.getpid() for _ in items])
    result = shares.map_in_shares(work, list(range(400)), 2)
    assert len(result) == 400
    assert len(set(result) - {os.getpid()}) == 1  # one child, and it took blocks


def _raise() -> None:
    raise RuntimeError("the child fails")


def _exit_badly() -> None:
    os._exit(7)


def _killed() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _unpicklable() -> list[Any]:
    return [lambda: None] * 1_000


def _too_few() -> list[int]:
    return []


@pytest.mark.parametrize(
    "failure", [_raise, _exit_badly, _killed, _unpicklable, _too_few], ids=lambda f: f.__name__
)
def test_the_blocks_of_a_failed_child_are_worked_here(failure: Callable[[], Any]) -> None:
    items = list(range(500))
    work, _ = both_working(in_child(failure))
    assert shares.map_in_shares(work, items, 3) == doubled(items)


def test_blocks_a_child_delivered_before_failing_are_kept() -> None:
    """This process waits in its first block until the child has taken two blocks; the
    child delivers the first of them and dies in the second: only the block it delivered
    is not worked here."""
    parent = os.getpid()
    read_end, write_end = os.pipe()
    worked_here: list[int] = []
    calls = [0]

    def fail_on_second_block(items: Sequence[int]) -> list[int]:
        if os.getpid() != parent:
            calls[0] += 1
            if calls[0] == 2:
                os.write(write_end, b"x")
                os._exit(3)
        elif not worked_here:
            assert _wait_readable(read_end), "the child never took a second block"
            worked_here.extend(items)
        else:
            worked_here.extend(items)
        return doubled(items)

    items = list(range(600))
    assert shares.map_in_shares(fail_on_second_block, items, 2) == doubled(items)
    not_here = sorted(set(items) - set(worked_here))
    blocks = [list(range(start, stop)) for start, stop in shares._blocks(len(items), 2)]
    assert not_here in blocks


def test_without_memfd_the_results_go_through_a_temporary_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(os, "memfd_create", raising=False)  # as on macOS
    parent = os.getpid()
    worked_here: list[int] = []

    def recorded(items: Sequence[int]) -> list[int]:
        if os.getpid() == parent:
            worked_here.extend(items)
        return doubled(items)

    work, _ = both_working(recorded)
    items = list(range(500))
    assert shares.map_in_shares(work, items, 2) == doubled(items)
    assert len(worked_here) < len(items)  # the child's blocks came back, not worked again


def test_without_fork_everything_is_worked_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise OSError("no more processes")

    monkeypatch.setattr(os, "fork", no_fork)
    items = list(range(300))
    assert shares.map_in_shares(doubled, items, 4) == doubled(items)


def test_an_error_here_stops_and_reaps_the_children() -> None:
    parent = os.getpid()

    def fail_here(items: Sequence[int]) -> list[int]:
        if os.getpid() == parent:
            raise ValueError("this process fails")
        signal.pause()  # a child that would never end on its own
        return doubled(items)

    work, child = both_working(fail_here)
    with pytest.raises(ValueError, match="this process fails"):
        shares.map_in_shares(work, list(range(200)), 2)
    with pytest.raises(ChildProcessError):  # killed and reaped: not even a zombie
        os.waitpid(child(), os.WNOHANG)


def test_a_process_with_other_threads_never_forks() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert shares.share_count(10_000, None) == 1
        assert shares.share_count(10_000, 4) == 1
    finally:
        stop.set()
        thread.join()


def test_a_thread_threading_does_not_know_of_also_keeps_the_process_from_forking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A C library's thread, or one `_thread` started, holds locks a child would inherit
    held as much as a `threading.Thread`: the kernel's count decides."""
    import _thread

    monkeypatch.setattr(threading, "active_count", lambda: 1)
    started, stop = _thread.allocate_lock(), _thread.allocate_lock()
    started.acquire()
    stop.acquire()

    def wait() -> None:
        started.release()
        stop.acquire()

    _thread.start_new_thread(wait, ())
    started.acquire()
    try:
        assert shares._other_threads()
        assert shares.share_count(10_000, 4) == 1
    finally:
        stop.release()


def test_share_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shares, "_other_threads", lambda: False)  # another test's threads
    monkeypatch.setattr(shares, "usable_cores", lambda: 4)
    per_share = shares.MIN_ITEMS_PER_SHARE
    assert shares.share_count(per_share - 1, None) == 1  # too small to be worth a fork
    assert shares.share_count(2 * per_share, None) == 2
    assert shares.share_count(100 * per_share, None) == 4  # no more than the cores
    assert shares.share_count(5, 3) == 3  # asked for: as many as asked
    assert shares.share_count(2, 8) == 2  # never more than the items
    assert shares.share_count(100 * per_share, 1) == 1
    monkeypatch.setattr(shares, "usable_cores", lambda: 1)
    assert shares.share_count(100 * per_share, None) == 1


def test_blocks_cover_the_items_once_in_order() -> None:
    for count in (1, 2, 15, 16, 17, 1_000, 100_000):
        for share_total in (2, 3, 8, 64):
            blocks = shares._blocks(count, share_total)
            assert len(blocks) <= 255
            assert blocks[0][0] == 0 and blocks[-1][1] == count
            assert all(a[1] == b[0] for a, b in itertools.pairwise(blocks))
            assert all(stop > start for start, stop in blocks)


# --- the command line ---------------------------------------------------------------------


def run(*argv: str) -> tuple[int, bytes, str]:
    return run_cli(list(argv))


def _write_catalog(tmp_path: Path, count: int, broken: bool = False) -> Path:
    tools = [
        {
            "name": f"tool_{i}",
            "description": f"Tool number {i}.",
            "inputSchema": {
                "type": "object",
                "properties": {"q": {"type": "string", "maxLength": i + 1}},
                "required": ["q"],
            },
        }
        for i in range(count)
    ]
    if broken:
        tools[count // 2]["inputSchema"] = {"type": "object", "properties": {"q": {"type": 5}}}
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": tools}))
    return path


@pytest.mark.parametrize("broken", [False, True])
def test_sdk_jobs_gives_the_same_output_and_status(tmp_path: Path, broken: bool) -> None:
    path = str(_write_catalog(tmp_path, 40, broken))
    for language in LANGUAGES:
        one = run("sdk", path, "--lang", language, "--jobs", "1")
        assert one[0] == (1 if broken else 0)
        for jobs in ("2", "4"):
            assert run("sdk", path, "--lang", language, "--jobs", jobs) == one


def test_a_large_catalog_is_split_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(_write_catalog(tmp_path, 3 * shares.MIN_ITEMS_PER_SHARE))
    expected = run("sdk", path, "--lang", "python", "--jobs", "1")
    forks: list[int] = []
    real_fork = shares._fork

    def counted(*args: Any) -> Any:
        forks.append(1)
        return real_fork(*args)

    monkeypatch.setattr(shares, "usable_cores", lambda: 2)
    monkeypatch.setattr(shares, "_other_threads", lambda: False)  # another test's threads
    monkeypatch.setattr(shares, "_fork", counted)
    assert run("sdk", path, "--lang", "python") == expected
    assert forks == [1]


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_sdk_jobs_must_be_a_positive_number(tmp_path: Path, value: str) -> None:
    path = str(_write_catalog(tmp_path, 3))
    status, out, err = run("sdk", path, "--lang", "python", "--jobs", value)
    assert status == 2 and not out
    assert "expected a positive number of processes" in err


def _started(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot), or None when there is none."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as file:
            return int(file.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _children_of(pid: int) -> list[int]:
    """Live processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as file:
                    fields = file.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def test_an_interrupted_run_leaves_no_worker_and_no_file(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    tools = [
        {
            "name": f"tool_{i}",
            "description": "A tool. " * 20,
            "inputSchema": {
                "type": "object",
                "properties": {
                    f"p{k}": {"type": "string", "description": f"Field {k}.", "maxLength": k + 1}
                    for k in range(30)
                },
            },
        }
        for i in range(3_000)
    ]
    source = tmp_path / "tools.json"
    source.write_text(json.dumps({"tools": tools}))
    output = tmp_path / "sdk.py"
    command = [sys.executable, "-m", "codegen", "sdk", str(source), "--lang", "python"]
    whole = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    interrupted = 0
    for _ in range(5):  # a busy machine may let the run end before the signal lands
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "codegen",
                "sdk",
                str(source),
                "--lang",
                "python",
                "--jobs",
                "2",
                "-o",
                str(output),
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + PATIENCE
        workers: list[int] = []
        while not workers and process.poll() is None and time.monotonic() < deadline:
            workers = _children_of(process.pid)
            time.sleep(0.002)
        assert workers, "the run ended before it forked a worker"
        started = {worker: _started(worker) for worker in workers}
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=PATIENCE)
        for worker in workers:  # reaped: gone, not even a zombie (a pid reused since by
            # another process, with 32,768 pids on a busy machine, is another start time)
            assert _started(worker) is None or _started(worker) != started[worker], worker
        assert "Traceback" not in err
        if process.returncode == 0:  # it finished first: the whole file, and try again
            assert output.read_text() == whole
            output.unlink()
            continue
        assert process.returncode == 130, err
        assert "interrupted" in err
        assert not output.exists()
        interrupted += 1
        break
    assert interrupted == 1, "no run was interrupted while it worked"


@pytest.mark.parametrize(
    ("contents", "cores"),
    [
        ("max 100000\n", None),
        ("200000 100000\n", 2),
        ("150000 100000\n", 2),  # one and a half CPUs: two processes
        ("50000 100000\n", 1),
        ("100000\n", 1),  # no period: the kernel's default, 100 ms
        ("garbage\n", None),
        ("", None),
    ],
)
def test_the_cgroup_quota_bounds_the_cores(
    tmp_path: Path, contents: str, cores: int | None
) -> None:
    path = tmp_path / "cpu.max"
    path.write_text(contents)
    assert shares.cgroup_cpu_quota(str(path)) == cores
    assert shares.cgroup_cpu_quota(str(tmp_path / "missing")) is None


def test_usable_cores_never_exceed_the_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shares, "cgroup_cpu_quota", lambda: 1)
    assert shares.usable_cores() == 1
    monkeypatch.setattr(shares, "cgroup_cpu_quota", lambda: None)
    assert shares.usable_cores() >= 1
