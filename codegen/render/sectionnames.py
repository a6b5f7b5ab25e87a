"""Type names for the model-facing SDK sections: short, and decided over the whole catalog.

The SDK modules use the IR's names (`CreateEventArgsLocationAddress`), which spell a type's
whole path and are what type checkers and people import. A model reads every name in its
prompt, so the sections name a nested type after the field that holds it (`Address`) when
no other type of the catalog took that name first, and fall back to the IR name otherwise.

A tool's chunk is rendered once with every type name marked (`mark`), so it depends on
that tool alone and a cache can reuse it; `allocate` decides the names over the catalog in
order (root types first, so they keep their IR names), and `substitute` writes them in.
Names never equal a keyword, a builtin, a name the section declares or imports, or a
tool's function name; in TypeScript, never a global type either (`Location`, `Event`).
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterator, Mapping, Sequence

from .. import ir
from ..names import SDK_NAMES, NameAllocator, reserved_type_names, type_base

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


def candidates(tool: ir.Tool) -> tuple[tuple[str, str, bool], ...]:
    """(IR name, preferred name, is a root) for each of the tool's types. A type that is
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
    ordered = [(name, preferred[name], True) for name in dict.fromkeys(roots)]
    ordered += [
        (t.name, preferred.get(t.name) or _unprefixed(t.name, tool.name), False) for t in tool.types
    ]
    seen: set[str] = set()
    unique = []
    for entry in ordered:
        if entry[0] not in seen:
            seen.add(entry[0])
            unique.append(entry)
    return tuple(unique)


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


def allocate(
    per_tool: Sequence[tuple[tuple[str, str, bool], ...]], reserved: frozenset[str]
) -> dict[str, str]:
    """The section name of every IR name: roots of every tool first, then the other types,
    each in catalog order; the preferred name when free, else the IR name, else the IR name
    with the first free numeric suffix. `reserved` names are never taken."""
    allocator = NameAllocator(reserved)
    names: dict[str, str] = {}
    for want_roots in (True, False):
        for entries in per_tool:
            for ir_name, wanted, root in entries:
                if root is want_roots and ir_name not in names:
                    free = wanted not in allocator
                    names[ir_name] = allocator.claim(wanted if free else ir_name)
    return names


def substitute(text: str, names: Mapping[str, str]) -> str:
    """The text with every marked name replaced by its section name."""
    if MARK not in text:
        return text
    return _MARKED.sub(lambda match: names.get(match.group(1), match.group(1)), text)
