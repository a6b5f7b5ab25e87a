"""Templates laid out without Jinja's start-up cost, for the subset the SDK templates use.

Importing Jinja and compiling a template costs about 20 ms, a fifth of a cold `codegen sdk`
run on one tool. The SDK, section and prompt templates only join finished strings:
`{{ name }}`, `{% for item in items %}`, `{% if [not] loop.first|loop.last|name %}` with
`{% else %}`, `{% include "..." %}` and `{# comments #}`, under the environment's
`trim_blocks`, `lstrip_blocks` and `keep_trailing_newline`. This module parses a template
in that subset into a small tree and renders it by joining strings.

Jinja stays the authority: `parse` raises `Unsupported` for anything else (filters,
attribute access, expressions, whitespace control, autoescape), and `env.render` then renders
with Jinja. `tests/render/test_jinja_subset.py` checks that both give the same bytes for every template
this module accepts, on generated contexts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple


class Unsupported(Exception):
    """The template uses Jinja beyond this module's subset."""


class Text(NamedTuple):
    text: str


class Var(NamedTuple):
    name: str


class For(NamedTuple):
    target: str
    items: str
    body: tuple[Node, ...]


class If(NamedTuple):
    negate: bool
    test: str
    """`loop.first`, `loop.last` or a context name."""
    then: tuple[Node, ...]
    otherwise: tuple[Node, ...]


Node = Text | Var | For | If

_TAG = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}|\{#.*?#\}", re.S)
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_FOR = re.compile(rf"for ({_NAME}) in ({_NAME})")
_IF = re.compile(rf"if (not )?(loop\.first|loop\.last|{_NAME})")
_INCLUDE = re.compile(r'include "([^"\\]+)"')
_VAR = re.compile(_NAME)
_KEYWORDS = frozenset({"not", "in", "and", "or", "is", "if", "else", "loop", "true", "false"})


def parse(source: str, load: Callable[[str], str]) -> tuple[Node, ...]:
    """The template's tree; `load` reads an included template's source."""
    pieces = _pieces(source)
    nodes, rest = _block(pieces, 0, load, ())
    if rest != len(pieces):
        raise Unsupported(f"unexpected {pieces[rest][1]!r}")
    return nodes


def _pieces(source: str) -> list[tuple[str, str]]:
    """(kind, content) in order: "text", "var" or "block" (comments dropped), with
    `lstrip_blocks` and `trim_blocks` applied as Jinja's lexer does: blanks from the start
    of a line up to a block tag or comment go, and so does the one line break right after
    one. A line starts after a line break in the text, at the template's start, and after
    a tag whose trimmed line break ended it."""
    pieces: list[tuple[str, str]] = []
    position = 0
    line_starting = True
    trim_next = False
    for match in _TAG.finditer(source):
        text = source[position : match.start()]
        if trim_next and text.startswith("\n"):
            text = text[1:]
            line_starting = True
        is_block = match.group(1) is None
        if is_block:
            line_start = text.rfind("\n") + 1
            if (line_start > 0 or line_starting) and not text[line_start:].strip(" \t"):
                text = text[:line_start]
        if text:
            pieces.append(("text", text))
        if match.group(1) is not None:
            pieces.append(("var", _inner(match.group(1))))
        elif match.group(2) is not None:
            pieces.append(("block", _inner(match.group(2))))
        trim_next = is_block
        line_starting = False
        position = match.end()
    text = source[position:]
    if trim_next and text.startswith("\n"):
        text = text[1:]
    if text:
        pieces.append(("text", text))
    return pieces


def _inner(content: str) -> str:
    if content.startswith(("-", "+")) or content.endswith(("-", "+")):
        raise Unsupported("whitespace control")
    return content.strip()


def _block(
    pieces: list[tuple[str, str]],
    index: int,
    load: Callable[[str], str],
    enders: tuple[str, ...],
) -> tuple[tuple[Node, ...], int]:
    """Nodes from `pieces[index]` up to a block tag in `enders` (not consumed)."""
    nodes: list[Node] = []
    while index < len(pieces):
        kind, content = pieces[index]
        if kind == "text":
            nodes.append(Text(content))
        elif kind == "var":
            if not _VAR.fullmatch(content) or content in _KEYWORDS:
                raise Unsupported(f"expression {content!r}")
            nodes.append(Var(content))
        elif content in enders:
            return tuple(nodes), index
        elif (found := _FOR.fullmatch(content)) is not None:
            body, index = _block(pieces, index + 1, load, ("endfor",))
            _expect(pieces, index, "endfor")
            nodes.append(For(found.group(1), found.group(2), body))
        elif (found := _IF.fullmatch(content)) is not None:
            then, index = _block(pieces, index + 1, load, ("else", "endif"))
            otherwise: tuple[Node, ...] = ()
            if index < len(pieces) and pieces[index][1] == "else":
                otherwise, index = _block(pieces, index + 1, load, ("endif",))
            _expect(pieces, index, "endif")
            nodes.append(If(bool(found.group(1)), found.group(2), then, otherwise))
        elif (found := _INCLUDE.fullmatch(content)) is not None:
            nodes.extend(parse(load(found.group(1)), load))
        else:
            raise Unsupported(f"statement {content!r}")
        index += 1
    return tuple(nodes), index


def _expect(pieces: list[tuple[str, str]], index: int, word: str) -> None:
    if index >= len(pieces) or pieces[index] != ("block", word):
        raise Unsupported(f"missing {word}")


def render(nodes: Sequence[Node], context: Mapping[str, Any]) -> str:
    """The template's text for `context`; a missing name is an error, as with Jinja's
    `StrictUndefined`."""
    out: list[str] = []
    _render(nodes, dict(context), None, out)
    return "".join(out)


def _render(
    nodes: Sequence[Node],
    scope: dict[str, Any],
    loop: tuple[bool, bool] | None,
    out: list[str],
) -> None:
    for node in nodes:
        if isinstance(node, Text):
            out.append(node.text)
        elif isinstance(node, Var):
            out.append(str(_lookup(scope, node.name)))
        elif isinstance(node, For):
            items = list(_lookup(scope, node.items))
            if not items:
                continue
            pieces = _loop_pieces(node, items, scope)
            if pieces is not None:
                out.extend(pieces)
                continue
            inner = dict(scope)
            last = len(items) - 1
            for position, item in enumerate(items):
                inner[node.target] = item
                _render(node.body, inner, (position == 0, position == last), out)
        else:
            if node.test == "loop.first" or node.test == "loop.last":
                if loop is None:
                    raise Unsupported("loop outside a for")
                value = loop[0] if node.test == "loop.first" else loop[1]
            else:
                value = bool(_lookup(scope, node.test))
            _render(node.then if value != node.negate else node.otherwise, scope, loop, out)


def _loop_pieces(node: For, items: list[Any], scope: Mapping[str, Any]) -> list[str] | None:
    """A loop whose body is text, names and `if`s on `loop.first`, `loop.last` or outer
    names, with the loop's own name once (the SDK's declarations and members): its pieces,
    laid out by slicing instead of a walk of the body per item; None for any other body.
    Only the shapes the items need are worked out, so a name is looked up only where the
    walk would look it up."""
    count = len(items)
    if count == 1:
        only = _loop_shape(node, scope, True, True)
        return None if only is None else [only[0], str(items[0]), only[1]]
    first = _loop_shape(node, scope, True, False)
    last = _loop_shape(node, scope, False, True)
    middle = _loop_shape(node, scope, False, False) if count > 2 else ("", "")
    if first is None or last is None or middle is None:
        return None
    pieces = [""] * (3 * count)
    pieces[0::3] = [first[0], *[middle[0]] * (count - 2), last[0]]
    pieces[1::3] = map(str, items)
    pieces[2::3] = [first[1], *[middle[1]] * (count - 2), last[1]]
    return pieces


def _loop_shape(
    node: For, scope: Mapping[str, Any], first: bool, last: bool
) -> tuple[str, str] | None:
    """The text before and after the item for an item at this place, or None when the
    body is not text around the item."""
    before: list[str] = []
    after: list[str] = []
    current = [before]
    if not _shape(node.body, node.target, scope, (first, last), [before, after], current):
        return None
    if current[0] is before:
        return None  # the item not at all
    return "".join(before), "".join(after)


def _shape(
    nodes: Sequence[Node],
    target: str,
    scope: Mapping[str, Any],
    loop: tuple[bool, bool],
    sides: list[list[str]],
    current: list[list[str]],
) -> bool:
    for child in nodes:
        if isinstance(child, Text):
            current[0].append(child.text)
        elif isinstance(child, Var):
            if child.name != target:
                current[0].append(str(_lookup(scope, child.name)))
            elif current[0] is sides[0]:
                current[0] = sides[1]
            else:
                return False  # the item twice
        elif isinstance(child, If):
            if child.test == "loop.first" or child.test == "loop.last":
                value = loop[0] if child.test == "loop.first" else loop[1]
            elif child.test == target:
                return False
            else:
                value = bool(_lookup(scope, child.test))
            branch = child.then if value != child.negate else child.otherwise
            if not _shape(branch, target, scope, loop, sides, current):
                return False
        else:
            return False
    return True


def _lookup(scope: Mapping[str, Any], name: str) -> Any:
    try:
        return scope[name]
    except KeyError:
        raise NameError(f"template value {name!r} is undefined") from None
