"""The ranking: BM25F over a tool's fields, an exact-name fast path in front, and several
queries (one per step of a task) interleaved into one list.

BM25F (Robertson and Zaragoza): each field's term count is scaled by the field's weight and
its own length normalization, the scaled counts are summed into one pseudo-frequency per
term, and that sum is saturated once (`tf / (k1 + tf)`) and multiplied by the term's IDF.
The saturated frequency depends on the document and the term only, so the build stores it
in postings (term -> (document, frequency) pairs) and a query adds up the postings of its
own terms, touching nothing else. Any query term that matches counts; there is no
all-terms cut-off, so a long question degrades gracefully.

The documents are sorted by name when the index is built and every sum runs in a fixed
order, so the same catalog in any order gives the same ranking, under any hash seed; ties
go to the name that sorts first.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Literal

from .clauses import clauses
from .documents import Document, split_name
from .glosses import gloss, glossed
from .siblings import SCAN, Traits, prefer, traits
from .terms import (
    MAX_QUERY_CHARS,
    analyze,
    chunks,
    name_key,
    pairs,
    query_joins,
    query_terms,
    respellings,
    spellable,
    split_words,
    stem_all,
    unknown_words,
    words,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from .semantic import SemanticIndex

MAX_QUERIES = 32
"""Queries of one combined search that are read (the first ones)."""

FIELDS = ("name", "server", "title", "description", "parameter", "parameter_text", "value")
"""The fields of a tool, in the order their weights are given: its own name's words, the
server prefix's words, title, description, parameter names, parameter descriptions, enum
values."""


@dataclass(frozen=True, slots=True)
class Weights:
    """The model's every knob: a weight and a length normalization (`b`) per field, in the
    order of `FIELDS`, and the saturation `k1`.

    A name word says most about what a tool does, a title restates the name, the description
    is the main text; parameter names say what a tool works on, their descriptions and enum
    values less sharply. Names and parameter descriptions vary most in length and are
    normalized most. Chosen on BFCL and LiveMCPBench (`bench/bench_search.py`), which are
    flat around these round values: doubling or halving any one of them moves no recall
    there by more than 0.02 (0.03 for `k1`). Neither has titles, so the title's weight,
    between the name's and the description's, is a judgment, not a measurement."""

    field: tuple[float, ...] = (4.0, 1.0, 2.0, 1.0, 1.0, 0.5, 0.5)
    b: tuple[float, ...] = (0.75, 0.3, 0.5, 0.5, 0.5, 0.75, 0.5)
    k1: float = 1.5


@dataclass(frozen=True, slots=True)
class Ranking:
    """The best tools for a search, best first (at most `k`); how many tools matched it at
    all (a query term in common, or named by it); whether the list was cut short of them."""

    names: tuple[str, ...]
    matched: int
    cut: bool


class SearchIndex:
    """An immutable index of a catalog's tools: `build` it once, `search` it many times."""

    __slots__ = (
        "_arrays",
        "_documents",
        "_exact",
        "_idf",
        "_masks",
        "_postings",
        "_respelt_words",
        "_semantic",
        "_servers",
        "_texts",
        "_traits",
        "_written",
    )

    def __init__(
        self,
        documents: tuple[Document, ...],
        postings: dict[str, tuple[list[int], list[float]]],
        exact: dict[str, tuple[tuple[int, int], ...]],
        semantic: SemanticIndex | None = None,
        texts: list[tuple[str, ...]] | None = None,
    ) -> None:
        self._documents = documents
        self._texts = texts if texts is not None else [_texts(doc) for doc in documents]
        """Each document's field texts (`_texts`), as the build indexed them."""
        self._written: frozenset[str] | None = None
        """The words of the documents' texts a respelling can be (`_written_words`), worked
        out when a query first has an unknown word."""
        self._respelt_words: dict[str, str | None] = {}
        """Unknown query words -> the term each was taken for (`_respell`), at most
        `MAX_RESPELT`: a question's clauses and a program's searches repeat them."""
        self._postings = postings
        self._idf: dict[str, float] = {}
        """Each term's IDF, worked out when a query first needs it (most terms never are)."""
        self._exact = exact
        self._servers = tuple(d.server for d in documents)
        self._traits: dict[int, Traits] = {}
        """Each document's sibling traits, worked out when first needed (most never are)."""
        self._semantic = semantic
        self._arrays: dict[str, tuple[NDArray[np.intp], NDArray[np.float64]]] = {}
        """With the semantic ranker: postings as arrays, made when a query first needs them."""
        self._masks: dict[str, NDArray[np.bool_]] = {}
        """With the semantic ranker: each server's documents, as a mask."""

    @classmethod
    def build(
        cls,
        documents: Sequence[Document],
        weights: Weights = Weights(),
        semantic: Literal["auto"] | None = None,
    ) -> SearchIndex:
        """The index of `documents`, in any order: a name given twice is indexed once (the
        document that sorts first is kept), a document without a name not at all.

        `semantic="auto"` adds the semantic ranker (`semantic.py`) when its model is
        installed (`tool-codegen[search]`); without it, or with None, the index is BM25F alone."""
        kept: dict[str, Document] = {}
        for doc in documents:
            if doc.name and (doc.name not in kept or doc < kept[doc.name]):
                kept[doc.name] = doc
        docs = tuple(kept[name] for name in sorted(kept))
        ranker = None
        if semantic == "auto":
            from . import semantic as embeddings

            model = embeddings.model()
            ranker = embeddings.SemanticIndex.build(docs, model) if model is not None else None
        texts = [_texts(doc) for doc in docs]
        memo = _memo()
        memo.learn(texts)
        postings = _postings(texts, weights, memo)
        return cls(docs, postings, _exact_names(docs, texts, memo), ranker, texts)

    @property
    def semantic(self) -> bool:
        """Whether the semantic ranker takes part."""
        return self._semantic is not None

    @property
    def documents(self) -> tuple[Document, ...]:
        """The indexed documents, sorted by name."""
        return self._documents

    def search(self, query: str | Sequence[str], k: int = 8, server: str | None = None) -> Ranking:
        """The `k` best tools for `query`, only among `server`'s tools when it is given (""
        for the tools without a prefix).

        A list of queries (one per step of a task) gives one list: the queries' own
        rankings interleaved round robin (each query's best, then each one's second, ...,
        a tool already listed skipped), so every step is represented near the top. On
        LiveMCPBench it does as well as the best fusion tried (reciprocal ranks with a small
        constant) and better than summed scores, one query of all the steps, or reciprocal
        ranks with the usual constant 60, which let a tool that fits several steps loosely
        push out the tools that fit one step exactly.

        One question with step words ("read the file and then email it") is ranked whole
        and clause by clause (`clauses`), the rankings interleaved the same way, the whole
        question's first."""
        k = max(k, 0)
        if isinstance(query, str):
            parts = clauses(query) if SPLIT else [query]
            queries = [query, *parts] if len(parts) > 1 else parts
        else:
            queries = _queries(query)
        rankings = []
        matched: set[int] = set()
        for text in queries:
            order, hits = self._rank(text, k, server)
            rankings.append(order)
            matched |= hits
        names = tuple(self._documents[i].name for i in _interleave(rankings, k))
        return Ranking(names, len(matched), len(matched) > len(names))

    def _rank(self, text: str, k: int, server: str | None) -> tuple[list[int], set[int]]:
        """One query's best `k` documents, and every document it matched."""
        named = self._named(text, server)
        terms = query_terms(text)
        joins = query_joins(text, terms)
        joins += self._respelt(text, terms + joins)
        joins += _gloss_terms(text, terms + joins)
        weights = (1.0,) * len(terms) + (JOIN_WEIGHT,) * len(joins)
        first = set(named)
        wanted = k + SCAN if k else 0
        matched: Collection[int]
        if self._semantic is not None and terms:
            best, matched = self._fused_best(text, terms + joins, weights, server, first, wanted)
        else:
            scores: dict[int, float] = {}
            get = scores.get
            postings = self._postings
            for term, weight in zip(terms + joins, weights, strict=True):
                posting = postings.get(term)
                if posting is None:
                    continue
                idf = self._idf_of(term, posting[0]) * weight
                for doc, frequency in zip(*posting, strict=True):
                    scores[doc] = get(doc, 0.0) + idf * frequency
            if server is not None:
                servers = self._servers
                scores = {doc: score for doc, score in scores.items() if servers[doc] == server}
            best = _best(scores, first, wanted)
            matched = scores.keys()
        order = prefer(best, self._traits_of, text)
        return (named + order)[:k], first | matched

    def _fused_best(
        self,
        text: str,
        terms: tuple[str, ...],
        weights: tuple[float, ...],
        server: str | None,
        first: set[int],
        wanted: int,
    ) -> tuple[list[int], set[int]]:
        """`_rank`'s scoring and choice with the semantic ranker, over arrays (numpy comes
        with it): the `wanted` best documents not in `first`, and every document matched.
        The same numbers as the dictionaries BM25F alone uses, bit for bit: each document's
        score is the same products summed in the same order (term by term, one IEEE addition
        each), divided by the same best score, plus the same credits
        (`SemanticIndex.fuse`); the choice the same order (score, then document)."""
        import numpy as np

        from .semantic import WEIGHT as semantic_weight

        count = len(self._documents)
        scores = np.zeros(count)
        hit = np.zeros(count, dtype=bool)
        arrays = self._arrays
        for term, weight in zip(terms, weights, strict=True):
            found = arrays.get(term)
            if found is None:
                posting = self._postings.get(term)
                if posting is None:
                    continue
                found = arrays[term] = (
                    np.asarray(posting[0], dtype=np.intp),
                    np.asarray(posting[1]),
                )
            docs, frequencies = found
            idf = self._idf_of(term, self._postings[term][0])
            scores[docs] += (idf * weight) * frequencies  # documents distinct
            hit[docs] = True
        if server is not None:
            hit &= self._server_mask(server)
        top = float(scores[hit].max()) if hit.any() else 0.0
        fused = np.zeros(count)
        if top > 0.0:
            fused[hit] = scores[hit] / top
        else:
            hit[:] = False
        assert self._semantic is not None
        near, credit = self._semantic.credit_arrays(text, server)
        fused[near] += semantic_weight * credit  # 0.0 + x is x for a document BM25F missed
        hit[near] = True
        candidates = hit.copy()
        if first:
            candidates[list(first)] = False
        chosen = np.flatnonzero(candidates)
        values = fused[chosen]
        if len(chosen) > wanted:
            if wanted == 0:
                chosen, values = chosen[:0], values[:0]
            else:
                cut = np.partition(values, len(values) - wanted)[len(values) - wanted]
                keep = values >= cut
                chosen, values = chosen[keep], values[keep]
        order = np.lexsort((chosen, -values))[:wanted]
        return chosen[order].tolist(), set(np.flatnonzero(hit).tolist())

    def _respelt(self, text: str, terms: tuple[str, ...]) -> tuple[str, ...]:
        """For each query word the index has never seen (`unknown_words`), the term of a
        written word one edit from it (`respellings`) that the most tools hold (ties: the
        term that sorts first), when there is one: `caculate the bmi` also searches
        `calcul`. Not among `terms`, each once.

        Measured (`bench_search_ab.py`): LiveMCPBench per step 0.742 -> 0.751 (hybrid
        0.777 -> 0.782; its steps misspell `caculate`, `broswer`, `acctording`), BFCL and
        the held-out sets within 0.001. Words under 7 letters are left alone: from 5
        letters on the two-tool set lost 0.005 (`tall` meets `call`). Only written words'
        edits are stemmed: stemming every edit cost 1-2 ms a word."""
        found: dict[str, None] = {}
        for word in unknown_words(text, self._postings.__contains__):
            term = self._respelt_words.get(word, "")
            if term == "":
                term = self._respell(word)
                if len(self._respelt_words) >= MAX_RESPELT:
                    self._respelt_words.clear()
                self._respelt_words[word] = term
            if term is not None and term not in terms:
                found.setdefault(term, None)
        return tuple(found)

    def _respell(self, word: str) -> str | None:
        """The term of a written word one edit from `word` that the most tools hold (ties:
        the term that sorts first); None when no such word is written."""
        postings = self._postings
        near = [t for t in respellings(word, self._written_words()) if t in postings]
        return min(near, key=lambda t: (-len(postings[t][0]), t)) if near else None

    def _written_words(self) -> frozenset[str]:
        """The words written in this index's field texts that a respelling can be
        (`terms.spellable`): this catalog's words only, so a respelling is the same whatever
        else the process indexed (serve builds an index per scope and tool set; the process
        memo holds them all). Worked out when a query first has an unknown word, each
        distinct chunk cut once: some 30 ms at 1 MB of tool text, once per index."""
        written = self._written
        if written is None:
            texts = set(chain.from_iterable(self._texts))
            found = set(chain.from_iterable(map(chunks, texts)))
            written = self._written = spellable(chain.from_iterable(map(words, found)))
        return written

    def _idf_of(self, term: str, docs: list[int]) -> float:
        """The IDF of `term`, found in `docs` (its posting's documents)."""
        idf = self._idf.get(term)
        if idf is None:
            count = len(self._documents)
            idf = math.log(1.0 + (count - len(docs) + 0.5) / (len(docs) + 0.5))
            self._idf[term] = idf
        return idf

    def _server_mask(self, server: str) -> NDArray[np.bool_]:
        mask = self._masks.get(server)
        if mask is None:
            import numpy as np

            mask = self._masks[server] = np.fromiter(
                (each == server for each in self._servers), dtype=bool, count=len(self._servers)
            )
        return mask

    def _traits_of(self, doc: int) -> Traits:
        found = self._traits.get(doc)
        if found is None:
            document = self._documents[doc]
            found = self._traits[doc] = traits(document.server, document.own_name)
        return found

    def _named(self, text: str, server: str | None) -> list[int]:
        """The documents `text` names: by the full name, by the name without its prefix,
        by the full name's words, by the other's words (any case, any separators); in that
        order, and by name within each."""
        text = text.strip()
        found: list[tuple[int, int]] = []
        for key in (text, _WORDS + name_key(text)):  # a document found twice is listed once
            found.extend(self._exact.get(key, ()))
        servers = self._servers
        hits = sorted(hit for hit in found if server is None or servers[hit[1]] == server)
        return list(dict.fromkeys(doc for _, doc in hits))


MAX_RESPELT = 4_096
"""Unknown query words an index remembers the respelling of before it starts over."""

_WORDS = "\0"
"""Marks a name's words in the exact-name table, apart from literal names."""


def _best_first(item: tuple[int, float]) -> tuple[float, int]:
    return -item[1], item[0]


def _best(scores: dict[int, float], first: set[int], wanted: int) -> list[int]:
    """The `wanted` best documents of `scores` not in `first`: by score, then document.
    The `wanted`-th best score is found by a sort of the bare scores (in C) and only the
    documents scoring at least that much are ordered, the same list ordering all of them
    would give."""
    if not wanted:
        return []
    if first:
        items = [item for item in scores.items() if item[0] not in first]
    else:
        items = list(scores.items())
    if len(items) > wanted:
        cut = sorted([score for _, score in items], reverse=True)[wanted - 1]
        items = [item for item in items if item[1] >= cut]
    items.sort(key=_best_first)
    return [doc for doc, _ in items[:wanted]]


def _queries(query: object) -> list[str]:
    if not isinstance(query, Sequence):
        return []
    return [q for q in list(query[:MAX_QUERIES]) if isinstance(q, str)]


def _interleave(rankings: list[list[int]], k: int) -> list[int]:
    """Round robin over the rankings, each document once, at most `k`."""
    seen: dict[int, None] = {}
    for rank in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking):
                seen.setdefault(ranking[rank], None)
                if len(seen) >= k:
                    return list(seen)
    return list(seen)


def _gloss_terms(text: str, terms: tuple[str, ...]) -> tuple[str, ...]:
    """For a question in Chinese, the terms of its dictionary words and their English
    senses (`glosses.gloss`) not among `terms`, at most `MAX_QUERY_TERMS`: `读取文件` also
    searches `读取`, `文件`, `read` and `file`. At half a word's weight, as joins: on BFCL's 12
    live questions in Chinese R@5 0.583 (0.500 at full weight, 0.333 without them)."""
    if text.isascii():
        return ()
    words, senses = gloss(text[:MAX_QUERY_CHARS])
    if not words:
        return ()
    known = set(terms)
    return tuple(term for term in query_terms(f"{words}\n{senses}") if term not in known)


def _texts(doc: Document) -> tuple[str, ...]:
    """Each field's text, in the order of `FIELDS`; a title's and the descriptions' Chinese
    words followed by their English senses (`glosses`)."""
    server, own = split_name(doc.name)
    return (
        own,
        server,
        glossed(doc.title),
        glossed(doc.description),
        " ".join(p.name for p in doc.parameters),
        glossed(" ".join(p.description for p in doc.parameters)),
        " ".join(v for p in doc.parameters for v in p.values),
    )


JOIN_WEIGHT = 0.5
"""A query's joined neighbouring words (`terms.joins`) count at half a word's IDF: at full
weight BFCL's R@1 fell 0.01, at half it holds (0.667 against 0.665) and R@10 gains. So do
the respellings of its unknown words (`SearchIndex._respelt`) and a Chinese question's words
and senses (`_gloss_terms`)."""
SPLIT = True
"""Whether one question is also ranked clause by clause (`clauses`)."""

_JOINED = 2
"""The fields (the first ones: own name, server) whose neighbouring words are also indexed
joined (`terms.joins`)."""


def _postings(
    texts: list[tuple[str, ...]], weights: Weights, memo: _Memo
) -> dict[str, tuple[list[int], list[float]]]:
    """term -> (documents, the saturated BM25F frequency of the term in each) for every
    term of the documents' field `texts` (`_texts`), documents in order; two flat lists,
    not a list of pairs, so the build allocates no object per posting for the collector to
    track.

    The build's hot loop, kept plain: each field's text is cut into its terms once per
    process (`_Memo.learn`), and a term's frequency is its field's scale added once per
    occurrence, field by field, as the sum is defined. Measured slower: counting the terms
    first and adding each count's worth (a `Counter` per text costs more than the additions
    it saves), and adding straight into a table per term (document -> frequency) instead
    of one per document. A field's length is its length in characters, which normalizes as
    well as a word count and costs nothing."""
    count = max(len(texts), 1)
    fields = []
    for i in range(len(FIELDS)):
        if weights.field[i] > 0.0:
            average = max(sum(len(t[i]) for t in texts) / count, 1.0)
            fields.append((i, weights.field[i], 1.0 - weights.b[i], weights.b[i] / average))
    k1 = weights.k1
    terms_of = memo.texts
    joined = memo.joined
    postings: dict[str, tuple[list[int], list[float]]] = {}
    posting_of = postings.get
    for doc, text in enumerate(texts):
        frequency: dict[str, float] = {}
        get = frequency.get
        for i, weight, base, slope in fields:
            field = text[i]
            if not field:
                continue
            scale = weight / (base + slope * len(field))
            terms = terms_of[field]
            if i < _JOINED:  # a name's and a prefix's words also joined, once each
                terms += joined[field]
            for term in terms:  # one addition per occurrence, as the sum is defined
                frequency[term] = get(term, 0.0) + scale
        for term, tf in frequency.items():
            posting = posting_of(term)
            if posting is None:
                postings[term] = ([doc], [tf / (k1 + tf)])
            else:
                posting[0].append(doc)
                posting[1].append(tf / (k1 + tf))
    return postings


MAX_MEMO = 1 << 20
"""Terms (of texts, chunks and joins) a process remembers (some 50 MB at most) before it
starts over."""


class _Analyzed(dict[str, tuple[str, ...]]):
    """chunk -> its terms (`analyze`), analyzed when first looked up."""

    def __missing__(self, chunk: str) -> tuple[str, ...]:
        terms = self[chunk] = analyze(chunk)
        return terms


class _Memo:
    """What a process remembers of the texts it indexed: each field text's terms, each
    chunk's terms (`analyze`), each name's key (`name_key`) and its joins not among its
    terms. Entries are only ever added, never changed, so two builds in two threads may
    share one. Only pure functions of a text are kept here: what an index finds must not
    depend on which other catalogs the process indexed."""

    __slots__ = ("chunks", "joined", "keys", "size", "texts")

    def __init__(self) -> None:
        self.chunks = _Analyzed()
        self.texts: dict[str, tuple[str, ...]] = {}
        self.joined: dict[str, tuple[str, ...]] = {}
        self.keys: dict[str, str] = {}
        self.size = 0

    def learn(self, texts: list[tuple[str, ...]]) -> None:
        """Remember the terms of every field text of `texts` (`_texts`), and the words of
        every name and prefix, that are not remembered yet; each distinct chunk is analyzed
        once."""
        known = self.texts
        terms_of = self.chunks.__getitem__  # `_Analyzed.__missing__` analyzes a new one
        for text in dict.fromkeys(chain.from_iterable(texts)):
            if text not in known:
                terms = known[text] = tuple(chain.from_iterable(map(terms_of, chunks(text))))
                self.size += len(terms) + 1
        names = [t[i] for t in texts for i in range(_JOINED)]
        self._learn_names([name for name in dict.fromkeys(names) if name not in self.keys])

    def _learn_names(self, names: list[str]) -> None:
        """Each name's key and its joins not among its terms, the joins' stems made in one
        call of the stemmer."""
        written = [split_words(name) for name in names]
        joined = [pairs(each) for each in written]
        every = list(set().union(*joined))
        stems = dict(zip(every, stem_all(every), strict=True))
        for name, each, found in zip(names, written, joined, strict=True):
            self.keys[name] = name_key(name, each)
            own = set(self.texts[name])
            self.joined[name] = tuple(
                term for term in dict.fromkeys(stems[pair] for pair in found) if term not in own
            )
            self.size += len(found) + 2


_memos = [_Memo()]


def _memo() -> _Memo:
    """The process's `_Memo`, so a tool set built again (serve's upstreams list one by
    one; each scope sees its own tool set) analyzes only its new texts; past `MAX_MEMO` a
    new one replaces it (a build under way keeps the one it holds)."""
    if _memos[0].size > MAX_MEMO:
        _memos[0] = _Memo()
    return _memos[0]


def _exact_names(
    docs: tuple[Document, ...], texts: list[tuple[str, ...]], memo: _Memo
) -> dict[str, tuple[tuple[int, int], ...]]:
    """Each way of naming a tool -> (tier, document): the literal full name (tier 0), the
    literal own name (1), the full name's words (2), the own name's words (3)."""
    table: dict[str, list[tuple[int, int]]] = {}
    keys = memo.keys
    for doc, (document, text) in enumerate(zip(docs, texts, strict=True)):
        own, server = text[0], text[1]
        own_words = keys[own]
        full_words = " ".join(part for part in (keys[server], own_words) if part)
        for key, tier in (
            (document.name, 0),
            (own, 1),
            (_WORDS + full_words, 2),
            (_WORDS + own_words, 3),
        ):
            if key and key != _WORDS:
                table.setdefault(key, []).append((tier, doc))
    return {key: tuple(entries) for key, entries in table.items()}
