"""Asking a 2026-07-28 client: its `tools/call` answered `input_required` while the run waits.

On 2026-07-28 a server sends the client no request of its own during a call; a call that
needs the user's input returns an `input_required` result instead, carrying the questions
and a `requestState`, and the client retries the same call with the answers and that state
(the SDK's `RequestStateBoundary` seals the state, binds it to the call and expires it). So
a run that needs an approval goes on in a task of its own (`RoundRun`): the first
`tools/call` waits for it to end or to ask; a question ends that round with the form and a
fresh state naming the waiting run (`Rounds`); the retry hands over the answer and waits for
the next event. A run whose client never comes back is told "no answer" by the approval
service's timeout, goes on, and is dropped when it ends.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

KEEP_ENDED = 300.0
"""Seconds a run that ended while parked (its question timed out) waits for the client's
retry, which then gets its result."""


@dataclass(frozen=True)
class Question:
    key: str
    message: str
    schema: dict[str, Any]


class RoundRun:
    """One run that may ask its client questions between rounds."""

    def __init__(self, work: Coroutine[Any, Any, Any]) -> None:
        self.task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self._questions: asyncio.Queue[tuple[Question, asyncio.Future[Any]]] = asyncio.Queue()
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self._keys = itertools.count(1)

    async def ask(self, message: str, schema: dict[str, Any]) -> Any:
        """`ClientLink.ask` for this run: the client's `ElicitResult`, once it retries."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        question = Question(f"approve-{next(self._keys)}", message, schema)
        self._questions.put_nowait((question, future))
        return await future

    async def next(self) -> Question | None:
        """Wait for the run to ask (the question) or to end (None: `task` holds the
        result). Cancelled, it cancels the run: its caller is gone."""
        getter = asyncio.ensure_future(self._questions.get())
        try:
            done, _ = await asyncio.wait({self.task, getter}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            getter.cancel()
            self.task.cancel()
            raise
        if getter not in done:
            getter.cancel()
            return None
        question, future = getter.result()
        self._waiting[question.key] = future
        return question

    def answer(self, responses: dict[str, Any]) -> None:
        """The client's answers to the questions of the last round; a question left
        unanswered reads as cancelled."""
        for key, future in self._waiting.items():
            if not future.done():
                future.set_result(responses.get(key))
        self._waiting.clear()


class Rounds:
    """The runs waiting for a client's retry, by the state their last round gave it."""

    def __init__(self) -> None:
        self._runs: dict[str, RoundRun] = {}

    def park(self, run: RoundRun) -> str:
        """A fresh state naming `run` until the retry takes it, or the run ends."""
        state = secrets.token_hex(16)
        self._runs[state] = run
        loop = asyncio.get_running_loop()
        run.task.add_done_callback(
            lambda _: loop.call_later(KEEP_ENDED, self._runs.pop, state, None)
        )
        return state

    def take(self, state: str) -> RoundRun | None:
        return self._runs.pop(state, None)

    def __len__(self) -> int:
        return len(self._runs)
