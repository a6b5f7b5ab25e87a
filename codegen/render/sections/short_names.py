"""Type names for the model-facing SDK sections: short, shared, and decided in reading order.

The SDK modules use the IR's names (`CreateEvent_ArgsLocationAddress`), which spell a
type's whole path and are what type checkers and people import. A model reads every name
in its prompt, so the sections name a nested type after the field that holds it (`Address`,
numbered when taken: `Address2`), drop a namespace or a stem tag from root names, and
declare a shape once: a later tool whose type has the same text uses the earlier name.

A tool's chunk is rendered once with every type name marked (`mark`), so it depends on
that tool alone and a cache can reuse it; `place` decides the names tool by tool in catalog
order and writes them in, so a tool's text depends only on itself and the tools before it
(adding a tool never changes the section before it: the prefix cache survives).
Names never equal a keyword, a builtin, a name the section declares or imports, or a
function name shown before them; in TypeScript, never a global type either (`Location`).
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

from ... import ir
from ...identifiers import SDK_NAMES, TAG_SEPARATOR, reserved_type_names, type_base

MARK = "\x00"
"""Brackets a type name in a chunk; rendered text never holds a raw NUL (it is escaped)."""

_MARKED = re.compile("\x00([^\x00]*)\x00")

TYPING_NAMES = frozenset(
    [
        "AbstractSet",
        "Annotated",
        "Any",
        "AnyStr",
        "AsyncContextManager",
        "AsyncGenerator",
        "AsyncIterable",
        "AsyncIterator",
        "Awaitable",
        "BinaryIO",
        "ByteString",
        "Callable",
        "ChainMap",
        "ClassVar",
        "Collection",
        "Concatenate",
        "Container",
        "ContextManager",
        "Coroutine",
        "Counter",
        "DefaultDict",
        "Deque",
        "Dict",
        "Final",
        "ForwardRef",
        "FrozenSet",
        "Generator",
        "Generic",
        "Hashable",
        "IO",
        "ItemsView",
        "Iterable",
        "Iterator",
        "KeysView",
        "List",
        "Literal",
        "LiteralString",
        "Mapping",
        "MappingView",
        "Match",
        "MutableMapping",
        "MutableSequence",
        "MutableSet",
        "NamedTuple",
        "Never",
        "NewType",
        "NoDefault",
        "NoExtraItems",
        "NoReturn",
        "NotRequired",
        "Optional",
        "OrderedDict",
        "ParamSpec",
        "ParamSpecArgs",
        "ParamSpecKwargs",
        "Pattern",
        "Protocol",
        "ReadOnly",
        "Required",
        "Reversible",
        "Self",
        "Sequence",
        "Set",
        "Sized",
        "SupportsAbs",
        "SupportsBytes",
        "SupportsComplex",
        "SupportsFloat",
        "SupportsIndex",
        "SupportsInt",
        "SupportsRound",
        "TYPE_CHECKING",
        "Text",
        "TextIO",
        "Tuple",
        "Type",
        "TypeAlias",
        "TypeAliasType",
        "TypeGuard",
        "TypeIs",
        "TypeVar",
        "TypeVarTuple",
        "TypedDict",
        "Union",
        "Unpack",
        "ValuesView",
        "F",
        "tool",
    ]
)
"""What `from typing import *` may bind in the Python section on any supported Python
(a fixed list, so the names do not depend on the interpreter), and the section's own
`F` and `tool`."""


def mark(name: str) -> str:
    return f"{MARK}{name}{MARK}"


def _marked_node(node: ir.TypeNode) -> ir.TypeNode:
    if isinstance(node, ir.RefType):
        return ir.RefType(mark(node.name))
    if isinstance(node, ir.ArrayType):
        return ir.ArrayType(_marked_node(node.items))
    if isinstance(node, ir.MapType):
        return ir.MapType(_marked_node(node.values))
    if isinstance(node, ir.UnionType):
        return ir.UnionType(tuple(_marked_node(arm) for arm in node.arms))
    if isinstance(node, ir.TupleType):
        rest = None if node.rest is None else _marked_node(node.rest)
        return ir.TupleType(tuple(_marked_node(item) for item in node.items), node.min_items, rest)
    return node


def marked_type(named: ir.NamedType) -> ir.NamedType:
    """A named type with its own name and every name it refers to marked."""
    if isinstance(named, ir.AliasType):
        return ir.AliasType(mark(named.name), _marked_node(named.target), named.docs)
    fields = tuple(ir.Field(f.key, _marked_node(f.type), f.required, f.docs) for f in named.fields)
    extra = None if named.extra is None else _marked_node(named.extra)
    return ir.ObjectType(mark(named.name), fields, extra, named.docs)


def marked_tool(tool: ir.Tool) -> tuple[ir.TypeNode, ir.TypeNode | None, list[ir.NamedType]]:
    """The tool's argument type, output type and named types, with every name marked."""
    output = None if tool.output is None else _marked_node(tool.output)
    return _marked_node(tool.args), output, [marked_type(t) for t in tool.types]


def _refs(node: ir.TypeNode) -> Iterator[str]:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ir.RefType):
            yield current.name
        elif isinstance(current, ir.ArrayType):
            stack.append(current.items)
        elif isinstance(current, ir.MapType):
            stack.append(current.values)
        elif isinstance(current, ir.UnionType):
            stack.extend(reversed(current.arms))
        elif isinstance(current, ir.TupleType):
            stack.extend(reversed([*current.items, *([current.rest] if current.rest else [])]))


def candidates(tool: ir.Tool) -> tuple[tuple[str, str], ...]:
    """(IR name, preferred name) for each of the tool's types. A type that is
    the only one a field refers to prefers the field's key (`address` -> `Address`); union
    arms of one field prefer their IR name without their parent's (`ContentText`); the
    roots and anything else keep the IR name. The outermost field that uses a type decides."""
    roots = [name for node in (tool.args, tool.output) if node for name in _refs(node)]
    preferred: dict[str, str] = {name: _unprefixed(name, tool.name) for name in roots}
    for named in reversed(tool.types):  # outermost first: the IR declares inner types first
        if not isinstance(named, ir.ObjectType):
            continue
        for item in named.fields:
            used = list(dict.fromkeys(_refs(item.type)))
            for name in used:
                if name in preferred:
                    continue
                if len(used) == 1:
                    preferred[name] = type_base(item.key, "Type")
                elif name.startswith(named.name) and name[len(named.name) :][:1].isupper():
                    preferred[name] = name[len(named.name) :]
    ordered = [(name, _untagged(preferred[name])) for name in dict.fromkeys(roots)]
    ordered += [
        (t.name, _untagged(preferred.get(t.name) or _unprefixed(t.name, tool.name)))
        for t in tool.types
    ]
    seen: set[str] = set()
    unique = []
    for entry in ordered:
        if entry[0] not in seen:
            seen.add(entry[0])
            unique.append(entry)
    return tuple(unique)


_TAG = re.compile(re.escape(TAG_SEPARATOR) + "[a-z2-7]+")


def _untagged(name: str) -> str:
    """The name without the tag `names` gives a tool whose stem another tool shares
    (`Address__k3xyOutput` -> `AddressOutput`): the tag depends on the other tool, and the
    section tells names apart in reading order instead."""
    return _TAG.sub("", name, count=1) if TAG_SEPARATOR in name else name


def _unprefixed(name: str, tool_name: str) -> str:
    """A namespaced tool's type name without the namespace (`everything__echo`'s
    `EverythingEchoOutput` prefers `EchoOutput`): the function name already says it."""
    _, sep, own = tool_name.partition("__")
    full = type_base(tool_name)
    if not sep or not own or not name.startswith(full):
        return name
    return type_base(own) + name[len(full) :]


PYTHON_RESERVED = frozenset(
    {*keyword.kwlist, *keyword.softkwlist, *dir(builtins), *TYPING_NAMES, *SDK_NAMES}
)
"""Names a Python section's type may not take: what its annotations and header use."""


def typescript_reserved() -> frozenset[str]:
    """Names a TypeScript section's type may not take (globals such as `Location`)."""
    return reserved_type_names()


class Declaration(NamedTuple):
    """One named type of a tool as the section declares it: its IR name and its text, with
    every type name in it marked."""

    name: str
    text: str


class ToolText(NamedTuple):
    """One tool's part of a section before names are decided: the text that shows the tool
    (a function, a member of `tools`), its declarations in IR order (a type after the types
    it uses), the names its types would like (`candidates`), its function name ("" when it
    has none to claim) and the names its own types may not take (`avoid`)."""

    head: str
    declarations: tuple[Declaration, ...]
    names: tuple[tuple[str, str], ...]
    function: str = ""
    avoid: tuple[str, ...] = ()
    signature: str = ""
    """The call in one line, required arguments only (`(*, path: str, ...) -> str`), names
    marked: what a search hit shows."""


class Placed(NamedTuple):
    """One tool in the finished section: its head, the declarations it adds (top down) and
    their names, the names of earlier declarations it uses instead of repeating them, and
    whether its function name was taken by an earlier type (so it is shown under
    `@tool(...)`)."""

    head: str
    declarations: tuple[str, ...]
    declared: tuple[str, ...]
    reused: tuple[str, ...]
    function_taken: bool
    signature: str = ""


class _Claims:
    """Names handed out so far: the first claimant of a base keeps it, later ones get the
    first free numeric suffix."""

    def __init__(self, reserved: frozenset[str]) -> None:
        self.reserved = reserved
        self.taken: set[str] = set()
        self._next: dict[str, int] = {}

    def free(self, name: str, avoid: frozenset[str] = frozenset()) -> bool:
        return name not in self.taken and name not in self.reserved and name not in avoid

    def claim(self, base: str, avoid: frozenset[str] = frozenset()) -> str:
        name = base
        if not self.free(name, avoid):
            number = self._next.get(base, 2)
            while not self.free(f"{base}{number}", avoid):
                number += 1
            self._next[base] = number + 1
            name = f"{base}{number}"
        self.taken.add(name)
        return name


class _Open(Exception):
    """A declaration refers to a name not decided yet (a cycle): it is never shared."""


def place(tools: Sequence[ToolText], reserved: frozenset[str]) -> list[Placed]:
    """Decide every name tool by tool, in catalog order, so a tool's text depends only on
    that tool and the tools before it: adding a tool never changes the text of the tools
    that sort before it, and the section's prefix up to it survives.

    Per tool: its function name is claimed first (an earlier type that holds it sends the
    tool under `@tool(...)`); then each declaration, types before the types that use them,
    either reuses an earlier declaration with the same text (the catalog declares a shape
    once, however many tools return it) or claims its preferred name, numbered when
    taken."""
    claims = _Claims(reserved)
    seen: dict[str, str] = {}
    placed = []
    for tool in tools:
        taken = tool.function in claims.taken  # by an earlier type
        if tool.function and not taken:
            claims.taken.add(tool.function)
        avoid = frozenset(tool.avoid)
        preferred = dict(tool.names)
        names: dict[str, str] = {}
        kept: dict[str, str] = {}
        reused: list[str] = []
        for item in tool.declarations:
            key = _shape(item, names)
            earlier = seen.get(key) if key is not None else None
            if earlier is not None and earlier not in avoid:
                names[item.name] = earlier
                reused.append(earlier)
                continue
            names[item.name] = claims.claim(preferred.get(item.name, item.name), avoid)
            if key is not None:
                seen.setdefault(key, names[item.name])
            kept[item.name] = item.text
        for ir_name, wanted in tool.names:
            if ir_name not in names:
                names[ir_name] = claims.claim(wanted, avoid)
        own = [item.name for item in reversed(tool.declarations) if item.name in kept]
        placed.append(
            Placed(
                substitute(tool.head, names),
                tuple(substitute(kept[name], names) for name in own),
                tuple(names[name] for name in own),
                tuple(dict.fromkeys(reused)),
                taken,
                substitute(tool.signature, names),
            )
        )
    return placed


def _shape(item: Declaration, names: Mapping[str, str]) -> str | None:
    """The declaration's text with its own name blanked and the names it uses decided, or
    None when it uses one not decided yet."""

    def spell(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == item.name:
            return "\x01"
        if name not in names:
            raise _Open
        return names[name]

    try:
        return _MARKED.sub(spell, item.text)
    except _Open:
        return None


def substitute(text: str, names: Mapping[str, str]) -> str:
    """The text with every marked name replaced by its section name."""
    if MARK not in text:
        return text
    return _MARKED.sub(lambda match: names.get(match.group(1), match.group(1)), text)
