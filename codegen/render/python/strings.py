"""Python source text for strings that come from schemas: literals, comments, docstrings.

Every string a schema supplies is escaped where it lands, so no description, key or enum
value can become code, a pragma a checker obeys, or a line break inside a literal. Pure
functions of their input, shared by the SDK's declarations and its `Tools` protocol.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ..._support.run_memos import per_run
from ..text import escape_hidden

PRAGMAS = (
    "type:",
    "mypy:",
    "pyright:",
    "fmt:",
    "yapf:",
    "pylint:",
    "ruff:",
    "isort:",
    "noqa",
    "pragma:",
    "nosec",
    "pyre-",
    "pytype:",
    "black:",
)
"""Comment prefixes some tool reads as an instruction; description text that starts with
one is quoted so no checker or formatter obeys a schema."""

_FORMATTER_DIRECTIVES = frozenset(
    {"fmt: off", "fmt:off", "fmt: on", "fmt:on", "fmt: skip", "fmt:skip"}
    | {"yapf: disable", "yapf: enable"}
)
"""What `black` obeys anywhere in a comment, not only at its start: as a piece between
`# ` marks (`# text # fmt: skip`) or between `;` (`# text; fmt: skip`)."""
_DIRECTIVE_WORDS = re.compile(r"fmt: ?(?:off|on|skip)|yapf: (?:disable|enable)")


# --- strings ------------------------------------------------------------------------------


def py_str(value: str) -> str:
    """A Python string literal for any text, quoted the way `black` leaves it: double
    quotes unless single quotes need fewer escapes; every hidden or line-breaking character
    escaped, so the literal always stays on one line and is valid UTF-8."""
    if (
        value.isascii()
        and value.isprintable()
        and '"' not in value
        and "\\" not in value
        and "```" not in value
    ):
        return f'"{value}"'
    body = escape_hidden(value.replace("\\", "\\\\")).replace("\n", "\\n").replace("\t", "\\t")
    if "```" in body:  # never three backticks in a row: the SDK may sit in a Markdown fence
        body = body.replace("`", "\\x60")
    if body.count('"') > body.count("'"):
        return "'" + body.replace("'", "\\'") + "'"
    return '"' + body.replace('"', '\\"') + '"'


class _Text(str):
    """Finished output text on `py_literal`'s work stack (never a value to convert)."""


def py_literal(value: Any) -> str:
    """A JSON value in Python literal syntax (`True`, `None`, exact integers). Iterative:
    a default may nest as deep as its document (`json_text.MAX_NESTING`), far past the
    recursion limit the renderers run under."""
    if isinstance(value, str):  # enum members, most defaults: no work stack needed
        return py_str(value)
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Text):
            out.append(item)
        elif item is None:
            out.append("None")
        elif item is True:
            out.append("True")
        elif item is False:
            out.append("False")
        elif isinstance(item, str):
            out.append(py_str(item))
        elif isinstance(item, int):
            out.append(str(item))
        elif isinstance(item, float):
            out.append(repr(item))
        elif isinstance(item, list | dict):
            pairs = list(item.items()) if isinstance(item, dict) else [(None, v) for v in item]
            stack.append(_Text("}" if isinstance(item, dict) else "]"))
            for index in range(len(pairs) - 1, -1, -1):
                key, child = pairs[index]
                stack.append(child)
                if key is not None:
                    stack.append(_Text(f"{py_str(key)}: "))
                if index:
                    stack.append(_Text(", "))
            stack.append(_Text("{" if isinstance(item, dict) else "["))
        else:
            out.append(repr(item))
    return "".join(out)


@per_run
def json_to_py(text: str) -> str:
    """Compact JSON text (as the IR keeps defaults and examples) as a Python literal.
    Memoized per run: the same defaults (`10`, `true`, `"json"`) recur across a catalog."""
    return py_literal(json.loads(text))


# --- comments and docstrings --------------------------------------------------------------


def comment_lines(lines: Iterable[str], indent: str) -> list[str]:
    """`# text` lines; text that a tool would read as a pragma is quoted with `> `."""
    result = []
    for line in lines:
        text = line.rstrip()
        if text.lstrip().lower().startswith(PRAGMAS):
            text = "> " + text
        if _formatter_directive(text):
            text = _DIRECTIVE_WORDS.sub(lambda found: "> " + found.group(), text)
        result.append(f"{indent}# {text}" if text else f"{indent}#")
    return result


def _formatter_directive(text: str) -> bool:
    """Whether `black` would read the comment `# text` as a directive: the pieces it
    compares are those after each `# ` and those between `;` of the whole comment."""
    if "fmt:" not in text and "yapf:" not in text:
        return False
    line = "# " + text
    pieces = line.split("# ")[1:] + line.strip("# ").split(";")
    return any(piece.strip() in _FORMATTER_DIRECTIVES for piece in pieces)


def _docstring_text(line: str) -> str:
    """One docstring line: backslashes doubled (no escape can form), and quotes escaped
    where they could close the docstring or touch its delimiters."""
    text = line.replace("\\", "\\\\")
    if '"' not in text:
        return text
    out = []
    for index, char in enumerate(text):
        if char == '"' and (
            index == 0
            or index == len(text) - 1
            or text[index - 1 : index] == '"'
            or text[index + 1 : index + 2] == '"'
        ):
            out.append('\\"')
        else:
            out.append(char)
    return "".join(out)


def docstring(lines: tuple[str, ...], indent: str) -> list[str]:
    """A docstring `black` leaves unchanged: one line, or the first line after the opening
    quotes and the closing quotes on their own line."""
    body = [_docstring_text(line) for line in lines]
    if len(body) == 1:
        end = " " if body[0].endswith('"') else ""
        return [f'{indent}"""{body[0]}{end}"""']
    rest = [f"{indent}{line}" if line else "" for line in body[1:]]
    return [f'{indent}"""{body[0]}', *rest, f'{indent}"""']
