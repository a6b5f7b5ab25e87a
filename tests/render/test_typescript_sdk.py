"""TypeScript declarations: golden files, `tsc --strict` on every output, names and members
identical to the IR, hostile text, totality of `json_schema_to_ts`, determinism, and a
differential check against json-schema-to-typescript (JSTT).

Node runs twice per session at most, whatever the number of files: once to type-check and
parse every rendered file (`tests/node/check_isolated.js`, one program per file) and once to
run JSTT over every tool (`tests/node/jstt_shapes.js`). Missing Node tools fail the tests
with the command that installs them; they are never skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from codegen import ir
from codegen.engine import compile_sources, compile_value
from codegen.render.notes import all_notes, has_notes
from codegen.render.typescript.sdk import render_typescript_sdk, spell, spell_argument
from codegen.schema_spelling import json_schema_to_ts
from conftest import CORPUS_FILES, GOLDEN_CASES, ROOT, SCHEMAS, corpus_id
from support.sdk_checks import (
    check_declared_members,
    check_declared_names,
    check_typescript,
    comment_lines,
)

NODE_SCRIPTS = ROOT / "tests" / "node"
NODE_MODULES = ROOT / "node_modules"
NPM_HINT = "run `npm ci` in the repository root (Node 20) to install typescript and JSTT"


# --- catalogs ---------------------------------------------------------------------------


@cache
def file_catalog(path: Path) -> ir.Catalog:
    compiled = compile_sources([str(path)], require_tools=False)
    assert compiled.catalog is not None, compiled.errors
    return compiled.catalog


def value_catalog(tools: list[dict[str, Any]]) -> ir.Catalog:
    compiled = compile_value({"tools": tools})
    assert compiled.catalog is not None, compiled.errors
    return compiled.catalog


HOSTILE_TEXTS = (
    "*/",
    "**/ interface Evil {} /**",
    "*/ declare const pwned: true; /*",
    "ends with star *",
    "/ starts with a slash",
    "@ts-ignore",
    " * @ts-expect-error",
    "@ts-nocheck",
    "@TS-IGNORE and @jsx h",
    "line\n*/ after a newline",
    "separator\u2028*/ after U+2028",
    "paragraph\u2029@ts-ignore after U+2029",
    "cr\r*/ after CR, nel\x85*/ after NEL, vt\x0b ff\x0c",
    'quote " and backslash \\',
    "\\",
    "nul \x00 bell \x07 del \x7f csi \x9b",
    "lone \ud800 surrogate \udfff",
    "bidi \u202e reversed \u2066 isolate, zero width \u200b",
    "`${template}`",
    "</script><!-- -->",
    "'single'",
)
"""Text that tries to end a comment or a string, switch off checking, or hide itself."""


def _hostile_tool(index: int, text: str) -> dict[str, Any]:
    """One tool carrying `text` in every place a schema string reaches the output."""
    docs = {"description": text, "title": text}
    return {
        "name": f"t{index}{text}",
        **docs,
        "inputSchema": {
            "type": "object",
            **docs,
            "properties": {
                text: {
                    "type": "string",
                    **docs,
                    "default": text,
                    "examples": [text],
                    "pattern": "^x$",
                    "format": text,
                },
                f"enum {text}": {"enum": [text, 1, None], **docs},
                "nested": {
                    "type": "object",
                    **docs,
                    "properties": {text: {"type": "integer", **docs}},
                    "additionalProperties": {"type": "string", **docs},
                },
            },
            "required": [text],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            **docs,
            "properties": {text: {"type": ["string", "null"], "deprecated": True, **docs}},
        },
    }


def hostile_catalog() -> ir.Catalog:
    return value_catalog([_hostile_tool(i, text) for i, text in enumerate(HOSTILE_TEXTS)])


EDGE_TOOLS: dict[str, list[dict[str, Any]]] = {
    "index_signatures": [
        {
            "name": "open_objects",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "named": {"type": "object", "properties": {"x": {"type": "string"}}},
                    "tuple": {
                        "type": "array",
                        "prefixItems": [{"type": "string"}, {"type": "number"}],
                        "items": False,
                    },
                    "list": {"type": "array", "items": {"type": ["string", "null"]}},
                    "typed": {
                        "type": "object",
                        "properties": {
                            "a": {"type": "integer"},
                            "b": {"type": "object", "properties": {"c": {"type": "string"}}},
                        },
                        "required": ["a"],
                        "additionalProperties": {"type": "boolean"},
                    },
                    "nothing_else": {
                        "type": "object",
                        "properties": {"a": {"type": "string"}},
                        "additionalProperties": {"enum": []},
                    },
                    "required_extra": {
                        "type": "object",
                        "required": ["undeclared"],
                        "additionalProperties": {"type": "integer"},
                    },
                },
                "required": ["named"],
            },
        }
    ],
    "recursive_aliases": [
        {
            "name": "self_union",
            "inputSchema": {
                "type": "object",
                "$defs": {"x": {"anyOf": [{"$ref": "#/$defs/x"}, {"type": "string"}]}},
                "properties": {"a": {"$ref": "#/$defs/x"}},
            },
        },
        {
            "name": "self_ref",
            "inputSchema": {
                "type": "object",
                "$defs": {"x": {"$ref": "#/$defs/x"}},
                "properties": {"a": {"$ref": "#/$defs/x"}},
            },
        },
        {
            "name": "mutual",
            "inputSchema": {
                "type": "object",
                "$defs": {
                    "a": {"anyOf": [{"$ref": "#/$defs/b"}, {"type": "string"}]},
                    "b": {
                        "anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}, {"type": "null"}]
                    },
                },
                "properties": {"p": {"$ref": "#/$defs/a"}},
            },
        },
        {
            "name": "root_self_union",
            "inputSchema": {
                "anyOf": [
                    {"$ref": "#"},
                    {"type": "object", "properties": {"q": {"type": "string"}}},
                ]
            },
            "outputSchema": {"type": "array", "items": {"$ref": "#"}},
        },
        {
            "name": "through_containers",
            "inputSchema": {
                "type": "object",
                "$defs": {
                    "t": {
                        "anyOf": [
                            {"type": "array", "prefixItems": [{"$ref": "#/$defs/t"}]},
                            {"type": "object", "additionalProperties": {"$ref": "#/$defs/t"}},
                            {"type": "array", "items": {"$ref": "#/$defs/t"}},
                            {"type": "integer"},
                        ]
                    }
                },
                "properties": {"t": {"$ref": "#/$defs/t"}},
            },
        },
    ],
    "literals_and_tuples": [
        {
            "name": "literals",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "negative": {"type": "array", "items": {"const": -1}},
                    "big": {"enum": [18446744073709551615, -9223372036854775808, 1e-07, 1e21]},
                    "mixed": {"type": "array", "items": {"enum": ["a|b", 2.5, True, None]}},
                    "pairs": {
                        "type": "array",
                        "prefixItems": [{"type": "string"}, {"type": ["number", "null"]}],
                        "items": {"enum": ["x", "y"]},
                    },
                    "nested": {
                        "type": "array",
                        "items": {"type": "array", "items": {"type": ["string", "integer"]}},
                    },
                },
            },
        }
    ],
    "empty_property_name": [
        {
            "name": "empty_key",
            "inputSchema": {
                "type": "object",
                "properties": {"": {"type": "string"}, "a": {"type": "integer"}},
                "required": [""],
                "additionalProperties": {"type": "string"},
            },
        }
    ],
    "empty_catalog": [],
}
"""Shapes that only tsc can judge: index signatures beside named members (TS2411), aliases
that name themselves (TS2456), postfix precedence, big and negative literals."""


@dataclass(frozen=True)
class Rendered:
    """One declarations file under test: its id, catalog and text."""

    id: str
    catalog: ir.Catalog
    text: str


def rendered_files() -> Iterator[tuple[str, ir.Catalog]]:
    for case in GOLDEN_CASES:
        yield f"golden/{case}", file_catalog(SCHEMAS / f"{case}.json")
    for path in CORPUS_FILES:
        yield f"corpus/{corpus_id(path)}", file_catalog(path)
    yield "hostile", hostile_catalog()
    for name, tools in EDGE_TOOLS.items():
        yield f"edge/{name}", value_catalog(tools)


FILE_IDS = (
    [f"golden/{case}" for case in GOLDEN_CASES]
    + [f"corpus/{corpus_id(path)}" for path in CORPUS_FILES]
    + ["hostile"]
    + [f"edge/{name}" for name in EDGE_TOOLS]
)


# --- Node -------------------------------------------------------------------------------


def node_tools(*packages: str) -> str:
    """The `node` executable, after checking the packages the tests need are installed."""
    node = shutil.which("node")
    if node is None:
        pytest.fail(f"node is not on PATH; install Node 20, then {NPM_HINT}")
    for package in packages:
        if not (NODE_MODULES / package / "package.json").is_file():
            pytest.fail(f"node_modules/{package} is missing; {NPM_HINT}")
    return node


def run_node(script: str, args: list[str], stdin: str | None = None) -> Any:
    node = node_tools("typescript")
    result = subprocess.run(
        [node, str(NODE_SCRIPTS / script), *args],
        input=stdin.encode("utf-8") if stdin is not None else None,
        capture_output=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace")
    return json.loads(result.stdout)


BROKEN = """\
interface Clash { a?: string; [key: string]: string; }
/** a comment closed early */ */
type Loop = Loop | string;
"""
"""A control file: the harness must report every error in it, or it proves nothing."""


@dataclass(frozen=True)
class TscReport:
    rendered: dict[str, Rendered]
    results: dict[str, Any]
    broken: list[str]
    cli: subprocess.CompletedProcess[bytes]


@pytest.fixture(scope="session")
def tsc_report(tmp_path_factory: pytest.TempPathFactory) -> TscReport:
    """Render every file, then type-check them all in one Node run (each file in its own
    program), while the real `tsc` CLI checks the hostile file in parallel to show the
    harness agrees with it."""
    node_tools("typescript")
    directory = tmp_path_factory.mktemp("typescript")
    rendered: dict[str, Rendered] = {}
    paths: dict[str, str] = {}
    for index, (file_id, catalog) in enumerate(rendered_files()):
        text = render_typescript_sdk(catalog)
        rendered[file_id] = Rendered(file_id, catalog, text)
        path = directory / f"{index:03d}.d.ts"
        path.write_bytes(text.encode("utf-8"))
        paths[str(path)] = file_id
    broken = directory / "broken.d.ts"
    broken.write_text(BROKEN, encoding="utf-8")
    hostile = next(p for p, file_id in paths.items() if file_id == "hostile")
    config = directory / "tsconfig.json"
    config.write_text(
        json.dumps(
            {
                "compilerOptions": {"strict": True, "noEmit": True, "types": []},
                "files": [hostile],
            }
        ),
        encoding="utf-8",
    )
    tsc = NODE_MODULES / ".bin" / "tsc"
    cli = subprocess.Popen(
        [str(tsc), "-p", str(config)], cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        checked = run_node("check_isolated.js", [str(broken), *paths])
    finally:
        out, err = cli.communicate(timeout=300)
    return TscReport(
        rendered=rendered,
        results={paths[p]: result for p, result in checked.items() if p in paths},
        broken=checked[str(broken)]["diagnostics"],
        cli=subprocess.CompletedProcess(cli.args, cli.returncode, out, err),
    )


# --- golden files -----------------------------------------------------------------------


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_typescript_snapshot(case: str, golden: Any) -> None:
    catalog = file_catalog(SCHEMAS / f"{case}.json")
    assert render_typescript_sdk(catalog) == golden("typescript", "d.ts")


# --- tsc --------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("file_id", FILE_IDS)
def test_passes_tsc_strict(file_id: str, tsc_report: TscReport) -> None:
    assert tsc_report.results[file_id]["diagnostics"] == []


@pytest.mark.slow
def test_harness_reports_errors(tsc_report: TscReport) -> None:
    """Each error of the control file is found, so a clean result means something."""
    codes = {re.search(r"TS\d+", line).group() for line in tsc_report.broken}  # type: ignore[union-attr]
    assert {"TS2411", "TS1109", "TS2456"} <= codes, tsc_report.broken


@pytest.mark.slow
def test_tsc_cli_agrees(tsc_report: TscReport) -> None:
    """The real command line passes the hostile file too (the harness is not laxer)."""
    cli = tsc_report.cli
    assert cli.returncode == 0, (cli.stdout + cli.stderr).decode("utf-8", "replace")


# --- names and members ------------------------------------------------------------------


def _declared(tsc_report: TscReport, file_id: str) -> list[dict[str, Any]]:
    declarations: list[dict[str, Any]] = tsc_report.results[file_id]["declarations"]
    return declarations


@pytest.mark.slow
@pytest.mark.parametrize("file_id", FILE_IDS)
def test_declared_types_are_the_ir_types(file_id: str, tsc_report: TscReport) -> None:
    """The parser finds exactly one declaration per IR named type, under its IR name, plus
    the fixed ones; the Python SDK is held to the same set, so both SDKs share names."""
    check_declared_names(_declared(tsc_report, file_id), tsc_report.rendered[file_id].catalog)


@pytest.mark.slow
@pytest.mark.parametrize("file_id", FILE_IDS)
def test_members_are_the_ir_fields(file_id: str, tsc_report: TscReport) -> None:
    """Read back by the TypeScript parser, every interface has the IR's keys (exact text,
    escapes decoded) with the IR's optionality, in schema order, and an index signature
    exactly when the object is open; a closed object without fields is a type alias (of
    `Record<string, never>`); the maps hold every tool name."""
    check_declared_members(_declared(tsc_report, file_id), tsc_report.rendered[file_id].catalog)


@pytest.mark.slow
@pytest.mark.parametrize("file_id", FILE_IDS)
def test_robustness_checks(file_id: str, tsc_report: TscReport) -> None:
    """The checks every generated input must pass (`sdk_checks.check_typescript`): layout,
    escaping, declarations and members read without the compiler."""
    rendered = tsc_report.rendered[file_id]
    check_typescript(rendered.text, rendered.catalog)


# --- hostile text -----------------------------------------------------------------------


@pytest.mark.slow
def test_hostile_text_stays_in_comments_and_strings(tsc_report: TscReport) -> None:
    rendered = tsc_report.rendered["hostile"]
    text, catalog = rendered.text, rendered.catalog
    text.encode("utf-8")  # no lone surrogate
    assert not re.search("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]", text)
    lines = list(comment_lines(text))
    assert not [line for line in lines if re.search(r"(?<!\\)@(ts-|jsx)", line, re.I)]
    declared = _declared(tsc_report, "hostile")
    objects = sum(isinstance(t, ir.ObjectType) for t in catalog.types)
    assert sum(d["kind"] == "interface" for d in declared) == objects + 3  # maps, error
    assert len(catalog.tools) == len(HOSTILE_TEXTS)
    assert "*\\/ declare const pwned" in text
    assert "\\@ts-ignore" in text


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_golden_comment_layout(case: str) -> None:
    assert list(comment_lines(render_typescript_sdk(file_catalog(SCHEMAS / f"{case}.json"))))


def test_jsdoc_notes_and_tool_docs() -> None:
    catalog = value_catalog(
        [
            {
                "name": "notes",
                "title": "Noted",
                "description": "Two\nlines",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "limit": {
                            "type": "integer",
                            "description": "Page size",
                            "default": 20,
                            "minimum": 1,
                            "deprecated": True,
                        },
                        "mode": {"enum": ["a", "b"], "default": "a"},
                    },
                },
            }
        ]
    )
    text = render_typescript_sdk(catalog)
    assert (
        "  /**\n   * Page size\n   * >= 1\n   * @default 20\n   * @deprecated\n   */\n"
        "  limit?: number;\n"
    ) in text
    assert '  /** @default "a" */\n  mode?: "a" | "b";\n' in text
    assert "  /**\n   * Noted\n   *\n   * Two\n   * lines\n   */\n  notes: NotesArgs;\n" in text


# --- json_schema_to_ts ------------------------------------------------------------------


def _deep_array(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


def _deep_union(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"anyOf": [schema, {"type": "null"}]}
    return schema


@pytest.mark.parametrize(
    "schema",
    [
        {"type": 5},
        {"$ref": 7},
        {"$ref": "#/nowhere"},
        {"$ref": "#"},
        [],
        None,
        5,
        "string",
        b"bytes",
        object(),
        _deep_array(10_000),
        _deep_union(10_000),
        {"type": "array", "items": {1, 2}},
        {"enum": {1, 2}},
        {"type": "object", "properties": {"a": {1}}, "required": {"a"}},
        {"anyOf": "not a list"},
        {"allOf": [{"type": "string"}, {"type": "integer"}]},
        {"prefixItems": 3, "type": "array"},
        {"enum": [float("nan"), float("inf")]},
    ],
    ids=lambda schema: type(schema).__name__,
)
def test_json_schema_to_ts_is_total(schema: Any) -> None:
    result = json_schema_to_ts(schema)
    assert isinstance(result, str) and result


@pytest.mark.parametrize(
    "schema, expected",
    [
        ({"type": "string"}, "string"),
        ({"type": "integer"}, "number"),
        ({"type": ["string", "null"]}, "string | null"),
        ({"enum": ["a", 1, True, None]}, '"a" | 1 | true | null'),
        ({"const": 18446744073709551615}, "18446744073709551615"),
        ({"type": "array", "items": {"enum": ["a", "b"]}}, '("a" | "b")[]'),
        ({"type": "array", "items": {"type": ["string", "number"]}}, "(string | number)[]"),
        ({"type": "array"}, "JsonValue[]"),
        (
            {
                "type": "array",
                "prefixItems": [{"type": "string"}, {"type": ["number", "null"]}],
                "minItems": 1,
                "items": False,
            },
            "[string, (number | null)?]",
        ),
        (
            {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
            "[string?, ...number[]]",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}},
            "{ [key: string]: JsonValue }",
        ),
        (
            {"type": "string", "enum": ["line\u2028break", "\ud800"]},
            '"line\\u2028break" | "\\ud800"',
        ),
        (True, "JsonValue"),
        ({}, "JsonValue"),
        (False, "never"),
        ({"not": {}}, "never"),
        ({"not": {"type": "string"}}, "JsonValue"),  # narrows only: any value, with a note
        ({"enum": [float("nan"), 1.5, 1e300]}, "number | 1.5 | 1e+300"),
    ],
)
def test_json_schema_to_ts_spelling(schema: Any, expected: str) -> None:
    assert json_schema_to_ts(schema) == expected


# --- determinism ------------------------------------------------------------------------

DETERMINISM_FILE = ROOT / "tests" / "corpus" / "github-mcp-toolsnaps.json"


def test_same_catalog_same_bytes() -> None:
    catalog = file_catalog(DETERMINISM_FILE)
    assert render_typescript_sdk(catalog) == render_typescript_sdk(catalog)


def test_tool_order_does_not_matter() -> None:
    tools = json.loads(DETERMINISM_FILE.read_text("utf-8"))["tools"]
    expected = render_typescript_sdk(value_catalog(tools))
    for seed in range(3):
        shuffled = list(tools)
        random.Random(seed).shuffle(shuffled)
        assert render_typescript_sdk(value_catalog(shuffled)) == expected
    hostile = [_hostile_tool(i, text) for i, text in enumerate(HOSTILE_TEXTS)]
    random.Random(0).shuffle(hostile)
    assert render_typescript_sdk(value_catalog(hostile)) == render_typescript_sdk(hostile_catalog())


@pytest.mark.slow
def test_hash_seed_does_not_matter() -> None:
    """Set iteration order changes with PYTHONHASHSEED; no output may depend on it."""
    script = (
        "import hashlib, sys\n"
        "from codegen.engine import compile_sources\n"
        "from codegen.render.typescript.sdk import render_typescript_sdk\n"
        "text = render_typescript_sdk(compile_sources(sys.argv[1:]).catalog)\n"
        "print(hashlib.sha256(text.encode()).hexdigest())\n"
    )
    sources = [str(DETERMINISM_FILE), str(SCHEMAS / "hostile_descriptions.json")]
    expected = hashlib.sha256(
        render_typescript_sdk(compile_sources(sources).catalog).encode()  # type: ignore[arg-type]
    ).hexdigest()
    for seed in ("0", "1"):
        result = subprocess.run(
            [sys.executable, "-c", script, *sources],
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        assert result.stdout.decode().strip() == expected


def test_output_ends_with_one_newline_and_has_no_trailing_spaces() -> None:
    for case in GOLDEN_CASES:
        text = render_typescript_sdk(file_catalog(SCHEMAS / f"{case}.json"))
        assert text.endswith(";\n") and not text.endswith("\n\n")
        assert not [line for line in text.split("\n") if line != line.rstrip()]
        assert "\n\n\n" not in text


# --- differential: json-schema-to-typescript --------------------------------------------

EXPECTED_JSTT_DIFFERENCES = {
    "golden/bfcl_dialect::math.factorial": (
        "BFCL dialect: `optional: true` on a key listed in `required` makes it optional; "
        "JSTT reads the record as plain JSON Schema"
    ),
    "golden/oneof_variants::lookup": (
        "oneOf arms that only list required keys fold into one object, the keys optional and "
        "a note naming which must be present; JSTT declares one near-copy per arm"
    ),
    "golden/oneof_variants::locate": (
        "anyOf arms that only list required keys fold into one object with a note; JSTT "
        "declares one near-copy per arm"
    ),
    "golden/degraded::conditional": (
        "a dangling $ref degrades only its own node to `unknown`; JSTT rejects the schema"
    ),
    "golden/conditions_noted::link": (
        "allOf arms that say `if`/`then` and declare one key with two types: we keep every "
        "property (the contradiction typed never, the conditions as notes); JSTT declares no "
        "object at all"
    ),
    "golden/allof_diamond::diamond": (
        "an allOf through a recursive $ref degrades only its own node; JSTT fails on it "
        "(`Cannot read properties of undefined`)"
    ),
}
"""Every tool whose top-level args shape (object or not, keys, optionality, index
signature) differs from JSTT's, with the reason the difference is deliberate."""


def _our_shape(tool: ir.Tool, types: dict[str, ir.NamedType]) -> dict[str, Any]:
    """The args shape in the form `jstt_shapes.js` reports, looking through aliases. A map
    is an object with only an index signature, which is what JSTT declares for
    `{"type": "object"}`."""
    node: ir.TypeNode | ir.NamedType = tool.args
    for _ in range(len(types) + 1):
        if isinstance(node, ir.RefType):
            node = types[node.name]
        elif isinstance(node, ir.AliasType):
            node = node.target
        else:
            break
    if isinstance(node, ir.MapType):
        return {"object": True, "properties": [], "index": True}
    if not isinstance(node, ir.ObjectType):
        return {"object": False, "properties": [], "index": False}
    return {
        "object": True,
        "properties": [[f.key, not f.required] for f in node.fields],
        "index": node.extra is not None,
    }


@pytest.mark.slow
def test_args_shapes_match_jstt() -> None:
    node_tools("typescript", "json-schema-to-typescript")
    rows: list[tuple[str, dict[str, Any]]] = []
    schemas = []
    sources = [(f"golden/{case}", SCHEMAS / f"{case}.json") for case in GOLDEN_CASES]
    sources += [(f"corpus/{corpus_id(path)}", path) for path in CORPUS_FILES]
    for source_id, path in sources:
        catalog = file_catalog(path)
        types = {t.name: t for t in catalog.types}
        for tool in catalog.tools:
            rows.append((f"{source_id}::{tool.name}", _our_shape(tool, types)))
            schemas.append(json.loads(tool.input_schema))
    theirs = run_node("jstt_shapes.js", [], stdin=json.dumps(schemas))
    assert len(theirs) == len(rows)
    differences = {
        key: (ours, their) for (key, ours), their in zip(rows, theirs, strict=True) if ours != their
    }
    unexplained = {k: v for k, v in differences.items() if k not in EXPECTED_JSTT_DIFFERENCES}
    assert not unexplained, json.dumps(unexplained, indent=1, ensure_ascii=False)
    assert set(differences) == set(EXPECTED_JSTT_DIFFERENCES), "stale expected differences"
    assert len(rows) > 500


# --- shortcuts stay exact ---------------------------------------------------------------


SAMPLE_DOCS: dict[str, Any] = {
    "default": "1",
    "examples": ("1",),
    "format": "uri",
    "pattern": "^a$",
    "constraints": (("minimum", "1"),),
    "deprecated": True,
    "read_only": True,
    "write_only": True,
    "notes": ("a note",),
}


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(ir.Docs)])
def test_has_notes_matches_notes(field: str) -> None:
    """`has_notes` skips `notes()` only when it would return nothing; a new `Docs` field
    must be added here, which keeps the shortcut in step."""
    value: Any = {"description": "text", "title": "text"}.get(field, SAMPLE_DOCS.get(field))
    assert value is not None, f"add a sample value for Docs.{field}"
    docs = ir.Docs(**{field: value})
    assert has_notes(docs) == bool(all_notes(docs, literal=str))


# --- argument arrays as callers write them ----------------------------------------------

TS_CALLER = """
declare const tools: Tools;
const ring = [-77, 38];
const point = [-77, 38.9] as const;
const shape = { geometry: [[-77, 38], [-76.5, 39]], center: [-77, 38] } as const;
const names = ["a", "b"] as const;
const refs: readonly DrawShape_Ref[] = Object.freeze([{ id: "a" }]);
const base = { geometry: [], center: [0, 0] } as const;

tools.draw_shape({ geometry: [-77, 38], center: [-77, 38.9] });
tools.draw_shape({ geometry: ring, center: point });
tools.draw_shape(shape);
tools.draw_shape({ ...base, targets: names });
tools.draw_shape({ ...base, targets: refs, layers: [refs, [{ id: "b", version: 2 }]] });
tools.draw_shape({ ...base, labels: [{ text: "a", at: [1, 2] }, { text: "b" }] });
tools.draw_shape({ ...base, span: [1, "a"], scale: { x: 1 } });
tools.draw_shape(base).then((result) => {
  result.bbox.push(1);
  const corner: [number, number] | undefined = result.corner;
  const rings: { points: number[][] }[] | undefined = result.rings;
  return [corner, rings];
});

// @ts-expect-error a string is not an array
tools.draw_shape({ geometry: "1,2", center: [0, 0] });
// @ts-expect-error a tuple keeps its length
tools.draw_shape({ geometry: [], center: [0] });
// @ts-expect-error and its item types
tools.draw_shape({ geometry: [], center: [0, "x"] });
// @ts-expect-error a number[] variable is not a tuple, in TypeScript anywhere
tools.draw_shape({ geometry: [], center: ring });
// @ts-expect-error an item of the wrong type
tools.draw_shape({ ...base, geometry: [["x"]] });
// @ts-expect-error a misspelled key in a list item
tools.draw_shape({ ...base, labels: [{ txet: "a" }] });
// @ts-expect-error a wrong value in a nested list item
tools.draw_shape({ ...base, layers: [[{ id: 1 }]] });
// @ts-expect-error a list one level too shallow
tools.draw_shape({ ...base, layers: [{ id: "x" }] });
"""
"""Calls of `schemas/argument_arrays.json`'s `draw_shape` as a TypeScript caller writes
them, and wrong ones under `@ts-expect-error` (which tsc reports when nothing is wrong),
through a `tools` of the declared `Tools` type (what `bind<Tools>(client)` returns)."""


@pytest.mark.parametrize(
    "node, expected",
    [
        (ir.ArrayType(ir.Primitive("number")), "readonly number[]"),
        (
            ir.ArrayType(ir.ArrayType(ir.Primitive("number"))),
            "readonly (readonly number[])[]",
        ),
        (
            ir.ArrayType(
                ir.UnionType((ir.ArrayType(ir.Primitive("number")), ir.Primitive("null")))
            ),
            "readonly (readonly number[] | null)[]",
        ),
        (
            ir.TupleType(
                (ir.ArrayType(ir.Primitive("number")),), 0, ir.ArrayType(ir.Primitive("string"))
            ),
            "readonly [(readonly number[])?, ...(readonly string[])[]]",
        ),
        (ir.MapType(ir.ArrayType(ir.RefType("Item"))), "{ [key: string]: readonly Item[] }"),
    ],
)
def test_argument_spelling(node: ir.TypeNode, expected: str) -> None:
    """A caller's arrays and tuples are `readonly` at every depth, in parentheses where a
    postfix follows; the output's spelling is unchanged."""
    assert spell_argument(node) == expected
    assert "readonly" not in spell(node)


@pytest.mark.slow
def test_argument_arrays_take_readonly_values(tmp_path: Path) -> None:
    """Arguments read their arrays: `readonly` arrays and tuples take `as const` literals
    and frozen arrays as well as mutable ones, a literal in the call is typed as the tuple
    it stands for, integers are numbers; wrong items, keys and lengths are still errors,
    and the result's arrays stay mutable."""
    declarations = render_typescript_sdk(file_catalog(SCHEMAS / "argument_arrays.json"))
    caller = tmp_path / "caller.ts"
    caller.write_text(declarations + TS_CALLER, encoding="utf-8")
    checked = run_node("check_isolated.js", [str(caller)])
    assert checked[str(caller)]["diagnostics"] == []
