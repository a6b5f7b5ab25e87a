"""A text's tokens as fitting counts them: `o200k_base`'s exact count when the tokenizer
loads, else the upper bound; and whether a text is within a budget, from its length or the
bound alone when they decide (most results are far under or far over)."""

from __future__ import annotations

import math

from . import bound, o200k


def estimate_tokens(text: str) -> int:
    """The tokens of `text`: `o200k_base`'s count (never under it: within one token per 8,192
    characters), or `bound.cost` when the tokenizer cannot load, whichever is less."""
    upper = math.ceil(bound.cost(text))
    count_one = o200k.counter()
    if count_one is None:
        return upper
    return min(upper, o200k.count(text, count_one, limit=upper))


def within(text: str, budget: int) -> bool:
    """Whether `estimate_tokens(text) <= budget`, reading no more of `text` than that needs."""
    size = len(text)
    if size * bound.MAX_COST_PER_CHAR <= budget:  # a token is at least a byte
        return True
    if size > o200k.LONGEST_TOKEN * (budget + 1):  # and at most 128 of them
        return False
    if bound.cost(text) <= budget:
        return True
    count_one = o200k.counter()
    return count_one is not None and o200k.count(text, count_one, limit=budget) <= budget
