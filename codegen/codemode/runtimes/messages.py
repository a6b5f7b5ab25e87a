"""What every run_code worker and its host agree on, whatever the program's language: the
sizes of a run's messages and the strict decoding of the JSON lines a worker sends (the
limits themselves are `codemode.run_limits.RuntimeLimits`).

Messages are JSON lines on two pipes. From the host: `start` (program, tool names, limits),
then `result` for each call. To the host: `ready` (started and waiting for its program),
`log` (a printed line), `call` (a tool call: id, name, arguments), `discover` (a question
to `catalog`: id, op, arguments; answered like a call), and finally `done` (with the
returned value, if any) or `error` (kind and message).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 256
"""Containers a value from a program may nest (`[[1]]` nests 2): the worker refuses deeper
arguments and results, and the host refuses a message that carries one."""

FILE_BYTES = 64 * 1024 * 1024
"""Largest file a sandboxed program may write (RLIMIT_FSIZE)."""

STDERR_TAIL = 4096
"""Bytes of the worker's raw stderr kept (the last ones) to explain an early exit."""


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
