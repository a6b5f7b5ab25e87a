"""A plain JSON Schema file (not a tool definition): `codegen sdk person.schema.json` writes
its types alone, named from its title or file name, valid in both languages; `validate`
checks it; the commands that read only tools say how to wrap it; and no tool format is ever
read as a plain schema. The README.md example is generated here and compared as written."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen import ir
from codegen.cli import main
from codegen.load.formats import is_plain_schema, plain_schema, plain_schema_name
from codegen.load.sources import expand_sources, load_sources
from codegen.pipeline import compile_schemas
from conftest import CORPUS, FIXTURES, ROOT, SCHEMAS
from support.sdk_checks import check_black
from support.tsc import check_declarations, node

PERSON = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Person",
    "description": "A person.",
    "type": "object",
    "properties": {
        "firstName": {"type": "string", "description": "The first name."},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "pet": {"$ref": "#/$defs/pet"},
        "kind": {"enum": ["a", "b"]},
    },
    "required": ["firstName"],
    "$defs": {
        "pet": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "additionalProperties": False,
        }
    },
}
"""Every case is generated, then checked by `black`, `mypy --strict` and `tsc --strict`."""
CASES: dict[str, Any] = {
    "person.schema.json": PERSON,
    # A draft-07 tree whose root is a reference; an unused definition keyed by a number and
    # one by a keyword with keys that are not identifiers; `Node` is a DOM global in
    # TypeScript, which a module's own declaration shadows.
    "tree.json": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": "#/definitions/Node",
        "definitions": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "number"},
                    "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}},
                },
                "required": ["value"],
            },
            "123": {"type": "string"},
            "class": {
                "type": "object",
                "properties": {"from": {"type": "string"}, "x-y": {"type": "integer"}},
            },
        },
    },
    # A root that is only a reference to the definition its file is named after.
    "json.json": {
        "$ref": "#/$defs/json",
        "$defs": {
            "json": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#"}}]}
        },
    },
    "email.json": {"title": "Email", "type": "string", "format": "email"},
    "nullable-date.json": {"title": "Date", "type": ["string", "null"]},
    "pets.schema.json": {
        "type": "array",
        "items": {
            "oneOf": [
                {"type": "object", "properties": {"kind": {"const": "cat"}}},
                {"type": "object", "properties": {"kind": {"const": "dog"}}},
            ]
        },
    },
    "bundle.json": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Shapes",
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"],
            },
            "Shape": {"oneOf": [{"$ref": "#/$defs/Point"}, {"type": "string"}]},
            "Shapes": {"type": "array", "items": {"$ref": "#/$defs/Shape"}},
            "Record": {"type": "object", "additionalProperties": False},
        },
    },
    "hostile.json": {
        "title": 'Bad */ """ name',
        "description": '"""\n*/ declare const pwned: 1; /*\n# type: ignore',
        "type": "object",
        "properties": {"a\u2028b": {"type": "string", "description": "@ts-ignore */"}},
    },
}


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


@pytest.fixture
def cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, schema in CASES.items():
        (tmp_path / name).write_text(json.dumps(schema), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- recognition --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "document",
    [
        {"$schema": "https://json-schema.org/draft/2020-12/schema"},
        {"type": "object"},
        {"type": ["string", "null"]},
        {"properties": {"a": {}}},
        {"$defs": {"a": {}}},
        {"definitions": {"a": {}}},
        {"title": "X", "type": "integer", "description": "A number."},
        {"title": "Pet", "oneOf": [{"type": "string"}, {"type": "integer"}]},
        {"title": "Pet", "allOf": [{"$ref": "#/$defs/A"}], "$defs": {"A": {}}},
        {"anyOf": [{"type": "string"}]},
        {"$ref": "#/$defs/A", "$defs": {"A": {}}},
    ],
)
def test_a_schema_document_is_plain(document: dict[str, Any]) -> None:
    assert is_plain_schema(document)


@pytest.mark.parametrize(
    "document",
    [
        {"name": "x", "type": "object", "properties": {}},  # a tool's keys win
        {"$schema": "x", "tools": []},
        {"$schema": "x", "inputSchema": {"type": "object"}},
        {"$schema": "x", "input_schema": {"type": "object"}},
        {"$schema": "x", "parameters": {"type": "object"}},
        {"$schema": "x", "function": {"name": "f"}},
        {"type": "function", "function": {"name": "f"}},
        {"type": "module", "dependencies": {}},  # a package.json
        {"name": "demo", "version": "1.0.0"},
        {"type": "dict"},  # BFCL's dialect alone is not a schema document
        {"$schema": 3},
        {"oneOf": []},
        {"allOf": "x"},
        {"$ref": 3},
        {"name": "t", "oneOf": [{"type": "string"}]},  # a tool's keys win
        {"compilerOptions": {}},
        [{"type": "object"}],
        "object",
    ],
)
def test_other_documents_are_not_plain_schemas(document: Any) -> None:
    assert not is_plain_schema(document)


def test_no_document_of_a_tool_format_is_read_as_a_plain_schema() -> None:
    """Every bundled schema, corpus file and fixture loads exactly as before."""
    files = expand_sources([str(SCHEMAS), str(CORPUS), str(FIXTURES)])
    assert len(files) > 100
    for display, path in files:
        assert path is not None
        if "json-schema-test-suite" in display:
            continue  # suite files are lists of test groups, never tools
        if display.startswith(f"{SCHEMAS}/external_refs/"):
            continue  # what a golden case refers to: schema files, read through its $refs
        with_plain = load_sources([path], plain_schemas=True, require_tools=False)
        without = load_sources([path], require_tools=False)
        assert with_plain == without, display
        assert all(tool.format != "jsonschema" for tool in with_plain.tools), display


@pytest.mark.parametrize(
    ("document", "stem", "name"),
    [
        ({"title": " Person record "}, "x", "Person record"),
        ({"title": ""}, "person.schema", "person"),
        ({}, "person.schema", "person"),
        ({}, "order", "order"),
        ({}, ".schema", ".schema"),
        ({}, None, "Schema"),
    ],
)
def test_the_root_is_named_from_the_title_else_the_file(
    document: dict[str, Any], stem: str | None, name: str
) -> None:
    assert plain_schema_name(document, stem) == name


# --- the command line -----------------------------------------------------------------------


def test_sdk_writes_the_types_alone(cases: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, python, err = cli(capsys, "sdk", "person.schema.json", "--lang", "python")
    assert (status, err) == (0, "")
    module = ast.parse(python)
    declared = {
        node.name if isinstance(node, ast.ClassDef) else ast.unparse(node.targets[0])
        for node in module.body
        if isinstance(node, ast.ClassDef | ast.Assign)
    }
    assert declared == {"Person", "PersonAddress", "Pet"}
    for absent in ("class Tools", "ToolName", "ToolCallError", "tools:"):
        assert absent not in python
    assert 'class Person(TypedDict):\n    """A person."""' in python
    assert "    pet: NotRequired[Pet]\n" in python
    status, typescript, err = cli(capsys, "sdk", "person.schema.json", "--lang", "typescript")
    assert (status, err) == (0, "")
    assert "/** A person. */\nexport interface Person {\n" in typescript
    assert "export interface Pet {\n  name?: string;\n}" in typescript
    assert "Tools" not in typescript and "declare" not in typescript
    # Without a title, the file names the root type; from stdin, `Schema`.
    untitled = {key: value for key, value in PERSON.items() if key != "title"}
    (cases / "person.schema.json").write_text(json.dumps(untitled))
    status, python, _ = cli(capsys, "sdk", "person.schema.json", "--lang", "python")
    assert status == 0 and "class Person(TypedDict):" in python
    result = subprocess.run(
        [sys.executable, "-m", "codegen", "sdk", "-", "--lang", "python"],
        input=json.dumps({"type": "string"}).encode(),
        capture_output=True,
        check=False,
    )
    assert result.returncode == 0 and b"\nSchema: TypeAlias = str\n" in result.stdout


def test_every_definition_is_a_type_and_a_bundle_is_only_its_definitions(
    cases: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, python, _ = cli(capsys, "sdk", "tree.json", "--lang", "python")
    assert status == 0
    assert "class Node(TypedDict):" in python and "Tree: TypeAlias = Node\n" in python
    assert "Def123: TypeAlias = str\n" in python and 'Class = TypedDict(\n    "Class",' in python
    status, python, _ = cli(capsys, "sdk", "bundle.json", "--lang", "python")
    assert status == 0
    names = re.findall(r"^(?:class )?(\w+)", python.split(")\n", 1)[1], re.MULTILINE)
    # `Record` is the one TypeScript global a module of types uses itself.
    assert names == ["Point", "Shape", "Shapes", "Record2"]
    status, python, _ = cli(capsys, "sdk", "nullable-date.json", "--lang", "python")
    assert "\nDate: TypeAlias = str | None\n" in python
    # A root that only refers to the definition named like it is that definition, once.
    status, python, _ = cli(capsys, "sdk", "json.json", "--lang", "python")
    assert python.endswith(')\n\nJson: TypeAlias = str | list["Json"]\n')


@pytest.mark.parametrize("keyword", ["allOf", "oneOf"])
def test_a_root_of_title_and_combinator_keeps_its_description(keyword: str) -> None:
    arms = [{"type": "object", "properties": {"a": {"type": "string"}}}]
    if keyword == "oneOf":
        arms.append({"type": "string"})
    document = {"title": "Pet", "description": "A pet.", keyword: arms}
    compiled = compile_schemas([plain_schema(document, "pet.json", "pet")])
    assert compiled.catalog is not None, compiled.diagnostics
    [root] = [t for t in compiled.catalog.tools[0].types if t.name == "Pet"]
    assert root.docs.description == "A pet."
    assert isinstance(root, ir.ObjectType if keyword == "allOf" else ir.AliasType)


def test_several_schemas_make_one_module(cases: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, python, _ = cli(capsys, "sdk", "email.json", "person.schema.json", "--lang", "python")
    assert status == 0
    assert python.index("Email: TypeAlias = str") < python.index("class Person(TypedDict):")


def test_validate_checks_a_plain_schema(cases: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cli(capsys, "validate", "person.schema.json")
    assert (status, out, err) == (0, "", "1 schema: 0 errors, 0 warnings\n")
    (cases / "bad.schema.json").write_text(json.dumps({"type": "object", "minProperties": "1"}))
    status, out, err = cli(capsys, "validate", "bad.schema.json")
    assert status == 1 and out.startswith("bad.schema.json:/minProperties: error:")
    status, _, err = cli(capsys, "sdk", "bad.schema.json", "--lang", "typescript")
    assert status == 1 and "bad.schema.json:/minProperties: error:" in err


HINT = (
    "person.schema.json:: error: a plain JSON Schema, not a tool definition: `codegen sdk` and "
    "`codegen validate` read it on its own (its types, no tools); to use it as a tool's "
    'arguments, wrap it as {"name": "person", "inputSchema": <this schema>}\n'
)


@pytest.mark.parametrize(
    "args",
    [
        ("prompt", "person.schema.json", "--lang", "python"),
        ("catalog", "person.schema.json"),
        ("build", "person.schema.json", "-o", "out"),
        ("diff", "person.schema.json", "person.schema.json"),
    ],
)
def test_commands_that_read_tools_say_how_to_wrap_it(
    args: tuple[str, ...], cases: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = cli(capsys, *args)
    assert status == 1 and out == ""
    assert HINT in err
    assert not (cases / "out").exists()


def test_the_wrapped_schema_is_a_tool(cases: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The wrapping the error shows, done: a tool whose arguments are the schema."""
    (cases / "tool.json").write_text(json.dumps({"name": "person", "inputSchema": PERSON}))
    status, out, _ = cli(capsys, "prompt", "tool.json", "--lang", "python")
    assert status == 0 and "async def person(" in out


def test_plain_schemas_and_tools_never_mix(cases: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cases / "tools.json").write_text(json.dumps({"tools": [{"name": "echo"}]}))
    status, out, err = cli(capsys, "sdk", "tools.json", "person.schema.json", "--lang", "python")
    assert (status, out) == (1, "")
    assert HINT in err
    # A forced input format reads that format only.
    status, _, err = cli(
        capsys, "sdk", "person.schema.json", "--lang", "python", "--input-format", "mcp"
    )
    assert status == 1 and "not a tool in the 'mcp' format" in err


# --- valid output ---------------------------------------------------------------------------


def _render_all(directory: Path, capsys: pytest.CaptureFixture[str]) -> dict[tuple[str, str], str]:
    texts = {}
    for name in CASES:
        for language in ("python", "typescript"):
            status, out, err = cli(capsys, "sdk", str(directory / name), "--lang", language)
            assert status == 0, (name, err)
            texts[name, language] = out
    return texts


def test_python_output_parses_and_is_a_black_fixed_point(
    cases: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = _render_all(cases, capsys)
    for (_, language), text in texts.items():
        if language == "python":
            ast.parse(text)
            check_black(text)
    hostile = texts["hostile.json", "python"]
    assert '\nBadName = TypedDict(\n    "BadName",' in hostile
    assert "\n# type: ignore" not in hostile and "\npwned" not in hostile
    assert "*\\/ declare const pwned" in texts["hostile.json", "typescript"]


@pytest.mark.slow
def test_python_output_passes_mypy_strict(
    cases: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "modules"
    out.mkdir()
    for (name, language), text in _render_all(cases, capsys).items():
        if language == "python":
            module = re.sub(r"\W", "_", name.split(".")[0])
            (out / f"{module}.py").write_text(text, encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            os.devnull,
            *sorted(str(path) for path in out.glob("*.py")),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_typescript_output_passes_tsc_strict_alone_and_side_by_side(
    cases: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    texts = _render_all(cases, capsys)
    check_declarations(
        {name: text for (name, language), text in texts.items() if language == "typescript"},
        tmp_path,
    )
    # Two modules in one project, each imported by name (both declare `JsonValue`).
    project = tmp_path / "project"
    project.mkdir()
    (project / "person.d.ts").write_text(texts["person.schema.json", "typescript"])
    (project / "shapes.d.ts").write_text(texts["bundle.json", "typescript"])
    (project / "main.ts").write_text(
        'import type { Person, Pet } from "./person.js";\n'
        'import type { Point, Shapes } from "./shapes.js";\n'
        'const pet: Pet = { name: "Rex" };\n'
        'const person: Person = { firstName: "Ada", pet, address: { city: "London" } };\n'
        'const shapes: Shapes = [{ x: 1, y: 2 }, "circle"];\n'
        "const point: Point = { x: 0, y: 0 };\n"
        "// @ts-expect-error: firstName is required\n"
        "const nobody: Person = {};\n"
        "export { nobody, person, point, shapes };\n"
    )
    (project / "tsconfig.json").write_text(
        json.dumps(
            {
                "compilerOptions": {
                    "strict": True,
                    "noEmit": True,
                    "module": "nodenext",
                    "moduleResolution": "nodenext",
                    "types": [],
                },
                "files": ["main.ts"],
            }
        )
    )
    node()  # fails with a hint when Node or the typescript package is missing
    tsc = ROOT / "node_modules" / ".bin" / "tsc"
    result = subprocess.run(
        [str(tsc), "-p", str(project / "tsconfig.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- the README example -------------------------------------------------------------------


def _readme_section() -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    start = text.index("### A plain JSON Schema\n")
    return text[start : text.index("\n## ", start)]


def test_the_readme_example_is_what_codegen_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """README.md's schema, written to `person.schema.json` and run through the documented
    command: the module ends with the Python shown, the TypeScript ends as shown."""
    section = _readme_section()
    fences = dict(re.findall(r"^```(\w+)\n(.*?)^```\n", section, re.MULTILINE | re.DOTALL))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "person.schema.json").write_text(fences["json"], encoding="utf-8")
    assert "`codegen sdk person.schema.json --lang python`" in section
    status, python, _ = cli(capsys, "sdk", "person.schema.json", "--lang", "python")
    assert status == 0 and python.endswith("\n\n\n" + fences["python"])
    status, typescript, _ = cli(capsys, "sdk", "person.schema.json", "--lang", "typescript")
    assert status == 0 and typescript.endswith("\n\n" + fences["ts"])
