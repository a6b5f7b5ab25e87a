"""`RuntimeLimits`: what one run_code run may use. Plain data, below both the runtimes that
enforce it and the sandbox that bounds a run's processes and memory by it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuntimeLimits:
    timeout: float = 60.0
    """Wall-clock seconds for the whole run, tool calls and any wait for a free slot
    (`max_concurrent_runs`) included."""
    cpu_seconds: int = 30
    """CPU seconds of the worker (RLIMIT_CPU)."""
    memory_bytes: int = 1024 * 1024 * 1024
    """Address space of each process of the run (RLIMIT_AS; for Node, see
    `node.NodeInstall.flags`), and, where the host can make a memory cgroup, the memory of
    the whole run besides its `/tmp`."""
    output_bytes: int = 1024 * 1024
    """Printed output plus the returned value, in bytes of UTF-8; an error's text is cut to
    this size too."""
    max_pending_calls: int = 100
    """Tool calls started but not answered at one time."""
    argument_bytes: int = 1024 * 1024
    """Largest JSON text of one tool call's arguments: a bigger call fails in the program
    (`ToolCallError`), and the host never reads a message much bigger than this or
    `output_bytes`."""
    processes: int = 64
    """Processes and threads a sandboxed run may have at once (RLIMIT_NPROC in its user
    namespace, and the pids cgroup)."""
    max_concurrent_runs: int = 8
    """Runs of one runtime at the same time; a run beyond waits for a slot, within its
    `timeout`."""

    def __post_init__(self) -> None:
        for name in (
            "cpu_seconds",
            "memory_bytes",
            "output_bytes",
            "max_pending_calls",
            "argument_bytes",
            "processes",
            "max_concurrent_runs",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        if not isinstance(self.timeout, int | float) or not self.timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {self.timeout!r}")

    @property
    def frame_bytes(self) -> int:
        """The largest message the host reads from a worker: a call's arguments or a log
        line, a result or an error text, with room for the envelope."""
        return max(self.argument_bytes, self.output_bytes) + FRAME_SLACK


DESCRIPTORS = 128
"""Files and sockets each process of a sandboxed run may hold open (RLIMIT_NOFILE; Node
holds about 20 once started). It also bounds what a process can park in kernel buffers,
which no address-space limit counts (see `sandbox.cgroups.run_memory_bound`)."""

FRAME_SLACK = 64 * 1024
"""Bytes a message may add to its arguments or text (keys, escapes)."""
