"""The model-facing SDK sections: nothing of the JSON lost, valid code, exact call forms.

Losslessness is checked mechanically on every vendored corpus file and golden case (see
`section_lossless`); the Python stub is checked by `mypy --strict` and `pyright` strict as a
`.pyi`; the call form each function shows is run through the real Python worker.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen import ir
from codegen.codemode.calls.cancellation import AbortSignal
from codegen.codemode.run_code.code_runtime import Bindings
from codegen.codemode.runtimes.python import PythonRuntime
from codegen.engine import compile_definitions, compile_sources, compile_value
from codegen.load.sources import load_sources
from codegen.render.sections import python as pysection
from codegen.render.sections import typescript as tssection
from codegen.render.sections.dittos import Dittos
from conftest import CORPUS_FILES, EVERY_FILE, ROOT, SCHEMAS
from support.section_lossless import expand_dittos, missing, python_shown, typescript_shown

INPUTS = EVERY_FILE


def _parts(catalog: ir.Catalog, language: str) -> tuple[str, list[list[str]]]:
    """The section SDK with every field comment in full (no `ditto`:
    `test_dittos_expand_to_the_full_comments` shows a reader recovers them) and each
    tool's part of it: its head, the declarations it adds, and the earlier ones it reuses
    with everything they use in turn."""
    module = pysection if language == "python" else tssection
    chunks = [module.section_chunk(tool) for tool in catalog.tools]
    full = Dittos(repeat=True).resolve
    placed = module.place_chunks(chunks)
    texts = {
        name: full(text)
        for p in placed
        for name, text in zip(p.declared, p.declarations, strict=True)
    }
    parts = [
        [full(p.head), *map(full, p.declarations), *_reused_texts(p.reused, texts)] for p in placed
    ]
    return module.section_sdk_from_chunks(chunks, dittos=False), parts


def _reused_texts(reused: tuple[str, ...], texts: dict[str, str]) -> list[str]:
    """The declarations named, and every declaration their code (comments left out) names,
    transitively."""
    found: dict[str, None] = {}
    stack = list(reused)
    while stack:
        name = stack.pop()
        if name not in found:
            found[name] = None
            code = re.sub(r"(^|\s)(#|//)( .*)?$", "", texts[name], flags=re.M)
            stack += [n for n in re.findall(r"[A-Za-z_]\w*", code) if n in texts]
    return [texts[name] for name in found]


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_dittos_expand_to_the_full_comments(language: str) -> None:
    """`ditto` loses nothing: expanded by the reader's rule alone, the section is the one
    with every comment in full; and it is used where names repeat their comment."""
    module = pysection if language == "python" else tssection
    dittos = 0
    for path in INPUTS:
        catalog = compile_sources([str(path)], require_tools=False).catalog
        assert catalog is not None
        chunks = [module.section_chunk(tool) for tool in catalog.tools]
        short = module.section_sdk_from_chunks(chunks)
        dittos += short.count("ditto\n")
        expanded = expand_dittos(short, language).split("\n")
        full = module.section_sdk_from_chunks(chunks, dittos=False).split("\n")
        diff = difflib.unified_diff(full, expanded, "meant", "read", n=1, lineterm="")
        assert expanded == full, f"{path.name}:\n" + "\n".join(list(diff)[:12])
    assert dittos > 100


READER_CASES = {
    "python": (
        "async def a(*,\n requestId: int, # The request's ID.\n) -> Any: ...\n"
        "class B(TypedDict):\n # The request's ID.\n # Two lines.\n requestId: str\n"
        'C = TypedDict("C", {\n "requestId": int, # ditto\n})\n'
    ),
    "typescript": (
        "declare const tools: {\n a(args: {\n  requestId: number // The request's ID.\n"
        " }): Promise<JsonValue>\n};\ninterface B {\n // The request's ID.\n"
        " // Two lines.\n requestId: string\n}\ninterface C {\n requestId: number // ditto\n}\n"
    ),
}


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_the_ditto_reader_counts_every_comment_form(language: str) -> None:
    """The reader follows the stated rule literally: comment lines just before a field are
    the comment last written on its name, so this `ditto` means the two lines, not the
    one-line comment the generator would have repeated had it skipped them."""
    text = READER_CASES[language]
    meant = "The request's ID.\nTwo lines."
    assert expand_dittos(text, language) == text.replace("ditto", meant)


def test_ditto_counts_every_comment_form() -> None:
    """`schemas/ditto_forms.json`: after two comment lines on a `requestId`, a one-line
    `requestId` comment is written in full (a `ditto` would mean the two lines); the next
    one is a `ditto`; a comment that reads `ditto` goes before its field. The same on the
    fields of declared types."""
    catalog = compile_sources([str(SCHEMAS / "ditto_forms.json")]).catalog
    assert catalog is not None
    python = pysection.render_python_section_sdk(catalog)
    typescript = tssection.render_typescript_section_sdk(catalog)
    assert python.count("requestId: int, # The request's ID.\n") == 2  # step1, step3
    assert python.count("requestId: int, # ditto\n") == 1  # step4
    assert python.count(" # ditto\n remark: str = ...,\n") == 2
    assert "class Alpha(TypedDict, closed=True):\n requestId: int # The request's ID.\n" in python
    assert typescript.count("  requestId: number // The request's ID.\n") == 2
    assert typescript.count("  requestId: number // ditto\n") == 1
    assert typescript.count("  // ditto\n  remark?: string\n") == 2
    assert "interface Alpha {\n requestId: number // The request's ID.\n}" in typescript


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_every_value_of_the_json_is_in_the_section(language: str) -> None:
    checked = 0
    problems = []
    for path in INPUTS:
        definitions = {d.name: d for d in load_sources([str(path)]).tools}
        catalog = compile_definitions(list(definitions.values())).catalog
        assert catalog is not None
        sdk, parts = _parts(catalog, language)
        for tool, pieces in zip(catalog.tools, parts, strict=True):
            assert all(piece in sdk for piece in pieces)
            part = "\n".join(pieces)
            shown = python_shown(part) if language == "python" else typescript_shown(part)
            found = missing(definitions[tool.name], shown, language)
            problems += [f"{path.name} {tool.name}: {p}" for p in found]
            checked += 1
    assert checked > 500
    assert not problems, "\n".join(problems[:40])


def test_the_check_catches_a_lost_value() -> None:
    """Each kind of value, dropped from the section, is reported."""
    definition = load_sources([str(SCHEMAS / "defaults_constraints.json")]).tools[0]
    catalog = compile_definitions([definition]).catalog
    assert catalog is not None
    _, (pieces,) = _parts(catalog, "python")
    part = "\n".join(pieces)
    assert not missing(definition, python_shown(part), "python")
    lost = {"description": part.replace('"""Defaults, ranges', '"""Gone', 1)}
    for line in part.split("\n"):
        for mark in ("..", "pattern: ", "format: ", "default: ", "example"):
            if mark in line and "#" in line:
                lost.setdefault(mark, part.replace(line, line.split(" # ")[0] + " # gone"))
    assert len(lost) >= 4
    for kind, text in lost.items():
        assert missing(definition, python_shown(text), "python"), kind


def _stub_files(tmp_path: Path) -> list[Path]:
    files = []
    for path in INPUTS:
        catalog = compile_sources([str(path)], require_tools=False).catalog
        assert catalog is not None
        stub = tmp_path / f"{path.parent.name}_{path.stem}.pyi".replace("-", "_")
        stub.write_text(pysection.render_python_section_sdk(catalog))
        files.append(stub)
    return files


@pytest.mark.slow
def test_python_stubs_pass_mypy_strict(tmp_path: Path) -> None:
    files = _stub_files(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull]
        + [str(f) for f in files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


@pytest.mark.slow
def test_python_stubs_pass_pyright_strict(tmp_path: Path) -> None:
    files = _stub_files(tmp_path)
    (tmp_path / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "strict"}))
    result = subprocess.run(
        [sys.executable, "-m", "pyright", "--project", str(tmp_path / "pyrightconfig.json")]
        + [str(f) for f in files],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-4000:]


@pytest.mark.slow
def test_sections_are_byte_identical_across_orders_and_hash_seeds() -> None:
    paths = [str(p) for p in CORPUS_FILES[:12]]
    script = (
        "import sys, random\n"
        "from codegen.load.sources import load_sources\n"
        "from codegen.engine import compile_definitions\n"
        "from codegen.render.sections.framing import render_python_section, render_typescript_section\n"
        "tools = list(load_sources(sys.argv[2:], namespace=True).tools)\n"
        "random.Random(int(sys.argv[1])).shuffle(tools)\n"
        "catalog = compile_definitions(tools).catalog\n"
        "sys.stdout.write(render_python_section(catalog) + render_typescript_section(catalog))\n"
    )
    outputs = set()
    for seed in ("0", "1", "7"):
        result = subprocess.run(
            [sys.executable, "-c", script, seed, *paths],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1


def test_short_names_never_collide_and_prefer_the_field() -> None:
    tools = load_sources([str(p) for p in CORPUS_FILES], namespace=True).tools
    catalog = compile_definitions(tools).catalog
    assert catalog is not None
    text = pysection.render_python_section_sdk(catalog)
    module = ast.parse(text)
    declared = [
        node.name
        if isinstance(node, ast.ClassDef)
        else ast.unparse(
            node.targets[0] if isinstance(node, ast.Assign) else node.target  # type: ignore[attr-defined]
        )
        for node in module.body[4:]
        if not isinstance(node, ast.AsyncFunctionDef)
    ]
    assert len(declared) == len(set(declared))
    functions = {n.name for n in module.body if isinstance(n, ast.AsyncFunctionDef)}
    assert functions.isdisjoint(declared)
    long_names = sum(len(name) > 30 for name in declared)
    ir_long = sum(len(t.name) > 30 for t in catalog.types)
    assert long_names < ir_long / 2


# --- the call form is what the worker accepts ----------------------------------------------


def _sample(node: ir.TypeNode, types: dict[str, ir.NamedType]) -> Any:
    """A small value of a type (required keys only)."""
    if isinstance(node, ir.Primitive):
        return {"string": "s", "integer": 1, "number": 1.5, "boolean": True, "null": None}[
            node.kind
        ]
    if isinstance(node, ir.LiteralType):
        return node.values[0] if node.values else None
    if isinstance(node, ir.ArrayType | ir.TupleType | ir.MapType | ir.AnyType):
        return (
            []
            if isinstance(node, ir.ArrayType)
            else {}
            if not isinstance(node, ir.TupleType)
            else [_sample(i, types) for i in node.items[: node.min_items]]
        )
    if isinstance(node, ir.UnionType):
        return _sample(node.arms[0], types)
    if isinstance(node, ir.RefType):
        named = types[node.name]
        if isinstance(named, ir.AliasType):
            return _sample(named.target, types)
        return {f.key: _sample(f.type, types) for f in named.fields if f.required}
    return None


def _calls(catalog: ir.Catalog, stub: str) -> tuple[str, list[tuple[str, Any]]]:
    """A program that calls every tool the way the stub shows, and what each call must
    send: keyword arguments to the function's name, or to `tools["<decorator name>"]`."""
    module = ast.parse(stub)
    types = {t.name: t for t in catalog.types}
    lines = []
    expected = []
    functions = [n for n in module.body if isinstance(n, ast.AsyncFunctionDef)]
    for node, tool in zip(functions, catalog.tools, strict=True):
        if node.decorator_list:
            decorator = node.decorator_list[0]
            assert isinstance(decorator, ast.Call) and isinstance(decorator.args[0], ast.Constant)
            target = f"tools[{decorator.args[0].value!r}]"
        else:
            target = f"tools.{node.name}"
        arguments = _sample(tool.args, types)
        if node.args.posonlyargs:  # `(args: X, /)`: one positional dict
            lines.append(f"await {target}({arguments!r})")
        else:
            required = [
                a.arg
                for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
                if d is None
            ]
            assert set(required) == set(arguments), tool.name
            keywords = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
            lines.append(f"await {target}({keywords})")
        expected.append((tool.name, arguments))
    return "\n".join(lines), expected


@pytest.mark.parametrize(
    "path",
    [SCHEMAS / "tool_names.json", SCHEMAS / "keyword_keys.json", CORPUS_FILES[0]],
    ids=lambda p: p.stem,
)
def test_the_shown_call_form_runs_in_the_worker(path: Path) -> None:
    catalog = compile_sources([str(path)]).catalog
    assert catalog is not None
    program, expected = _calls(catalog, pysection.render_python_section_sdk(catalog))
    received: list[tuple[str, Any]] = []

    async def call(name: str, args: Any) -> Any:
        received.append((name, args))
        return None

    async def main() -> Any:
        runtime = PythonRuntime(sandbox="none", spare=False)
        try:
            bindings = Bindings(tuple(t.name for t in catalog.tools), call)
            return await runtime.run(program, bindings, AbortSignal())
        finally:
            await runtime.aclose()

    asyncio.run(main())
    assert received == expected


NARROWED_TOOLS = {
    "tools": [
        {
            "name": "first",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "not": {"required": ["a", "b"]},
            },
        },
        {
            "name": "second",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
            "outputSchema": {"type": "array", "items": {"type": "string"}, "description": "Names."},
        },
        {"name": "third", "inputSchema": {"type": "object"}},
    ]
}
"""Tools without a description whose arguments or result have docs of their own."""


def test_a_tools_own_comments_sit_inside_its_function() -> None:
    """A note on the arguments or the result is in the function's body, where a reader
    attaches it to this tool, never after a one-line `... -> Any: ...` before the next."""
    catalog = compile_value(NARROWED_TOOLS).catalog
    assert catalog is not None
    text = pysection.render_python_section_sdk(catalog)
    lines = text.split("\n")
    start = lines.index("```python") + 1 if "```python" in lines else 0
    code = "\n".join(lines[start : lines.index("```", start) if "```" in lines[start:] else None])
    functions = [n for n in ast.parse(code).body if isinstance(n, ast.AsyncFunctionDef)]
    spans = {n.name: range(n.lineno, (n.end_lineno or n.lineno) + 1) for n in functions}
    code_lines = code.split("\n")
    for own, words in (
        ("first", '# args: not {"required": ["a", "b"]}'),
        ("second", "# returns: Names."),
    ):
        [at] = [i + 1 for i, line in enumerate(code_lines) if line.strip() == words]
        assert at in spans[own], (own, code)
    assert "async def third() -> Any: ..." in code_lines
