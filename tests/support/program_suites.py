"""The suites of run_code programs the check before a run is measured on, in Python and in
TypeScript, made from the same tool schemas (the corpus under tests/corpus/mcp).

- `natural`: one program per tool, written as a model would: the tool called with natural
  values (ints for numbers, lists for tuples, dict literals for objects, optional arguments
  left out), in one of seven shapes in turn (a plain call, a discovery flow through
  `catalog.search` and a name found there, `asyncio.gather` / `Promise.all`, a loop over a
  result, try/except on `ToolCallError`, a helper the program defines, a value read from a
  result passed on). The check must never refuse one.
- `wrong`: programs whose first line calls the tool correctly (a real side effect) and whose
  second line makes one definite mistake on the same tool: an unknown tool name, a required
  argument left out, an argument the tool does not take, a literal of the wrong type, a
  literal outside an enum. The check should refuse them before the first call.

Each program carries its text in both languages (None where a mistake cannot be written in
that language's call form: Python's one-dict form carries keys no checker holds against
parameters), the tool, the kind and the line of the mistake. The TypeScript checker's tests
use the same suites (`SuiteProgram.typescript`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from codegen import ir
from codegen.identifiers import is_python_identifier
from codegen.render.typescript.sdk import ts_key
from conftest import ROOT

CORPUS = ROOT / "tests" / "corpus" / "mcp"

NATURAL = "natural"
WRONG_KINDS = (
    "unknown-tool",
    "missing-argument",
    "unknown-argument",
    "wrong-type",
    "not-allowed-value",
)
SHAPES = ("plain", "discovery", "gather", "loop", "try", "helper", "chained")


@dataclass(frozen=True, slots=True)
class SuiteProgram:
    tool: str
    kind: str
    """`natural`, or the mistake (`outcome.MistakeKind`) the program makes."""
    shape: str
    python: str | None
    typescript: str | None
    line: int = 0
    """The line of the mistake (the same in both languages); 0 for a natural program."""

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.shape}:{self.tool}"


@cache
def corpus_catalog() -> ir.Catalog:
    """Every tool of the corpus, names prefixed by server as `codegen serve` names them."""
    from codegen.engine import compile_definitions
    from codegen.load.sources import load_sources

    files = sorted(str(path) for path in CORPUS.glob("*.json"))
    compiled = compile_definitions(load_sources(files, namespace=True).tools)
    assert compiled.catalog is not None
    return compiled.catalog


def natural_programs(catalog: ir.Catalog) -> list[SuiteProgram]:
    return [_natural(tool, SHAPES[index % len(SHAPES)]) for index, tool in enumerate(catalog.tools)]


def wrong_programs(catalog: ir.Catalog) -> list[SuiteProgram]:
    names = {tool.name for tool in catalog.tools}
    found = []
    for tool in catalog.tools:
        found.extend(_wrong(tool, names))
    return found


# --- values -------------------------------------------------------------------------------


class _Values:
    """Natural argument values for one tool, from its IR (what the sections render)."""

    def __init__(self, tool: ir.Tool) -> None:
        self.types = {named.name: named for named in tool.types}

    def of(self, node: ir.TypeNode, depth: int = 0) -> Any:
        if isinstance(node, ir.Primitive):
            return {"string": "example", "integer": 1, "number": 2, "boolean": True}.get(node.kind)
        if isinstance(node, ir.LiteralType):
            return node.values[0]
        if isinstance(node, ir.ArrayType):
            return [] if depth > 4 else [self.of(node.items, depth + 1)]
        if isinstance(node, ir.TupleType):
            return [self.of(item, depth + 1) for item in node.items]
        if isinstance(node, ir.MapType):
            return {} if depth > 4 else {"key": self.of(node.values, depth + 1)}
        if isinstance(node, ir.RefType):
            named = self.types.get(node.name)
            if isinstance(named, ir.ObjectType):
                return self.object(named, depth + 1)
            if isinstance(named, ir.AliasType):
                return self.of(named.target, depth + 1)
            return "example"
        if isinstance(node, ir.UnionType):
            return self.of(_simplest(node.arms), depth + 1)
        return "example"  # Any, unknown

    def object(self, named: ir.ObjectType, depth: int = 0) -> dict[str, Any]:
        return {f.key: self.of(f.type, depth) for f in named.fields if f.required}

    def arguments(self, tool: ir.Tool) -> dict[str, Any]:
        """The required arguments (an object of no declared keys takes none)."""
        if isinstance(tool.args, ir.RefType):
            named = self.types.get(tool.args.name)
            if isinstance(named, ir.AliasType) and isinstance(named.target, ir.MapType):
                return {}
        value = self.of(tool.args)
        return value if isinstance(value, dict) else {}

    def fields(self, tool: ir.Tool) -> tuple[ir.Field, ...]:
        if isinstance(tool.args, ir.RefType):
            named = self.types.get(tool.args.name)
            if isinstance(named, ir.ObjectType):
                return named.fields
        return ()


def _simplest(arms: tuple[ir.TypeNode, ...]) -> ir.TypeNode:
    """The arm a model would most likely write: a scalar first, never null."""
    usable = [a for a in arms if not (isinstance(a, ir.Primitive) and a.kind == "null")]
    usable = [a for a in usable if not isinstance(a, ir.NeverType)] or list(arms)
    for arm in usable:
        if isinstance(arm, ir.Primitive | ir.LiteralType):
            return arm
    return usable[0]


# --- spelling -----------------------------------------------------------------------------


class _Expression(str):
    """A value spelled as code (a name, a call), not as a literal."""


def py_value(value: Any) -> str:
    if isinstance(value, _Expression):
        return str(value)
    if value is None:
        return "None"
    if value is True:
        return "True"
    if value is False:
        return "False"
    if isinstance(value, list):
        return "[" + ", ".join(py_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {py_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)


def ts_value(value: Any) -> str:
    if isinstance(value, _Expression):
        return str(value)
    if isinstance(value, dict):
        items = ", ".join(f"{ts_key(k)}: {ts_value(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, list):
        return "[" + ", ".join(ts_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _keyword_form(tool: ir.Tool, values: _Values) -> bool:
    """Whether the Python section shows the tool with keyword parameters (every key an
    identifier), so a wrong keyword is a mistake a checker can see."""
    if not isinstance(tool.args, ir.RefType):
        return False
    named = values.types.get(tool.args.name)
    if isinstance(named, ir.AliasType):
        return isinstance(named.target, ir.MapType)
    return isinstance(named, ir.ObjectType) and all(
        is_python_identifier(f.key) for f in named.fields
    )


def py_callee(name: str) -> str:
    from codegen.render.sections.python import function_name

    return f"tools.{name}" if function_name(name) == name else f"tools[{json.dumps(name)}]"


def ts_callee(name: str) -> str:
    return f"tools.{name}" if ts_key(name) == name else f"tools[{json.dumps(name)}]"


def py_call(tool: ir.Tool, arguments: dict[str, Any], keywords: bool, name: str = "") -> str:
    callee = py_callee(name or tool.name)
    if keywords:
        spelled = ", ".join(f"{k}={py_value(v)}" for k, v in arguments.items())
        return f"{callee}({spelled})"
    return f"{callee}({py_value(arguments)})"


def ts_call(tool: ir.Tool, arguments: dict[str, Any], name: str = "") -> str:
    return f"{ts_callee(name or tool.name)}({ts_value(arguments)})"


# --- programs -----------------------------------------------------------------------------


def _natural(tool: ir.Tool, shape: str) -> SuiteProgram:
    values = _Values(tool)
    arguments = values.arguments(tool)
    keywords = _keyword_form(tool, values)
    py = py_call(tool, arguments, keywords)
    ts = ts_call(tool, arguments)
    query = json.dumps(" ".join(tool.name.split("__")[-1].replace("-", "_").split("_")))
    if shape == "discovery":
        dynamic = (
            ", ".join(f"{k}={py_value(v)}" for k, v in arguments.items())
            if keywords
            else (py_value(arguments))
        )
        python = (
            f"found = await catalog.search({query})\n"
            f"name = found.names[0] if found.names else {json.dumps(tool.name)}\n"
            f"result = await tools[name]({dynamic})\n"
            "print(result)\n"
        )
        typescript = (
            f"const found = await catalog.search({query});\n"
            f"const name = found.names[0] ?? {json.dumps(tool.name)};\n"
            f"const result = await tools[name]({ts_value(arguments)});\n"
            "console.log(result);\n"
        )
    elif shape == "gather":
        python = (
            "import asyncio\n"
            f"first, second = await asyncio.gather({py}, {py})\n"
            "return [first, second]\n"
        )
        typescript = (
            f"const [first, second] = await Promise.all([{ts}, {ts}]);\nreturn [first, second];\n"
        )
    elif shape == "loop":
        python = (
            f"result = await {py}\n"
            "items = result if isinstance(result, list) else [result]\n"
            "for item in items:\n"
            "    print(item)\n"
            "return len(items)\n"
        )
        typescript = (
            f"const result = await {ts};\n"
            "const items = Array.isArray(result) ? result : [result];\n"
            "for (const item of items) console.log(item);\n"
            "return items.length;\n"
        )
    elif shape == "try":
        python = (
            "try:\n"
            f"    result = await {py}\n"
            "except ToolCallError as error:\n"
            '    print(f"{error.tool_name} failed: {error}")\n'
            "    return None\n"
            "return result\n"
        )
        typescript = (
            "try {\n"
            f"  return await {ts};\n"
            "} catch (error) {\n"
            "  if (error instanceof ToolCallError) console.log(`${error.toolName} failed: ${error.message}`);\n"
            "  return null;\n"
            "}\n"
        )
    elif shape == "helper":
        python = (
            "async def run_once():\n"
            f"    return await {py}\n"
            "\n"
            "results = [await run_once() for _ in range(2)]\n"
            "print(len(results))\n"
        )
        typescript = (
            "async function runOnce() {\n"
            f"  return await {ts};\n"
            "}\n"
            "const results = [await runOnce(), await runOnce()];\n"
            "console.log(results.length);\n"
        )
    elif shape == "chained":
        key = next(
            (f.key for f in values.fields(tool) if f.required and f.type == ir.Primitive("string")),
            None,
        )
        python_next, ts_next = py, ts
        if key is not None:
            python_next = py_call(tool, {**arguments, key: _Expression("str(first)")}, keywords)
            ts_next = ts_call(tool, {**arguments, key: _Expression("String(first)")})
        python = f"first = await {py}\nprint(first)\nsecond = await {python_next}\nreturn second\n"
        typescript = (
            f"const first = await {ts};\nconsole.log(first);\n"
            f"const second = await {ts_next};\nreturn second;\n"
        )
    else:
        python = f"result = await {py}\nprint(result)\nreturn result\n"
        typescript = f"const result = await {ts};\nconsole.log(result);\nreturn result;\n"
    return SuiteProgram(tool.name, NATURAL, shape, python, typescript)


def _misspelled(name: str, names: set[str]) -> str:
    for letter in "qzxj":
        candidate = name[:-1] + letter if name[-1] != letter else name + letter
        if candidate not in names:
            return candidate
    return name + "_q"


def _wrong(tool: ir.Tool, names: set[str]) -> Iterator[SuiteProgram]:
    values = _Values(tool)
    arguments = values.arguments(tool)
    keywords = _keyword_form(tool, values)
    fields = values.fields(tool)
    first_py = f"before = await {py_call(tool, arguments, keywords)}\n"
    first_ts = f"const before = await {ts_call(tool, arguments)};\n"

    def program(kind: str, py_wrong: str | None, ts_wrong: str) -> SuiteProgram:
        python = (
            None
            if py_wrong is None
            else f"{first_py}after = await {py_wrong}\nreturn [before, after]\n"
        )
        typescript = f"{first_ts}const after = await {ts_wrong};\nreturn [before, after];\n"
        return SuiteProgram(tool.name, kind, "wrong", python, typescript, line=2)

    wrong_name = _misspelled(tool.name, names)
    yield program(
        "unknown-tool",
        py_call(tool, arguments, keywords, wrong_name),
        ts_call(tool, arguments, wrong_name),
    )
    required = [f for f in fields if f.required]
    if required:
        left = {k: v for k, v in arguments.items() if k != required[0].key}
        yield program(
            "missing-argument",
            py_call(tool, left, True) if keywords else None,
            ts_call(tool, left),
        )
    closed = isinstance(tool.args, ir.RefType) and isinstance(
        values.types.get(tool.args.name), ir.ObjectType
    )
    if closed and "unknown_option" not in {f.key for f in fields}:
        extra = {**arguments, "unknown_option": 1}
        yield program(
            "unknown-argument",
            py_call(tool, extra, True) if keywords else None,
            ts_call(tool, extra),
        )
    typed = next((f for f in (*required, *fields) if isinstance(f.type, ir.Primitive)), None)
    if typed is not None and typed.type.kind != "null":  # type: ignore[union-attr]
        kind = typed.type.kind  # type: ignore[union-attr]
        wrong_value = {"string": 42, "integer": "many", "number": "many", "boolean": "yes"}[kind]
        changed = {**arguments, typed.key: wrong_value}
        yield program(
            "wrong-type",
            py_call(tool, changed, True) if keywords else None,
            ts_call(tool, changed),
        )
    listed = next(
        (
            f
            for f in (*required, *fields)
            if isinstance(f.type, ir.LiteralType) and all(isinstance(v, str) for v in f.type.values)
        ),
        None,
    )
    if listed is not None:
        changed = {**arguments, listed.key: "not-a-listed-value"}
        yield program(
            "not-allowed-value",
            py_call(tool, changed, True) if keywords else None,
            ts_call(tool, changed),
        )
