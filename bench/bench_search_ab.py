"""Benchmark: the search's home-made parts against the libraries they stand in for, and
issue 39's held-out checks (`search_heldout.py`), on the same data as `bench_search.py`.

    pip install bm25s PyStemmer      # benchmark only; neither is a dependency
    python bench/bench_search_ab.py [--hybrid]

Columns, each over the same catalogs and questions:
- ours: `SearchIndex` as shipped (BM25F; with `--hybrid`, fused with the semantic model).
- ours, Snowball: the same index with `terms.stem` (and `stem_all`) replaced by PyStemmer's
  English (Porter2) stemmer, on the index, the queries and the sibling keys alike.
- ours, no stemmer: `terms.stem` the identity.
- plain BM25: `bench_search.PlainBM25`.
- bm25s: the `bm25s` library (Lucene BM25, k1 1.5, b 0.75) over the same bag of words as
  plain BM25, split at case changes (`terms.split_words`), English stopwords, PyStemmer.

Rows: BFCL (non-live questions R@1 / R@5 / R@10 against the 1,853 pooled functions; live
R@5), LiveMCPBench (per step: the union of each step's top 5, R@5 by own name; combined:
the task's steps as one list query), and the held-out checks: brands (R@1, prefix joined /
split), siblings (the asked-for sibling above the others; R@1), two tools (both in the top 5).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_search as B
import search_heldout as H

from codegen.search import Document, SearchIndex, document, siblings, terms
from codegen.search import index as search_index
from codegen.search.index import _interleave

HYBRID = "--hybrid" in sys.argv[1:]


class Bm25s:
    """The `bm25s` library over plain BM25's bag of words."""

    def __init__(self, documents: Sequence[Document]) -> None:
        import bm25s
        import Stemmer

        self.stemmer = Stemmer.Stemmer("english")
        docs = {doc.name: doc for doc in documents}
        self.names = sorted(docs)
        texts = []
        for name in self.names:
            doc = docs[name]
            parts = [doc.name, doc.description]
            parts += [f"{p.name} {p.description}" for p in doc.parameters]
            texts.append(" ".join(terms.split_words(" ".join(parts))))
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)
        self.model = bm25s.BM25()
        self.model.index(tokens, show_progress=False)
        self.stop = set(bm25s.stopwords.STOPWORDS_EN)

    def rank(self, query: B.Query, k: int) -> list[str]:
        rankings = []
        for text in [query] if isinstance(query, str) else query:
            words = [w for w in terms.split_words(text) if w not in self.stop]
            found = [t for t in self.stemmer.stemWords(words) if t in self.model.vocab_dict]
            if not found:
                rankings.append([])
                continue
            scores = self.model.get_scores(found)
            best = sorted((-s, i) for i, s in enumerate(scores.tolist()) if s > 0)[:k]
            rankings.append([i for _, i in best])
        return [self.names[i] for i in _interleave(rankings, k)]


@contextmanager
def stemmer(kind: str):
    """`terms.stem` (and the sibling keys' copy) replaced for the block."""
    original, original_all = terms.stem, terms.stem_all
    if kind == "snowball":
        import Stemmer

        english = Stemmer.Stemmer("english")
        replacement: Callable[[str], str] = english.stemWord
    elif kind == "none":
        replacement = str
    else:
        replacement = original
    terms.stem, siblings.stem = replacement, replacement
    # the names' joins and a query's respellings are stemmed together (`stem_all`)
    search_index.stem_all = terms.stem_all = lambda words: [replacement(w) for w in words]
    search_index._memos[0] = search_index._Memo()  # the memo holds terms stemmed before
    try:
        yield
    finally:
        terms.stem, siblings.stem = original, original
        search_index.stem_all = terms.stem_all = original_all
        search_index._memos[0] = search_index._Memo()


Maker = Callable[[list[Document]], B.Rank]


def ours(kind: str) -> Maker:
    def make(docs: list[Document]) -> B.Rank:
        with stemmer(kind):
            index = SearchIndex.build(docs, semantic="auto" if HYBRID else None)

        def rank(query: B.Query, k: int) -> Sequence[str]:
            with stemmer(kind):
                return index.search(query, k).names

        return rank

    return make


COLUMNS: list[tuple[str, Maker]] = [
    ("ours", ours("ours")),
    ("ours, Snowball", ours("snowball")),
    ("ours, no stemmer", ours("none")),
    ("plain BM25", lambda docs: B.PlainBM25(docs).rank),
    ("bm25s + PyStemmer", lambda docs: Bm25s(docs).rank),
]


def main() -> None:
    functions, questions = B.bfcl_functions(), B.bfcl_questions()
    pool = [document(d) for d in functions]
    tools, tasks = B.livemcpbench()
    lmb = [document(d) for d in tools]
    known = {B.own(d["name"]) for d in tools}
    present = [
        B.Case(c.category, c.query, tuple(t for t in c.truth if t in known))
        for c in tasks
        if any(t in known for t in c.truth)
    ]
    rest = [c for c in questions if not c.category.startswith("live_")]
    live = [c for c in questions if c.category.startswith("live_")]
    brands = [H.brand_cases(False), H.brand_cases(True)]
    sibling_defs, sibling_cases = H.sibling_cases()
    pairs = H.two_tool_cases(questions)
    rows: dict[str, list[str]] = {}
    for label, make in COLUMNS:
        cells = []
        rank = make(pool)
        cells.append(B.numbers([B.recall(rank, rest, k) for k in (1, 5, 10)]))
        cells.append(f"{B.recall(rank, live, 5):.3f}")
        both = sum(all(t in rank(q, 5) for t in truth) for q, truth in pairs) / len(pairs)
        rank_lmb = make(lmb)
        cells.append(f"{B.recall(B.per_step(rank_lmb), present, 5, True):.3f}")
        cells.append(f"{B.recall(rank_lmb, tasks, 5, True):.3f}")
        firsts = []
        for definitions, cases in brands:
            rank_b = make([document(d) for d in definitions] + pool)
            firsts.append(sum(tuple(rank_b(q, 1)) == (n,) for q, n in cases) / len(cases))
        cells.append(B.numbers(firsts))
        rank_s = make([document(d) for d in sibling_defs] + pool)
        cells.append(
            f"{H.above(rank_s, sibling_cases):.3f} / "
            f"{sum(tuple(rank_s(q, 1)) == (n,) for q, n in sibling_cases) / len(sibling_cases):.3f}"
        )
        cells.append(f"{both:.3f}")
        rows[label] = cells
        print(label, cells, file=sys.stderr)
    measures = [
        f"BFCL non-live ({len(rest)}) R@1 / R@5 / R@10",
        f"BFCL live ({len(live)}) R@5",
        f"LiveMCPBench per step ({len(present)} tasks) R@5",
        f"LiveMCPBench combined ({len(tasks)} tasks) R@5",
        f"held-out brands ({len(brands[0][1])} queries) R@1, prefix joined / split",
        f"held-out siblings ({len(sibling_cases)}) above its siblings / R@1",
        f"held-out two tools ({len(pairs)}) both in top 5",
    ]
    print("| measure | " + " | ".join(label for label, _ in COLUMNS) + " |")
    print("| --- |" + " ---: |" * len(COLUMNS))
    for n, measure in enumerate(measures):
        print(f"| {measure} | " + " | ".join(rows[label][n] for label, _ in COLUMNS) + " |")


if __name__ == "__main__":
    main()
