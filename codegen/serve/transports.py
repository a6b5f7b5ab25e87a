"""How serve talks to an upstream: stdio and streamable HTTP, each with a size cap on what
the upstream may send in one message.

The transports live in `codegen.mcp.transports`, which `codegen harvest` shares; this
module keeps their names where `serve` has always imported them.
"""

from __future__ import annotations

from ..mcp.transports import (
    EDGE,
    LARGE_LINE,
    STOP_GRACE,
    LineSplitter,
    MessageTooLarge,
    Skipped,
    answered_id,
    http_client,
    stdio_transport,
)

__all__ = [
    "EDGE",
    "LARGE_LINE",
    "STOP_GRACE",
    "LineSplitter",
    "MessageTooLarge",
    "Skipped",
    "answered_id",
    "http_client",
    "stdio_transport",
]
