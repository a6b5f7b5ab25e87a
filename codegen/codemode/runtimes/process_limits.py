"""Setting rlimits on a process tree from the host: a Node worker once it is ready, a held
one-shot command (TypeScript 7's compiler) before it starts.

Neither can set its own (Node has no way to; a command in a sandbox is not ours to change),
so the host sets them with `prlimit` on every process of the tree; a child inherits them.
A root host that lacks CAP_SYS_RESOURCE (as in many containers) sets them from a child that
takes the sandbox's uid: lowering a limit of a process of one's own uid needs no capability.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Callable
from pathlib import Path

from ..sandbox.launchers import children

Setting = tuple[int, int, int]
"""(which rlimit, soft, hard)."""

_TICKS = os.sysconf("SC_CLK_TCK")


def apply_to_tree(
    root: int,
    settings_for: Callable[[int], list[Setting]],
    run_as: tuple[int, int] | None = None,
) -> None:
    """Apply `settings_for(pid)` to `root` and each of its descendants (each process's own,
    since some depend on what it has used: see `usage`). A process gone meanwhile is skipped.
    `PermissionError` when they cannot be set (and no `run_as` can set them instead)."""
    plan: list[tuple[int, list[Setting]]] = []
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            each = settings_for(pid)
            _apply(pid, each)
        except ProcessLookupError:
            continue
        except PermissionError:
            if run_as is None:
                raise
            plan.append((pid, each))
        pending.extend(children(pid))
    if plan:
        _apply_as(run_as, plan)  # type: ignore[arg-type]


def usage(pid: int) -> tuple[float, int]:
    """The CPU seconds (user plus system) `pid` has used and the bytes of address space it
    holds; `ProcessLookupError` if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        raise ProcessLookupError(pid) from None
    fields = stat[stat.rindex(")") + 2 :].split()
    # fields from the third on: utime is the 14th, stime the 15th, vsize the 23rd
    return (int(fields[11]) + int(fields[12])) / _TICKS, int(fields[20])


def _apply(pid: int, settings: list[Setting]) -> None:
    for which, soft, hard in settings:
        resource.prlimit(pid, which, (soft, hard))


def _apply_as(run_as: tuple[int, int], plan: list[tuple[int, list[Setting]]]) -> None:
    """`_apply` from a child that takes the sandbox's uid and gid."""
    uid, gid = run_as
    child = os.fork()
    if child == 0:
        status = 1
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            for pid, settings in plan:
                with contextlib.suppress(ProcessLookupError):
                    _apply(pid, settings)
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(child, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        raise PermissionError(f"the limits could not be set as uid {uid}")
