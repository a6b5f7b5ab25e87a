"""Work split into shares across forked processes, for batch commands on large catalogs.

Compiling and laying out one tool does not depend on any other tool (`build_ir.
build_tool_alone`, the renderers' chunks), so a command can spread a catalog's tools over
several processes and put the results back in order. The children are forks of the
command: they start in a few milliseconds with everything imported and every definition
loaded, take blocks of tools from a shared queue until it is empty, and send back only
their results, pickled, through a pipe.

Results never depend on the split. Blocks a child took but did not deliver, whatever the
reason (an exception, a signal, a result that does not pickle), are worked in this
process, and where `fork` is missing or fails everything is: the worst case is the time
of one process, never a different output.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS_PER_SHARE = 150
"""Fewer items than this per process and a fork costs more than it saves (a tool takes
about a tenth of a millisecond; a fork of a loaded catalog, a few milliseconds)."""


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        try:
            return max(1, len(affinity(0)))
        except OSError:  # pragma: no cover - a kernel without affinity
            pass
    return os.cpu_count() or 1


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
    threading = sys.modules.get("threading")  # never imported here: a CLI run has none
    return threading is not None and threading.active_count() > 1


def map_in_shares(
    work: Callable[[Sequence[T]], list[R]], items: Sequence[T], shares: int
) -> list[R]:
    """`work` over `items`, one result per item, in item order, by `shares` processes:
    this one and `shares - 1` forked children. The items are cut into consecutive blocks,
    and each process takes the next block not yet taken until none is left, so a slower
    process (a child pays for the pages it copies) simply works fewer blocks. `work` must
    return one result per item it is given, and its results must pickle."""
    if shares <= 1 or len(items) < 2:
        return work(items)
    blocks = _blocks(len(items), shares)
    try:
        queue = _block_queue(len(blocks))
    except OSError:  # no pipe to share the blocks through: work them here
        return work(items)
    children: list[tuple[int, int]] = []
    done: dict[int, list[R]] = {}
    try:
        for _ in range(shares - 1):
            child = _fork(work, items, blocks, queue)
            if child is None:
                break
            children.append(child)
        done.update(_take_blocks(work, items, blocks, queue))
        while children:
            done.update(_collect(*children.pop()))
    finally:
        os.close(queue)
        for pid, fd in children:  # only when this process's own blocks raised
            _abandon(pid, fd)
    merged: list[R] = []
    for number, (start, stop) in enumerate(blocks):
        results = done.get(number)
        if results is None or len(results) != stop - start:  # a child did not deliver it
            results = work(items[start:stop])
        merged.extend(results)
    return merged


BLOCKS_PER_SHARE = 24
"""Blocks per process: enough for an uneven split to even out, few enough that each block
is long stretches of one stage's code (the pipeline runs stage by stage over a block)."""


def _blocks(count: int, shares: int) -> list[tuple[int, int]]:
    """Consecutive `(start, stop)` ranges covering `count` items, at most 255 of them
    (a block is named by one byte in the queue)."""
    number = max(1, min(255, shares * BLOCKS_PER_SHARE, count))
    size, extra = divmod(count, number)
    ranges = []
    start = 0
    for index in range(number):
        stop = start + size + (index < extra)
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
) -> dict[int, list[R]]:
    """The results of every block this process takes from the queue, by block number."""
    done: dict[int, list[R]] = {}
    while True:
        try:
            taken = os.read(queue, 1)
        except BlockingIOError:
            return done
        if not taken:
            return done
        number = taken[0]
        start, stop = blocks[number]
        done[number] = work(items[start:stop])


def _fork(
    work: Callable[[Sequence[T]], list[R]],
    items: Sequence[T],
    blocks: list[tuple[int, int]],
    queue: int,
) -> tuple[int, int] | None:
    """A child taking blocks from the queue; its pid and the read end of its result pipe.
    None when no child can be made (out of processes or memory): this process works on."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: never returns into the caller
        status = 1
        try:
            import pickle

            os.close(read_end)
            done = _take_blocks(work, items, blocks, queue)
            _write_all(write_end, pickle.dumps(done, protocol=pickle.HIGHEST_PROTOCOL))
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]


def _collect(pid: int, fd: int) -> dict[int, list[Any]]:
    """The child's results by block number; nothing when it did not deliver them (its
    blocks are then worked here). Takes over `fd`, and always reaps the child."""
    try:
        with os.fdopen(fd, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(pid, 0)
    except BaseException:  # interrupted: the child is not left behind
        _stop(pid)
        raise
    if os.waitstatus_to_exitcode(status) != 0:
        return {}
    import pickle  # here, not at the top: a small catalog never forks

    try:
        done = pickle.loads(payload)
    except Exception:  # a torn payload
        return {}
    return done if isinstance(done, dict) else {}


def _abandon(pid: int, fd: int) -> None:
    """Stop and reap a child whose results are no longer wanted."""
    os.close(fd)
    _stop(pid)


def _stop(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):  # already ended and reaped
        pass
