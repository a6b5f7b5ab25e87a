"""The Python section turned into a module a checker can hold a program against.

The section (`render/sections/python.py`) is already a valid stub of `tools`; three things
keep it from checking a program as the worker runs it, and only those change:

- a tool under `@tool("get-user")` is `async def _`, so every such tool would be one name:
  each becomes `async def __tool_N` (a name no tool function can have: the section never
  makes a dunder-led one), and `tools["get-user"]` in a program is rewritten to
  `tools.__tool_N`;
- a name found at run time (`tools[name]`) must check as "some tool": a module-level
  `__getitem__(name: str)` returning any coroutine function;
- JSON has no tuples: a model passes a list where the section shows `tuple[...]`, so every
  `tuple[...]` annotation is `Any` here (a checker then knows nothing about it, and what it
  cannot know never refuses a run).

`ToolCallError` also gets the `message` the worker's exception carries.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ...render.python.strings import py_str

MODULE = "sdk"
"""The stub's module name inside the checker's folder (`sdk.pyi`)."""
DYNAMIC = "__getitem__"
"""The stub's function a program's `tools[expression]` is rewritten to call."""
TOOL_CALL_ERROR = "class ToolCallError(Exception): tool_name: str"

_DECORATED = re.compile(r'^@tool\((".*")\)\nasync def _\(', re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ToolFunction:
    name: str
    """The tool's name."""
    function: str
    """Its function in the checkable stub (`read_file`, `__tool_3`)."""
    call: str
    """How a program calls it: `tools.read_file` or `tools["get-user"]`."""
    declaration: str
    """Its signature as the section shows it (docstring left out): the help of a wrong call."""
    keywords: bool
    """Whether it takes keyword arguments (else one positional dict, `(args: X, /)`)."""


@dataclass(frozen=True, slots=True)
class CheckableStub:
    text: str
    """The module's text (`sdk.pyi`)."""
    tools: tuple[ToolFunction, ...]
    closed: frozenset[str]
    """TypedDicts declared `closed=True`: an unknown key in a literal of one is a definite
    mistake; another takes other keys."""

    def by_name(self) -> dict[str, ToolFunction]:
        return {each.name: each for each in self.tools}

    def by_function(self) -> dict[str, ToolFunction]:
        return {each.function: each for each in self.tools}


def checkable_stub(section: str) -> CheckableStub:
    """The checkable module of a Python section's SDK text (what `describe` and the full
    section show)."""
    names: dict[str, str] = {}

    def undecorate(match: re.Match[str]) -> str:
        function = f"__tool_{len(names) + 1}"
        names[function] = ast.literal_eval(match.group(1))
        return f"async def {function}("

    text = _DECORATED.sub(undecorate, section)
    text = text.replace(TOOL_CALL_ERROR, TOOL_CALL_ERROR + "; message: str", 1)
    tree = ast.parse(text)
    lines = text.split("\n")  # the section's own spelling, for the help of a wrong call
    text = _loosened_tuples(text, tree)
    tools: list[ToolFunction] = []
    closed: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.AsyncFunctionDef):
            name = names.get(node.name, node.name)
            call = f"tools.{name}" if node.name == name else f"tools[{py_str(name)}]"
            keywords = not node.args.posonlyargs and not node.args.args
            declaration = _signature(node, lines)
            if node.name != name:
                plain = f"async def {node.name}("
                declaration = declaration.replace(plain, f"@tool({py_str(name)})\nasync def _(", 1)
            tools.append(ToolFunction(name, node.name, call, declaration, keywords))
        elif isinstance(node, ast.ClassDef) and _closed(node.keywords):
            closed.add(node.name)
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _closed(node.value.keywords)
        ):
            closed.update(t.id for t in node.targets if isinstance(t, ast.Name))
    text += (
        f"\ndef {DYNAMIC}(name: str, /) -> Callable[..., Coroutine[Any, Any, Any]]: ...\n"
        "class _Catalog:\n"
        " async def search(self, query: str | list[str], k: int = 8,"
        " server: str | None = None) -> Any: ...\n"
        " async def describe(self, name: str) -> str: ...\n"
        " async def servers(self) -> list[dict[str, Any]]: ...\n"
        " async def names(self, server: str | None = None) -> list[str]: ...\n"
        "catalog: _Catalog\n"
    )
    return CheckableStub(text, tuple(tools), frozenset(closed))


def _closed(keywords: list[ast.keyword]) -> bool:
    return any(
        k.arg == "closed" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in keywords
    )


_DITTO = re.compile(r"\s*# ditto$")


def _signature(node: ast.AsyncFunctionDef, lines: list[str]) -> str:
    """The function's lines up to its body (its parameters, their comments, the result),
    without `# ditto` (it points at a comment the help does not show)."""
    end = node.body[0].lineno - 1 if node.body else node.end_lineno or node.lineno
    head = [_DITTO.sub("", line) for line in lines[node.lineno - 1 : max(end, node.lineno)]]
    if head and head[-1].rstrip().endswith(": ..."):
        return "\n".join(head)
    while len(head) > 1 and head[-1].lstrip().startswith(("#", '"""')):
        head.pop()  # the result's comments and the docstring's first line
    return "\n".join(head)


def _loosened_tuples(text: str, tree: ast.Module) -> str:
    """Every outermost `tuple[...]` annotation replaced by `Any` (a list passes for it)."""
    spans: list[tuple[int, int, int, int]] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "tuple"
            and node.end_lineno is not None
            and node.end_col_offset is not None
        ):
            spans.append((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset))
    if not spans:
        return text
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line.encode("utf-8")) + 1)
    data = text.encode("utf-8")
    ranges = sorted(
        (starts[line - 1] + col, starts[end_line - 1] + end_col)
        for line, col, end_line, end_col in spans
    )
    pieces: list[bytes] = []
    position = 0
    for start, end in ranges:
        if start < position:
            continue  # inside an outer tuple already replaced
        pieces += [data[position:start], b"Any"]
        position = end
    pieces.append(data[position:])
    return b"".join(pieces).decode("utf-8")
