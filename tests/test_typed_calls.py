"""Every tool is typed for its caller: both checkers accept every correct call and report
every wrong one, through the method and through `tools["<exact name>"]`.

For each catalog (every corpus file alone, each corpus folder of server dumps as one
`--namespace` catalog, and servers harvested live) the test renders the SDK and a caller
module that makes, per tool and per call form: one correct call (a value built from the IR
for every required key, as a caller writes it: an integer for a number, lists for arrays
and tuples) whose result must have exactly the tool's result type (`assert_type`), one call
with a misspelled key, one with a value of the wrong type (`bytes`, which no JSON type
admits) and, where a key takes an array, one with a string for it. `mypy --strict` and
`pyright` strict run once over all of them; every correct line must be clean and every
wrong line reported, the misspelled key named in the message. A misspelled tool name is
reported too.

`schemas/argument_arrays.json` is called by hand (`NATURAL_CALLS`): integers in arrays of
numbers and in a union of arrays, lists and `list[int]` variables for tuples, lists of
dict literals for arrays of objects, and the wrong values each must still catch.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from codegen import ir
from codegen.cli import main
from codegen.engine import compile_sources
from codegen.identifiers import is_method_name
from codegen.render.python.black_layout import flat
from codegen.render.python.sdk import py_literal, py_str, render_python_sdk, type_expr
from conftest import CORPUS, CORPUS_FILES, FIXTURES, ROOT
from support.typed_calls import Expectations, check_findings, mypy_findings, pyright_findings

pytestmark = pytest.mark.slow  # mypy and pyright over a caller module for every corpus tool

EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"
WRONG_VALUE = 'b"wrong"'
"""A value no JSON type admits, so only `Any` accepts it."""
MISSPELLED = "_misspelled"


@dataclass
class Counts:
    tools: int = 0
    method_tools: int = 0
    keyless_args: int = 0
    """Tools whose arguments are not an object type with keys (`dict[str, Any]` for a
    schema without properties, or a union): no key can be misspelled; a whole argument of
    the wrong type is still reported unless it admits anything."""
    unbuildable: int = 0


class _Values:
    """A Python literal that a type admits, built from the IR as a caller writes it: an
    integer for a number, a list of one item for an array, a list for a tuple, a dict of
    one key for a map; None when none can be built (a required `Never`, or a required key
    that only recursion can fill)."""

    def __init__(self, catalog: ir.Catalog) -> None:
        self.named = {t.name: t for t in catalog.types}

    def of(self, node: ir.TypeNode, path: frozenset[str] = frozenset()) -> str | None:
        if isinstance(node, ir.Primitive):
            return {"string": '"s"', "integer": "1", "number": "1", "boolean": "True"}.get(
                node.kind, "None"
            )
        if isinstance(node, ir.LiteralType):
            return py_literal(node.values[0]) if node.values else None
        if isinstance(node, ir.ArrayType):
            item = self.of(node.items, path)
            return "[]" if item is None else f"[{item}]"
        if isinstance(node, ir.MapType):
            value = self.of(node.values, path)
            return "{}" if value is None else f'{{"k": {value}}}'

        if isinstance(node, ir.AnyType | ir.UnknownType):
            return "None"
        if isinstance(node, ir.NeverType):
            return None
        if isinstance(node, ir.TupleType):
            items = [self.of(item, path) for item in node.items[: node.min_items]]
            built = [item for item in items if item is not None]
            return "[" + ", ".join(built) + "]" if len(built) == len(items) else None
        if isinstance(node, ir.UnionType):
            return next((v for arm in node.arms if (v := self.of(arm, path)) is not None), None)
        assert isinstance(node, ir.RefType)
        if node.name in path:
            return None
        target = self.named[node.name]
        inner = path | {node.name}
        if isinstance(target, ir.AliasType):
            return self.of(target.target, inner)
        return self.object(target, inner)

    def object(self, target: ir.ObjectType, path: frozenset[str], skip: str = "") -> str | None:
        entries = []
        for item in target.fields:
            if item.required and item.key != skip:
                value = self.of(item.type, path)
                if value is None:
                    return None
                entries.append(f"{py_str(item.key)}: {value}")
        return "{" + ", ".join(entries) + "}"

    def admits_anything(self, node: ir.TypeNode, path: frozenset[str] = frozenset()) -> bool:
        if isinstance(node, ir.AnyType | ir.UnknownType):
            return True
        if isinstance(node, ir.UnionType):
            return any(self.admits_anything(arm, path) for arm in node.arms)
        if isinstance(node, ir.RefType) and node.name not in path:
            target = self.named[node.name]
            if isinstance(target, ir.AliasType):
                return self.admits_anything(target.target, path | {node.name})
        return False


def caller_lines(module: str, catalog: ir.Catalog, counts: Counts) -> tuple[str, Expectations]:
    """The caller module for one SDK and what each of its lines must get."""
    values = _Values(catalog)
    lines = [
        "from typing import Any, assert_type",
        "",
        "ANYTHING: Any = None  # `Any` is used by some result types, not all",
        "",
        f"import {module} as sdk",
        "",
        "",
        "async def unknown_name(tools: sdk.Tools) -> None:",
    ]
    expect = Expectations()
    first = py_str(catalog.tools[0].name + "x") if catalog.tools else '"x"'
    lines.append(f"    await tools[{first}]({{}})")
    expect.reported[len(lines)] = ""
    for index, tool in enumerate(catalog.tools):
        counts.tools += 1
        lines += ["", "", f"async def call_{index}(tools: sdk.Tools) -> None:"]
        forms = [f"tools[{py_str(tool.name)}]"]
        if is_method_name(tool.name):
            forms.insert(0, f"tools.{tool.name}")
            counts.method_tools += 1
        correct = values.of(tool.args)
        result = flat(type_expr(tool.output)) if tool.output is not None else "Any"
        result = f"sdk.{result}" if result in values.named else result
        if correct is None:
            counts.unbuildable += 1
        else:
            for number, form in enumerate(forms):
                lines.append(f"    result_{number} = await {form}({correct})")
                expect.clean.add(len(lines))
                lines.append(f"    assert_type(result_{number}, {result})")
                expect.clean.add(len(lines))
        target = values.named.get(tool.args.name) if isinstance(tool.args, ir.RefType) else None
        if not isinstance(target, ir.ObjectType):
            counts.keyless_args += 1
            if not values.admits_anything(tool.args):
                for form in forms:
                    lines.append(f"    await {form}({WRONG_VALUE})")
                    expect.reported[len(lines)] = ""
            continue
        for form, (call, word) in [
            (form, wrong) for form in forms for wrong in _wrong_calls(values, target)
        ]:
            if call is None:
                continue
            lines.append(f"    await {form}({call})")
            expect.reported[len(lines)] = word
    return "\n".join(lines) + "\n", expect


def _wrong_calls(values: _Values, target: ir.ObjectType) -> Iterator[tuple[str | None, str]]:
    """A call with a misspelled key, one with a wrong value and, when a key takes an array,
    one with a string for it (each with the word the report must name), built on a correct
    call; None where the type cannot be built."""
    keys = {item.key for item in target.fields}
    chosen = next((f for f in target.fields if f.required), None) or next(iter(target.fields), None)
    if chosen is None:
        yield '{"unexpected_key": 1}', "unexpected_key"
    else:
        wrong = chosen.key + MISSPELLED
        while wrong in keys:
            wrong += "_"
        rest = values.object(target, frozenset({target.name}), skip=chosen.key)
        value = values.of(chosen.type, frozenset({target.name})) or "None"
        yield _with_entry(rest, f"{py_str(wrong)}: {value}"), MISSPELLED
    typed = next((f for f in target.fields if not values.admits_anything(f.type)), None)
    if typed is None:
        yield WRONG_VALUE, ""
    else:
        rest = values.object(target, frozenset({target.name}), skip=typed.key)
        yield _with_entry(rest, f"{py_str(typed.key)}: {WRONG_VALUE}"), ""
    array = next((f for f in target.fields if isinstance(f.type, ir.ArrayType)), None)
    if array is not None:  # `Sequence[str]` would take a string
        rest = values.object(target, frozenset({target.name}), skip=array.key)
        yield _with_entry(rest, f'{py_str(array.key)}: "s"'), ""


def _with_entry(literal: str | None, entry: str) -> str | None:
    if literal is None:
        return None
    return "{" + entry + "}" if literal == "{}" else literal[:-1] + ", " + entry + "}"


# --- the catalogs -------------------------------------------------------------------------


def _harvested(directory: Path) -> list[Path]:
    """Live servers' tools as `codegen harvest` writes them: a server built with the SDK,
    and the reference `server-everything` (its `serverInfo.name` is
    `mcp-servers/everything`)."""
    servers = {
        "mcpserver_tools": [sys.executable, str(FIXTURES / "mcp" / "mcpserver_tools.py")],
        "everything": [str(EVERYTHING)],
    }
    assert EVERYTHING.exists(), "run `npm ci`: @modelcontextprotocol/server-everything"
    paths = []
    for name, command in servers.items():
        path = directory / f"harvested_{name}.json"
        status = main(
            ["harvest", "--mcp", "-q", "-o", str(path), "--timeout", "60", "--", *command]
        )
        assert status == 0, name
        paths.append(path)
    return paths


def _catalogs(directory: Path) -> dict[str, ir.Catalog]:
    catalogs: dict[str, ir.Catalog] = {}
    for path in CORPUS_FILES:
        compiled = compile_sources([str(path)], require_tools=False)
        assert compiled.catalog is not None, path
        if compiled.catalog.tools:
            catalogs[_module_name("corpus", path.stem)] = compiled.catalog
    folders = sorted({path.parent for path in CORPUS_FILES if path.parent != CORPUS})
    for folder in folders:
        compiled = compile_sources([str(folder)], namespace=True)
        assert compiled.catalog is not None, (folder, compiled.errors)
        catalogs[_module_name("namespaced", folder.name)] = compiled.catalog
    harvested = _harvested(directory)
    for path in harvested:
        compiled = compile_sources([str(path)], require_tools=False)
        assert compiled.catalog is not None, path
        catalogs[_module_name("sdk", path.stem)] = compiled.catalog
    together = compile_sources([str(path) for path in harvested], namespace=True)
    assert together.catalog is not None, together.errors
    catalogs["namespaced_harvested"] = together.catalog
    assert {"everything__echo", "everything__get-sum"} <= {t.name for t in together.catalog.tools}
    return catalogs


def _module_name(kind: str, stem: str) -> str:
    return f"{kind}_{re.sub(r'[^0-9A-Za-z_]', '_', stem)}"


# --- the test -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def callers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Expectations]]:
    directory = tmp_path_factory.mktemp("typed_calls")
    expectations: dict[str, Expectations] = {}
    counts = Counts()
    for module, catalog in _catalogs(directory).items():
        (directory / f"{module}.py").write_text(render_python_sdk(catalog), encoding="utf-8")
        text, expect = caller_lines(module, catalog, counts)
        (directory / f"call_{module}.py").write_text(text, encoding="utf-8")
        expectations[f"call_{module}.py"] = expect
    (directory / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "reportUnusedVariable": False})
    )
    print(f"typed calls: {counts}")
    assert counts.tools > 800 and counts.method_tools > 800 and counts.unbuildable == 0
    return directory, expectations


def test_mypy_strict_checks_every_call(callers: tuple[Path, dict[str, Expectations]]) -> None:
    directory, expected = callers
    check_findings(mypy_findings(directory, sorted(expected)), expected)


def test_pyright_strict_checks_every_call(callers: tuple[Path, dict[str, Expectations]]) -> None:
    directory, expected = callers
    check_findings(pyright_findings(directory, sorted(expected)), expected)


# --- argument arrays as callers write them ------------------------------------------------

ARGUMENT_ARRAYS = ROOT / "schemas" / "argument_arrays.json"
REQUIRED = '"geometry": [], "center": [0, 0]'
"""The required keys of `draw_shape`, to which each call below adds one."""
OK = None

NATURAL_CALLS: list[tuple[str, str | None]] = [
    # integers where numbers are expected, in a union of arrays, and a list for a tuple
    ('{"geometry": [-77, 38], "center": [-77, 38.9]}', OK),
    ('{"geometry": [[-77, 38], [-76.5, 39], [-77, 38]], "center": [-77, 38]}', OK),
    ('{"geometry": [[1, 2]], "center": (-77, 38)}', OK),
    ('{"geometry": RING, "center": POINT}', OK),
    ('{"geometry": [RING, [1.5, 2.5]], "center": POINT}', OK),
    ('{"geometry": RING_TUPLE, "center": INT_POINT}', OK),
    (f'{{{REQUIRED}, "weights": [1, 2, 3.5]}}', OK),
    (f'{{{REQUIRED}, "weights": RING}}', OK),
    (f'{{{REQUIRED}, "scale": {{"x": 1, "y": 2.5}}}}', OK),
    (f'{{{REQUIRED}, "scale": SCALE}}', OK),
    (f'{{{REQUIRED}, "span": [1, "a"]}}', OK),
    (f'{{{REQUIRED}, "span": (1, "a")}}', OK),
    (f'{{{REQUIRED}, "span": [1]}}', OK),
    # arrays of objects: lists of dict literals, nested, and in a union of arrays
    (f'{{{REQUIRED}, "labels": [{{"text": "a", "at": [1, 2]}}, {{"text": "b"}}]}}', OK),
    (f'{{{REQUIRED}, "layers": [[{{"id": "x"}}, {{"id": "y", "version": 2}}], []]}}', OK),
    (f'{{{REQUIRED}, "layers": [REFS]}}', OK),
    (f'{{{REQUIRED}, "targets": ["a", "b"]}}', OK),
    (f'{{{REQUIRED}, "targets": [{{"id": "a"}}, {{"id": "b", "version": 1}}]}}', OK),
    (f'{{{REQUIRED}, "targets": REFS}}', OK),
    # wrong types are still reported
    ('{"geometry": "1,2", "center": [0, 0]}', ""),
    ('{"geometry": b"wrong", "center": [0, 0]}', ""),
    ('{"geometry": [], "center": "0,0"}', ""),
    ('{"geometry": [], "center": {"x": 0}}', ""),
    ('{"geometry": ["x"], "center": [0, 0]}', ""),
    ('{"geometry": [[1, "x"]], "center": [0, 0]}', ""),
    ('{"geometry": [], "center": [0, "x"]}', ""),
    (f'{{{REQUIRED}, "weights": [1, "2"]}}', ""),
    (f'{{{REQUIRED}, "weights": NAMES}}', ""),
    (f'{{{REQUIRED}, "scale": {{"x": "big"}}}}', ""),
    (f'{{{REQUIRED}, "scale": [1]}}', ""),
    (f'{{{REQUIRED}, "span": [1.5]}}', ""),
    (f'{{{REQUIRED}, "labels": [{{"text": 1}}]}}', ""),
    (f'{{{REQUIRED}, "labels": [{{"txet": "a"}}]}}', "txet"),
    (f'{{{REQUIRED}, "labels": [{{"text": "a", "at": ["x", 1]}}]}}', ""),
    (f'{{{REQUIRED}, "layers": [{{"id": "x"}}]}}', ""),
    (f'{{{REQUIRED}, "layers": [[{{"id": 1}}]]}}', ""),
    (f'{{{REQUIRED}, "targets": [1]}}', ""),
    (f'{{{REQUIRED}, "targets": "a"}}', ""),
    (f'{{{REQUIRED}, "targets": [{{"id": "a", "verison": 1}}]}}', ""),  # key unnamed in a union
]
"""`draw_shape` calls as a caller writes them (`OK`), and wrong ones, each with a word the
report must name ("" for any report)."""

NATURAL_PRELUDE = """\
from typing import assert_type

import argument_arrays as sdk

RING = [-77, 38]
RING_TUPLE = (-77, 38.5, -76)
POINT = [-77.0, 38.9]
INT_POINT = [-77, 38]
SCALE = {"x": 1, "y": 2}
NAMES = ["a", "b"]
REFS: list[sdk.DrawShape_Ref] = [{"id": "a"}]


async def results(tools: sdk.Tools) -> None:
    result = await tools.draw_shape({"geometry": [], "center": [0, 0]})
    assert_type(result["bbox"], list[float])
    assert_type(result.get("corner"), tuple[float, float] | None)
    assert_type(result.get("areas"), dict[str, float] | None)
    assert_type(result.get("rings"), list[sdk.DrawShape_OutputRings] | None)
    for ring in result.get("rings", []):
        assert_type(ring["points"], list[list[float]])


async def calls(tools: sdk.Tools) -> None:
"""


def natural_caller() -> tuple[str, Expectations]:
    """The caller module: every call of `NATURAL_CALLS` through the method and through
    `tools["draw_shape"]`, and the result's types."""
    lines = NATURAL_PRELUDE.rstrip("\n").split("\n")
    expect = Expectations(clean=set(range(1, len(lines) + 1)))
    for form in ("tools.draw_shape", 'tools["draw_shape"]'):
        for call, word in NATURAL_CALLS:
            lines.append(f"    await {form}({call})")
            if word is None:
                expect.clean.add(len(lines))
            else:
                expect.reported[len(lines)] = word
    return "\n".join(lines) + "\n", expect


@pytest.fixture(scope="module")
def natural_callers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Expectations]:
    directory = tmp_path_factory.mktemp("natural_calls")
    catalog = compile_sources([str(ARGUMENT_ARRAYS)]).catalog
    assert catalog is not None
    (directory / "argument_arrays.py").write_text(render_python_sdk(catalog), encoding="utf-8")
    text, expect = natural_caller()
    (directory / "call_argument_arrays.py").write_text(text, encoding="utf-8")
    (directory / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "reportUnusedVariable": False})
    )
    return directory, expect


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_argument_arrays_take_what_callers_write(
    checker: str, natural_callers: tuple[Path, Expectations]
) -> None:
    """JSON has one number type and no tuples, and an argument is only read: integers pass
    where numbers are expected, a list where a tuple is (at any depth, in a union of arrays,
    through a variable), a list of dict literals for an array of objects, and a `list[int]`
    or a `dict[str, int]` variable where numbers are expected. Wrong item types, a string
    or bytes for an array, and misspelled keys inside list items are still reported; the
    result keeps its lists, tuples and dicts."""
    directory, expect = natural_callers
    files = ["call_argument_arrays.py"]
    find = mypy_findings if checker == "mypy" else pyright_findings
    check_findings(find(directory, files), {files[0]: expect})


PEP_728_PROBE = """
from typing import Any

from typing_extensions import TypedDict


class Open(TypedDict, extra_items=Any):
    a: int


value: Open = {"a": 1, "other": 2}
"""


def test_open_objects_stay_closed_while_mypy_lacks_pep_728(tmp_path: Path) -> None:
    """Why an open object is a plain (closed) TypedDict whose comment says checkers reject
    other keys: PEP 728's `extra_items` would make type and schema agree, but mypy does not
    accept it (pyright does). When this fails, mypy has caught up: switch to `extra_items`."""
    (tmp_path / "probe.py").write_text(PEP_728_PROBE)
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "probe.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert mypy.returncode == 1 and "extra_items" in mypy.stdout, mypy.stdout
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "strict"}')
    pyright = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    checked = subprocess.run(
        [pyright, "probe.py"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout
    sdk = render_python_sdk(compile_sources([str(ROOT / "schemas" / "open_closed.json")]).catalog)  # type: ignore[arg-type]
    assert "# Other keys are allowed; type checkers reject them.\n" in sdk
