"""The `Tools` protocol of the Python SDK module: each tool's call forms, typed for
checkers.

A checker must check `await tools["get-user"]({...})` as closely as `await
tools.get_user({...})`, so every tool, whatever its name, gets a `__getitem__` overload keyed
by `Literal["<exact name>"]` that returns its typed callable; a name that can be a method
also gets an `async def`. (The model-facing SDK, `sections.python`, lists each tool once.)
Names, argument and result types arrive as finished text; this module only lays them out.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import black_layout as fmt
from .strings import docstring


def method_lines(name: str, args: str, returns: str, description: Sequence[str]) -> list[str]:
    """`async def name(self, args: A) -> R:` with the description as its docstring."""
    lines = fmt.method(name, args, returns, stub=not description)
    if description:
        lines += docstring(tuple(description), fmt.INDENT * 2)
        lines.append(f"{fmt.INDENT * 2}...")
    return lines


def callable_type(args: str, returns: str) -> fmt.Sub:
    """`Callable[[A], Awaitable[R]]`: what `tools["name"]` gives."""
    parameters = fmt.Sub("", (fmt.Atom(args),))
    return fmt.Sub("Callable", (parameters, fmt.Sub("Awaitable", (fmt.Atom(returns),))))


def overload_lines(key: str, args: str, returns: str, description: Sequence[str]) -> list[str]:
    """The `__getitem__` signature for one exact name (without `@overload`, which only
    a class with two or more tools needs), with the description as its docstring when the
    tool has no method to carry it."""
    lines = fmt.getitem(key, callable_type(args, returns), stub=not description)
    if description:
        lines += docstring(tuple(description), fmt.INDENT * 2)
        lines.append(f"{fmt.INDENT * 2}...")
    return lines


OVERLOAD_LIMIT = 4096
"""Most tools typed one by one in `__getitem__`. CPython compiles a class body with N
same-named `def`s in time quadratic in N (their code objects hash alike), and a checker
resolves an overload call in time linear in N; past the limit `tools["..."]` checks the
name against `ToolName` only, and a comment says so."""


def protocol_members(methods: Sequence[str], overloads: Sequence[str]) -> list[str]:
    """The `Tools` class body of the SDK module as blocks: methods, then the `__getitem__`
    overloads (contiguous, as overloads must be); `pass` for an empty catalog."""
    members = list(methods)
    if len(overloads) > OVERLOAD_LIMIT:
        note = (
            f"{len(overloads)} tools are more than the {OVERLOAD_LIMIT} typed by exact name: "
            "the name is checked, the arguments and result are not."
        )
        returns = fmt.Sub("Callable", (fmt.Atom("..."), fmt.Sub("Awaitable", (fmt.Atom("Any"),))))
        lines = [f"{fmt.INDENT}# {note}", *fmt.getitem_typed(fmt.Atom("ToolName"), returns)]
        members.append("\n".join(lines))
    elif len(overloads) == 1:
        members.append(overloads[0])
    else:
        members.extend(f"{fmt.INDENT}@overload\n{block}" for block in overloads)
    return members or [f"{fmt.INDENT}pass"]


def tool_name_alias(keys: Sequence[str]) -> str:
    """`ToolName: TypeAlias = Literal[...]` over every exact tool name (`Never` for none):
    the names a caller may index `tools` with, and the list `codegen.client` checks."""
    value: fmt.Expr = (
        fmt.Sub("Literal", tuple(fmt.Atom(key) for key in keys)) if keys else fmt.Atom("Never")
    )
    return "\n".join(fmt.assignment("ToolName: TypeAlias", value))
