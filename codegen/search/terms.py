"""Text into index terms: words split at case changes, digits and separators, lower-cased,
stopwords dropped, stemmed (Porter2).

Tool names are identifiers (`getWeather`, `get-weather`, `github__get_file`,
`math.factorial`) and questions are prose, so one splitter serves both: a run of letters and
digits is cut where the case turns (`HTTPServer` -> `http server`), where letters meet digits
(`sha256` -> `sha 256`) and at everything else; a word so cut, and two neighbouring
words of a name or a question, are also kept joined (`AcmeDB`, `acme_db` and `acme db`
all meet `acmedb`). The stemmer is Snowball's English (Porter2: suffix rules, no
dictionary, no language model), so a term is a pure function of its word, the same on every
machine and under every hash seed. (Chinese text is cut into words before it comes here:
`glosses`.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable
from functools import lru_cache

import snowballstemmer  # type: ignore[import-untyped]

MAX_QUERY_TERMS = 64
"""Distinct terms a query is cut to (the first ones, in the order written)."""

MAX_QUERY_CHARS = 16_384
"""Characters of a query read at all: a 100 KB paste costs no more than this."""

MAX_KEY_CHARS = 256
"""A query longer than this is never compared with tool names' words (no real name is)."""

_CHUNKS = re.compile(r"[A-Za-z0-9\u0080-\U0010ffff]+")
"""ASCII letters and digits, and anything outside ASCII: cheaper to scan for than Unicode
word characters, and exact, because `analyze` cuts a chunk that is not plain ASCII again."""
_LETTERS = re.compile(r"[^\W_]+")
_ASCII_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_DIGITS = re.compile(r"[0-9]+|[^0-9]+")

STOPWORDS = frozenset(
    {
        *("a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with"),
        *("without", "into", "onto", "about", "as", "and", "or", "nor", "but", "is", "are"),
        *("was", "were", "be", "been", "being", "am", "do", "does", "did", "done", "has"),
        *("have", "had", "having", "it", "its", "this", "that", "these", "those", "there"),
        *("here", "then", "than", "so", "such", "very", "just", "also", "too", "can"),
        *("could", "would", "should", "will", "shall", "may", "might", "must", "i", "me"),
        *("my", "we", "us", "our", "you", "your", "he", "she", "they", "them", "their"),
        *("his", "her", "what", "which", "who", "whom", "whose", "when", "where", "why"),
        *("how", "all", "any", "each", "some", "please", "s", "t"),
    }
)
"""Words that say nothing about which tool is meant. Deliberately small: verbs such as
`get`, `list`, `find` stay (their weight is left to the index's IDF)."""


_ENGLISH = snowballstemmer.stemmer("english")


_SPACES = bytes(byte if chr(byte).isalnum() else 32 for byte in range(128)) + bytes(range(128, 256))
"""ASCII text's bytes with every byte `_CHUNKS` does not match made a space."""


def chunks(text: str) -> list[str]:
    """The pieces of `text` that hold words, each to be cut by `analyze`: what `_CHUNKS`
    finds, cut faster from ASCII text (most of it) by a byte table and a split."""
    if text.isascii():
        return text.encode("ascii").translate(_SPACES).decode("ascii").split()
    return _CHUNKS.findall(text)


def words(chunk: str) -> list[str]:
    """The lower-cased words of one chunk, before stopwords and stemming:
    `getHTTPServer2` -> `get http server 2`."""
    if chunk.isascii():
        if chunk.isalpha() and (chunk.islower() or chunk[1:].islower()):
            return [chunk.lower()]
        if chunk.islower() or chunk.isdigit():
            return _DIGITS.findall(chunk)
        return [part.lower() for part in _ASCII_PARTS.findall(chunk)]
    found = []
    for run in _LETTERS.findall(chunk):
        if run.isascii():
            found.extend(words(run))
        else:
            found.extend(part.lower() for part in _DIGITS.findall(run))
    return found


def analyze(chunk: str) -> tuple[str, ...]:
    """The terms of one chunk: its words without stopwords, stemmed, and, when the chunk
    is several words, the words joined (`getWeatherData` -> `get weather data
    getweatherdata`), so `AcmeDB` finds the `acmedb` a server prefix spells as one word."""
    if chunk.isascii() and chunk.isalpha() and (chunk.islower() or chunk[1:].islower()):
        word = chunk.lower()  # one plain word, as most are: the short way
        return () if word in STOPWORDS else (stem(word),)
    parts = words(chunk)
    terms = [stem(word) for word in parts if word not in STOPWORDS]
    if len(parts) > 1:
        joined = stem("".join(parts))
        if joined not in terms:
            terms.append(joined)
    return tuple(terms)


def joins(text: str) -> list[str]:
    """Each two neighbouring words of `text` joined and stemmed, across separators and
    case changes (`acme_db list` -> `acmedb dblist`); stopwords and numbers are never
    joined. A name's joins are indexed and a query's looked up, so `acme db`, `AcmeDB` and
    `acmedb` meet whichever way the tool and the question spell the brand."""
    return list(dict.fromkeys(map(stem, pairs(split_words(text)))))


def pairs(written: list[str]) -> list[str]:
    """Each two neighbouring words of `written` joined, unstemmed, each once, in order; a
    stopword or a number joins neither neighbour (`joins` before stemming)."""
    found: dict[str, None] = {}
    previous = ""
    for word in written:
        if word in STOPWORDS or not word.isalpha():
            previous = ""
            continue
        if previous:
            found.setdefault(previous + word, None)
        previous = word
    return list(found)


def split_words(text: str) -> list[str]:
    """The lower-cased words of `text`, in order."""
    return [word for chunk in _CHUNKS.findall(text) for word in words(chunk)]


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The word's Porter2 (Snowball English) stem; the same on tool text and on queries.
    Chosen over a hand-written suffix stripper by an A/B on BFCL, LiveMCPBench and the
    held-out sets (`bench/bench_search_ab.py`, bench/README.md): as good or better on every
    row. Memoized: a catalog repeats its words."""
    return str(_ENGLISH.stemWord(word))


def stem_all(words: list[str]) -> list[str]:
    """`stem` of each of `words`, in one call of the stemmer."""
    return [str(term) for term in _ENGLISH.stemWords(words)]


def query_terms(query: str) -> tuple[str, ...]:
    """The distinct terms a query searches for, in the order written: at most
    `MAX_QUERY_TERMS`, read from the first `MAX_QUERY_CHARS` characters."""
    seen: dict[str, None] = {}
    for match in _CHUNKS.finditer(query, 0, MAX_QUERY_CHARS):
        for term in analyze(match.group()):
            seen.setdefault(term, None)
            if len(seen) >= MAX_QUERY_TERMS:
                return tuple(seen)
    return tuple(seen)


def query_joins(query: str, terms: tuple[str, ...]) -> tuple[str, ...]:
    """The query's neighbouring words joined (`joins`), those not already among `terms`
    (they meet the joins of names and of CamelCase words anywhere). At most
    `MAX_QUERY_TERMS`."""
    known = set(terms)
    return tuple(j for j in joins(query[:MAX_QUERY_CHARS]) if j not in known)[:MAX_QUERY_TERMS]


MIN_MISSPELT = 7
"""Letters a query word needs before a misspelling of it is looked for: shorter unknown
words are mostly names and numbers' units, and one letter off they meet too many words."""

MAX_MISSPELT = 4
"""Unknown words of one query whose spellings are looked for (the first ones)."""

MAX_RESPELT_LETTERS = 32
"""Letters of the longest word whose spellings are looked for: a word has some 55 edits per
letter, and no word a tool is described with is longer (a run of 4,000 letters would make
200,000 edits of 4 KB each)."""

_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def unknown_words(query: str, known: Callable[[str], bool]) -> list[str]:
    """The query's words that might be misspelt: ASCII letters only, from `MIN_MISSPELT` to
    `MAX_RESPELT_LETTERS` of them, not a stopword, whose stem `known` rejects; each once, the
    first `MAX_MISSPELT`, read from the first `MAX_QUERY_CHARS` characters."""
    found: dict[str, None] = {}
    for word in split_words(query[:MAX_QUERY_CHARS]):
        if (
            MIN_MISSPELT <= len(word) <= MAX_RESPELT_LETTERS
            and word.isascii()
            and word.isalpha()
            and word not in STOPWORDS
            and word not in found
            and not known(stem(word))
        ):
            found[word] = None
            if len(found) >= MAX_MISSPELT:
                break
    return list(found)


def spellable(written: Iterable[str]) -> frozenset[str]:
    """The words of `written` that are one edit from a word `unknown_words` may pick: ASCII
    letters only, from `MIN_MISSPELT` - 1 to `MAX_RESPELT_LETTERS` + 1 of them."""
    low, high = MIN_MISSPELT - 1, MAX_RESPELT_LETTERS + 1
    return frozenset(
        word for word in written if low <= len(word) <= high and word.isascii() and word.isalpha()
    )


def respellings(word: str, written: Container[str]) -> list[str]:
    """The stems of the `written` words one edit from `word` (a letter dropped, swapped
    with the next, changed or added: Damerau-Levenshtein distance 1), each once, in a fixed
    order: `caculate` -> `calcul` when `calculate` is written. Some 55 edits per letter are
    looked up, and only the written ones stemmed."""
    cuts = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    edits: dict[str, None] = {}
    for head, tail in cuts:
        if tail:
            edits[head + tail[1:]] = None
            if len(tail) > 1:
                edits[head + tail[1] + tail[0] + tail[2:]] = None
            for letter in _ALPHABET:
                edits[head + letter + tail[1:]] = None
        for letter in _ALPHABET:
            edits[head + letter + tail] = None
    edits.pop(word, None)
    return list(dict.fromkeys(stem_all([edit for edit in edits if edit in written])))


def name_key(text: str, written: list[str] | None = None) -> str:
    """How a name is compared, whatever its spelling: its words, lower-cased, joined by one
    space (`getWeather`, `get-weather`, `GET WEATHER` -> `get weather`). No stemming, no
    stopwords: this compares names, not meanings. "" for text longer than `MAX_KEY_CHARS`.
    `written` is `split_words(text)` when the caller has it already."""
    if len(text) > MAX_KEY_CHARS:
        return ""
    return " ".join(split_words(text) if written is None else written)
