"""Work split into shares across forked processes, for batch commands on large catalogs.

Compiling and laying out one tool does not depend on any other tool (`ir_build/builder.py`
`build_tool_alone`, the renderers' chunks), so a command can spread a catalog's tools over
several processes and put the results back in order. The children are forks of the
command: they start in a few milliseconds with everything imported and every definition
loaded, take blocks of tools from a shared queue until it is empty, and write each block's
results, pickled, to an anonymous file as soon as it is done; the parent reads them once
its own blocks are done and the children have ended.

Results never depend on the split. Blocks a child took but did not deliver, whatever the
reason (an exception, a signal, a result that does not pickle), are worked in this
process, and where `fork` is missing or fails everything is: the worst case is the time
of one process, never a different output.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .._support import progress

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS_PER_SHARE = 500
"""Fewer tools than this per process and splitting does not pay: a fork, the pages a child
copies, the pickled results and the assembly cost about what a few hundred simple tools
take, and two processes side by side each run slower per tool. Measured on BFCL's tools
(2 cores): 300 and 600 tools no faster in two processes, 1,000 a few percent faster, 2,000
up to a quarter; ToolUniverse's 3,005 larger tools about 0.7x of the time."""


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the system has one, and
    no more than its control group's CPU quota (a container given two CPUs of a 64-core
    machine sees all 64)."""
    cores = os.cpu_count() or 1
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        with contextlib.suppress(OSError):  # a kernel without affinity
            cores = len(affinity(0))
    quota = cgroup_cpu_quota()
    return max(1, min(cores, quota) if quota is not None else cores)


CGROUP_CPU_MAX = "/sys/fs/cgroup/cpu.max"
"""Where cgroup v2 keeps the quota of the group a process runs in (its own group's file
as a container sees it, or the root's, which has none)."""


def cgroup_cpu_quota(path: str = CGROUP_CPU_MAX) -> int | None:
    """Whole CPUs the control group may use (`cpu.max`: quota and period in
    microseconds, rounded up), or None without a limit or a cgroup v2 file."""
    try:
        with open(path, encoding="ascii") as file:
            quota, _, period = file.read().strip().partition(" ")
        if quota == "max":
            return None
        return max(1, -(-int(quota) // int(period or "100000")))
    except (OSError, ValueError):
        return None


def share_count(items: int, jobs: int | None) -> int:
    """How many processes `items` items are split across: `jobs` when given, else as many
    as there are usable cores, but never so many that a share is smaller than
    `MIN_ITEMS_PER_SHARE`. One where `fork` does not exist, and in a process running
    other threads, whose locks a forked child could inherit held."""
    if not hasattr(os, "fork") or _other_threads():
        return 1
    wanted = usable_cores() if jobs is None else jobs
    return max(1, min(wanted, items // MIN_ITEMS_PER_SHARE if jobs is None else items))


def _other_threads() -> bool:
    """Whether another thread runs in this process: counted by the kernel where it can
    (`/proc/self/task`, as CPython 3.12's fork warning counts), since a C library or
    `_thread` starts threads `threading` does not know of; else by `threading`."""
    try:
        return len(os.listdir("/proc/self/task")) > 1
    except OSError:
        threading = sys.modules.get("threading")  # never imported here: a CLI run has none
        return threading is not None and threading.active_count() > 1


def map_in_shares(
    work: Callable[[Sequence[T]], list[R]], items: Sequence[T], shares: int
) -> list[R]:
    """`work` over `items`, one result per item, in item order, by `shares` processes:
    this one and `shares - 1` forked children. The items are cut into consecutive blocks,
    and each process takes the next block not yet taken until none is left, so a slower
    process (a child pays for the pages it copies) simply works fewer blocks. `work` must
    return one result per item it is given, and its results must pickle.

    When a run's progress is reported (`_support.progress`), this process counts the items
    of every block finished: its own, and the children's as their results files show them
    (a child never reports); alone, it works the items block by block to count them."""
    if shares <= 1 or len(items) < 2:
        return _counted_blocks(work, items) if progress.active() else work(items)
    import pickle  # noqa: F401  (here, once for every process: a small catalog never forks)

    blocks = _blocks(len(items), shares)
    try:
        queue = _block_queue(len(blocks))
    except OSError:  # no pipe to share the blocks through: work them here
        return work(items)
    children: list[tuple[int, int]] = []
    done: dict[int, Any] = {}
    tally = _Tally(blocks) if progress.active() else None

    def deliver(number: int, results: list[R]) -> None:
        done[number] = results
        if tally is not None:
            start, stop = blocks[number]
            progress.advance(stop - start + tally.delivered(children))

    try:
        for _ in range(shares - 1):
            child = _fork(work, items, blocks, queue)
            if child is None:
                break
            children.append(child)
        _take_blocks(work, items, blocks, queue, deliver)
        while children:
            pid, results_file = children.pop()  # `_collect` reaps it and closes its file
            collected = _collect(pid, results_file)
            done.update(collected)
            if tally is not None:
                progress.advance(tally.settled(results_file, collected))
    finally:
        os.close(queue)
        for pid, results_file in children:  # only when this process's own blocks raised
            _stop(pid)
            os.close(results_file)
    merged: list[R] = []
    for number, (start, stop) in enumerate(blocks):
        results = done.get(number)
        if not isinstance(results, list) or len(results) != stop - start:
            results = work(items[start:stop])  # a child took it and did not deliver it
            if tally is not None:
                progress.advance(stop - start)
        merged.extend(results)
    return merged


def _counted_blocks(work: Callable[[Sequence[T]], list[R]], items: Sequence[T]) -> list[R]:
    """`work` over `items` in this process, block by block (the blocks two processes
    would take), reporting each block's items as it is done."""
    merged: list[R] = []
    for start, stop in _blocks(len(items), 2):
        merged.extend(work(items[start:stop]))
        progress.advance(stop - start)
    return merged


class _Tally:
    """The items of the blocks children have finished, read in the parent from the frame
    headers of their results files (size and block number) without unpickling anything."""

    def __init__(self, blocks: list[tuple[int, int]]) -> None:
        self.blocks = blocks
        self.read_to: dict[int, int] = {}
        """Per results file, where its next unread frame header starts."""
        self.counted: dict[int, set[int]] = {}
        """Per results file, the blocks already counted."""

    def delivered(self, children: Sequence[tuple[int, int]]) -> int:
        """Items of the blocks written whole since the last look, over every child."""
        return sum(self._new_frames(results_file) for _, results_file in children)

    def settled(self, results_file: int, collected: dict[int, Any]) -> int:
        """Items of a collected child's blocks not counted yet; forgets its file."""
        counted = self.counted.pop(results_file, set())
        self.read_to.pop(results_file, None)
        return sum(self._items(number) for number in collected if number not in counted)

    def _new_frames(self, results_file: int) -> int:
        position = self.read_to.get(results_file, 0)
        counted = self.counted.setdefault(results_file, set())
        try:
            size = os.fstat(results_file).st_size
            items = 0
            while position + _FRAME_HEADER <= size:
                header = os.pread(results_file, _FRAME_HEADER, position)
                end = position + _FRAME_HEADER + int.from_bytes(header[:_LENGTH], "little")
                if end > size:
                    break  # still being written
                number = header[_LENGTH]
                if number < len(self.blocks) and number not in counted:
                    counted.add(number)
                    items += self._items(number)
                position = end
        except OSError:  # a count is never worth failing for
            return 0
        self.read_to[results_file] = position
        return items

    def _items(self, number: int) -> int:
        start, stop = self.blocks[number]
        return stop - start


SMALLEST_BLOCK = 8
"""Items in the last, smallest blocks."""


def _blocks(count: int, shares: int) -> list[tuple[int, int]]:
    """Consecutive `(start, stop)` ranges covering `count` items, largest first: each
    takes a share of what is left (guided scheduling), so the first blocks are long runs of
    one stage's code (the pipeline runs stage by stage over a block) and the last ones are
    small, so the processes finish close together. At most 255 (a block is one byte in the
    queue)."""
    ranges: list[tuple[int, int]] = []
    start = 0
    while start < count:
        left = count - start
        size = max(SMALLEST_BLOCK, count // 128, left // (3 * shares))
        if len(ranges) == 254:
            size = left
        stop = min(count, start + size)
        ranges.append((start, stop))
        start = stop
    return ranges


def _block_queue(count: int) -> int:
    """The read end of a pipe holding one byte per block, non-blocking: a process takes
    a block by reading one byte (one read is never split between readers), and an empty
    pipe means every block is taken."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, bytes(range(count)))
    finally:
        os.close(write_end)
    os.set_blocking(read_end, False)
    return read_end


def _take_blocks(
    work: Callable[[Sequence[T]], list[R]],
    items: Sequence[T],
    blocks: list[tuple[int, int]],
    queue: int,
    deliver: Callable[[int, list[R]], Any],
) -> None:
    """Work every block this process takes from the queue, handing each block's number
    and results to `deliver`."""
    while True:
        try:
            taken = os.read(queue, 1)
        except BlockingIOError:
            return
        if not taken:
            return
        number = taken[0]
        start, stop = blocks[number]
        deliver(number, work(items[start:stop]))


_LENGTH = 8
_FRAME_HEADER = _LENGTH + 1
"""Bytes before each pickled `(block number, results)` in a results file: its length, then
the block number again, so the parent can count finished blocks without unpickling."""


def _fork(
    work: Callable[[Sequence[T]], list[R]],
    items: Sequence[T],
    blocks: list[tuple[int, int]],
    queue: int,
) -> tuple[int, int] | None:
    """A child taking blocks from the queue; its pid and its results file. None when no
    child can be made (no file, out of processes or memory): this process works on."""
    try:
        results_file = _anonymous_file()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(results_file)
        return None
    if pid == 0:  # the child: never returns into the caller
        status = 1
        try:
            import pickle

            progress.detach()  # only the parent draws; it counts this child's blocks

            def send(number: int, results: list[R]) -> None:
                frame = pickle.dumps((number, results), protocol=pickle.HIGHEST_PROTOCOL)
                header = len(frame).to_bytes(_LENGTH, "little") + bytes((number,))
                _write_all(results_file, header + frame)

            _take_blocks(work, items, blocks, queue, send)
            status = 0
        finally:
            os._exit(status)
    return pid, results_file


def _anonymous_file() -> int:
    """A file with no name, for a child's results: a child writing to it never waits on
    its reader, as it would on a full pipe. In memory where the system has `memfd_create`
    (Linux), else an unlinked temporary file."""
    create = getattr(os, "memfd_create", None)
    if create is not None:
        descriptor: int = create("codegen-shares", getattr(os, "MFD_CLOEXEC", 0))
        return descriptor
    import tempfile

    with tempfile.TemporaryFile() as file:
        return os.dup(file.fileno())


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]


def _collect(pid: int, results_file: int) -> dict[int, Any]:
    """The blocks the child wrote whole, by number (a failed child's earlier blocks
    count); reaps the child and closes its file."""
    reaped = False
    try:
        os.waitpid(pid, 0)
        reaped = True
        size = os.fstat(results_file).st_size
        data = os.pread(results_file, size, 0) if size else b""
    except BaseException:  # interrupted: the child is not left behind
        if not reaped:  # (a reaped child's pid may already be another process's)
            _stop(pid)
        raise
    finally:
        os.close(results_file)
    import pickle

    done: dict[int, Any] = {}
    view = memoryview(data)
    position = 0
    while position + _FRAME_HEADER <= len(data):
        start = position + _FRAME_HEADER
        end = start + int.from_bytes(view[position : position + _LENGTH], "little")
        if end > len(data):
            break  # the child died writing this frame
        try:
            number, results = pickle.loads(view[start:end])
        except Exception:
            break
        done[number] = results
        position = end
    return done


def _stop(pid: int) -> None:
    """Kill and reap a child whose results are no longer wanted."""
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):  # already ended and reaped
        pass
