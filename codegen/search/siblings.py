"""Siblings: tools of one server whose names differ only in number or in a batch word
(`getItem` and `getItems`, `create_issue` and `batch_create_issues`, `get_issue` and
`list_issues`). The stemmer makes their words one, so BM25F ranks them by length and
description; what the question says of number and batch decides between them instead.

After scoring, the siblings among a query's best candidates trade places (only the places
they already hold, so no other tool moves): a batch tool goes first only when the question
asks for a batch, one that returns many (`getItems`, `list_issues`, a name with `all`)
when it asks for many (a quantifier such as `all` or `list`, or a plural of the name's own
word), the single one when it names the thing in the singular. Anything undecided keeps the
score's order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .terms import STOPWORDS, split_words, stem

BATCH = frozenset({"batch", "bulk", "multi", "multiple", "mass"})
"""Words that make a tool's name, or a question, about a batch."""
ASKS_BATCH = BATCH | {"many", "several"}
MANY = frozenset({"list", "all", "every"})
"""Words of a name or a question that ask for many of a thing; left out of the sibling key."""
QUANTIFIERS = MANY | {"multiple", "many", "several", "both"}
SCAN = 24
"""Candidates past `k` among which a better sibling is looked for."""


@dataclass(frozen=True, slots=True)
class Traits:
    """What a tool's own name says: its sibling key (server and the stems that are neither
    batch nor quantity words), whether it is a batch tool, whether it returns many."""

    key: tuple[str, ...]
    batch: bool
    many: bool


def traits(server: str, own_name: str) -> Traits:
    found = [w for w in split_words(own_name) if w not in STOPWORDS or w in MANY]
    core = tuple(stem(w) for w in found if w not in BATCH and w not in MANY)
    return Traits(
        (server, *core),
        any(w in BATCH for w in found),
        any(w in MANY or _plural(w) for w in found if w not in BATCH),
    )


def _plural(word: str) -> bool:
    return (
        len(word) > 3
        and word.isalpha()
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is"))
    )


def prefer(order: list[int], table: Callable[[int], Traits], query: str) -> list[int]:
    """`order` with each group of siblings in it re-ranked by fit to `query`, each group
    within the places it holds; stable otherwise."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for place, doc in enumerate(order):
        groups.setdefault(table(doc).key, []).append(place)
    if all(len(places) < 2 for places in groups.values()):
        return order
    written = [w for w in split_words(query[:4096]) if w.isalpha()]
    batch = any(w in ASKS_BATCH for w in written)
    quantified = any(w in QUANTIFIERS for w in written)
    result = list(order)
    for key, places in groups.items():
        if len(places) < 2:
            continue
        many = _number(written, set(key[1:]), quantified)
        # sorted is stable: equal fits keep the score's order
        docs = sorted((order[p] for p in places), key=_by_fit(table, batch, many))
        for place, doc in zip(places, docs, strict=True):
            result[place] = doc
    return result


def _number(written: list[str], stems: set[str], quantified: bool) -> bool | None:
    """True when the query asks for many of the group's thing, False for one, None when it
    does not say."""
    if quantified:
        return True
    said = [w for w in written if w not in STOPWORDS and stem(w) in stems]
    if any(_plural(w) for w in said):
        return True
    return False if said else None


def _by_fit(table: Callable[[int], Traits], batch: bool, many: bool | None) -> Callable[[int], int]:
    return lambda doc: -_fit(table(doc), batch, many)


def _fit(traits: Traits, batch: bool, many: bool | None) -> int:
    fit = 2 if traits.batch == batch else 0
    if many is not None and traits.many == many:
        fit += 1
    return fit
