"""Work on a big JSON value off the event loop: copying, checking, encoding or cutting a
value of millions of items in the loop's thread would stall every other run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def off_loop(work: Callable[..., T], *arguments: Any, weight: Any) -> T:
    """`work(*arguments)`, in a thread when `weight` (the value it walks) is large: copying,
    checking or encoding a big value never stalls the other runs on the event loop."""
    if is_large(weight):
        import asyncio

        return await asyncio.to_thread(work, *arguments)
    return work(*arguments)


def is_large(value: Any, budget: int = 4096) -> bool:
    """Whether `value` holds more than `budget` values, looking at no more than that many:
    work on a large value is moved off the event loop."""
    pending = [value]
    while pending:
        item = pending.pop()
        budget -= 1
        if budget < 0:
            return True
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str) and len(item) > 65536:
            return True
    return False
