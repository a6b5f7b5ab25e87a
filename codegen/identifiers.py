"""Names: one decision per type, shared by every target.

Every type of a tool starts with the tool's stem, `CamelCase(tool)`. The root types are
`Stem + "Args"` / `Stem + "Output"`; every other type is `Stem + "_" + rest`: nested objects
`Parent + CamelCase(key)` below `Stem_Args` / `Stem_Output`, `$defs` entries
`Stem_CamelCase(def)`. A stem never holds `_`, so the text before a name's first `_` (or its
root suffix) says which tool owns it, and two tools' names cannot collide: adding a tool never
renames another tool's types. Tools whose stems coincide (`todo_add` and `todo.add`, or long
names equal in their first `STEM_MAX` code points) are the one exception, settled by
`tool_stems`.

Every name is NFKC-normalized, is an identifier in Python and TypeScript, never equals a
keyword, a builtin, a name the SDKs declare themselves, or a TypeScript global type (a
declaration must never merge with `Array` or `Request`). A name taken twice (only ever within
one tool) gets the first free suffix `2`, `3`, ... in the order names are claimed, which the
builder keeps deterministic.
"""

from __future__ import annotations

import builtins
import keyword
import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import cache

from ._support.run_memos import per_run

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
    with open(os.path.join(os.path.dirname(__file__), "reserved_ts.txt"), encoding="utf-8") as file:
        text = file.read()
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


@cache
def reserved_type_names() -> frozenset[str]:
    """Every name a generated type may not take."""
    python = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))
    return frozenset(python | SDK_NAMES | _TS_KEYWORDS | _ts_globals())


MODULE_GLOBALS = frozenset({"Record"})
"""The TypeScript global types a module of plain-schema types names itself."""


@cache
def module_type_names() -> frozenset[str]:
    """Every name a type of a module of plain-schema types may not take: as
    `reserved_type_names`, but TypeScript's global types only where the module names them
    (`MODULE_GLOBALS`). Its own declarations shadow the others inside the module, so a
    schema's `Event`, `Node` or `Response` keeps its name."""
    python = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))
    return frozenset(python | SDK_NAMES | _TS_KEYWORDS | MODULE_GLOBALS)


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


@per_run
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


@per_run
def type_base(text: str, fallback: str = "Tool") -> str:
    """`camel_case`, made a valid type name: a `Tool` prefix when it cannot start one."""
    name = camel_case(text)
    if not name or not name[0].isidentifier() or not _in_ts_tables(name[0], _TS_START):
        name = nfkc(fallback + name)
    return name


def cap(name: str, limit: int = MAX_BASE) -> str:
    """Cut a base name to `limit` code points, never ending on a combining character."""
    if len(name) <= limit:
        return name
    cut = name[:limit]
    while cut and unicodedata.combining(cut[-1]):
        cut = cut[:-1]
    return cut


STEM_MAX = MAX_BASE - len("Output")
"""Longest stem, so a root name (`Stem + "Output"`) is never cut and keeps its stem whole."""

STEM_SEPARATOR = "_"
"""Between a stem and the rest of a nested type's name; no stem contains it."""

TAG_SEPARATOR = "__"
"""Between a shared stem and the tag that tells its tools apart (see `tool_stems`)."""

_TAG_LENGTHS = (4, 8, 16, 52)
"""Tag lengths tried in turn: base32 digits of the name's SHA-256 (52 hold all of it)."""


def plain_stem(name: str) -> str:
    """A tool's stem when no other tool of its catalog shares it: its type base, capped."""
    return cap(type_base(name), STEM_MAX)


def _canonical_spelling(stem: str) -> str:
    """The snake_case name whose stem `stem` is: `TodoAdd` -> `todo_add`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", stem).lower()


def _tag(name: str, length: int) -> str:
    import base64  # only catalogs with coinciding stems pay for these imports
    import hashlib

    digest = base64.b32encode(hashlib.sha256(name.encode("utf-8", "surrogatepass")).digest())
    return digest.decode("ascii").lower().rstrip("=")[:length]


def tool_stems(names: Iterable[str]) -> dict[str, str]:
    """The stem of every tool of a catalog, by tool name.

    A stem is `plain_stem(name)` unless other tools of the catalog have the same plain
    stem. Of such a group, the tool spelled the canonical way (`todo_add` for `TodoAdd`)
    keeps the plain stem, so its names still depend on nothing but itself; each other one
    gets `cap(stem) + "__" + tag`, the tag a hash of its exact name, lengthened until every
    tagged stem of the catalog is unique. Plain stems hold no `_` and tagged ones hold
    `__`, so the two kinds cannot meet."""
    by_plain: dict[str, list[str]] = {}
    for name in sorted(set(names)):
        by_plain.setdefault(plain_stem(name), []).append(name)
    stems: dict[str, str] = {}
    tagged: list[str] = []
    for plain, group in by_plain.items():
        for name in group:
            if len(group) == 1 or name == _canonical_spelling(plain):
                stems[name] = plain
            else:
                tagged.append(name)
    length = dict.fromkeys(tagged, 0)
    while tagged:
        owners: dict[str, list[str]] = {}
        for name in tagged:
            size = _TAG_LENGTHS[length[name]]
            head = cap(type_base(name), STEM_MAX - len(TAG_SEPARATOR) - size)
            owners.setdefault(f"{head}{TAG_SEPARATOR}{_tag(name, size)}", []).append(name)
        tagged = []
        for stem, owned in owners.items():
            if len(owned) == 1 or all(length[n] == len(_TAG_LENGTHS) - 1 for n in owned):
                for name in owned:  # distinct names whose whole digests agree: never seen
                    stems[name] = stem
                continue
            for name in owned:
                length[name] = min(length[name] + 1, len(_TAG_LENGTHS) - 1)
            tagged.extend(owned)
    return stems


def is_python_identifier(name: str) -> bool:
    """An identifier Python keeps as written (NFKC-stable), not a keyword or `__debug__`."""
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and name != "__debug__"
        and nfkc(name) == name
    )


@per_run
def is_class_field(key: str) -> bool:
    """Can be a field of a class-syntax TypedDict: an identifier that is not name-mangled
    (`__token` would become `_Name__token`). Memoized per run: keys repeat across a catalog."""
    return is_python_identifier(key) and not (key.startswith("__") and not key.endswith("__"))


def is_method_name(name: str) -> bool:
    """Can be an `async def` in the `Tools` protocol: an identifier that is not private
    (`_x`) and does not shadow a name the protocol's annotations use."""
    return is_python_identifier(name) and not name.startswith("_") and name not in ANNOTATION_NAMES


def is_ts_identifier(name: str) -> bool:
    """A bare TypeScript property key: ASCII identifier characters only, to stay safe with
    every TypeScript version's Unicode tables."""
    return _TS_IDENTIFIER.fullmatch(name) is not None


_TS_IDENTIFIER = re.compile("[A-Za-z_$][A-Za-z0-9_$]*")
"""`is_ts_identifier` as one match (a scan per character in Python cost a tenth of a
TypeScript render)."""


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
        return self._claim(cap(nfkc(base)))

    def _claim(self, base: str) -> str:
        """`claim` of a base already normalized and capped."""
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
        for base, expected in claims:  # recorded bases are normalized and capped already
            if self._claim(base) != expected:
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
