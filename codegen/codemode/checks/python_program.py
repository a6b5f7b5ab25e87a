"""A run_code program made into a module the checker reads, and the way back to its lines.

The worker runs a program as the body of `async def __program__()` with `tools`, `catalog`
and `ToolCallError` bound; the checked module is the same body under a header that binds
them from the checkable stub (`python_stub`). Lines are indented as the worker indents them
(a multi-line string's continuation lines are left alone), so a position maps back by the
header's length and the indent. Three rewrites make the worker's call forms checkable, each
inside one line, and each undone when a position is mapped back:

- `tools["get-user"]` (a literal name) becomes `tools.__tool_N` or `tools.name`; a literal
  name no tool has is a mistake found here, before any checker;
- `tools[expression]` becomes `tools.__getitem__(expression)`: any tool, unchecked;
- the one-dict call form `tools.name({...})` becomes `tools.name(**{...})`, whose keys a
  checker does not hold against the parameters (what it cannot know never refuses).

Also recorded, for what a diagnostic is sure of: where each call argument that is a literal
sits, and where each `**` argument does.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field

from .python_stub import DYNAMIC, MODULE, CheckableStub, ToolFunction

HEADER = (
    "from typing import Any\n"
    f"import {MODULE} as tools\n"
    f"from {MODULE} import ToolCallError, catalog\n"
    "async def __program__():\n"
)
HEADER_LINES = HEADER.count("\n")
INDENT = "    "

Position = tuple[int, int]
"""(line, column) in the wrapped module, both 0-based, the column in characters."""


@dataclass(frozen=True, slots=True)
class Edit:
    line: int
    column: int
    """Where the original text starts (0-based, characters)."""
    removed: int
    inserted: str


@dataclass(frozen=True, slots=True)
class UnknownName:
    """A literal name in `tools["..."]` that no visible tool has."""

    name: str
    line: int
    column: int
    """1-based, in the program."""


@dataclass(frozen=True)
class CheckableProgram:
    text: str
    """The module the checker reads."""
    edits: tuple[Edit, ...]
    indented: frozenset[int]
    """Wrapped lines the indent was added to."""
    literals: tuple[tuple[Position, Position], ...]
    """Spans (wrapped, before the rewrites) of call arguments, and of their items, that are
    literals: a mistake the checker finds there is certain."""
    spreads: tuple[tuple[Position, Position], ...]
    """Spans of `**` arguments (the program's and the dict form's): nothing there is."""
    unknown: tuple[UnknownName, ...] = ()
    calls: dict[Position, str] = field(default_factory=dict)
    """Where each call of a tool starts (wrapped) -> the tool's name."""

    def original(self, line: int, column: int) -> Position:
        """A position the checker reports (after the rewrites) as it was before them."""
        for edit in sorted((e for e in self.edits if e.line == line), key=lambda e: e.column):
            start = edit.column
            if column < start:
                break
            if column < start + len(edit.inserted):
                return line, start
            column += edit.removed - len(edit.inserted)
        return line, column

    def program_position(self, line: int, column: int) -> Position:
        """A wrapped position (before the rewrites) as the program's 1-based line and
        column."""
        indent = len(INDENT) if line in self.indented else 0
        return line - HEADER_LINES + 1, max(0, column - indent) + 1

    def certain_at(self, position: Position) -> bool:
        """Whether the innermost argument at `position` is a literal outside any `**`."""
        if any(_inside(position, span) for span in self.spreads):
            return False
        return any(_inside(position, span) for span in self.literals)

    def in_spread(self, position: Position) -> bool:
        return any(_inside(position, span) for span in self.spreads)


def _inside(position: Position, span: tuple[Position, Position]) -> bool:
    start, end = span
    return start <= position < end


def checkable_program(program: str, stub: CheckableStub) -> CheckableProgram | None:
    """The module to check, or None when the program does not parse (the worker reports a
    syntax error with its line; no checker is needed for that)."""
    keep = _string_continuations(program)
    lines = program.splitlines() or ["pass"]
    indented: set[int] = set()
    body: list[str] = []
    for number, line in enumerate(lines, start=1):
        if number in keep:
            body.append(line)
        else:
            indented.add(HEADER_LINES + number - 1)
            body.append(INDENT + line)
    wrapped = HEADER + "\n".join(body) + "\n" + INDENT + "pass\n"
    try:
        tree = ast.parse(wrapped)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    source = wrapped.split("\n")
    finder = _Finder(source, stub)
    try:
        finder.visit(tree)
    except RecursionError:
        return None
    return CheckableProgram(
        _applied(source, finder.edits),
        tuple(finder.edits),
        frozenset(indented),
        tuple(finder.literals),
        tuple(finder.spreads),
        tuple(finder.unknown_names(indented)),
        finder.calls,
    )


def _string_continuations(program: str) -> set[int]:
    """Lines (1-based) that continue a multi-line string: the worker leaves them as they
    are, or the string's text would change."""
    keep: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(program).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                keep.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError, RecursionError):
        pass
    return keep


def _applied(source: list[str], edits: list[Edit]) -> str:
    lines = list(source)
    for edit in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        text = lines[edit.line]
        lines[edit.line] = text[: edit.column] + edit.inserted + text[edit.column + edit.removed :]
    return "\n".join(lines)


def is_literal(node: ast.AST) -> bool:
    """A value written out in the program: a constant, an f-string, a signed number, or a
    list, tuple, set or dict display of literals (no `*` or `**` inside)."""
    if isinstance(node, ast.Constant):
        return node.value is not Ellipsis
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return isinstance(node.operand, ast.Constant) and isinstance(
            node.operand.value, int | float
        )
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(is_literal(item) for item in node.elts)
    if isinstance(node, ast.Dict):
        return all(
            key is not None and is_literal(key) and is_literal(value)
            for key, value in zip(node.keys, node.values, strict=True)
        )
    return False


class _Finder(ast.NodeVisitor):
    def __init__(self, source: list[str], stub: CheckableStub) -> None:
        self.source = source
        self.tools = stub.by_name()
        self.functions = stub.by_function()
        self.edits: list[Edit] = []
        self.literals: list[tuple[Position, Position]] = []
        self.spreads: list[tuple[Position, Position]] = []
        self.unknown: list[tuple[str, Position]] = []
        self.calls: dict[Position, str] = {}

    def column(self, line: int, byte_offset: int) -> int:
        """A character column from `ast`'s UTF-8 byte offset (line 1-based)."""
        text = self.source[line - 1]
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", "replace"))

    def start(self, node: ast.AST) -> Position:
        line = node.lineno  # type: ignore[attr-defined]
        return line - 1, self.column(line, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> Position:
        line = node.end_lineno  # type: ignore[attr-defined]
        return line - 1, self.column(line, node.end_col_offset)  # type: ignore[attr-defined]

    # --- names ---------------------------------------------------------------------------

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.value, ast.Name) and node.value.id == "tools":
            self._rewrite_subscript(node)
        self.generic_visit(node)

    def _rewrite_subscript(self, node: ast.Subscript) -> None:
        (line, bracket) = self.end(node.value)
        (end_line, end) = self.end(node)
        name = node.slice
        literal = name.value if isinstance(name, ast.Constant) else None
        if isinstance(literal, str) and end_line == line and self.source[line][bracket] == "[":
            found = self.tools.get(literal)
            if found is not None:
                self.edits.append(Edit(line, bracket, end - bracket, "." + found.function))
                return
            self.unknown.append((literal, self.start(node)))
        if self.source[line][bracket : bracket + 1] != "[":
            return  # `tools [x]`, spaced: left alone (rare)
        self.edits.append(Edit(line, bracket, 1, f".{DYNAMIC}("))
        self.edits.append(Edit(end_line, end - 1, 1, ")"))

    # --- calls ---------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        tool = self._called_tool(node.func)
        if tool is not None:
            self.calls[self.start(node)] = tool.name
            self._arguments(node, tool)
        self.generic_visit(node)

    def _called_tool(self, func: ast.AST) -> ToolFunction | None:
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "tools"
        ):
            return self.tools.get(func.attr) if func.attr in self.tools else None
        if (
            isinstance(func, ast.Subscript)
            and isinstance(func.value, ast.Name)
            and func.value.id == "tools"
            and isinstance(func.slice, ast.Constant)
            and isinstance(func.slice.value, str)
        ):
            return self.tools.get(func.slice.value)
        return None

    def _arguments(self, node: ast.Call, tool: ToolFunction) -> None:
        one_dict = (
            tool.keywords
            and len(node.args) == 1
            and not node.keywords
            and not isinstance(node.args[0], ast.Starred)
            and (isinstance(node.args[0], ast.Dict) or not is_literal(node.args[0]))
        )
        if one_dict:
            line, column = self.start(node.args[0])
            self.edits.append(Edit(line, column, 0, "**"))
            self.spreads.append((self.start(node.args[0]), self.end(node.args[0])))
            return
        values = [*node.args, *(k.value for k in node.keywords)]
        for keyword in node.keywords:
            if keyword.arg is None:
                self.spreads.append((self.start(keyword), self.end(keyword)))
            elif is_literal(keyword.value):
                self.literals.append((self.start(keyword), self.end(keyword)))
        for value in values:
            self._literal_parts(value)

    def _literal_parts(self, node: ast.AST) -> None:
        """Every literal inside an argument (the whole of it, or an item of a display)."""
        if is_literal(node):
            self.literals.append((self.start(node), self.end(node)))
            return
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            for item in node.elts:
                self._literal_parts(item)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:
                    self.spreads.append((self.start(value), self.end(value)))
                else:
                    self._literal_parts(value)

    def unknown_names(self, indented: set[int]) -> list[UnknownName]:
        found = []
        for name, (line, column) in self.unknown:
            indent = len(INDENT) if line in indented else 0
            found.append(UnknownName(name, line - HEADER_LINES + 1, column - indent + 1))
        return found
