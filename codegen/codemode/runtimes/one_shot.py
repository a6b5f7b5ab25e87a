"""One command run to its end in a run's sandbox (TypeScript 7's compiler, once per program):
its input on a pipe, its one output file a pipe, its limits set before it reads anything,
and nothing of it left once it ends, fails or is cancelled.

The data crosses without any host path the sandbox could write. The command reads and
writes files by name (TypeScript 7's `tsc` has no stdin or stdout mode), so the names are
symbolic links in its private `/tmp` (its working directory): the input's to
`/proc/self/fd/0`, its stdin, a pipe the host writes; the output's to the write end of a
pipe the host reads. Opening them opens the pipes again, so on a root host the two pipes
are given to the sandbox's uid first. Without a sandbox (`none`) the links are in a private
temporary folder, its working directory.

`hold` starts it and sets its limits; `Held.finish` gives it its input and collects what it
writes. In a sandbox the command is held before it starts (`launchers.Hold`): once the
sandbox says it waits, the host sets the rlimits its processes pass on (`limits_for`, and
the CPU seconds), then `finish` lets it go. Without one, the limits are set right after it
starts, while it waits for its input. So a held command can be started ahead of the run
that needs it, as a spare. At the end, or when the caller is cancelled (the run's deadline
or abort), its whole tree is killed (`worker_pool.kill`) and reaped, every descriptor
closed and its folder removed; the pipe that lets it go is closed last, since bubblewrap
starts a held command when that pipe closes unwritten.

It gets no cgroup of its own: moving its processes into one (a write per process and
hierarchy, each waiting for an RCU grace period) took 8 to 11 ms per compile on a cgroup v1
host, more than the compile itself, and for one process that writes no file (its output is
the pipe), RLIMIT_DATA and RLIMIT_NPROC bound what a cgroup would.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import resource
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..run_code.run_limits import DESCRIPTORS, RuntimeLimits
from ..sandbox.launchers import Launcher, Link, Spawn
from .messages import FILE_BYTES
from .process_limits import Setting, apply_to_tree, usage
from .worker_pool import clean_up, kill

SAID_BYTES = 64 * 1024
"""Bytes of the command's stdout and stderr kept (the first ones): its diagnostics."""

OUTPUT_BYTES = FILE_BYTES
"""The most output kept: what a sandboxed program may write to one file."""


@dataclass(frozen=True)
class Finished:
    """How the command ended and what it said and wrote."""

    status: int
    """The launcher's exit status, as `Popen.returncode`."""
    sandboxed: bool
    said: str
    """Its stdout and stderr, the first `SAID_BYTES`."""
    output: bytes
    """What it wrote to the output file (empty if it never opened it)."""
    output_cut: bool
    """It wrote more than `OUTPUT_BYTES`."""

    @property
    def signal(self) -> int | None:
        """The signal that ended the command, if one did (a sandbox reports it as
        128 + the signal, as a shell does)."""
        if self.status < 0:
            return -self.status
        if self.sandboxed and self.status > 128:
            return self.status - 128
        return None


@dataclass
class _Pipes:
    """The host's and the command's ends of its four pipes: its input, its output, and the
    two of its hold (`launchers.Hold`)."""

    input_read: int
    input_write: int
    output_read: int
    output_write: int
    ready_read: int
    ready_write: int
    go_read: int
    go_write: int
    closed: set[int] = field(default_factory=set)
    """Closed already, or owned by a transport that closes them."""

    @classmethod
    def make(cls) -> _Pipes:
        made: list[tuple[int, int]] = []
        try:
            while len(made) < 4:
                made.append(os.pipe())
        except OSError:
            for pair in made:
                os.close(pair[0])
                os.close(pair[1])
            raise
        (input_read, input_write), (output_read, output_write) = made[:2]
        (ready_read, ready_write), (go_read, go_write) = made[2:]
        return cls(
            input_read,
            input_write,
            output_read,
            output_write,
            ready_read,
            ready_write,
            go_read,
            go_write,
        )

    def theirs(self) -> tuple[int, ...]:
        return (self.input_read, self.output_write, self.ready_write, self.go_read)

    def give_to(self, uid: int, gid: int) -> None:
        """Let `uid` open the input and output pipes again (by `/proc/self/fd`)."""
        for fd in (self.input_read, self.output_read):
            try:
                os.fchown(fd, uid, gid)
            except PermissionError:  # a root without CAP_CHOWN: no other uid reaches
                os.fchmod(fd, 0o666)  # these pipes (their holders' /proc is closed)

    def close(self, *fds: int) -> None:
        for fd in fds:
            if fd not in self.closed:
                self.closed.add(fd)
                with contextlib.suppress(OSError):
                    os.close(fd)

    def close_all(self) -> None:
        """Every end; `go_write` last (bubblewrap starts a held command when it closes)."""
        self.close(*self.theirs(), self.input_write, self.output_read, self.ready_read)
        self.close(self.go_write)


def limits_for(limits: RuntimeLimits, sandboxed: bool) -> list[Setting]:
    """The rlimits of a one-shot command besides its CPU seconds: memory as data
    (RLIMIT_DATA: a native compiler's runtime reserves far more address space than it
    uses), no core file, and in a sandbox the run's process count, file size and open
    files."""
    fixed = [
        (resource.RLIMIT_DATA, limits.memory_bytes, limits.memory_bytes),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if sandboxed:
        fixed += [
            (resource.RLIMIT_NPROC, limits.processes, limits.processes),
            (resource.RLIMIT_FSIZE, FILE_BYTES, FILE_BYTES),
            (resource.RLIMIT_NOFILE, DESCRIPTORS, DESCRIPTORS),
        ]
    return fixed


@dataclass
class Held:
    """A one-shot command started, its limits set, waiting for its input: in a sandbox,
    held before it starts; without one, blocked reading its input. `finish` gives it the
    input and collects what it writes; `dispose` ends it unused."""

    launcher: Launcher
    process: asyncio.subprocess.Process
    pipes: _Pipes
    folder: Path | None
    owned: bool = False
    """True once a run has taken it (and with it the duty to dispose of it)."""

    async def finish(self, data: bytes) -> Finished:
        """Give it `data`, let it go, and collect what it writes until it ends; it is
        disposed of at the end, cancelled or not."""
        self.owned = True
        pipes = self.pipes
        writing = asyncio.ensure_future(_write(pipes.input_write, data, pipes))
        output = asyncio.ensure_future(_read(pipes.output_read, OUTPUT_BYTES, pipes))
        said = asyncio.ensure_future(_read_stream(self.process.stdout, SAID_BYTES))
        try:
            if self.launcher.sandboxed:
                with contextlib.suppress(BrokenPipeError):  # its sandbox failed to start
                    os.write(pipes.go_write, b"g")
            status = await self.process.wait()
            await writing
            written, cut = await output
            text = (await said)[0].decode("utf-8", "replace")
        finally:
            for task in (writing, output, said):
                task.cancel()
            await asyncio.gather(writing, output, said, return_exceptions=True)
            self.dispose()
            if self.process.returncode is None:
                await asyncio.shield(self.process.wait())
        return Finished(status, self.launcher.sandboxed, text, written, cut)

    def dispose(self) -> None:
        """Kill its whole tree (the process is reaped by its loop's child watcher), then
        close every pipe (`go` last) and remove its folder."""
        kill(self.process)
        self.pipes.close_all()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


async def hold(
    launcher: Launcher,
    arguments: Sequence[str],
    environment: dict[str, str],
    limits: RuntimeLimits,
    names: tuple[str, str],
) -> Held:
    """Start `launcher`'s program with `arguments`, the file name `names[0]` its input and
    `names[1]` its output, and hold it until `Held.finish`. `OSError` when it cannot start
    or its limits cannot be set. Cancelled, it leaves no process and no descriptor."""
    pipes = _Pipes.make()
    folder = None if launcher.sandboxed else Path(tempfile.mkdtemp(prefix="codegen-one-shot-"))
    where = folder or "/tmp"
    links = [
        (f"{where}/{names[0]}", "/proc/self/fd/0"),
        (f"{where}/{names[1]}", f"/proc/self/fd/{pipes.output_write}"),
    ]
    spawning = asyncio.ensure_future(_spawn(launcher, arguments, environment, links, pipes))
    try:
        # Shielded: cancelled while the process is being made, asyncio would kill the
        # launcher alone; its tree is killed once it exists, then the pipes are closed.
        held = await asyncio.shield(spawning)
    except asyncio.CancelledError:
        clean_up(asyncio.get_running_loop(), _end_spawned(spawning, pipes, folder))
        raise
    except BaseException:
        pipes.close_all()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    try:
        if launcher.sandboxed:
            await _read(pipes.ready_read, 4096, pipes)  # until every copy of it is closed
        _limit(held.process.pid, limits, launcher.sandboxed, held.run_as)
    except BaseException:
        Held(launcher, held.process, pipes, folder).dispose()
        raise
    return Held(launcher, held.process, pipes, folder)


async def run_one_shot(
    launcher: Launcher,
    arguments: Sequence[str],
    environment: dict[str, str],
    data: bytes,
    limits: RuntimeLimits,
    names: tuple[str, str],
) -> Finished:
    """`hold` then `Held.finish`: the command run once with `data`."""
    return await (await hold(launcher, arguments, environment, limits, names)).finish(data)


@dataclass
class _Spawned:
    process: asyncio.subprocess.Process
    run_as: tuple[int, int] | None
    """The host uid and gid its sandbox runs as, on a root host."""


def _limit(
    root: int, limits: RuntimeLimits, sandboxed: bool, run_as: tuple[int, int] | None
) -> None:
    """Set `limits_for` and the CPU seconds on `root`'s tree; gone processes are skipped."""
    if not hasattr(resource, "prlimit"):
        return
    fixed = limits_for(limits, sandboxed)

    def settings_for(pid: int) -> list[Setting]:
        cpu = limits.cpu_seconds + math.ceil(usage(pid)[0])
        return [(resource.RLIMIT_CPU, cpu, cpu + 1), *fixed]

    apply_to_tree(root, settings_for, run_as)


async def _spawn(
    launcher: Launcher,
    arguments: Sequence[str],
    environment: dict[str, str],
    links: list[Link],
    pipes: _Pipes,
) -> _Spawned:
    """Start the command with the pipes' far ends, then close the host's copies of them."""
    spawn: Spawn | None = None
    try:
        if launcher.sandboxed:
            hold = (pipes.ready_write, pipes.go_read)
            spawn = launcher.spawn(arguments, environment, links, hold)
            passed: tuple[int, ...] = (pipes.output_write, *hold)
            if spawn.run_as is not None:
                pipes.give_to(*spawn.run_as)
            folder = None
        else:
            spawn = launcher.spawn(arguments, environment)
            passed = (pipes.output_write,)
            for link, target in links:
                os.symlink(target, link)
            folder = os.path.dirname(links[0][0])
        process = await asyncio.create_subprocess_exec(
            *spawn.argv,
            stdin=pipes.input_read,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=folder,
            env=environment,
            pass_fds=(*passed, *spawn.descriptors),
            close_fds=True,
            start_new_session=True,
            **spawn.credentials,
        )
        return _Spawned(process, spawn.run_as)
    finally:
        if spawn is not None:
            spawn.close()
        pipes.close(*pipes.theirs())


async def _end_spawned(
    spawning: asyncio.Future[_Spawned], pipes: _Pipes, folder: Path | None
) -> None:
    """The end of a start cancelled meanwhile: once the process exists, kill its tree and
    reap it, then close the pipes (`worker_pool.cleanups_done` waits for this)."""
    try:
        spawned = await spawning
    except BaseException:
        spawned = None
    try:
        if spawned is not None:
            kill(spawned.process)
            await asyncio.wait_for(spawned.process.wait(), 30)
    finally:
        pipes.close_all()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


class _Pipe(asyncio.Protocol):
    """One end of a pipe until its transport is lost: what it received, the first `limit`
    bytes of it."""

    def __init__(self, limit: int = 0) -> None:
        self.limit = limit
        self.data = bytearray()
        self.cut = False
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        room = self.limit - len(self.data)
        self.data += data[:room]
        self.cut = self.cut or len(data) > room

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ended.done():
            self.ended.set_result(None)


async def _write(fd: int, data: bytes, pipes: _Pipes) -> None:
    """Write `data` to the pipe and close it, once all of it is written (or the command
    stopped reading)."""
    loop = asyncio.get_running_loop()
    pipes.closed.add(fd)  # the transport owns it now
    end = _Pipe()
    transport, _ = await loop.connect_write_pipe(lambda: end, os.fdopen(fd, "wb", buffering=0))
    try:
        transport.write(data)
        transport.close()  # once what is buffered is written
        await end.ended
    except BaseException:
        if not end.ended.done():
            transport.abort()
        raise


async def _read(fd: int, limit: int, pipes: _Pipes) -> tuple[bytes, bool]:
    """The first `limit` bytes of what the pipe gives until every write end is closed, and
    whether there was more."""
    loop = asyncio.get_running_loop()
    pipes.closed.add(fd)  # the transport owns it now
    end = _Pipe(limit)
    transport, _ = await loop.connect_read_pipe(lambda: end, os.fdopen(fd, "rb", buffering=0))
    try:
        await end.ended
    finally:
        transport.close()
    return bytes(end.data), end.cut


async def _read_stream(stream: asyncio.StreamReader | None, limit: int) -> tuple[bytes, bool]:
    kept = bytearray()
    cut = False
    while stream is not None:
        chunk = await stream.read(65536)
        if not chunk:
            break
        room = limit - len(kept)
        kept += chunk[:room]
        cut = cut or len(chunk) > room
    return bytes(kept), cut
