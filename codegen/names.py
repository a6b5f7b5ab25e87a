"""Names: one decision per type, shared by every target.

Type names are `CamelCase(tool) + "Args"` / `"Output"`, nested objects `Parent + CamelCase(key)`,
`$defs` entries `CamelCase(tool) + CamelCase(def)`. Every name is NFKC-normalized, is an
identifier in Python and TypeScript, never equals a keyword, a builtin, a name the SDKs
declare themselves, or a TypeScript global type (a declaration must never merge with
`Array` or `Request`). A name taken twice gets the first free suffix `2`, `3`, ... in the
order names are claimed, which the builder keeps deterministic.
"""

from __future__ import annotations

import builtins
import keyword
import re
import unicodedata
from collections.abc import Sequence
from functools import cache
from pathlib import Path

MAX_BASE = 64
"""Longest base name in code points; deep nesting would otherwise grow names without end.
A name is its base plus at most a numeric suffix, so `Name: TypeAlias = (` always fits in
`black`'s 88 columns; a longer target is one `black` would split on its left-hand side."""

SDK_NAMES = frozenset(
    {
        "Tools",
        "ToolCallError",
        "tools",
        "JsonValue",
        "ToolArgsMap",
        "ToolOutputMap",
        "ToolName",
        "Any",
        "Literal",
        "NotRequired",
        "Never",
        "Protocol",
        "TypeAlias",
        "TypedDict",
        "Awaitable",
        "Callable",
        "cast",
        "overload",
    }
)
"""Names the generated modules declare or import themselves."""

ANNOTATION_NAMES = frozenset(
    {
        "str",
        "int",
        "float",
        "bool",
        "list",
        "dict",
        "tuple",
        "type",
        "object",
        "Any",
        "Literal",
        "NotRequired",
        "Never",
        "TypeAlias",
        "TypedDict",
        "Protocol",
        "Tools",
        "Awaitable",
        "Callable",
        "overload",
    }
)
"""Names Python annotations in the `Tools` protocol may use; a method with one of these names
would shadow it for the methods after it."""

_TS_KEYWORDS = frozenset(
    [
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "new",
        "null",
        "return",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "as",
        "implements",
        "interface",
        "let",
        "package",
        "private",
        "protected",
        "public",
        "static",
        "yield",
        "any",
        "boolean",
        "constructor",
        "declare",
        "get",
        "module",
        "require",
        "number",
        "set",
        "string",
        "symbol",
        "type",
        "from",
        "of",
        "never",
        "unknown",
        "object",
        "bigint",
        "undefined",
        "keyof",
        "readonly",
        "infer",
        "is",
        "asserts",
        "unique",
        "abstract",
        "async",
        "await",
        "global",
        "namespace",
        "satisfies",
        "accessor",
        "out",
        "override",
    ]
)


@cache
def _ts_globals() -> frozenset[str]:
    # A plain file beside this module (the wheel installs the package unzipped), read
    # without `importlib.resources`, whose imports cost more than the read.
    text = Path(__file__).with_name("reserved_ts.txt").read_text("utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


@cache
def reserved_type_names() -> frozenset[str]:
    """Every name a generated type may not take."""
    python = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))
    return frozenset(python | SDK_NAMES | _TS_KEYWORDS | _ts_globals())


def nfkc(text: str) -> str:
    """NFKC normal form; ASCII text already is one."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


_ASCII_PARTS = re.compile("[A-Za-z0-9]+")
"""Runs of ASCII characters that continue an identifier, underscores excepted."""


_TS_START = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nl"})
_TS_PART = _TS_START | {"Mn", "Mc", "Nd", "Pc"}


def _in_ts_tables(char: str, categories: frozenset[str]) -> bool:
    """Whether TypeScript takes `char` in an identifier under its default target (ES5),
    whose tables hold only Basic Multilingual Plane characters of an old Unicode: a
    letter (or, after the first place, a mark, digit or connector) in Unicode 3.2 that
    still is one. Python accepts many more (later Unicode, `Other_ID_Continue` like
    U+00B7), which `tsc` rejects as an invalid character."""
    return char.isascii() or (
        ord(char) < 0x10000
        and unicodedata.ucd_3_2_0.category(char) in categories
        and unicodedata.category(char) in categories
    )


def _continues(char: str) -> bool:
    return ("a" + char).isidentifier() and _in_ts_tables(char, _TS_PART)


@cache
def camel_case(text: str) -> str:
    """Split on runs of characters that cannot continue an identifier and on underscores,
    upper-case the head of each part, join. `read_file` -> `ReadFile`, `my-mcp.tool` ->
    `MyMcpTool`, `HTTPGet` -> `HTTPGet`. May return `""`."""
    if text.isascii():  # the common case, without per-character Unicode checks
        return "".join([part[0].upper() + part[1:] for part in _ASCII_PARTS.findall(text)])
    parts: list[str] = []
    current: list[str] = []
    for char in nfkc(text):
        if char != "_" and _continues(char):
            current.append(char)
        elif current:
            parts.append("".join(current))
            current = []
    if current:
        parts.append("".join(current))
    joined = "".join(_upper_head(part) for part in parts)
    return "".join(c for c in nfkc(joined) if _continues(c))


def _upper_head(part: str) -> str:
    head = part[0].upper()
    if not all(_continues(c) for c in head):
        head = part[0]
    return head + part[1:]


@cache
def type_base(text: str, fallback: str = "Tool") -> str:
    """`camel_case`, made a valid type name: a `Tool` prefix when it cannot start one."""
    name = camel_case(text)
    if not name or not name[0].isidentifier() or not _in_ts_tables(name[0], _TS_START):
        name = nfkc(fallback + name)
    return name


def cap(name: str) -> str:
    """Cut a base name to `MAX_BASE` code points, never ending on a combining character."""
    if len(name) <= MAX_BASE:
        return name
    cut = name[:MAX_BASE]
    while cut and unicodedata.combining(cut[-1]):
        cut = cut[:-1]
    return cut


def is_python_identifier(name: str) -> bool:
    """An identifier Python keeps as written (NFKC-stable), not a keyword or `__debug__`."""
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and name != "__debug__"
        and nfkc(name) == name
    )


@cache
def is_class_field(key: str) -> bool:
    """Can be a field of a class-syntax TypedDict: an identifier that is not name-mangled
    (`__token` would become `_Name__token`). Cached: keys repeat across a catalog."""
    return is_python_identifier(key) and not (key.startswith("__") and not key.endswith("__"))


def is_method_name(name: str) -> bool:
    """Can be an `async def` in the `Tools` protocol: an identifier that is not private
    (`_x`) and does not shadow a name the protocol's annotations use."""
    return is_python_identifier(name) and not name.startswith("_") and name not in ANNOTATION_NAMES


def is_ts_identifier(name: str) -> bool:
    """A bare TypeScript property key: ASCII identifier characters only, to stay safe with
    every TypeScript version's Unicode tables."""
    return (
        bool(name)
        and name.isascii()
        and (name[0].isalpha() or name[0] in "_$")
        and all(c.isalnum() or c in "_$" for c in name)
    )


class NameAllocator:
    """Hands out unique names: the first claimant of a base keeps it, later ones get the
    first free numeric suffix. A counter per base keeps this amortized O(1). `claims`
    records every claim as (normalized base, name handed out), in order."""

    def __init__(self, reserved: frozenset[str] | None = None) -> None:
        self._reserved = reserved_type_names() if reserved is None else reserved
        self._taken: set[str] = set()
        self._next: dict[str, int] = {}
        self.claims: list[tuple[str, str]] = []

    def claim(self, base: str) -> str:
        base = cap(nfkc(base))
        name = base
        if name in self._taken or name in self._reserved:
            number = self._next.get(base, 2)
            while f"{base}{number}" in self:
                number += 1
            self._next[base] = number + 1
            name = f"{base}{number}"
        self._taken.add(name)
        self.claims.append((base, name))
        return name

    def replay(self, claims: Sequence[tuple[str, str]]) -> bool:
        """Make recorded claims again, all or none: True (and claimed) when every base gets
        the name it got when recorded, False (and nothing claimed) otherwise."""
        counters = {base: self._next.get(base) for base, _ in claims}
        start = len(self.claims)
        for base, expected in claims:
            if self.claim(base) != expected:
                for _, name in self.claims[start:]:
                    self._taken.discard(name)
                del self.claims[start:]
                for base_, number in counters.items():
                    if number is None:
                        self._next.pop(base_, None)
                    else:
                        self._next[base_] = number
                return False
        return True

    def __contains__(self, name: str) -> bool:
        return name in self._taken or name in self._reserved
