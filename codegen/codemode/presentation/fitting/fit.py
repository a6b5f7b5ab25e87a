"""Fitting what a run returns into what MCP clients accept.

A run's value (`{"logs": [...], "result": ...}`) reaches the model twice: as text (the log
lines, then the result: a string as it is, anything else as indented JSON) and as
`structuredContent` (`json.dumps(value)`); both must be within the budget, in `o200k_base`
tokens (`estimate`). The cutter plans in `bound` units, which are additive and cheap but
about twice the count on English and JSON; so the plan is calibrated: cut to a target, count
the result exactly, move the target by the ratio, and keep the largest cut that fits, within
3% of the budget or after eight attempts. `fit_text` does the same for plain text (a failing
program's message and captured output): the head and the tail stay, the middle goes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .bound import CHARS_PER_TOKEN, cost
from .cutter import Cutter, largest, marker
from .estimate import estimate_tokens, within

DEFAULT_RESULT_TOKENS = 22_000
"""The default budget, in `o200k_base` tokens: Claude Code accepts 25,000 of its own model's
tokens, which count a little more than o200k's on code and JSON; 12% is left for that."""

MIN_BUDGET = 64
"""The smallest budget accepted: room for the skeleton and a marker."""

_ATTEMPTS = 8
_CLOSE = 0.97
"""A cut within 3% of the budget is close enough to stop calibrating."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Fitted:
    """A run's value within budget; `note` says what was cut (None: nothing was)."""

    value: dict[str, Any]
    note: str | None


def run_text(value: dict[str, Any]) -> str:
    """The text a model reads for a run: the log lines, then the result (a string as it is,
    anything else as indented JSON); empty parts left out."""
    parts = list(value.get("logs", []))
    if "result" in value:
        result = value["result"]
        parts.append(
            result if isinstance(result, str) else json.dumps(result, indent=2, ensure_ascii=False)
        )
    return "\n".join(part for part in parts if part != "")


def _run_fits(value: dict[str, Any], budget: int) -> bool:
    """Both texts of a run within budget; the indented one is only made when the compact one
    fits (so a 50 MB value costs one C-speed `json.dumps`)."""
    return within(json.dumps(value), budget) and within(run_text(value), budget)


def _run_tokens(value: dict[str, Any]) -> int:
    """The estimate of the dearer of a run's two texts."""
    return max(estimate_tokens(json.dumps(value)), estimate_tokens(run_text(value)))


def _check_budget(budget: int) -> None:
    if budget < MIN_BUDGET:
        raise ValueError(f"a budget must be at least {MIN_BUDGET} tokens, not {budget}")


def _smallest_run(value: dict[str, Any]) -> dict[str, Any]:
    """The last resort (never needed in practice: cutting again to a smaller budget
    converges): no logs, and the result at its smallest, or left out."""
    smallest: dict[str, Any] = {"logs": []}
    if "result" in value:
        result = value["result"]
        if isinstance(result, list):
            smallest["result"] = []
        elif isinstance(result, dict):
            smallest["result"] = {}
        elif isinstance(result, str):
            smallest["result"] = marker(len(result)) if result else result
    return smallest


def fit_run_output(value: dict[str, Any], budget: int = DEFAULT_RESULT_TOKENS) -> Fitted:
    """A run's value whose text and JSON are both within `budget` by `estimate_tokens`; the
    same object, with no note, when it already is (decided from lengths and the bound alone
    when they can: most results are far under the budget)."""
    _check_budget(budget)
    if _run_fits(value, budget):
        return Fitted(value, None)

    def attempt(target: float) -> tuple[Fitted, int]:
        cutter = Cutter()
        fitted = cutter.fit(value, target)
        return Fitted(fitted, cutter.note(budget)), _run_tokens(fitted)

    best = _calibrated(attempt, budget)
    if best is not None:
        return best
    note = f"cut to fit {budget:,} tokens: the log lines and the result's content left out"
    return Fitted(_smallest_run(value), note)


def fit_text(text: str, budget: int) -> tuple[str, str | None]:
    """`text` within `budget`: its head and its tail, the middle replaced by a marker (a line
    of its own when the cut falls on line boundaries, which it does when there are lines
    near); the note says what was kept. The tail matters as much as the head: a traceback
    ends with the error."""
    _check_budget(budget)
    if within(text, budget):
        return text, None

    def attempt(target: float) -> tuple[tuple[str, str | None], int]:
        fitted, kept = _head_and_tail(text, (target - 24) / 2)
        return (fitted, f"cut to fit {budget:,} tokens: kept {kept}"), estimate_tokens(fitted)

    best = _calibrated(attempt, budget)
    if best is not None:
        return best
    return f"… [cut: {len(text):,} characters] …", f"cut to fit {budget:,} tokens: nothing kept"


def _calibrated(attempt: Callable[[float], tuple[T, int]], budget: int) -> T | None:
    """The attempt with the most tokens within `budget`, over targets in `bound` units: the
    budget first (the bound is over the count, so that fits unless the pieces' sum misses
    the whole's), then the target scaled by budget/tokens, kept between the largest target
    that fit and the smallest that did not. None when no attempt fit."""
    target = float(budget)
    fit_at, over_at = 0.0, math.inf
    best: T | None = None
    best_tokens = -1
    for _attempt in range(_ATTEMPTS):
        result, tokens = attempt(target)
        if tokens <= budget:
            if tokens > best_tokens:
                best, best_tokens = result, tokens
            if tokens >= budget * _CLOSE:
                break
            fit_at = max(fit_at, target)
            guess = target * budget / max(tokens, 1) * 0.99
        else:
            over_at = min(over_at, target)
            guess = target * budget / tokens * 0.97
        if not fit_at < guess < over_at:
            guess = (fit_at + over_at) / 2 if over_at < math.inf else 2 * target
        if over_at <= fit_at * 1.01 or guess < MIN_BUDGET / 2:
            break
        target = guess
    return best


def _head_and_tail(text: str, half: float) -> tuple[str, str]:
    """The longest head and tail of `text` costing `half` each, moved to line boundaries
    when that gives up less than half of them, joined by a marker; and what they keep."""
    guess = int(half * 2)
    limit = min(len(text), int(CHARS_PER_TOKEN * (half + 1)))
    head_end = largest(limit, lambda k: cost(text[:k]) <= half, guess)
    newline = text.rfind("\n", 0, head_end)
    if newline >= 0 and newline >= head_end // 2:
        head_end = newline + 1
    size = largest(limit, lambda k: cost(text[len(text) - k :]) <= half, guess)
    tail_start = max(head_end, len(text) - size)
    newline = text.find("\n", tail_start)
    if newline != -1 and newline + 1 - tail_start <= size // 2:
        tail_start = newline + 1
    middle = text[head_end:tail_start]
    if head_end > 0 and text[head_end - 1] == "\n" and middle.endswith("\n"):
        cut_lines = middle.count("\n")
        marker = f"… [cut: {cut_lines:,} lines, {len(middle):,} characters] …\n"
        total = text.count("\n") + 1
        head_lines = text.count("\n", 0, head_end)
        tail_lines = total - head_lines - cut_lines
        kept = f"the first {head_lines:,} and the last {tail_lines:,} of {total:,} lines"
    else:
        marker = f" … [cut: {len(middle):,} characters] … "
        tail = len(text) - tail_start
        kept = f"the first {head_end:,} and the last {tail:,} of {len(text):,} characters"
    return text[:head_end] + marker + text[tail_start:], kept
