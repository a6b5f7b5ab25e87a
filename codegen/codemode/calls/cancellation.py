"""Cancellation: an `AbortController` owns an `AbortSignal` that calls can watch.

asyncio's task cancellation reaches only the task that is cancelled; a tool call's signal is
shared by every stage and every nested call of a program, and a stage that never awaits
still needs to ask "was I cancelled?". A signal can also follow another one (a run's signal
follows the outer call's).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


class AbortSignal:
    def __init__(self) -> None:
        self._aborted = False
        self._reason: str | None = None
        self._listeners: list[Callable[[], Any]] = []
        self._events: list[asyncio.Event] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> str | None:
        return self._reason

    def on_abort(self, listener: Callable[[], Any]) -> Callable[[], None]:
        """Call `listener` once when aborted (at once if already); returns a remover."""
        if self._aborted:
            listener()
            return lambda: None
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    async def wait(self) -> None:
        """Return when the signal is aborted."""
        if self._aborted:
            return
        event = asyncio.Event()
        self._events.append(event)
        try:
            await event.wait()
        finally:
            if event in self._events:
                self._events.remove(event)

    def _fire(self, reason: str) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        listeners, self._listeners = self._listeners, []
        for event in self._events:
            event.set()
        for listener in listeners:
            listener()


class AbortController:
    def __init__(self, follow: AbortSignal | None = None) -> None:
        self.signal = AbortSignal()
        self._unfollow: Callable[[], None] = lambda: None
        if follow is not None:
            self._unfollow = follow.on_abort(lambda: self.abort(follow.reason or "aborted"))

    def abort(self, reason: str = "aborted") -> None:
        self.signal._fire(reason)
        self._unfollow()


def aborted(signal: AbortSignal | None) -> bool:
    return signal is not None and signal.aborted
