"""A one-shot command in a run's sandbox (`runtimes/one_shot.py`, how TypeScript 7's compiler
runs): its input in and its output out through pipes opened by name, with no host path to
write; held before it starts until its limits are set; and nothing of it left when it ends,
is cancelled, or is never used. The command here is Python (the sandboxes' own image), which
reports what it was given and the limits it runs under."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys

import pytest

from codegen.codemode.run_code.run_limits import DESCRIPTORS, RuntimeLimits
from codegen.codemode.runtimes.one_shot import hold, run_one_shot
from codegen.codemode.sandbox.launchers import Launcher, image_launcher, python_image
from support.processes import NSBOOT_MARK, left_processes
from support.sandbox_checks import python_for

SANDBOXES = ("none", "bubblewrap", "namespaces")
LIMITS = RuntimeLimits(timeout=30, memory_bytes=512 * 1024 * 1024, cpu_seconds=7)

MARK = "codegen one-shot test command"
"""In the command's source, so a left process is found (`processes.left_processes`)."""

REPORT = (
    f"# {MARK}\n"
    + """
import json, os, resource
data = open("input.txt", "rb").read()
limits = {
    name: resource.getrlimit(getattr(resource, "RLIMIT_" + name))[0]
    for name in ("CPU", "DATA", "NPROC", "NOFILE", "CORE")
}
with open("/proc/self/cmdline", "rb") as line:
    argv_bytes = len(line.read())
report = {"size": len(data), "upper": data[:64].upper().decode(), "limits": limits,
          "cwd": os.getcwd(), "uid": os.getuid(), "argv_bytes": argv_bytes}
with open("output.txt", "w") as out:
    out.write(json.dumps(report) + "\\n" + "x" * (len(data) - 64))
"""
)
"""Reads its input by name, writes a report and as many bytes as it read by name."""

ENVIRONMENT = {"PATH": os.defpath, "LANG": "C.UTF-8"}


def python_launcher(sandbox: str) -> Launcher:
    """The sandboxes' Python, as a one-shot command's launcher."""
    return image_launcher(sandbox, python_image(python_for(sandbox) or sys.executable))


def assert_nothing_left() -> None:
    assert not left_processes((MARK, NSBOOT_MARK)), "a one-shot command outlived its run"


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_input_in_and_output_out_by_name_through_pipes(sandbox: str) -> None:
    """A megabyte each way (past a pipe's buffer), the program text never an argument, and
    in a sandbox the run's limits set before it started."""
    data = b"program text " * 80_000
    finished = asyncio.run(
        run_one_shot(
            python_launcher(sandbox),
            ["-I", "-S", "-c", REPORT],
            ENVIRONMENT,
            data,
            LIMITS,
            ("input.txt", "output.txt"),
        )
    )
    assert finished.status == 0, finished.said
    head, _, rest = finished.output.partition(b"\n")
    report = json.loads(head)
    assert report["size"] == len(data) and report["upper"] == data[:64].upper().decode()
    assert len(rest) == len(data) - 64 and not finished.output_cut
    assert report["argv_bytes"] < 4096  # the data came by pipe, not on the command line
    limits = report["limits"]
    assert limits["DATA"] == LIMITS.memory_bytes and limits["CORE"] == 0
    assert limits["CPU"] <= LIMITS.cpu_seconds + 1
    if sandbox != "none":
        assert report["cwd"] == "/tmp" and report["uid"] == 65534
        assert limits["NPROC"] == LIMITS.processes and limits["NOFILE"] == DESCRIPTORS
    assert_nothing_left()


@pytest.mark.parametrize("sandbox", ["bubblewrap", "namespaces"])
def test_a_held_command_waits_for_its_input_before_it_starts(sandbox: str) -> None:
    """Held, the sandbox is built but its command has not started (nothing runs its
    program's text); disposed of unused, it leaves nothing."""

    launcher = python_launcher(sandbox)
    command = [launcher.executable, "-I", "-S", "-c", REPORT]

    async def scenario() -> list[list[str]]:
        held = await hold(launcher, command[1:], ENVIRONMENT, LIMITS, ("input.txt", "output.txt"))
        try:
            await asyncio.sleep(0.3)
            return _command_lines(held.process.pid)
        finally:
            held.dispose()
            await held.process.wait()

    lines = asyncio.run(scenario())
    assert len(lines) >= 2 and command not in lines, lines  # the sandbox, not its command
    assert_nothing_left()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_cancelled_command_leaves_nothing(sandbox: str) -> None:
    """Cancelled while it runs (a run's deadline or abort), its tree is killed and reaped."""
    waits = ["-I", "-S", "-c", f"# {MARK}\nimport time; open('input.txt').read(); time.sleep(60)"]

    async def scenario() -> None:
        task = asyncio.ensure_future(
            run_one_shot(
                python_launcher(sandbox),
                waits,
                ENVIRONMENT,
                b"x",
                LIMITS,
                ("input.txt", "output.txt"),
            )
        )
        await asyncio.sleep(1.0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert_nothing_left()


def _command_lines(root: int) -> list[list[str]]:
    """The command line of `root` and of each of its descendants."""
    from codegen.codemode.runtimes.worker_pool import descendants

    lines = []
    for pid in [root, *descendants(root)]:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                lines.append(file.read().decode(errors="replace").split("\0")[:-1])
        except OSError:
            pass
    return lines


def test_limits_apply_to_the_data_segment_not_the_address_space() -> None:
    """Go's runtime reserves far more address space than it uses: the one-shot limit is on
    data, as the compiler ran before."""
    from codegen.codemode.runtimes.one_shot import limits_for

    settings = {which for which, _, _ in limits_for(LIMITS, sandboxed=True)}
    assert resource.RLIMIT_DATA in settings and resource.RLIMIT_AS not in settings
