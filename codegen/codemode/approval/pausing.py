"""Time spent waiting for the user is not the program's: a run's wall-clock timeout stops
while one of its calls waits for an approval.

The run sets `PAUSER` to itself while it runs (its calls' tasks inherit the context); the
executor waits for the approval service inside `user_time()`, which pauses that run's clock
until the answer comes. Its CPU-seconds limit is untouched (a waiting program uses none), and
the approval service bounds the wait itself (serve: `ask_timeout`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol


class Pausable(Protocol):
    def pause(self) -> Callable[[], None]:
        """Stop the clock; the function returned starts it again (once)."""
        ...


PAUSER: ContextVar[Pausable | None] = ContextVar("codegen_run_clock", default=None)


@contextmanager
def user_time() -> Iterator[None]:
    """The clock of the run this call belongs to (if any) stopped for the block."""
    pauser = PAUSER.get()
    resume = pauser.pause() if pauser is not None else None
    try:
        yield
    finally:
        if resume is not None:
            resume()
