"""Line layout for generated Python that is already a fixed point of `black`.

The SDK is never run through a formatter at generation time; instead every statement shape
the renderer emits is laid out here the way `black` (default settings, 88 columns) leaves
it: on one line when it fits, otherwise split at the outermost bracket of the right-hand
side, recursively. Where `black` would have a choice, an exploded bracket always carries a
magic trailing comma, which `black` keeps. The tests check the fixed point on every golden
case, the corpus, and randomly generated type expressions.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from dataclasses import dataclass
from typing import TypeAlias

from .widths import WIDE

LINE_LENGTH = 88
INDENT = "    "


@dataclass(frozen=True, slots=True)
class Atom:
    """A name, number or string literal: never split."""

    text: str


@dataclass(frozen=True, slots=True)
class Sub:
    """`head[arg, ...]`. `text` is the expression on one line, spelled once when it is
    built: every expression is measured on one line at least once, often more (a nested
    expression at each level that does not fit), and the children already know theirs.
    (A derived field, made the package's one way: see `codegen.ir`.)"""

    head: str
    args: tuple[Expr, ...]
    text: str = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        args = self.args
        if len(args) == 1:  # `list[T]`, `NotRequired[T]`: most subscripts
            text = f"{self.head}[{args[0].text}]"
        else:
            text = f"{self.head}[{', '.join([arg.text for arg in args])}]"
        object.__setattr__(self, "text", text)


@dataclass(frozen=True, slots=True)
class Union:
    """`arm | arm | ...`; `text` as for `Sub`."""

    arms: tuple[Expr, ...]
    text: str = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", " | ".join([arm.text for arm in self.arms]))


Expr: TypeAlias = Atom | Sub | Union


def flat(expr: Expr) -> str:
    """The expression on one line."""
    return expr.text


_WIDE_STARTS = [start for start, _ in WIDE]


def width(text: str) -> int:
    """Display columns as `black` counts them: wide East Asian characters and most emoji
    take two."""
    if text.isascii():
        return len(text)
    total = 0
    for char in text:
        code = ord(char)
        index = bisect_right(_WIDE_STARTS, code) - 1
        total += 2 if index >= 0 and code <= WIDE[index][1] else 1
    return total


def fits(text: str) -> bool:
    """Whether the line fits in `LINE_LENGTH` columns; an ASCII line (nearly all of them)
    is measured by its length, without the call to `width`."""
    if text.isascii():
        return len(text) <= LINE_LENGTH
    return width(text) <= LINE_LENGTH


def layout(
    expr: Expr,
    indent: str,
    prefix: str = "",
    suffix: str = "",
    parenthesize_union: bool = False,
    assigned: bool = False,
) -> list[str]:
    """Lines for `prefix + expr + suffix` starting at `indent`.

    `parenthesize_union` is for annotation positions outside any bracket (a class field, a
    parameter, a return type), where `black` wraps a long union in parentheses; inside a
    bracket it splits the union at its `|` operators instead. `assigned` marks the value of
    an assignment (`prefix` ends with `= `), which `black` parenthesizes more readily.
    """
    line = f"{indent}{prefix}{expr.text}{suffix}"
    if fits(line):
        return [line]
    inner = indent + INDENT
    if isinstance(expr, Atom):
        # An atom cannot be split; in an annotation `black` wraps it in parentheses when
        # that makes it fit, and otherwise leaves the line long.
        if parenthesize_union and prefix and fits(f"{inner}{expr.text}"):
            return [f"{indent}{prefix}(", f"{inner}{expr.text}", f"{indent}){suffix}"]
        return [line]
    if isinstance(expr, Sub):
        head = f"{indent}{prefix}{expr.head}["
        if parenthesize_union and prefix and not fits(head):
            # Splitting at its own bracket leaves the first line too long (a long key or
            # alias name). `black` then splits at the parentheses it may add around an
            # assigned value when their first line fits, and around an annotation when
            # every line fits (its "second opinion").
            wrapped = [f"{indent}{prefix}(", *layout(expr, inner), f"{indent}){suffix}"]
            if fits(wrapped[0]) if assigned else all(fits(line) for line in wrapped):
                return wrapped
        tail = f"{indent}]{suffix}"
        if len(expr.args) == 1:
            return [head, *layout(expr.args[0], inner), tail]
        body = [out for arg in expr.args for out in layout(arg, inner, suffix=",")]
        return [head, *body, tail]
    if parenthesize_union:
        return [f"{indent}{prefix}(", *layout(expr, inner), f"{indent}){suffix}"]
    return _union_lines(expr, indent, prefix, suffix)


def _union_lines(expr: Union, indent: str, prefix: str, suffix: str) -> list[str]:
    """Arms one per line, each after the first led by `| `, as `black` splits at `|`."""
    lines: list[str] = []
    last = len(expr.arms) - 1
    for index, arm in enumerate(expr.arms):
        lead = prefix if index == 0 else "| "
        lines.extend(layout(arm, indent, lead, suffix if index == last else ""))
    return lines


def field(key: str, expr: Expr, indent: str = INDENT) -> list[str]:
    """A class-syntax TypedDict field `key: annotation`; most fit on one line, tested here
    before any layout."""
    line = f"{indent}{key}: {expr.text}"
    if fits(line):
        return [line]
    return layout(expr, indent, f"{key}: ", parenthesize_union=True)


def dict_entry(key: str, expr: Expr, indent: str, lone: bool = False) -> list[str]:
    """An entry `"key": annotation,` of a functional TypedDict's dict. `lone` marks the
    only entry of a dict whose body is a comment, then the entry and nothing after it:
    `black` must split that body, does not count the magic trailing comma as a place to
    split, and so splits a union at its `|` operators even when it fits."""
    if lone and isinstance(expr, Union):
        return _union_lines(expr, indent, f"{key}: ", ",")
    return layout(expr, indent, f"{key}: ", ",")


def class_header(name: str, base: str) -> list[str]:
    line = f"class {name}({base}):"
    if fits(line):
        return [line]
    return [f"class {name}(", f"{INDENT}{base}", "):"]


def method(name: str, args: str, returns: str, stub: bool) -> list[str]:
    """`async def name(self, args: A) -> R:` in the `Tools` class, `: ...` when `stub`.
    Argument and return types are always names (the IR names every root type), so a long
    def only ever splits at its parameters, as `black` does."""
    end = ": ..." if stub else ":"
    line = f"{INDENT}async def {name}(self, args: {args}) -> {returns}{end}"
    if fits(line):
        return [line]
    body = _parameters("args", Atom(args))
    tail = layout(Atom(returns), INDENT, ") -> ", end, parenthesize_union=True)
    return [f"{INDENT}async def {name}(", *body, *tail]


def _parameters(name: str, annotation: Expr) -> list[str]:
    """`self, name: annotation` between a split def's brackets: on one line when it fits,
    else one parameter a line with a magic trailing comma."""
    inner = INDENT * 2
    params = f"{inner}self, {name}: {flat(annotation)}"
    if fits(params):
        return [params]
    return [f"{inner}self,", *layout(annotation, inner, f"{name}: ", ",", parenthesize_union=True)]


def assignment(target: str, value: Expr) -> list[str]:
    """`target: TypeAlias = value`, split at the value's bracket, or in parentheses for a
    union; a long atom is always parenthesized, even when that does not make it fit."""
    if isinstance(value, Atom) and not fits(f"{target} = {value.text}"):
        return [f"{target} = (", f"{INDENT}{value.text}", ")"]
    return layout(value, "", f"{target} = ", parenthesize_union=True, assigned=True)


def call_lines(target: str, function: str, args: list[list[str]]) -> list[str]:
    """`target = function(arg, ...)` exploded one argument per line with magic trailing
    commas; each argument comes as its lines, already indented one level."""
    lines = [f"{target} = {function}("]
    for arg in args:
        lines.extend(arg[:-1])
        lines.append(f"{arg[-1]},")
    lines.append(")")
    return lines


def getitem(key: str, returns: Sub, stub: bool) -> list[str]:
    """`def __getitem__(self, name: Literal[key]) -> returns:` in the `Tools` class, `: ...`
    when `stub`. `black` splits a def at its parameters first and lays the return
    annotation out as it would an annotation outside brackets. When that explodes the
    return type (a magic trailing comma), `black`'s second pass splits the whole def at the
    return type's bracket instead, which is the layout returned then."""
    return getitem_typed(Sub("Literal", (Atom(key),)), returns, stub)


def getitem_typed(name: Expr, returns: Sub, stub: bool = True) -> list[str]:
    """`def __getitem__(self, name: <name>) -> returns:`, laid out as `getitem` says."""
    end = ": ..." if stub else ":"
    line = f"{INDENT}def __getitem__(self, name: {flat(name)}) -> {flat(returns)}{end}"
    if fits(line):
        return [line]
    body = _parameters("name", name)
    tail = layout(returns, INDENT, ") -> ", end, parenthesize_union=True)
    if not any(line.endswith(",") for line in tail):
        return [f"{INDENT}def __getitem__(", *body, *tail]
    head = f"{INDENT}def __getitem__(self, name: {flat(name)}) -> {returns.head}["
    heads = (
        [head]
        if fits(head) and len(body) == 1
        else [f"{INDENT}def __getitem__(", *body, f"{INDENT}) -> {returns.head}["]
    )
    args = [out for arg in returns.args for out in layout(arg, INDENT * 2, suffix=",")]
    return [*heads, *args, f"{INDENT}]{end}"]
