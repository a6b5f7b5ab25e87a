"""What every run_code worker and its host agree on, whatever the program's language: the
limits of a run and the strict decoding of the JSON lines a worker sends.

Messages are JSON lines on two pipes. From the host: `start` (program, tool names, limits),
then `result` for each call. To the host: `ready` (started and waiting for its program),
`log` (a printed line), `call` (a tool call: id, name, arguments), and finally `done` (with
the returned value, if any) or `error` (kind and message).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 256
"""Containers a value from a program may nest (`[[1]]` nests 2): the worker refuses deeper
arguments and results, and the host refuses a message that carries one."""

FILE_BYTES = 64 * 1024 * 1024
"""Largest file a sandboxed program may write (RLIMIT_FSIZE)."""

STDERR_TAIL = 4096
"""Bytes of the worker's raw stderr kept (the last ones) to explain an early exit."""


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


FRAME_SLACK = 64 * 1024
"""Bytes a message may add to its arguments or text (keys, escapes)."""


def bounded_text(text: str, limit: int) -> str:
    """`text` cut to at most `limit` bytes of UTF-8, with a note of what was cut."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    kept = data[: max(0, limit - 64)].decode("utf-8", "ignore")
    return f"{kept}... [cut: {len(data) - len(kept.encode('utf-8', 'surrogatepass')):,} more bytes]"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


def decode_message(line: bytes) -> Any:
    """One message from a worker, decoded strictly, or `ValueError`: UTF-8 only; no `NaN`,
    no infinities (`1e400` included), no lone surrogates, and no value nesting deeper than
    `MAX_DEPTH` (the message itself adds one level). What passes can be encoded again with
    `json.dumps(..., allow_nan=False)` and as UTF-8, and walked without exhausting the stack."""
    try:
        message = _DECODER.decode(line.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None
    _check_decoded(message, MAX_DEPTH + 1, _ESCAPED_SURROGATE.search(line) is not None)
    return message


def _check_decoded(value: Any, limit: int, surrogates: bool) -> None:
    """Refuse containers deeper than `limit` and, when the text escaped a surrogate, strings
    that are not valid Unicode; iterative, so depth costs no recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            node.encode("utf-8")  # UnicodeEncodeError (a ValueError) for a lone surrogate
            continue
        if isinstance(node, dict):
            if surrogates:
                for key in node:
                    key.encode("utf-8")
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            raise ValueError(f"nested deeper than {limit} levels")
        for child in children:
            if isinstance(child, dict | list) or (surrogates and isinstance(child, str)):
                stack.append((child, depth + 1))
