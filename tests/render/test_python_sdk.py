"""The Python SDK: golden snapshots, then real checks on every snapshot and corpus file:
`ast.parse`, `black` fixed point, `mypy --strict`, `pyright` strict, import at runtime, and
the module's exact structure read from its AST."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import black
import pytest

from codegen import ir
from codegen.engine import compile_sources, compile_value
from codegen.ir_build import limits
from codegen.render.python.black_layout import flat
from codegen.render.python.sdk import (
    argument_type_expr,
    argument_types,
    render_python_sdk,
    type_expr,
)
from codegen.render.sections.python import render_python_section_sdk as render_python_model_sdk
from codegen.render.typescript.sdk import render_typescript_sdk
from codegen.schema_spelling import json_schema_to_py
from conftest import CORPUS_FILES, EVERY_FILE, GOLDEN_CASES, ROOT, SCHEMAS, corpus_id
from support.sdk_checks import check_python, check_python_model, check_structure


@cache
def catalog_of(path: Path) -> ir.Catalog:
    compiled = compile_sources([str(path)], require_tools=False)
    assert compiled.catalog is not None, compiled.errors
    return compiled.catalog


def all_inputs() -> list[Path]:
    return EVERY_FILE


def module_name(path: Path) -> str:
    stem = path.stem.replace("-", "_").replace(".", "_")
    return f"golden_{stem}" if path.parent == SCHEMAS else f"corpus_{stem}"


@pytest.fixture(scope="module")
def rendered_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every golden case and corpus file rendered once, as importable modules."""
    directory = tmp_path_factory.mktemp("python_sdks")
    for path in all_inputs():
        text = render_python_sdk(catalog_of(path))
        (directory / f"{module_name(path)}.py").write_text(text, encoding="utf-8")
    return directory


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_golden_snapshot(case: str, golden: Any) -> None:
    assert render_python_sdk(catalog_of(SCHEMAS / f"{case}.json")) == golden("python", "py")


def test_at_least_25_golden_cases() -> None:
    assert len(GOLDEN_CASES) >= 25


GOLDEN_PATHS = [SCHEMAS / f"{case}.json" for case in GOLDEN_CASES]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, id=p.stem)
        if p in GOLDEN_PATHS
        else pytest.param(p, id=corpus_id(p), marks=pytest.mark.slow)
        for p in all_inputs()
    ],
)
def test_black_fixed_point_and_structure(path: Path) -> None:
    """The golden cases in the daily loop, the corpus with the slow checks."""
    catalog = catalog_of(path)
    text = render_python_sdk(catalog)
    assert black.format_str(text, mode=black.Mode()) == text
    check_structure(ast.parse(text), catalog, text)
    check_python(text, catalog)  # exact fields, annotations, docstrings and escaping too
    check_python_model(render_python_model_sdk(catalog), catalog)


@pytest.mark.slow
def test_mypy_strict_on_every_sdk(rendered_dir: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            os.devnull,
            *sorted(str(p) for p in rendered_dir.glob("*.py")),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_pyright_strict_on_every_sdk(rendered_dir: Path) -> None:
    pyright = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    assert Path(pyright).exists(), "pyright is part of the test extra: pip install '.[test]'"
    (rendered_dir / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.11"})
    )
    result = subprocess.run(
        [pyright, "--project", str(rendered_dir), str(rendered_dir)],
        capture_output=True,
        text=True,
        check=False,
        cwd=rendered_dir,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 errors" in result.stdout


def test_every_sdk_imports_at_runtime(rendered_dir: Path) -> None:
    """Every golden case and every corpus file imports, and every TypedDict's annotations
    evaluate (what pydantic and `get_type_hints` do): a forward reference never sits in a
    `|` as a string."""
    assert sorted(p.stem for p in rendered_dir.glob("*.py")) == sorted(
        module_name(p) for p in all_inputs()
    )
    assert {f"golden_{case}" for case in GOLDEN_CASES} <= {module_name(p) for p in all_inputs()}
    script = (
        "import importlib.util, pathlib, sys, typing\n"
        "for path in sorted(pathlib.Path(sys.argv[1]).glob('*.py')):\n"
        "    spec = importlib.util.spec_from_file_location(path.stem, path)\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    sys.modules[path.stem] = module\n"
        "    spec.loader.exec_module(module)\n"
        "    for value in list(vars(module).values()):\n"
        "        if typing.is_typeddict(value):\n"
        "            typing.get_type_hints(value)\n"
        "    assert module.__annotations__['tools'] is module.Tools, path\n"
        "    assert module.Tools._is_protocol, path\n"
        "    error = module.ToolCallError('get-user', 'not found')\n"
        "    assert error.tool_name == 'get-user' and str(error) == 'not found'\n"
        "print('imported', len(list(pathlib.Path(sys.argv[1]).glob('*.py'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-W", "error", "-c", script, str(rendered_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"imported {len(all_inputs())}"


def test_runtime_typeddicts_keep_required_keys(rendered_dir: Path) -> None:
    """Forward references are quoted below `NotRequired`, so the runtime still knows which
    keys are optional."""
    import importlib.util

    path = rendered_dir / "golden_recursion.py"
    spec = importlib.util.spec_from_file_location("golden_recursion", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.WriteTree_Node.__required_keys__ == frozenset({"name"})
    assert module.WriteTree_Node.__optional_keys__ == frozenset({"children", "meta"})
    assert module.LinkedListArgs.__optional_keys__ == frozenset({"next"})


def test_a_recursive_alias_in_a_union_is_a_real_type(rendered_dir: Path) -> None:
    """`J = str | list[J]` used as `int | J`: only the self-reference is quoted (inside the
    subscript), so `J` is a type at runtime and a union holding it evaluates."""
    import importlib.util
    import typing

    path = rendered_dir / "golden_recursive_alias_union.py"
    spec = importlib.util.spec_from_file_location("golden_recursive_alias_union", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        assert not isinstance(module.StoreValue_J, str)
        assert not isinstance(module.StoreValueOutput, str)
        hints = typing.get_type_hints(module.StoreValueArgs)
        assert set(hints) == {"value", "maybe", "many", "plain"}
        assert module.StoreValueArgs.__required_keys__ == frozenset({"value"})
    finally:
        del sys.modules[spec.name]


@pytest.mark.slow
def test_an_empty_property_name_passes_pyright(tmp_path: Path) -> None:
    """pyright rejects the key `""` in any TypedDict, so such an object is a map of its
    value types, its keys in comments; the module passes both checkers and imports."""
    catalog = compile_value(
        {"name": "t", "inputSchema": {"type": "object", "properties": {"": {"type": "string"}}}}
    ).catalog
    assert catalog is not None
    (tmp_path / "empty_key.py").write_text(render_python_sdk(catalog), encoding="utf-8")
    (tmp_path / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "pythonVersion": "3.11"})
    )
    pyright = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    result = subprocess.run(
        [pyright, "--project", str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "empty_key.py"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert mypy.returncode == 0, mypy.stdout
    text = (tmp_path / "empty_key.py").read_text(encoding="utf-8")
    assert "TArgs: TypeAlias = Mapping[str, Any]" in text and '#   "": str, optional' in text
    check_python(text, catalog)


def _render_hashes(seed: str) -> str:
    script = (
        "import hashlib, sys\n"
        "from codegen.engine import compile_sources\n"
        "from codegen.render.python.sdk import render_python_sdk\n"
        "for path in sys.argv[1:]:\n"
        "    text = render_python_sdk(compile_sources([path], require_tools=False).catalog)\n"
        "    print(hashlib.sha256(text.encode()).hexdigest())\n"
    )
    paths = [str(p) for p in all_inputs()[::3]]
    env = {**os.environ, "PYTHONHASHSEED": seed}
    result = subprocess.run(
        [sys.executable, "-c", script, *paths],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=ROOT,
    )
    return result.stdout


def test_byte_identical_across_hash_seeds() -> None:
    outputs = {_render_hashes(seed) for seed in ("0", "1", "4242")}
    assert len(outputs) == 1


def test_byte_identical_across_input_order(tmp_path: Path) -> None:
    for path in [SCHEMAS / "tool_names.json", CORPUS_FILES[0], ROOT / "tests/corpus/mcp"]:
        if path.is_dir():
            continue
        value = json.loads(path.read_text())
        expected = render_python_sdk(catalog_of(path))
        tools = list(value["tools"])
        for seed in range(3):
            random.Random(seed).shuffle(tools)
            shuffled = compile_value({"tools": tools}, source=str(path)).catalog
            assert shuffled is not None
            assert render_python_sdk(shuffled) == expected
    # File order of a directory does not matter either: sources are sorted.
    for name in ("b.json", "a.json"):
        shutil.copy(SCHEMAS / ("tuples.json" if name == "a.json" else "maps.json"), tmp_path / name)
    forward = compile_sources([str(tmp_path / "a.json"), str(tmp_path / "b.json")]).catalog
    backward = compile_sources([str(tmp_path / "b.json"), str(tmp_path / "a.json")]).catalog
    assert forward is not None and backward is not None
    assert render_python_sdk(forward) == render_python_sdk(backward)


def test_first_bytes_do_not_depend_on_the_tool_set() -> None:
    empty = render_python_sdk(catalog_of(SCHEMAS / "empty.json"))
    fixed = empty[: empty.index("\n\n\nToolName: TypeAlias")]
    assert "class ToolCallError" in fixed and "_UNBOUND" in fixed
    for path in all_inputs()[:10]:
        assert render_python_sdk(catalog_of(path)).startswith(fixed)


def test_adding_a_tool_renames_no_other_type() -> None:
    base = json.loads((SCHEMAS / "nested_objects.json").read_text())["tools"]
    extra = json.loads((SCHEMAS / "refs_defs.json").read_text())["tools"]
    alone = render_python_sdk(compile_value({"tools": base}).catalog)  # type: ignore[arg-type]
    both = render_python_sdk(compile_value({"tools": base + extra}).catalog)  # type: ignore[arg-type]
    for line in alone.splitlines():
        if line.startswith("class "):
            assert line in both


def test_json_schema_to_py_is_total() -> None:
    assert json_schema_to_py({"type": "object", "properties": {"a": {}}}) == "dict[str, Any]"
    assert json_schema_to_py({"type": ["string", "null"]}) == "str | None"
    assert json_schema_to_py({"enum": ["a", 1, None]}) == 'Literal["a", 1] | None'
    assert json_schema_to_py({"type": "array", "items": {"type": "integer"}}) == "list[int]"
    deep: Any = {"type": "string"}
    for _ in range(10_000):
        deep = {"type": "array", "items": deep}
    for hostile in (
        {"type": 5},
        {"$ref": 7},
        [],
        None,
        "x",
        deep,
        {"enum": {1, 2}},
        {"properties": {"a": object()}},
        {"anyOf": "no"},
    ):
        assert isinstance(json_schema_to_py(hostile), str)


NUMBER = ir.Primitive("number")
STRING = ir.Primitive("string")
POINT = ir.TupleType((NUMBER, NUMBER), 2, None)


@pytest.mark.parametrize(
    "node, expected",
    [
        (ir.ArrayType(NUMBER), "SequenceNotStr[float]"),
        (ir.ArrayType(ir.ArrayType(ir.RefType("Item"))), "SequenceNotStr[SequenceNotStr[Item]]"),
        (POINT, "tuple[float, float] | SequenceNotStr[float]"),
        (ir.ArrayType(POINT), "SequenceNotStr[tuple[float, float] | SequenceNotStr[float]]"),
        (
            ir.TupleType((STRING, NUMBER), 1, ir.Primitive("boolean")),
            "tuple[str] | tuple[str, float, *tuple[bool, ...]] | SequenceNotStr[str | float | bool]",
        ),
        (ir.TupleType((), 0, None), "tuple[()] | SequenceNotStr[Never]"),
        (ir.TupleType((STRING,) * 10, 0, None), "SequenceNotStr[str]"),
        (ir.MapType(NUMBER), "Mapping[str, float]"),
        (ir.MapType(ir.AnyType()), "Mapping[str, Any]"),
        (
            ir.UnionType((ir.ArrayType(NUMBER), ir.ArrayType(ir.ArrayType(NUMBER)))),
            "SequenceNotStr[float | SequenceNotStr[float]]",
        ),
        (
            ir.UnionType((STRING, ir.ArrayType(STRING), ir.ArrayType(ir.RefType("Ref")))),
            "str | SequenceNotStr[str | Ref]",
        ),
        (
            ir.UnionType((POINT, ir.ArrayType(POINT))),
            "tuple[float, float]"
            " | SequenceNotStr[float | tuple[float, float] | SequenceNotStr[float]]",
        ),
        (
            ir.UnionType((ir.MapType(NUMBER), ir.Primitive("null"), ir.MapType(STRING))),
            "Mapping[str, float | str] | None",
        ),
        (
            ir.UnionType((ir.LiteralType(("a", None)), ir.ArrayType(NUMBER))),
            'Literal["a"] | None | SequenceNotStr[float]',
        ),
    ],
)
def test_argument_spelling(node: ir.TypeNode, expected: str) -> None:
    """What a caller passes: covariant arrays that are never a `str`, tuples that also
    take a list, `Mapping`s, and one array arm per union (mypy #6079); the output's spelling
    of the same node is unchanged."""
    assert flat(argument_type_expr(node)) == expected
    assert "SequenceNotStr" not in flat(type_expr(node))


def test_argument_spelling_stays_within_the_build_limits() -> None:
    """Joining two arrays of 200 item types each would make a union of 400 arms (pyright
    reads at most 256), and so would a tuple's list of its 250 item types beside another
    array: the spelling falls back to the output's shape, made covariant."""
    assert limits.ARMS_LIMIT is ir.ARMS_LIMIT and limits.EXPRESSION_LIMIT is ir.EXPRESSION_LIMIT
    names = [ir.RefType(f"T{i}") for i in range(400)]
    node = ir.UnionType(
        (
            ir.ArrayType(ir.UnionType(tuple(names[:200]))),
            ir.ArrayType(ir.UnionType(tuple(names[200:]))),
        )
    )
    spelled = flat(argument_type_expr(node))
    assert spelled == flat(type_expr(node)).replace("list[", "SequenceNotStr[")
    assert spelled.count("SequenceNotStr[") == 2
    wide = ir.UnionType((ir.TupleType(tuple(names[:250]), 250, None), ir.ArrayType(STRING)))
    assert flat(argument_type_expr(wide)) == flat(type_expr(wide)).replace(
        "list[", "SequenceNotStr["
    )


def _tool(name: str, args: ir.TypeNode, output: ir.TypeNode, *types: ir.NamedType) -> ir.Tool:
    return ir.Tool(name, None, None, args, output, types)


def test_a_type_both_sides_reach_is_spelled_for_arguments() -> None:
    """The build gives arguments and result separate types (separate schema documents);
    were one type reached from both, its one declaration takes the argument spelling, so a
    result's value passes back as an argument. A type only the result reaches keeps `list`."""
    shared = ir.ObjectType("TShared", (ir.Field("xs", ir.ArrayType(NUMBER), True),), None)
    only_out = ir.ObjectType("T_Out", (ir.Field("ys", ir.ArrayType(NUMBER), True),), None)
    args = ir.ObjectType("TArgs", (ir.Field("s", ir.RefType("TShared"), True),), None)
    output = ir.ObjectType(
        "TOutput",
        (ir.Field("s", ir.RefType("TShared"), True), ir.Field("o", ir.RefType("T_Out"), True)),
        None,
    )
    tool = _tool("t", ir.RefType("TArgs"), ir.RefType("TOutput"), shared, only_out, args, output)
    assert argument_types(tool) == {"TArgs", "TShared"}
    text = render_python_sdk(ir.Catalog((tool,)))
    assert "class TShared(TypedDict):\n    xs: SequenceNotStr[float]\n" in text
    assert "class T_Out(TypedDict):\n    ys: list[float]\n" in text
    declarations = render_typescript_sdk(ir.Catalog((tool,)))
    assert "interface TShared {\n  xs: readonly number[];\n}" in declarations
    assert "interface T_Out {\n  ys: number[];\n}" in declarations


def test_public_api_accepts_a_catalog() -> None:
    import codegen

    catalog = catalog_of(SCHEMAS / "tuples.json")
    assert codegen.render_python_sdk(catalog) == render_python_sdk(catalog)


@cache
def _dcg_root(schema_json: str) -> tuple[tuple[str, bool], ...] | None:
    """Root keys and requiredness in datamodel-code-generator's TypedDict output."""
    import warnings

    from datamodel_code_generator import DataModelType, InputFileType, generate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = generate(
            json.loads(schema_json),
            input_file_type=InputFileType.JsonSchema,
            output_model_type=DataModelType.TypingTypedDict,
            class_name="Root",
            disable_timestamp=True,
            formatters=[],
        )
    module = ast.parse(str(out))
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name == "Root":
            return tuple(
                (n.target.id, not ast.unparse(n.annotation).startswith("NotRequired"))
                for n in node.body
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
            )
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "Root":
            fields = node.value.args[1]  # type: ignore[attr-defined]
            return tuple(
                (k.value, not ast.unparse(v).startswith("NotRequired"))
                for k, v in zip(fields.keys, fields.values, strict=True)
            )
    return None


# Tools where datamodel-code-generator's root differs from ours, and why.
DCG_DIFFERENCES: dict[str, str] = {}


def _our_root(catalog: ir.Catalog, tool: ir.Tool) -> tuple[tuple[str, bool], ...] | None:
    if not isinstance(tool.args, ir.RefType):
        return None
    named = {t.name: t for t in catalog.types}[tool.args.name]
    if not isinstance(named, ir.ObjectType):
        return None
    return tuple((f.key, f.required) for f in named.fields)


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS_FILES, ids=[corpus_id(p) for p in CORPUS_FILES])
def test_same_root_keys_as_datamodel_code_generator(path: Path) -> None:
    catalog = catalog_of(path)
    compared = 0
    for tool in catalog.tools:
        ours = _our_root(catalog, tool)
        theirs = _dcg_root(tool.input_schema)
        key = f"{corpus_id(path)}:{tool.name}"
        if key in DCG_DIFFERENCES:
            assert ours != theirs, f"{key} now agrees; drop it from DCG_DIFFERENCES"
            continue
        if not ours and not theirs:
            continue  # both see no keys (an empty argument object)
        assert ours == theirs, key
        compared += 1
    assert compared > 0


def test_sdk_command_writes_atomically(tmp_path: Path) -> None:
    target = tmp_path / "out" / "sdk.py"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "sdk",
            str(SCHEMAS / "maps.json"),
            "--lang",
            "python",
            "-o",
            str(target),
        ],
        capture_output=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert target.read_text() == render_python_sdk(catalog_of(SCHEMAS / "maps.json"))
    assert [p.name for p in target.parent.iterdir()] == ["sdk.py"]
    mtime = target.stat().st_mtime_ns
    subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "sdk",
            str(SCHEMAS / "maps.json"),
            "--lang",
            "python",
            "-o",
            str(target),
        ],
        check=True,
        cwd=ROOT,
    )
    assert target.stat().st_mtime_ns == mtime, "an unchanged file must not be rewritten"


def test_sdk_command_writes_nothing_on_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "inputSchema": {"type": 1}}')
    target = tmp_path / "sdk.py"
    result = subprocess.run(
        [sys.executable, "-m", "codegen", "sdk", str(bad), "--lang", "python", "-o", str(target)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 1
    assert "/inputSchema/type: error:" in result.stderr
    assert not target.exists()


def test_sdk_to_stdout_is_the_rendered_module() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "sdk",
            str(SCHEMAS / "hostile_descriptions.json"),
            "--lang",
            "python",
        ],
        capture_output=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0
    expected = render_python_sdk(catalog_of(SCHEMAS / "hostile_descriptions.json"))
    assert result.stdout.decode("utf-8") == expected
    assert (
        hashlib.sha256(result.stdout).hexdigest() == hashlib.sha256(expected.encode()).hexdigest()
    )


LONG_VALUES = {
    "name": "configure",
    "inputSchema": {
        "type": "object",
        "properties": {
            "layout": {
                "type": "object",
                "default": {"columns": ["name", "size", "modified", "owner"], "sort": "modified"},
                "examples": [{"columns": ["name"]}, {"columns": ["size", "owner"], "sort": "size"}],
            },
            "banner": {
                "type": "string",
                "default": "Welcome to the shared workspace; read the guidelines before you post.",
            },
        },
    },
}
"""Defaults longer than a short line and several examples."""


def test_every_target_shows_defaults_and_examples_whole() -> None:
    """One rule for values: the SDKs show every default and example whole, as the sections
    do (a cut value cannot be read back)."""
    from codegen.render.catalog import render_catalog
    from codegen.render.sections.typescript import render_typescript_section_sdk

    catalog = compile_value(LONG_VALUES).catalog
    assert catalog is not None
    values = [  # as Python and JSON both spell them, but for spaces
        '{"columns":["name","size","modified","owner"],"sort":"modified"}',
        '{"columns":["name"]}',
        '{"columns":["size","owner"],"sort":"size"}',
        '"Welcome to the shared workspace; read the guidelines before you post."',
    ]
    texts = {
        "python sdk": render_python_sdk(catalog),
        "python section": render_python_model_sdk(catalog),
        "typescript sdk": render_typescript_sdk(catalog),
        "typescript section": render_typescript_section_sdk(catalog),
        "markdown catalog": render_catalog(catalog, "md"),
    }
    for target, text in texts.items():
        compact = "".join(text.split())
        for value in values:
            assert "".join(value.split()) in compact, (target, value)
        assert "..." not in "".join(line for line in text.splitlines() if "Welcome" in line)
