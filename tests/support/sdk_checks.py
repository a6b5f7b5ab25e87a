"""Checks that hold for every SDK the generator writes, whatever the input.

`check_value` runs the pipeline on one decoded input and checks properties 1-4 of the
robustness contract on the result:

1. compiling never raises: it gives a catalog or error diagnostics; rendering a catalog
   never raises;
2. the Python module parses, holds exactly the expected statements (`check_structure`),
   every docstring is one string token; the declarations file holds exactly the expected
   declarations and members (`check_typescript`, and `tsc_failures` with the real compiler);
3. nothing from a schema becomes code: every annotation is made of the expected node
   kinds and names, the keys, literal values and docstrings read back exactly as the schema
   wrote them, no comment is a pragma, and no injection marker is ever a name token; no raw
   control, line-separator, bidirectional or surrogate character reaches the output;
4. the bytes do not depend on tool order or keyword order (`shuffled_catalog`), nor on the
   hash seed (`subprocess_renders`).

A violated property raises `PropertyFailure`. Used by the golden-file tests, the Hypothesis
tests, `bench/fuzz.py` and the escaping mutation check.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import io
import json
import os
import re
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from codegen import ir
from codegen.engine import compile_value
from codegen.identifiers import is_method_name
from codegen.pipeline import Compiled
from codegen.render.python.protocol import OVERLOAD_LIMIT
from codegen.render.python.sdk import docs_lines, render_python_sdk
from codegen.render.sections.python import function_name
from codegen.render.sections.python import render_python_section_sdk as render_python_model_sdk
from codegen.render.text import description_lines
from codegen.render.typescript.sdk import render_typescript_sdk
from conftest import ROOT
from support.robustness_strategies import MARKER_WORDS, shuffled_catalog


class PropertyFailure(AssertionError):
    """A robustness property does not hold for one input."""


def require(condition: object, message: str) -> None:
    if not condition:
        raise PropertyFailure(message)


# --- the whole pipeline -------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    """One input through the pipeline: the compile result and, without errors, both SDKs."""

    compiled: Compiled
    python: str | None
    typescript: str | None
    python_model: str | None = None

    @property
    def catalog(self) -> ir.Catalog | None:
        return self.compiled.catalog


def render_value(value: Any) -> Rendered:
    """Property 1: compile and render, never raising."""
    try:
        compiled = compile_value(value)
    except Exception as error:
        raise PropertyFailure(f"compile_value raised {type(error).__name__}: {error}") from error
    if compiled.catalog is None:
        require(compiled.errors, "no catalog but no error diagnostic either")
        return Rendered(compiled, None, None)
    try:
        python = render_python_sdk(compiled.catalog)
        typescript = render_typescript_sdk(compiled.catalog)
        python_model = render_python_model_sdk(compiled.catalog)
    except Exception as error:
        raise PropertyFailure(f"rendering raised {type(error).__name__}: {error}") from error
    return Rendered(compiled, python, typescript, python_model)


def check_value(value: Any, shuffle_seed: int | None = 0) -> Rendered:
    """Properties 1-4 (all but the hash seed and tsc, which run in batches) for one input."""
    rendered = render_value(value)
    if rendered.catalog is not None:
        assert rendered.python is not None and rendered.typescript is not None
        check_python(rendered.python, rendered.catalog)
        assert rendered.python_model is not None
        check_python_model(rendered.python_model, rendered.catalog)
        check_typescript(rendered.typescript, rendered.catalog)
    if shuffle_seed is not None:
        check_order_independent(value, rendered, shuffle_seed)
    return rendered


def check_order_independent(value: Any, rendered: Rendered, seed: int) -> None:
    """Property 4: tools, record keys and schema keywords in another order give the same
    bytes (or errors again)."""
    again = render_value(shuffled_catalog(value, seed))
    require(
        (again.catalog is None) == (rendered.catalog is None),
        "reordering the input changed whether it compiles",
    )
    require(again.python == rendered.python, "reordering the input changed the Python SDK")
    require(
        again.python_model == rendered.python_model,
        "reordering the input changed the model-facing Python SDK",
    )
    require(again.typescript == rendered.typescript, "reordering the input changed the .d.ts")


# --- text of either language ---------------------------------------------------------------

FORBIDDEN_RAW = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\ud800-\udfff]"
)
"""Characters that must never appear raw in generated code: tabs and every control character
but the newline, line and paragraph separators, invisible and bidirectional formatting
characters (they can hide or reorder code), and lone surrogates (not UTF-8)."""


def check_text(text: str, language: str) -> None:
    """The file is UTF-8, its only line break is `\\n`, nothing in it is hidden, and it
    never holds three backticks in a row (it may sit in a Markdown fence)."""
    found = FORBIDDEN_RAW.search(text)
    if found is not None:
        where = text[max(0, found.start() - 60) : found.start() + 20]
        raise PropertyFailure(f"{language}: raw {found.group()!a} in {where!r}")
    require(len(text.splitlines()) == text.count("\n"), f"{language}: a line break other than \\n")
    require("```" not in text, f"{language}: three backticks in a row")
    require(text.endswith("\n") and not text.endswith("\n\n"), f"{language}: bad file end")


def spelled_as_map(named: ir.ObjectType) -> bool:
    """An object with the empty key, which no TypedDict may declare: the Python SDK spells
    it as `dict[str, ...]` and lists its keys in comments."""
    return any(item.key == "" for item in named.fields)


def ir_literal_strings(catalog: ir.Catalog, extras: bool = True, python: bool = False) -> set[str]:
    """Every string an enum or const contributes to a type anywhere in the catalog (also in
    the types of undeclared keys unless `extras` is false: a TypedDict cannot spell them)."""
    nodes: list[ir.TypeNode] = []
    for named in catalog.types:
        if python and isinstance(named, ir.ObjectType) and spelled_as_map(named):
            continue  # Python lists its keys and their types in comments only
        if isinstance(named, ir.ObjectType):
            nodes.extend(f.type for f in named.fields)
            nodes.extend([named.extra] if named.extra is not None and extras else [])
        else:
            nodes.append(named.target)
    for tool in catalog.tools:
        nodes.extend([tool.args, *([tool.output] if tool.output is not None else [])])
    found: set[str] = set()
    while nodes:
        node = nodes.pop()
        if isinstance(node, ir.LiteralType):
            found.update(v for v in node.values if isinstance(v, str))
        elif isinstance(node, ir.ArrayType):
            nodes.append(node.items)
        elif isinstance(node, ir.MapType):
            nodes.append(node.values)
        elif isinstance(node, ir.UnionType):
            nodes.extend(node.arms)
        elif isinstance(node, ir.TupleType):
            nodes.extend(node.items)
            nodes.extend([node.rest] if node.rest is not None else [])
    return found


# --- Python --------------------------------------------------------------------------------

PRAGMA = re.compile(
    r"#\s*(type\s*:|mypy\s*:|pyright\s*:|fmt\s*:|yapf\s*:|pylint\s*:|ruff\s*:|isort\s*:|noqa"
    r"|pragma\s*:|nosec|pyre-|pytype\s*:|black\s*:)",
    re.IGNORECASE,
)
"""A comment that some checker or formatter obeys."""

SUBSCRIPTABLE = frozenset(
    {"Literal", "NotRequired", "list", "dict", "tuple", "SequenceNotStr", "Mapping"}
)
TYPE_NAMES = frozenset({"Any", "Never", "str", "int", "float", "bool"})


def check_python(text: str, catalog: ir.Catalog) -> None:
    """Properties 2 and 3 for one Python SDK module."""
    module = _parsed(text)
    try:
        check_structure(module, catalog, text)
    except PropertyFailure:
        raise
    except AssertionError as error:
        raise PropertyFailure(f"python: unexpected structure: {error}") from error
    require(closed_as_open(text).startswith(python_header()), "python: the fixed header changed")
    _check_contents(
        module, catalog, text, module.body[header_statements(module) : -3], module.body[-2]
    )
    tools_class = module.body[-2]
    assert isinstance(tools_class, ast.ClassDef)
    names = frozenset(t.name for t in catalog.types)
    getitems = [n for n in tools_class.body if isinstance(n, ast.FunctionDef)]
    if len(catalog.tools) > OVERLOAD_LIMIT:
        [node] = getitems
        require(ast.unparse(node.args.args[1].annotation) == "ToolName", "python: __getitem__")
    else:
        for node, tool in zip(getitems, catalog.tools, strict=True):
            _check_overload(node, tool, names, len(catalog.tools) > 1)
    alias = module.body[-3]
    assert isinstance(alias, ast.AnnAssign) and alias.value is not None
    listed = [e.value for e in ast.walk(alias.value) if isinstance(e, ast.Constant)]
    require(listed == [t.name for t in catalog.tools], "python: ToolName lists other names")


def check_python_model(text: str, catalog: ir.Catalog) -> None:
    """Properties 2 and 3 for the model-facing Python SDK (the Code Mode section's stub):
    the fixed header, then one `async def` per tool in catalog order (its own name, or `_`
    under `@tool("<exact name>")`) with its description as the docstring, and only
    TypedDicts and aliases besides; Literal strings as the IR has them; no injected token."""
    module = _parsed(text)
    require(text.startswith(python_model_header()), "python section: the fixed header changed")
    body = module.body[SECTION_HEADER_STATEMENTS:]
    functions = [node for node in body if isinstance(node, ast.AsyncFunctionDef)]
    require(len(functions) == len(catalog.tools), "python section: not one function per tool")
    for node, tool in zip(functions, catalog.tools, strict=True):
        _check_section_function(node, tool, _declared_before(body, node))
    for node in body:
        if isinstance(node, ast.AsyncFunctionDef):
            continue
        if isinstance(node, ast.ClassDef):
            require(ast.unparse(node.bases[0]) == "TypedDict", "python section: a class base")
            continue
        if isinstance(node, ast.Assign):
            call = node.value
            require(
                isinstance(call, ast.Call) and ast.unparse(call.func) == "TypedDict",
                f"python section: an assignment that is no TypedDict: {ast.unparse(node):.200}",
            )
            continue
        require(
            isinstance(node, ast.AnnAssign) and ast.unparse(node.annotation) == "TypeAlias",
            f"python section: an unexpected statement: {ast.unparse(node):.200}",
        )
    literals = {
        value.value
        for node in ast.walk(module)
        if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "Literal"
        for value in ast.walk(node.slice)
        if isinstance(value, ast.Constant) and isinstance(value.value, str)
    }
    least = ir_literal_strings(catalog, extras=False, python=True)
    most = ir_literal_strings(catalog, extras=True)
    require(
        least <= literals <= most,
        f"python section: Literal strings differ from the IR: {sorted(literals ^ least)!r:.300}",
    )
    _check_docstring_tokens(module, text)
    _check_tokens(text)


SECTION_HEADER_STATEMENTS = 4
"""The typing import, `F`, `tool` and `ToolCallError`."""


def _declared_before(body: list[ast.stmt], function: ast.AsyncFunctionDef) -> set[str]:
    """Type names the section declares above `function`."""
    names: set[str] = set()
    for node in body[: body.index(function)]:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _check_section_function(
    node: ast.AsyncFunctionDef, tool: ir.Tool, declared_before: set[str]
) -> None:
    name = function_name(tool.name)
    if name in declared_before:  # an earlier tool's type holds the name: `@tool` instead
        name = ""
    if name:
        require(
            node.name == name and not node.decorator_list,
            f"python section: {tool.name!r} is not its own function",
        )
    else:
        decorator = node.decorator_list[0] if len(node.decorator_list) == 1 else None
        require(
            node.name == "_"
            and isinstance(decorator, ast.Call)
            and ast.unparse(decorator.func) == "tool"
            and isinstance(decorator.args[0], ast.Constant)
            and decorator.args[0].value == tool.name,
            f"python section: {tool.name!r} is not marked @tool with its exact name",
        )
    description = _hinted(description_lines(tool.description), tool.annotations)
    if description:
        _check_docstring_value(node.body[0], description, f"python section: {tool.name!r}")
    else:
        require(not _is_docstring(node.body[0]), f"python section: {tool.name!r} docstring")


def _hinted(lines: tuple[str, ...], annotations: str | None) -> tuple[str, ...]:
    """A tool's description lines led by its annotation hints, as the section writes them
    (`[read-only, closed-world] ...`): the rule of `render/sections/hints.py`, written again
    here. An exact `true` shows, an exact `false` only against MCP's default of `true`;
    `destructive` and `idempotent` never beside `read-only`."""
    data = json.loads(annotations) if annotations else None
    if not isinstance(data, dict):
        return lines
    read_only = data.get("readOnlyHint") is True
    table = (
        ("readOnlyHint", "read-only", None),
        ("destructiveHint", "destructive", "non-destructive"),
        ("idempotentHint", "idempotent", None),
        ("openWorldHint", "open-world", "closed-world"),
    )
    marks = [
        (when_true if data.get(key) is True else when_false)
        for key, when_true, when_false in table
        if not (read_only and key in ("destructiveHint", "idempotentHint"))
        and (data.get(key) is True or (data.get(key) is False and when_false))
    ]
    if not marks:
        return lines
    tag = "[" + ", ".join(str(mark) for mark in marks) + "]"
    return (f"{tag} {lines[0]}", *lines[1:]) if lines else (tag,)


def _parsed(text: str) -> ast.Module:
    check_text(text, "python")
    try:
        return ast.parse(text)
    except SyntaxError as error:
        raise PropertyFailure(f"python: does not parse: {error}") from error


def _check_contents(
    module: ast.Module,
    catalog: ir.Catalog,
    text: str,
    declared: list[ast.stmt],
    tools_class: ast.stmt,
) -> None:
    """Declarations and methods hold only type syntax, the IR's keys and literal strings
    and escaped docstrings; no token is injected."""
    names = frozenset(t.name for t in catalog.types)
    literals: set[str] = set()
    for node, named in zip(declared, catalog.types, strict=True):
        _check_declaration(node, named, names, literals)
    assert isinstance(tools_class, ast.ClassDef)
    methods = [t for t in catalog.tools if is_method_name(t.name)]
    defined = [n for n in tools_class.body if isinstance(n, ast.AsyncFunctionDef)]
    for member, tool in zip(defined, methods, strict=True):
        _check_method(member, tool, names, literals)
    expected = ir_literal_strings(catalog, extras=False, python=True)
    require(
        literals == expected,
        f"python: Literal strings differ from the IR: {sorted(literals ^ expected)!r:.300}",
    )
    _check_docstring_tokens(module, text)
    _check_tokens(text)


HEADER_STATEMENTS = 7
"""Docstring, two imports, `SequenceNotStr` (under `if TYPE_CHECKING`), `ToolCallError`,
`_UnboundTools` and its message; one more, `typing_extensions`' `TypedDict`, in a module that
declares a closed one (`header_statements`)."""

EXTENSION_IMPORT = "from typing_extensions import TypedDict as TypedDict"


def header_statements(module: ast.Module) -> int:
    """The statements before the first declaration: one more when the module imports
    `TypedDict` from `typing_extensions`, which it does exactly when it declares a TypedDict
    `closed=True` (typing's takes no `closed` at run time)."""
    closed = any(
        isinstance(node, ast.ClassDef | ast.Call)
        and any(ast.unparse(k) == "closed=True" for k in node.keywords)
        for node in ast.walk(module)
    )
    imported = any(ast.unparse(node) == EXTENSION_IMPORT for node in module.body)
    assert imported == closed, "typing_extensions' TypedDict is imported exactly when needed"
    return HEADER_STATEMENTS + closed


@cache
def python_header() -> str:
    """The part every Python SDK module starts with, whatever its tools."""
    text = render_python_sdk(ir.Catalog(()))
    return text[: text.index("\n\n\nToolName: TypeAlias")]


def closed_as_open(text: str) -> str:
    """A module's text with `TypedDict` imported from `typing` as a module without closed
    TypedDicts does: the header is otherwise the same for every tool set."""
    moved = f"\n\n# typing_extensions: a TypedDict that takes PEP 728's `closed=True` at runtime\n{EXTENSION_IMPORT}\n"
    if moved not in text:
        return text
    text = text.replace(moved, "\n", 1)
    return text.replace(
        "    TypeAlias as TypeAlias,\n",
        "    TypeAlias as TypeAlias,\n    TypedDict as TypedDict,\n",
        1,
    )


@cache
def python_model_header() -> str:
    """The part every model-facing Python SDK starts with, whatever its tools."""
    return render_python_model_sdk(ir.Catalog(()))


def check_structure(module: ast.Module, catalog: ir.Catalog, text: str) -> None:
    """The module holds exactly: docstring, the two imports (and a third, `TypedDict` from
    `typing_extensions`, when a TypedDict is `closed=True`), `SequenceNotStr` (a protocol
    for checkers, `Sequence` at runtime), ToolCallError, the unbound placeholder and its
    message, one statement per named type in IR order, the Tools `ToolName`, the Tools
    protocol (methods, then one `__getitem__` per tool) and `tools`."""
    body = module.body
    assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    assert isinstance(body[1], ast.ImportFrom) and body[1].module == "collections.abc"
    assert isinstance(body[2], ast.ImportFrom) and body[2].module == "typing"
    header = header_statements(module)
    if header > HEADER_STATEMENTS:
        assert ast.unparse(body[3]) == EXTENSION_IMPORT
        assert "TypedDict" not in {alias.name for alias in body[2].names}
        body = [*body[:3], *body[4:]]
    else:
        assert "TypedDict" in {alias.name for alias in body[2].names}
    assert isinstance(body[3], ast.If) and ast.unparse(body[3].test) == "TYPE_CHECKING"
    assert [ast.unparse(node) for node in body[3].orelse] == ["SequenceNotStr = Sequence"]
    assert isinstance(body[4], ast.ClassDef) and body[4].name == "ToolCallError"
    assert isinstance(body[5], ast.ClassDef) and body[5].name == "_UnboundTools"
    assert isinstance(body[6], ast.Assign) and ast.unparse(body[6].targets[0]) == "_UNBOUND"
    declared = body[HEADER_STATEMENTS:-3]
    assert [_declared_name(node) for node in declared] == [t.name for t in catalog.types]
    tools_class = body[-2]
    assert isinstance(tools_class, ast.ClassDef) and tools_class.name == "Tools"
    assert [ast.unparse(b) for b in tools_class.bases] == ["Protocol"]
    methods = [t for t in catalog.tools if is_method_name(t.name)]
    getitems = 1 if len(catalog.tools) > OVERLOAD_LIMIT else len(catalog.tools)
    if not catalog.tools:
        assert [type(n) for n in tools_class.body] == [ast.Pass]
    else:
        kinds = [type(n) for n in tools_class.body]
        assert kinds == [ast.AsyncFunctionDef] * len(methods) + [ast.FunctionDef] * getitems
        assert [n.name for n in tools_class.body[: len(methods)]] == [t.name for t in methods]
    _check_method_shapes(tools_class, methods)
    alias = body[-3]
    assert isinstance(alias, ast.AnnAssign) and ast.unparse(alias.target) == "ToolName"
    last = body[-1]
    assert isinstance(last, ast.AnnAssign)
    assert ast.unparse(last) == "tools: Tools = cast(Tools, _UnboundTools())"


def _check_method_shapes(tools_class: ast.ClassDef, methods: list[ir.Tool]) -> None:
    defined = [n for n in tools_class.body if isinstance(n, ast.AsyncFunctionDef)]
    for node, tool in zip(defined, methods, strict=True):
        assert [a.arg for a in node.args.args] == ["self", "args"]
        if tool.description and description_lines(tool.description):
            doc = node.body[0]
            assert isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)
            assert isinstance(doc.value.value, str)
            assert ast.get_docstring(node, clean=False) == doc.value.value
            assert len(node.body) == 2 and isinstance(node.body[1], ast.Expr)
        else:
            assert len(node.body) == 1
        assert node.body[-1].value.value is Ellipsis  # type: ignore[attr-defined]


def _check_overload(
    node: ast.FunctionDef, tool: ir.Tool, names: frozenset[str], many: bool
) -> None:
    """`tools["<exact name>"]`: `(self, name: Literal[<name>]) -> Callable[[A], Awaitable[R]]`,
    `@overload` when the class has more than one, the description as its docstring when the
    tool has no method to carry it."""
    where = f"python: Tools[{tool.name!r}]"
    require(node.name == "__getitem__", f"{where}: {node.name}")
    decorators = [ast.unparse(d) for d in node.decorator_list]
    require(decorators == (["overload"] if many else []), f"{where}: decorators {decorators}")
    parameters = node.args.args
    require([a.arg for a in parameters] == ["self", "name"], f"{where}: parameters")
    key = parameters[1].annotation
    require(
        isinstance(key, ast.Subscript)
        and ast.unparse(key.value) == "Literal"
        and isinstance(key.slice, ast.Constant)
        and key.slice.value == tool.name,
        f"{where}: keyed by {ast.unparse(key) if key else None!r:.200}",
    )
    returns = node.returns
    require(
        isinstance(returns, ast.Subscript) and ast.unparse(returns.value) == "Callable",
        f"{where}: returns",
    )
    assert isinstance(returns, ast.Subscript) and isinstance(returns.slice, ast.Tuple)
    arguments, awaited = returns.slice.elts
    assert isinstance(arguments, ast.List) and isinstance(awaited, ast.Subscript)
    for annotation in (*arguments.elts, awaited.slice):
        _check_annotation(annotation, names, set(), where)
    described = not is_method_name(tool.name) and bool(description_lines(tool.description))
    if described:
        _check_docstring_value(node.body[0], description_lines(tool.description), where)
    require(len(node.body) == 1 + described, f"{where}: body")


def _declared_name(node: ast.stmt) -> str:
    if isinstance(node, ast.ClassDef):
        assert [ast.unparse(b) for b in node.bases] == ["TypedDict"]
        return node.name
    if isinstance(node, ast.Assign):
        assert isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "TypedDict"
        [target] = node.targets
        assert isinstance(target, ast.Name)
        assert isinstance(node.value.args[0], ast.Constant)
        assert node.value.args[0].value == target.id
        return target.id
    assert isinstance(node, ast.AnnAssign) and ast.unparse(node.annotation) == "TypeAlias"
    assert isinstance(node.target, ast.Name)
    return node.target.id


def _closed_only(keywords: list[ast.keyword], named: ir.NamedType) -> bool:
    """A TypedDict's keywords: none, or `closed=True` for an object the IR closes."""
    if not keywords:
        return True
    closed = isinstance(named, ir.ObjectType) and named.extra is None
    return closed and [ast.unparse(k) for k in keywords] == ["closed=True"]


def _check_declaration(
    node: ast.stmt, named: ir.NamedType, names: frozenset[str], literals: set[str]
) -> None:
    """One named type: nothing but its fields (keys exactly the IR's), its docstring and
    annotations made of type syntax."""
    where = f"python: {named.name}"
    if isinstance(named, ir.ObjectType) and spelled_as_map(named):
        require(isinstance(node, ast.AnnAssign) and node.value is not None, where)
        assert isinstance(node, ast.AnnAssign) and node.value is not None
        require(
            ast.unparse(node.value).startswith(("dict[str, ", "Mapping[str, ")),
            f"{where}: not a map",
        )
        _check_annotation(node.value, names, set(), where)
        return
    if isinstance(named, ir.AliasType):
        require(isinstance(node, ast.AnnAssign) and node.value is not None, where)
        assert isinstance(node, ast.AnnAssign) and node.value is not None
        _check_annotation(node.value, names, literals, where)
        return
    if isinstance(node, ast.Assign):
        call = node.value
        require(
            isinstance(call, ast.Call)
            and len(call.args) == 2
            and _closed_only(call.keywords, named),
            f"{where}: TypedDict call shape",
        )
        assert isinstance(call, ast.Call)
        fields = call.args[1]
        require(isinstance(fields, ast.Dict), f"{where}: fields are not a dict display")
        assert isinstance(fields, ast.Dict)
        keys = [k.value if isinstance(k, ast.Constant) else None for k in fields.keys]
        require(keys == [f.key for f in named.fields], f"{where}: keys {keys!r:.200}")
        for value in fields.values:
            _check_annotation(value, names, literals, where)
        return
    require(isinstance(node, ast.ClassDef) and not node.decorator_list, where)
    assert isinstance(node, ast.ClassDef)
    require(_closed_only(node.keywords, named), f"{where}: class keywords")
    body = list(node.body)
    if body and _is_docstring(body[0]):
        _check_docstring_value(body.pop(0), docs_lines(named.docs), where)
    keys = []
    for statement in body:
        if isinstance(statement, ast.Pass):
            continue
        require(
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and statement.value is None
            and statement.simple == 1,
            f"{where}: a statement that is not a field: {ast.unparse(statement)[:200]!r}",
        )
        assert isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
        keys.append(statement.target.id)
        _check_annotation(statement.annotation, names, literals, where)
    require(keys == [f.key for f in named.fields], f"{where}: fields {keys!r:.200}")


def _check_method(node: ast.stmt, tool: ir.Tool, names: frozenset[str], literals: set[str]) -> None:
    where = f"python: Tools.{tool.name}"
    assert isinstance(node, ast.AsyncFunctionDef)
    arguments = node.args
    require(
        not node.decorator_list
        and not arguments.posonlyargs
        and not arguments.kwonlyargs
        and arguments.vararg is None
        and arguments.kwarg is None
        and not arguments.defaults
        and arguments.args[0].annotation is None,
        f"{where}: signature",
    )
    annotation = arguments.args[1].annotation
    require(annotation is not None and node.returns is not None, f"{where}: annotations")
    assert annotation is not None and node.returns is not None
    _check_annotation(annotation, names, literals, where)
    _check_annotation(node.returns, names, literals, where)
    if len(node.body) == 2:
        _check_docstring_value(node.body[0], description_lines(tool.description), where)
        value = node.body[0].value.value  # type: ignore[attr-defined]
        shown = sum(1 for line in value.split("\n") if line.strip())
        require(
            shown == shown_line_count(tool.description or ""),
            f"{where}: {shown} lines shown for {shown_line_count(tool.description or '')}",
        )


def shown_line_count(text: str) -> int:
    """How many non-blank lines a description has, split at every line break either
    language knows (`str.splitlines` knows them all); a line that holds anything but
    whitespace counts, hidden characters included (they are shown as escapes)."""
    return sum(
        1 for line in text.splitlines() if FORBIDDEN_RAW.sub("x", line.replace("\t", " ")).strip()
    )


def _check_annotation(
    node: ast.expr, names: frozenset[str], literals: set[str], where: str, in_literal: bool = False
) -> None:
    """Type syntax only: names of types, subscripts of the typing constructs, `|`, literal
    constants, and quoted forward references holding the same."""
    if isinstance(node, ast.Constant):
        value = node.value
        if in_literal:
            require(
                isinstance(value, str | int) and value is not None, f"{where}: literal {value!r}"
            )
            if isinstance(value, str):
                literals.add(value)
            return
        if isinstance(value, str):  # a forward reference
            try:
                parsed = ast.parse(value, mode="eval").body
            except SyntaxError as error:
                raise PropertyFailure(f"{where}: forward reference {value!r}") from error
            _check_annotation(parsed, names, literals, where)
            return
        require(value is None or value is Ellipsis, f"{where}: constant {value!r}")
    elif isinstance(node, ast.Name):
        require(node.id in names or node.id in TYPE_NAMES, f"{where}: name {node.id!r}")
    elif isinstance(node, ast.BinOp):
        require(isinstance(node.op, ast.BitOr), f"{where}: operator")
        _check_annotation(node.left, names, literals, where, in_literal)
        _check_annotation(node.right, names, literals, where, in_literal)
    elif isinstance(node, ast.Subscript):
        head = node.value
        require(isinstance(head, ast.Name) and head.id in SUBSCRIPTABLE, f"{where}: subscript")
        assert isinstance(head, ast.Name)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for item in items:
            _check_annotation(item, names, literals, where, head.id == "Literal")
    elif isinstance(node, ast.Starred):
        require(isinstance(node.value, ast.Subscript), f"{where}: starred")
        _check_annotation(node.value, names, literals, where)
    elif isinstance(node, ast.UnaryOp):
        require(
            in_literal
            and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) is int,
            f"{where}: unary operator",
        )
    elif isinstance(node, ast.Tuple):
        require(not node.elts, f"{where}: tuple")  # `tuple[()]`
    else:
        raise PropertyFailure(f"{where}: {type(node).__name__} in an annotation")


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _check_docstring_value(node: ast.stmt, lines: tuple[str, ...], where: str) -> None:
    """The docstring reads back as the description's display lines."""
    require(_is_docstring(node), f"{where}: no docstring")
    value = node.value.value  # type: ignore[attr-defined]
    shown = [line.rstrip(" ") for line in inspect.cleandoc(value).split("\n")]
    require(shown == list(lines), f"{where}: docstring {value!r:.200} != {lines!r:.200}")


def _check_docstring_tokens(module: ast.Module, text: str) -> None:
    """Every docstring is exactly one string token (no implicit concatenation)."""
    lines = text.splitlines(keepends=True)
    for node in ast.walk(module):
        body = getattr(node, "body", None)
        if not isinstance(body, list) or not body or not _is_docstring(body[0]):
            continue
        doc = body[0]
        segment = "".join(lines[doc.lineno - 1 : doc.end_lineno])
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(segment.lstrip(" ")).readline)
            if t.type == tokenize.STRING
        ]
        require(len(tokens) == 1, f"python: docstring at line {doc.lineno} is {len(tokens)} tokens")


def _check_tokens(text: str) -> None:
    """No marker is a name token and no comment is a pragma."""
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NAME:
            require(
                token.string not in MARKER_WORDS,
                f"python: injected {token.string!r} at {token.start}",
            )
        elif token.type == tokenize.COMMENT:
            require(
                not PRAGMA.match(token.string) and "\r" not in token.string,
                f"python: a pragma comment at line {token.start[0]}: {token.string[:120]!r}",
            )


def check_black(text: str) -> None:
    """The Python SDK is already what `black` (default settings) makes of it."""
    import black

    require(black.format_str(text, mode=black.Mode()) == text, "python: not a black fixed point")


# --- TypeScript ----------------------------------------------------------------------------

FIXED_TYPES = ("JsonValue", "ToolArgsMap", "ToolOutputMap", "ToolName", "ToolCallError", "Tools")
"""Type names every declarations file declares whatever the tool set, in output order after
`JsonValue` and the tools' types. A declarations file declares nothing else, and no value."""

_DIRECTIVE = re.compile(r"(?<!\\)@(ts-|jsx)", re.IGNORECASE)
_COMMENT_LINE = re.compile(r" \*( |$)")
_DECLARATION = re.compile(r"(export )?(?:declare class|declare const|interface|type) ([^\s:={<]+)")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass(frozen=True)
class TsLexed:
    """A declarations file split by a small lexer: the code with comments blanked, the code
    with string literals blanked too, and the literals and comments themselves."""

    code: str
    bare: str
    strings: list[str]
    comments: list[str]


def lex_typescript(text: str) -> TsLexed:
    code: list[str] = []
    bare: list[str] = []
    strings: list[str] = []
    comments: list[str] = []
    index, end = 0, len(text)
    while index < end:
        char = text[index]
        if text.startswith("//", index) or text.startswith("/*", index):
            stop = (
                text.find("\n", index)
                if char == "/" and text[index + 1] == "/"
                else text.find("*/", index + 2)
            )
            if text[index + 1] == "*":
                require(stop >= 0, "typescript: unterminated comment")
                stop += 2
            stop = end if stop < 0 else stop
            comment = text[index:stop]
            comments.append(comment)
            blank = re.sub("[^\n]", " ", comment)
            code.append(blank)
            bare.append(blank)
            index = stop
        elif char in "\"'`":
            stop = index + 1
            while stop < end and text[stop] != char:
                require(text[stop] != "\n", "typescript: a line break inside a string literal")
                stop += 2 if text[stop] == "\\" else 1
            require(stop < end, "typescript: unterminated string literal")
            literal = text[index : stop + 1]
            require(char == '"', f"typescript: a {char} string literal: {literal[:80]!r}")
            strings.append(literal)
            code.append(literal)
            bare.append('""')
            index = stop + 1
        else:
            code.append(char)
            bare.append(char)
            index += 1
    return TsLexed("".join(code), "".join(bare), strings, comments)


def check_typescript(text: str, catalog: ir.Catalog) -> None:
    """Properties 2 and 3 for one declarations file, without the compiler: the comment
    layout, no directive in a comment, no marker in code, exactly the expected declarations
    in order, each interface with exactly the IR's members, every string literal valid and
    expected."""
    check_text(text, "typescript")
    lexed = lex_typescript(text)
    for word in MARKER_WORDS:
        require(
            not re.search(rf"(?<![\w$]){word}(?![\w$])", lexed.bare),
            f"typescript: injected {word!r}",
        )
    try:
        lines = list(comment_lines(text))
    except AssertionError as error:
        raise PropertyFailure(f"typescript: comment layout: {error}") from error
    for line in lines:
        require(not _DIRECTIVE.search(line), f"typescript: a directive in {line[:120]!r}")
    declared, members = _ts_outline(lexed.code)
    expected = ["JsonValue", *(t.name for t in catalog.types), *FIXED_TYPES[1:]]
    require(declared == expected, f"typescript: declarations {declared!r:.300}")
    for named in catalog.types:
        if isinstance(named, ir.ObjectType) and (named.fields or named.extra is not None):
            want = [(f.key, not f.required) for f in named.fields]
            want += [("[key: string]", False)] if named.extra is not None else []
            require(members.get(named.name) == want, f"typescript: members of {named.name}")
    tool_keys = [(tool.name, False) for tool in catalog.tools]
    require(members.get("ToolArgsMap", []) == tool_keys, "typescript: ToolArgsMap keys")
    require(members.get("ToolOutputMap", []) == tool_keys, "typescript: ToolOutputMap keys")
    allowed = {tool.name for tool in catalog.tools} | {"ToolCallError"}
    for named in catalog.types:
        if isinstance(named, ir.ObjectType):
            allowed.update(f.key for f in named.fields)
    literals = ir_literal_strings(catalog)
    spelled = ir_literal_strings(catalog, extras=False)  # an index signature may be `unknown`
    found = set()
    for literal in lexed.strings:
        try:
            found.add(json.loads(literal))
        except ValueError as error:
            raise PropertyFailure(f"typescript: string literal {literal[:80]!r}") from error
    require(
        found <= allowed | literals,
        f"typescript: strings {sorted(found - allowed - literals)!r:.200}",
    )
    require(
        spelled <= found, f"typescript: literal strings missing {sorted(spelled - found)!r:.200}"
    )


def _ts_outline(code: str) -> tuple[list[str], dict[str, list[tuple[str, bool]]]]:
    """Top-level declaration names in order, and each interface's members (key, optional)
    read from the code (comments blanked). Every declaration is exported: the file is a
    module, so several live in one project and are imported by name."""
    declared: list[str] = []
    members: dict[str, list[tuple[str, bool]]] = {}
    current: list[tuple[str, bool]] | None = None
    for line in code.split("\n"):
        if not line.strip():
            continue
        if not line.startswith(" "):
            if line in ("}", "};"):
                current = None
                continue
            match = _DECLARATION.match(line)
            require(match is not None, f"typescript: unexpected top-level line {line[:120]!r}")
            assert match is not None
            require(match.group(1) is not None, f"typescript: not exported: {line[:120]!r}")
            declared.append(match.group(2))
            if line == f"export interface {match.group(2)} {{":  # not `ToolCallError extends`
                current = members.setdefault(match.group(2), [])
            continue
        if current is not None:
            current.append(_member(line.strip()))
    return declared, members


def _member(line: str) -> tuple[str, bool]:
    if line.startswith("[key: string]: "):
        return "[key: string]", False
    if line.startswith('"'):
        try:
            key, stop = json.JSONDecoder().raw_decode(line)
        except ValueError as error:
            raise PropertyFailure(f"typescript: member key in {line[:120]!r}") from error
    else:
        match = _IDENTIFIER.match(line)
        require(match is not None, f"typescript: member {line[:120]!r}")
        assert match is not None
        key, stop = match.group(), match.end()
    rest = line[stop:]
    require(
        rest.startswith((": ", "?: ")) and rest.endswith(";"), f"typescript: member {line[:120]!r}"
    )
    return key, rest.startswith("?")


def comment_lines(text: str) -> Iterator[str]:
    """Every comment line of a rendered file, checking the comment layout on the way: a
    JSDoc block is `/** one line */` or `/**`, ` * line`..., ` */`, and `*/` appears only
    where a comment ends."""
    inside = False
    for raw in text.split("\n"):
        line = raw.strip()
        if inside:
            if line == "*/":
                inside = False
                continue
            assert _COMMENT_LINE.match(" " + line.lstrip()) and "*/" not in line, raw
            yield line
        elif line == "/**":
            inside = True
        elif line.startswith("/**"):
            assert line.endswith(" */") and line.count("*/") == 1, raw
            yield line
        elif line.startswith("//"):
            yield line
    assert not inside


def check_declared(declared: list[dict[str, Any]], catalog: ir.Catalog) -> None:
    """What the TypeScript parser found (`tests/node/check_isolated.js`) is what the IR
    says: `check_declared_names` and `check_declared_members`."""
    check_declared_names(declared, catalog)
    check_declared_members(declared, catalog)


def check_declared_names(declared: list[dict[str, Any]], catalog: ir.Catalog) -> None:
    """Exactly one declaration per IR named type, under its IR name, plus the fixed ones;
    the Python SDK is held to the same set, so both SDKs share names."""
    names = [d["name"] for d in declared if d["kind"] in ("interface", "type")]
    assert len(names) == len(set(names)), names
    assert set(names) - set(FIXED_TYPES) == {t.name for t in catalog.types}
    assert set(names) >= set(FIXED_TYPES)
    others = [(d["kind"], d["name"]) for d in declared if d["kind"] not in ("interface", "type")]
    assert others == [], others
    assert all(d["exported"] for d in declared), [d for d in declared if not d["exported"]]


def check_declared_members(declared: list[dict[str, Any]], catalog: ir.Catalog) -> None:
    """Every interface has the IR's keys (exact text, escapes decoded) with the IR's
    optionality, in schema order, and an index signature exactly when the object is open;
    a closed object without fields is a type alias (of `Record<string, never>`); the maps
    hold every tool name."""
    interfaces = {d["name"]: d for d in declared if d["kind"] == "interface"}
    aliases = {d["name"] for d in declared if d["kind"] == "type"}
    for named in catalog.types:
        if isinstance(named, ir.ObjectType) and not named.fields and named.extra is None:
            assert named.name in aliases and named.name not in interfaces
        elif isinstance(named, ir.ObjectType):
            found = interfaces[named.name]
            assert found["members"] == [[f.key, not f.required] for f in named.fields]
            assert found["index"] == (named.extra is not None)
    tool_names = [[tool.name, False] for tool in catalog.tools]
    assert interfaces["ToolArgsMap"]["members"] == tool_names
    assert interfaces["ToolOutputMap"]["members"] == tool_names


def tsc_failures(files: dict[str, tuple[str, ir.Catalog]], directory: Path) -> dict[str, str]:
    """Type-check many declarations files in one Node run (each its own program, strict)
    and compare what the parser declares with the IR. Returns id -> problem for every file
    that fails."""
    from support.tsc import node

    paths: dict[str, str] = {}
    for index, (file_id, (text, _)) in enumerate(sorted(files.items())):
        path = directory / f"{index:04d}.d.ts"
        path.write_bytes(text.encode("utf-8"))
        paths[str(path)] = file_id
    result = subprocess.run(
        [node(), str(ROOT / "tests/node/check_isolated.js"), *paths],
        capture_output=True,
        cwd=ROOT,
        timeout=900,
        check=False,
    )
    require(result.returncode == 0, result.stderr.decode("utf-8", "replace"))
    report = json.loads(result.stdout)
    require(len(report) == len(paths), "tsc: a file is missing from the report")
    failures = {}
    for path, outcome in report.items():
        file_id = paths[path]
        if outcome["diagnostics"]:
            failures[file_id] = "\n".join(outcome["diagnostics"])
            continue
        try:
            check_declared(outcome["declarations"], files[file_id][1])
        except AssertionError as error:
            failures[file_id] = f"declarations differ from the IR: {error}"
    return failures


# --- the command line and the hash seed ----------------------------------------------------


def run_cli(argv: list[str]) -> tuple[int, bytes, str]:
    """`codegen.cli.main` in this process: exit status, stdout bytes, stderr text."""
    from codegen.cli import main

    out = io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8")
    stderr = io.StringIO()
    with redirect_stdout(stdout), redirect_stderr(stderr):
        status = main(argv)
    stdout.flush()
    return status, out.getvalue(), stderr.getvalue()


def check_cli(path: Path, rendered: Rendered) -> None:
    """Property 1 through the command line: `codegen sdk` exits 0 with the rendered SDK, or
    1 with diagnostics; never an internal error or a traceback."""
    for language, expected in (("python", rendered.python), ("typescript", rendered.typescript)):
        status, out, err = run_cli(["sdk", str(path), "--lang", language])
        require("Traceback" not in err and "internal error" not in err, f"cli: {err[-500:]}")
        if rendered.catalog is None:
            require(status == 1 and ": error: " in err and not out, f"cli {language}: {status}")
        else:
            require(status == 0, f"cli {language}: exit {status}: {err[-500:]}")
            require(out.decode("utf-8") == expected, f"cli {language}: output differs")


_RENDER_SCRIPT = """
import hashlib, io, json, sys
from contextlib import redirect_stderr, redirect_stdout
from codegen.cli import main
for path in sys.argv[1:]:
    for language in ("python", "typescript"):
        out = io.BytesIO()
        stdout = io.TextIOWrapper(out, encoding="utf-8")
        stderr = io.StringIO()
        with redirect_stdout(stdout), redirect_stderr(stderr):
            status = main(["sdk", path, "--lang", language])
        stdout.flush()
        print(json.dumps([path, language, status, hashlib.sha256(out.getvalue()).hexdigest(),
                          "internal error" in stderr.getvalue()]))
"""


def subprocess_renders(paths: list[Path], seed: str) -> dict[tuple[str, str], tuple[int, str]]:
    """(path, language) -> (exit status, SHA-256 of stdout) from `codegen sdk` run in a fresh
    interpreter with `PYTHONHASHSEED=seed`; its stderr must hold no traceback."""
    result = subprocess.run(
        [sys.executable, "-c", _RENDER_SCRIPT, *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": seed},
        timeout=600,
    )
    require(result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:])
    found = {}
    for line in result.stdout.splitlines():
        path, language, status, digest, internal = json.loads(line)
        require(not internal, f"{path}: internal error under PYTHONHASHSEED={seed}")
        found[(path, language)] = (status, digest)
    return found


def expected_renders(path: Path, rendered: Rendered) -> dict[tuple[str, str], tuple[int, str]]:
    """What `subprocess_renders` must report for an input rendered in this process."""
    result = {}
    for language, text in (("python", rendered.python), ("typescript", rendered.typescript)):
        data = text.encode("utf-8") if text is not None else b""
        result[(str(path), language)] = (
            0 if text is not None else 1,
            hashlib.sha256(data).hexdigest(),
        )
    return result
