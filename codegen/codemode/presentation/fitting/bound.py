"""An upper bound of a text's `o200k_base` tokens, in C-speed byte counting (~40 ms a
megabyte), and additive: the cutter prices each value apart and adds the prices up.

It is never under the real count on JSON, English, code, logs, CJK, emoji, base64, hex and
digits (tested against the real tokenizer), and about twice it on English and JSON, so the
cutter plans with it and `fit` calibrates the plan on the exact count (`o200k`).
"""

from __future__ import annotations

from functools import lru_cache

MAX_COST_PER_CHAR = 4
"""`upper_bound` never gives more than 4 per character (a 4-byte character costs 4)."""
CHARS_PER_TOKEN = 64
"""...nor less than 1 per 64 characters (a run of spaces is the cheapest text)."""


def _class_table() -> bytes:
    """One class letter per UTF-8 byte: ASCII by kind (consonants and vowels apart, which is
    how random strings are told from words), a leading byte by the length of its character;
    continuation bytes are deleted, so each character leaves one letter."""
    table = bytearray(256)
    for byte in range(256):
        char = chr(byte)
        if byte >= 0xF0:
            kind = "4"
        elif byte >= 0xE0:
            kind = "3"
        elif byte >= 0xC0:
            kind = "m" if byte in (0xCC, 0xCD) or byte >= 0xDC else "2"  # marks, rare scripts
        elif byte >= 0x80:
            kind = "-"
        elif char in "aeiouy":
            kind = "e"
        elif "a" <= char <= "z":
            kind = "a"
        elif char in "AEIOUY":
            kind = "E"
        elif "A" <= char <= "Z":
            kind = "A"
        elif "0" <= char <= "9":
            kind = "0"
        elif char in "\n\r":
            kind = "n"
        elif char in " \t\v\f":
            kind = "s"
        else:
            kind = "."
        table[byte] = ord(kind)
    return bytes(table)


def _projection(**groups: str) -> bytes:
    """A translation of class letters: each group's classes to its name, the rest to `x`."""
    table = bytearray(b"x" * 256)
    for name, kinds in groups.items():
        for kind in kinds:
            table[ord(kind)] = ord(name)
    return bytes(table)


_CLASSES = _class_table()
_CONTINUATION = bytes(range(0x80, 0xC0))
_CASE = _projection(l="ae", U="AE", d="0")
_CONSONANTS = _projection(c="aA", v="eE")
_DIGITS = _projection(y="0")
_PUNCTUATION = _projection(y=".")
_NEWLINES = _projection(y="n")
_SPACES = _projection(s="s", w="aeAE.", n="n")


_RULES = tuple(char.encode() * 8 for char in "-=_*#~.+/%")
"""Rules and banners (`--------`, `========`): tokenizers take such runs whole."""


def _runs(classes: bytes, projection: bytes) -> int:
    marks = classes.translate(projection)
    return marks.count(b"xy") + marks.startswith(b"y")


def cost(text: str) -> float:
    """At least the `o200k_base` count of `text`, as a float (pieces are added up, and
    rounded once by the caller).

    It counts the pieces a BPE pre-tokenizer makes, in C (`bytes.translate` and `count`,
    ~40 ms a megabyte), from classes of characters:

    - a word piece (letters after a non-letter, or a capital after a small letter) is 1,
      plus 1/5 a small letter, 1/2 a capital, 3/4 a capital followed by a small letter,
      5/4 three consonants in a row and 5 twelve letters of one case in a row (random
      strings split into many tokens; words seldom do), and 1/2 a letter after a digit;
    - digits are 1 per 3 in a run (tokenizers split them so), punctuation 3/4 a character
      plus 1/2 a run, but 3/2 for eight of `-=_*#~.+/%` in a row (rules, banners);
    - a space before a word or punctuation is free (it joins it); any other run of
      whitespace is 1, plus 1 for a newline run, plus 1 for two spaces before a digit, plus
      1/64 a space and 1/8 a newline;
    - a character beyond ASCII is 1 (2 bytes: Latin, Greek, Cyrillic, Hebrew, Arabic),
      5/2 (combining marks and rarer 2-byte scripts), 2 (3 bytes: CJK, Indic, symbols) or
      4 (4 bytes: emoji, rare CJK), at most its UTF-8 length.

    So a text of n characters is never more than 4n nor less than n/64.
    """
    if not text:
        return 0.0
    raw = text.encode("utf-8", "surrogatepass")
    c = raw.translate(_CLASSES, _CONTINUATION)
    case = c.translate(_CASE)
    after_digit = case.count(b"dl") + case.count(b"dU")
    pieces = (
        case.count(b"xl")
        + case.count(b"xU")
        + after_digit
        + case.count(b"lU")
        + (case[:1] in (b"l", b"U"))
    )
    spaces = c.translate(_SPACES)
    space_runs = (
        spaces.count(b"xs") + spaces.count(b"ws") + spaces.count(b"ns") + spaces.startswith(b"s")
    )
    joined = spaces.count(b"wsw") + spaces.count(b"xsw")
    return (
        pieces
        + case.count(b"l") / 5
        + case.count(b"U") / 2
        + case.count(b"Ul") * 0.75
        + (case.count(b"l" * 12) + case.count(b"U" * 12)) * 5
        + c.translate(_CONSONANTS).count(b"ccc") * 1.25
        + after_digit / 2
        + (c.count(b"0") + 2 * _runs(c, _DIGITS)) / 3
        + _runs(c, _PUNCTUATION) / 2
        + c.count(b".") * 0.75
        - sum(map(raw.count, _RULES)) * 4.5
        + space_runs
        - joined
        + c.count(b"ss0")
        + _runs(c, _NEWLINES)
        + c.count(b"s") / 64
        + c.count(b"n") / 8
        + c.count(b"2")
        + c.count(b"m") * 2.5
        + c.count(b"3") * 2
        + c.count(b"4") * 4
    )


@lru_cache(maxsize=4096)
def piece_cost(text: str) -> float:
    """`cost` of the text around values (brackets, indentation, keys): few, and repeated."""
    return cost(text)
