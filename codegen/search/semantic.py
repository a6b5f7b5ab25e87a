"""An optional semantic ranker beside BM25F: a small embedding model's nearest tools, fused
with BM25F's scores, so a question finds a tool it shares no word with ("temperature" for
`get_weather`).

The model is `wordllama` (`pip install 'tool-codegen[search]'`), whose wheel ships its weights:
a static embedding of the 32,000 tokens of the LLaMA-2 tokenizer in 256 dimensions (16 MB
of float16), trained to pool; a text's vector is the sum of its tokens' vectors. It needs no
network (the files are read from the installed package, downloads disabled), no GPU and no
process of its own. It is loaded on first use, once per process, and kept: a read-only
table of 16 MB plus the tokenizer. The process grows by about 75 MB (numpy 12, the
package's imports 30, the model 32; 105 MB at the peak of the load) in about 0.3 s;
`bench/bench_search.py` measures it.

What is embedded per tool (`text`): its own name's words, title, the first
`MAX_DESCRIPTION` characters of its description and its parameters' names. Adding the
server's words or the parameters' descriptions, or weighting tokens by their rarity in the
catalog, measured no better on BFCL and LiveMCPBench.

The fusion (`SemanticIndex.fuse`): each BM25F score divided by the query's best one, plus
`WEIGHT` times a semantic credit that only the `DEPTH` nearest tools get: their cosine
similarity rescaled so the nearest scores 1 and the next tool after them 0. Measured
against reciprocal rank fusion (constants 2 to 60, semantic weights 0.3 to 1, over the
whole catalog or only among BM25F's matches), it gains 0.02 more R@1 on BFCL and 0.01 to
0.02 more on LiveMCPBench, R@5 and R@10 on BFCL within 0.005; crediting only BM25F's
matches measured the same or slightly worse.

Deterministic to the bit, on any machine: the float16 weights are exact multiples of 2^-24,
so a text's vector is summed in integers; it is scaled to unit length once (`math.fsum`,
correctly rounded) and rounded to integers of at most `SCALE`. Every partial sum of a dot
product of two such vectors is an integer below 2^37, exact in a float64 whatever order or
kernel the BLAS library sums in, so a similarity is an exact integer (and the credit a
fraction of integers). Ties among the nearest all get the same credit; ties in the fused
scores go to the name that sorts first, as in BM25F.

Memory per index: 2 KB per tool (256 float64 integers: 6 MB for 3,000 tools). The similarity
is one matrix-vector product, taken by `numpy.einsum` (0.25 ms for 3,000 tools), not BLAS:
OpenBLAS spreads so small a product over its threads, whose wake-up made one product take
8 to 12 ms between Python work, and its spinning threads then slow the rest of the query.

Speed of the build: the LLaMA tokenizer has no pre-tokenizer, so `encode` runs BPE over a
whole text as one word (0.3 ms per 500 characters). No token of its vocabulary holds `▁` (its
space) after another character, so no merge crosses the start of a `▁`-led piece: the text is
normalized as the tokenizer does, cut there, and each piece tokenized once per process
(`_pieces`), the very same ids four times faster (`Model.ids`; checked at load, else `encode`).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import math
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .documents import Document
from .glosses import gloss
from .terms import split_words

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

PACKAGE = "wordllama"
"""The model's package (`tool-codegen[search]` pins its version)."""

DEPTH = 20
"""Nearest tools a query credits: the 21st nearest is the zero of the scale."""
WEIGHT = 0.5
"""The semantic credit's weight beside BM25F's score (the best match scoring 1). Chosen on
BFCL and LiveMCPBench: weights 0.35 to 0.75 and depths 20 to 100 move BFCL's recall by at
most 0.01 and LiveMCPBench's by at most 0.03."""

MAX_DESCRIPTION = 500
"""Characters of a tool's description embedded (the first ones)."""
MAX_TEXT = 2_000
"""Characters of a tool's text embedded in all."""
MAX_QUERY_CHARS = 4_096
"""Characters of a query embedded (the first ones): tokenizing 4,096 characters costs 1 ms
(English) to 4 ms (emoji), and a question's first 4,000 characters say what it is about."""

SCALE = 1 << 14
"""A unit vector's components become integers of at most this size: fine enough to leave
every ranking as the float vectors give it, small enough that a dot product over 256
dimensions (at most 2^36) stays exact in a float64."""

_FIXED = float(1 << 24)
"""float16 values are multiples of 2^-24: times this, exact integers. The model's are below 2^4
in magnitude, so a sum of 2^16 of them in float64 is exact in any order."""

SPACE = "\u2581"
"""The tokenizer's space (`▁`)."""
_PIECES = re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")
"""A normalized text's pieces: a run of spaces and the word after it."""
MAX_PIECES = 200_000
"""Pieces remembered per process (about 30 MB) before the memo starts over."""

_lock = threading.Lock()
_loaded: dict[str, Model | None] = {}
"""The process's model once loaded (None when it could not be), under `_lock`."""


def available() -> bool:
    """Whether the model's package is installed (nothing is imported)."""
    return importlib.util.find_spec(PACKAGE) is not None


def model() -> Model | None:
    """The model, loaded on the first call of the process and kept; None when `wordllama`
    is not installed or its files cannot be read (then never tried again)."""
    with _lock:
        if PACKAGE not in _loaded:
            _loaded[PACKAGE] = _load() if available() else None
        return _loaded[PACKAGE]


def _load() -> Model | None:
    """The bundled model, read from the installed package with downloads disabled.

    `wordllama` configures the root logger when imported (`logging.basicConfig`); a
    library must not, so the root logger's handlers and level are put back."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        package = importlib.import_module(PACKAGE)
        # The weights sit in the package's `weights/`, the tokenizer in its `tokenizers/`,
        # which `load` only finds as a cache directory: the package's own folder is one.
        inference = package.WordLlama.load(
            cache_dir=Path(str(package.__file__)).parent, disable_download=True
        )
        import numpy as np

        vectors = np.asarray(inference.embedding).astype(np.float16)
        vectors.flags.writeable = False
        return Model(inference.tokenizer, vectors)
    except Exception:  # a broken install leaves BM25F alone; `model()` says None
        return None
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


class Model:
    """The tokenizer and the token vectors: read-only, shared by every index."""

    __slots__ = ("_by_pieces", "_pieces", "_special", "_tokenizer", "_vectors")

    def __init__(self, tokenizer: Any, vectors: NDArray[np.float16]) -> None:
        self._tokenizer = tokenizer
        self._vectors = vectors
        self._special = _added_tokens(tokenizer)
        self._by_pieces = self._special is not None and _pieces_are_words(tokenizer)
        self._pieces: dict[str, list[int]] = {}

    @property
    def dimensions(self) -> int:
        return int(self._vectors.shape[1])

    def ids(self, text: str) -> list[int]:
        """The token ids of `text`, exactly as `encode` gives them (see the module)."""
        if not self._by_pieces or (self._special and self._special.search(text)):
            # `encode` finds an added token (`</s>`) in the raw text first
            return list(self._tokenizer.encode(text, add_special_tokens=False).ids)
        if not text:
            return []  # the tokenizer prepends no space to an empty text
        memo = self._pieces
        if len(memo) > MAX_PIECES:
            memo.clear()
        tokenize = self._tokenizer.model.tokenize
        found: list[int] = []
        for piece in _PIECES.findall(SPACE + text.replace(" ", SPACE)):
            known = memo.get(piece)
            if known is None:
                known = memo[piece] = [token.id for token in tokenize(piece)]
            found.extend(known)
        return found

    def embed(self, text: str) -> NDArray[np.float64]:
        """The unit vector of `text` (its first `MAX_QUERY_CHARS` characters) times `SCALE`,
        rounded to integers (held in float64s); zeros when it has no token."""
        import numpy as np

        ids = self.ids(text[:MAX_QUERY_CHARS])
        if not ids:
            return np.zeros(self.dimensions)
        rows = np.clip(np.asarray(ids, dtype=np.int64), 0, self._vectors.shape[0] - 1)
        # Exact in any order (`_FIXED`): the integers the float16 weights are in 2^-24 units.
        exact = self._vectors[rows].sum(axis=0, dtype=np.float64) * _FIXED
        norm = math.sqrt(math.fsum((exact * exact).tolist()))  # each square rounded as x * x
        if norm == 0.0:
            return np.zeros(self.dimensions)
        vector: NDArray[np.float64] = np.rint(exact * (SCALE / norm))
        return vector

    def embed_all(self, texts: Sequence[str]) -> NDArray[np.float64]:
        """One row per text. (A batched gather and segmented sum measured slower: numpy
        converts float16 to float64 at 13 ns a value, in cache or not.)"""
        import numpy as np

        matrix = np.zeros((len(texts), self.dimensions))
        for row, text in enumerate(texts):
            matrix[row] = self.embed(text)
        return matrix


def _added_tokens(tokenizer: Any) -> re.Pattern[str] | None:
    """What finds the tokenizer's added tokens (`<s>`, `</s>`, `<unk>`) in a text; None when
    they cannot be read."""
    try:
        contents = [token["content"] for token in json.loads(tokenizer.to_str())["added_tokens"]]
        return re.compile("|".join(re.escape(text) for text in contents if text) or "(?!)")
    except Exception:
        return None


def _pieces_are_words(tokenizer: Any) -> bool:
    """Whether `Model.ids` may tokenize piece by piece: the tokenizer normalizes by
    prepending `▁` and writing spaces as `▁` and nothing else, has no pre-tokenizer, and no
    token holds `▁` after another character."""
    try:
        config = json.loads(tokenizer.to_str())
        steps = (config.get("normalizer") or {}).get("normalizers")
        expected = [
            {"type": "Prepend", "prepend": SPACE},
            {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
        ]
        if config.get("pre_tokenizer") is not None or steps != expected:
            return False
        if config.get("model", {}).get("type") != "BPE":
            return False
        inner = re.compile(f"[^{SPACE}]{SPACE}")
        return not any(inner.search(token) for token in tokenizer.get_vocab())
    except Exception:  # anything unexpected: the tokenizer's own `encode`
        return False


def text(doc: Document) -> str:
    """What is embedded of a tool: its own name's words, title, the start of its
    description and its parameters' names; then, for a title or description written in
    Chinese, its words' English senses (`glosses`: the model knows English), last, so that
    they never push the parameters' names out of `MAX_TEXT`."""
    description = doc.description[:MAX_DESCRIPTION]
    parts = (
        " ".join(split_words(doc.own_name)),
        doc.title,
        description,
        " ".join(" ".join(split_words(p.name)) for p in doc.parameters),
        gloss(doc.title).senses,
        gloss(description).senses,
    )
    return ". ".join(part for part in parts if part)[:MAX_TEXT]


def query_text(query: str) -> str:
    """What is embedded of a query: its words, lower-cased and split, as a tool's name is
    (`text`), so "Get the CurrentWeather" meets `get_current_weather` token for token.
    Against the raw question (bench/README.md): BFCL R@1 +0.007 (R@5 within 0.001),
    LiveMCPBench per step +0.007, two-tool questions +0.025. A question written in Chinese
    is followed by its words' English senses (`glosses`), as a tool's text is."""
    query = query[:MAX_QUERY_CHARS]
    return " ".join(split_words(f"{query}\n{gloss(query).senses}"))


class SemanticIndex:
    """The vectors of an index's documents (in its order), and the fusion."""

    __slots__ = ("_model", "_rows", "_vectors")

    def __init__(
        self, model: Model, vectors: NDArray[np.float64], rows: dict[str, NDArray[np.int64]]
    ) -> None:
        self._model = model
        self._vectors = vectors
        self._rows = rows

    @classmethod
    def build(cls, documents: Sequence[Document], model: Model) -> SemanticIndex:
        import numpy as np

        vectors = model.embed_all([text(doc) for doc in documents])
        vectors.flags.writeable = False
        servers: dict[str, list[int]] = {}
        for row, doc in enumerate(documents):
            servers.setdefault(doc.server, []).append(row)
        rows = {server: np.asarray(found, dtype=np.int64) for server, found in servers.items()}
        return cls(model, vectors, rows)

    def credits(self, query: str, server: str | None = None) -> dict[int, float]:
        """The `DEPTH` nearest documents to `query` (among `server`'s when given), each with
        its credit in (0, 1]: 1 for the nearest, down towards 0 for the next after them."""
        near, credit = self.credit_arrays(query, server)
        return dict(zip(near.tolist(), credit.tolist(), strict=True))

    def credit_arrays(
        self, query: str, server: str | None = None
    ) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """`credits` as two arrays: the documents, and their credits (the same floats: an
        integer difference over an integer span, each below 2^53, divided once)."""
        import numpy as np

        none = (np.zeros(0, dtype=np.intp), np.zeros(0))
        if server is None:
            rows = None
            vectors = self._vectors
        else:
            rows = self._rows.get(server)
            if rows is None:
                return none
            vectors = self._vectors[rows]
        if len(vectors) < 2:
            return none
        vector = self._model.embed(query_text(query))
        if not vector.any():
            return none
        # exact (see the module's docstring), and without BLAS's threads
        similarity = np.einsum("ij,j->i", vectors, vector).astype(np.int64)
        cut = max(len(similarity) - 1 - DEPTH, 0)
        zero = int(np.partition(similarity, cut)[cut])
        span = int(similarity.max()) - zero
        if span <= 0:
            return none
        near = np.flatnonzero(similarity > zero)
        found = near if rows is None else rows[near]
        return found.astype(np.intp), (similarity[near] - zero) / span

    def fuse(self, query: str, scores: dict[int, float], server: str | None) -> dict[int, float]:
        """BM25F's `scores` (already limited to `server`) divided by the best one, plus
        `WEIGHT` times each document's semantic credit."""
        best = max(scores.values(), default=0.0)
        fused = {doc: score / best for doc, score in scores.items()} if best > 0.0 else {}
        get = fused.get
        for doc, credit in self.credits(query, server).items():
            fused[doc] = get(doc, 0.0) + WEIGHT * credit
        return fused
