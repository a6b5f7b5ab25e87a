"""Cutting a run's value to a budget of `bound` units, between whole values only.

Every kept path keeps its type: arrays keep their first items, objects their first keys in
order, long strings are shortened with a visible marker; nothing is added to the program's
arrays or objects. Inside a container, children are kept whole while they fit; one that
does not gets what is left; children too big to keep whole anyway share the budget (at most
eight). Measures stop at the budget they have and walk with explicit stacks, so a 50 MB
value costs what its kept part costs, and nesting depth costs no recursion.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ...calls.jsonvalue import value_path
from . import bound
from .bound import CHARS_PER_TOKEN, piece_cost

_MAX_SHARES = 8
"""At most this many big children share a container's budget (each gets at least 1/8)."""
_MIN_SHARE = 24.0
"""A big child is not given less than this (a marker alone costs about 15)."""
_TAIL_LINES = 5
_TAIL_PART = 0.2
"""When log lines are dropped, the last 5 are kept if they fit in a fifth of the logs' part."""
_LONG = 256
"""Strings longer than this are estimated apart from the text around them..."""
_JOINS = 2.0
"""...plus this for the two joins (a join can merge or split a piece or two)."""

# --- where a value is written ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Slot:
    """The text around a value where it is written: in the model's text (indented JSON, or as
    it is when `raw`: a log line, a string result) and in the compact JSON."""

    text_before: str
    text_after: str
    json_before: str
    json_after: str
    raw: bool = False

    def cost(self, value: Any) -> float:
        """A scalar (or an empty container) written here: the dearer of its two texts."""
        text = (
            value if self.raw and isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        )
        same = not isinstance(value, str) or (not self.raw and text.isascii())
        compact = text if same else json.dumps(value)
        return max(
            bound.cost(self.text_before + text + self.text_after),
            bound.cost(self.json_before + compact + self.json_after),
        )


_LINE = _Slot("", "\n", ", ", "", raw=True)
_TOP = _Slot("", "", "", "", raw=True)


def _indent(depth: int) -> str:
    return "\n" + "  " * depth


def _item_slot(depth: int) -> _Slot:
    """An array item: after a newline and indentation, and after `, ` in the compact JSON
    (the separator goes before, where a space joins what follows, as in the whole text)."""
    return _Slot(_indent(depth), ",", ", ", "")


def _member_slot(depth: int, key: str) -> _Slot:
    return _Slot(
        _indent(depth) + json.dumps(key, ensure_ascii=False) + ": ",
        ",",
        ", " + json.dumps(key) + ": ",
        "",
    )


def marker(cut: int) -> str:
    return f"… [cut: {cut:,} more characters]"


def _is_container(value: Any) -> bool:
    return isinstance(value, (list, dict)) and bool(value)


Path: TypeAlias = tuple[Any, Any] | None
"""A path as a (parent, key) chain, spelled only when something there is cut."""


def _spell(path: Path) -> str:
    """`$`, `$.a[2]`, `$['a b']` (`jsonvalue`'s spelling); a very long one (deep nesting,
    long keys) keeps its two ends."""
    spelled = value_path(path)
    return spelled if len(spelled) <= 80 else spelled[:40] + "…" + spelled[-39:]


def largest(limit: int, fits: Callable[[int], bool], guess: int) -> int:
    """The largest k in [0, limit] with fits(k), fits being (about) monotone and fits(0)
    true: doubling from a guess, then halving to within 1/1024 of the answer."""
    low, high = 0, limit + 1
    k = max(1, min(limit, guess))
    while k <= limit:
        if not fits(k):
            high = k
            break
        low = k
        if k == limit:
            return k
        k = min(limit, 2 * k)
    while high - low > max(1, high >> 10):
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return low


# --- cutting --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Child:
    """A container's child as planned: kept whole, or cut to `allowance`."""

    key: Any
    value: Any
    slot: _Slot
    cost: float
    least: float
    allowance: float | None = None


def _level(costs: list[float], pool: float) -> float:
    """The water level of a pool shared by costs: those under it whole, the others cut to
    it (inf when all fit whole)."""
    ordered = sorted(costs)
    for index, cost in enumerate(ordered):
        if cost * (len(ordered) - index) > pool:
            return pool / (len(ordered) - index)
        pool -= cost
    return math.inf


@dataclass(slots=True)
class _Cuts:
    """What one attempt cut, for the note."""

    containers: list[tuple[str, str, int, int]] = field(default_factory=list)
    strings: list[str] = field(default_factory=list)
    lines: tuple[int, int, int] | None = None
    shortened_lines: int = 0
    dropped_result: bool = False


_Request = tuple[Any, _Slot, int, float, Path]
_Cutting = Generator[_Request, tuple[Any, float], tuple[Any, float]]


class Cutter:
    """One attempt at fitting: the measures it made (by node and depth) and what it cut."""

    def __init__(self) -> None:
        self.inner: dict[tuple[int, int], float] = {}
        self.texts: dict[tuple[int, bool], tuple[float, float]] = {}
        self.cuts = _Cuts()

    # measuring

    def shell(self, node: Any, slot: _Slot, depth: int) -> float:
        """The brackets of a non-empty container written in `slot` at `depth`."""
        opening, closing = ("[", "]") if isinstance(node, list) else ("{", "}")
        return max(
            piece_cost(slot.text_before + opening)
            + piece_cost(_indent(depth) + closing + slot.text_after),
            piece_cost(slot.json_before + opening) + piece_cost(closing + slot.json_after),
        )

    def leaf(self, value: Any, slot: _Slot, cap: float) -> float:
        """A scalar or empty container; inf when it is surely over `cap` (a string too long
        to cost less, known without reading it). A long string is estimated once, apart from
        its slot (measures repeat at each level a cut goes down)."""
        if not isinstance(value, str) or len(value) <= _LONG:
            return slot.cost(value)
        if len(value) > CHARS_PER_TOKEN * (cap + 1):
            return math.inf
        costs = self.texts.get((id(value), slot.raw))
        if costs is None:
            text = value if slot.raw else json.dumps(value, ensure_ascii=False)
            text_cost = bound.cost(text)
            json_cost = (
                text_cost if not slot.raw and text.isascii() else bound.cost(json.dumps(value))
            )
            costs = self.texts[(id(value), slot.raw)] = (text_cost, json_cost)
        return _JOINS + max(
            piece_cost(slot.text_before) + costs[0] + piece_cost(slot.text_after),
            piece_cost(slot.json_before) + costs[1] + piece_cost(slot.json_after),
        )

    def children(self, node: Any, depth: int) -> Iterator[tuple[Any, Any, _Slot]]:
        """(key, child, slot) of a container at `depth`; its children are at depth + 1."""
        if isinstance(node, list):
            slot = _item_slot(depth + 1)
            for index, item in enumerate(node):
                yield index, item, slot
        else:
            for key, item in node.items():
                yield key, item, _member_slot(depth + 1, key)

    def measure(self, node: Any, slot: _Slot, depth: int, cap: float) -> float:
        """The cost of a value written in `slot`, or inf once it passes `cap`: a walk with an
        explicit stack that stops there, remembering every container it finished."""
        if not _is_container(node):
            return self.leaf(node, slot, cap)
        total = self.shell(node, slot, depth)
        known = self.inner.get((id(node), depth))
        if known is not None:
            total += known
            return total if total <= cap else math.inf
        stack = [(self.children(node, depth), node, depth, total)]
        while stack:
            children, parent, level, start = stack[-1]
            for _key, child, child_slot in children:
                if _is_container(child):
                    total += self.shell(child, child_slot, level + 1)
                    known = self.inner.get((id(child), level + 1))
                    if known is None:
                        if total > cap:
                            return math.inf
                        stack.append((self.children(child, level + 1), child, level + 1, total))
                        break
                    total += known
                else:
                    total += self.leaf(child, child_slot, cap - total)
                if total > cap:
                    return math.inf
            else:
                stack.pop()
                self.inner[(id(parent), level)] = total - start
        return total

    def smallest(self, value: Any, slot: _Slot, cost: float) -> float:
        """The least a value can be cut to: an empty container, a marker alone."""
        if _is_container(value):
            return slot.cost([] if isinstance(value, list) else {})
        if isinstance(value, str):
            return min(cost, slot.cost(marker(len(value))))
        return cost

    # planning

    def plan(
        self,
        entries: Iterator[tuple[Any, Any, _Slot]],
        depth: int,
        budget: float,
        sharing: bool = True,
    ) -> list[_Child]:
        """The children kept (a prefix), with an allowance for those to cut.

        Small children (at most budget/8, or that cannot shrink) are kept whole. Big ones
        share what the small ones leave, at least budget/8 each (so at most 8 of them), but a
        big one that would make a child kept whole so far be cut only gets what is left, if
        that is worth it, and ends the big ones: an array of records keeps whole records, not
        a stub of each, while a record keeps its small fields and cuts its big ones. Without
        `sharing` (arrays), a big child after one that is cut ends the prefix: an array is
        cut like a list of pages, the first ones first.
        """
        floor = max(budget / _MAX_SHARES, _MIN_SHARE)
        kept: list[_Child] = []
        bigs: list[_Child] = []
        smalls = 0.0
        partial: _Child | None = None
        for key, value, slot in entries:
            cost = self.measure(value, slot, depth, budget)
            child = _Child(key, value, slot, cost, self.smallest(value, slot, cost))
            big = cost > floor and child.least < cost
            least = sum(max(floor, other.least) for other in bigs)
            if partial is not None:  # only small ones now, from the partial one's part
                whole = sum(other.cost for other in bigs if other is not partial)
                if big or smalls + cost + whole + max(floor, partial.least) > budget:
                    break
            elif not big:
                if smalls + cost + least > budget:
                    break
            else:
                if smalls + least + max(floor, child.least) > budget:
                    break
                pool = budget - smalls
                before = _level([other.cost for other in bigs], pool)
                if before < math.inf and not sharing:
                    break
                after = _level([other.cost for other in bigs] + [cost], pool)
                if any(after < other.cost <= before for other in bigs):
                    left = pool - sum(other.cost for other in bigs)
                    if before < math.inf or left < max(floor, child.least):
                        break
                    partial = child
                bigs.append(child)
            if not big:
                smalls += cost
            kept.append(child)
        pool = budget - smalls
        if partial is not None:
            partial.allowance = pool - sum(other.cost for other in bigs if other is not partial)
        else:
            level = _level([other.cost for other in bigs], pool)
            for other in bigs:
                if other.cost > level:
                    other.allowance = level
        return kept

    def cut_string(self, text: str, slot: _Slot, allowance: float) -> tuple[str, float]:
        """The longest prefix of `text`, with a marker, within `allowance` (assumed to hold the
        marker alone); a prefix ending at a space or newline when one is near."""

        def cut(k: int) -> str:
            return text[:k] + marker(len(text) - k)

        def fits(k: int) -> bool:
            return slot.cost(cut(k)) <= allowance

        limit = min(len(text) - 1, int(CHARS_PER_TOKEN * (allowance + 1)))
        k = largest(limit, fits, int(allowance * 2))
        near = max(text.rfind(" ", max(0, k - 40), k), text.rfind("\n", max(0, k - 40), k))
        if near > 0 and fits(near + 1):
            k = near + 1
        shortened = cut(k)
        return shortened, slot.cost(shortened)

    def spend(self, kept: list[_Child], used: float, depth: int, path: Path) -> _Cutting:
        """The planned children (at `depth`) as (key, value) pairs, each one to cut asked of
        the driver, and `used` plus their cost; what a cut child leaves of its allowance goes
        to the next one."""
        items: list[tuple[Any, Any]] = []
        spare = 0.0
        for child in kept:
            value, spent = child.value, child.cost
            if child.allowance is not None:
                room = child.allowance + spare
                if spent > room:
                    value, spent = yield (value, child.slot, depth, room, (path, child.key))
                spare = room - spent
            items.append((child.key, value))
            used += spent
        return items, used

    def cut_container(
        self, node: Any, slot: _Slot, depth: int, allowance: float, path: Path
    ) -> _Cutting:
        """A container cut to `allowance` as planned."""
        shell = self.shell(node, slot, depth)
        sharing = isinstance(node, dict)
        kept = self.plan(self.children(node, depth), depth + 1, allowance - shell, sharing)
        items, used = yield from self.spend(kept, shell, depth + 1, path)
        if len(kept) < len(node):
            kind = "array" if isinstance(node, list) else "object"
            self.cuts.containers.append((kind, _spell(path), len(kept), len(node)))
        if isinstance(node, list):
            return [value for _key, value in items], used
        return dict(items), used

    def drive(self, root: _Cutting) -> tuple[Any, float]:
        """Runs `root` to its end, cutting every value it asks for (a container through a
        generator of its own, on a stack, so depth costs no recursion); what it returns."""
        stack = [root]
        reply: Any = None
        while True:
            try:
                value, slot, depth, share, path = stack[-1].send(reply)
            except StopIteration as done:
                stack.pop()
                if not stack:
                    returned: tuple[Any, float] = done.value
                    return returned
                reply = done.value
                continue
            if _is_container(value):
                stack.append(self.cut_container(value, slot, depth, share, path))
                reply = None
            else:
                reply = self.cut_leaf(value, slot, share, path)

    def cut(self, result: Any, allowance: float) -> Any:
        """The result cut to `allowance` (which holds its smallest form)."""
        if not _is_container(result):
            return self.cut_leaf(result, _TOP, allowance, None)[0]
        return self.drive(self.cut_container(result, _TOP, 0, allowance, None))[0]

    def cut_leaf(self, value: Any, slot: _Slot, allowance: float, path: Path) -> tuple[Any, float]:
        cost = self.leaf(value, slot, allowance)
        if cost <= allowance or not isinstance(value, str):
            return value, cost
        if slot is _LINE:
            self.cuts.shortened_lines += 1
        else:
            self.cuts.strings.append(_spell(path))
        return self.cut_string(value, slot, allowance)

    # the run

    def cut_logs(self, lines: list[str], allowance: float) -> tuple[list[str], float]:
        """The first lines, and when some are dropped the last few, within `allowance`."""
        numbered = [(index, line, _LINE) for index, line in enumerate(lines)]
        head = self.plan(iter(numbered), 0, allowance)
        tail: list[_Child] = []
        if len(head) < len(lines):
            room = allowance * _TAIL_PART
            for index in range(len(lines) - 1, max(len(lines) - 1 - _TAIL_LINES, -1), -1):
                cost = self.measure(lines[index], _LINE, 0, room)
                if cost > room:
                    break
                room -= cost
                tail.insert(0, _Child(index, lines[index], _LINE, cost, cost))
            spent = sum(child.cost for child in tail)
            head = self.plan(iter(numbered[: len(lines) - len(tail)]), 0, allowance - spent)
        kept, used = self.drive(self.spend(head + tail, 0.0, 0, None))
        if len(kept) < len(lines):
            self.cuts.lines = (len(head), len(tail), len(lines))
        return [line for _index, line in kept], used

    def fit(self, value: dict[str, Any], budget: float) -> dict[str, Any]:
        """The run cut to `budget`: logs and result each whole when small, else sharing."""
        lines = value.get("logs", [])
        has_result = "result" in value
        skeleton: dict[str, Any] = {
            key: [] if key == "logs" else 0 if key == "result" else item
            for key, item in value.items()
        }
        allowance = budget - bound.cost(json.dumps(skeleton)) - _JOINS
        logs_cost = 0.0
        for line in lines:
            logs_cost += self.measure(line, _LINE, 0, allowance - logs_cost)
            if logs_cost > allowance:
                break
        result = value.get("result")
        result_cost = self.measure(result, _TOP, 0, allowance) if has_result else 0.0
        half = allowance / 2
        if result_cost <= half:  # a small result whole, the logs the rest
            logs_allowance = allowance - result_cost
        elif logs_cost <= half:  # small logs whole, the result the rest
            logs_allowance = logs_cost
        else:  # both big: the logs half, the result what they leave
            logs_allowance = half
        if logs_cost <= logs_allowance:
            kept_lines, logs_used = lines, logs_cost
        else:
            kept_lines, logs_used = self.cut_logs(lines, logs_allowance)
        fitted = dict(value)
        if kept_lines is not lines:
            fitted["logs"] = kept_lines
        room = allowance - logs_used
        if has_result and result_cost > room:
            if self.smallest(result, _TOP, result_cost) <= room:
                fitted["result"] = self.cut(result, room)
            else:
                del fitted["result"]
                self.cuts.dropped_result = True
        return fitted

    def note(self, budget: int) -> str:
        """What was cut, in a sentence: counts, and a handful of paths."""
        cuts = self.cuts
        parts: list[str] = []
        if cuts.lines is not None:
            head, tail, total = cuts.lines
            part = f"{head + tail:,} of {total:,} log lines kept"
            if tail:
                part += f" (the first {head:,} and the last {tail:,})"
            parts.append(part)
        if cuts.shortened_lines:
            plural = "line" if cuts.shortened_lines == 1 else "lines"
            parts.append(f"{cuts.shortened_lines:,} log {plural} shortened")
        if cuts.dropped_result:
            parts.append("the result left out (a value too long to fit)")
        for kind, path, kept, total in cuts.containers[:5]:
            unit = "items" if kind == "array" else "keys"
            parts.append(f"result {kind} {path} kept {kept:,} of {total:,} {unit}")
        if len(cuts.containers) > 5:
            parts.append(f"and {len(cuts.containers) - 5:,} more arrays or objects cut")
        if cuts.strings:
            shown = ", ".join(cuts.strings[:5])
            more = f", and {len(cuts.strings) - 5:,} more" if len(cuts.strings) > 5 else ""
            plural = "string" if len(cuts.strings) == 1 else "strings"
            parts.append(f"{len(cuts.strings):,} result {plural} shortened ({shown}{more})")
        return f"cut to fit {budget:,} tokens: " + ", ".join(parts)
