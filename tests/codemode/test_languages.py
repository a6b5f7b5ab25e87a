"""Language dispatch, the run_code transport, and the model-facing SDK section."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import codegen
from codegen.codemode.presentation.languages import (
    RUN_CODE_FLAVORS,
    SDK_RENDERERS,
    UnknownLanguageError,
    render_sdk_section,
    run_code_flavor,
    sdk_renderer,
)
from codegen.codemode.run_code.definition import run_code_tool
from codegen.engine import compile_sources
from codegen.render.sections.python import render_python_section_sdk as render_python_model_sdk
from codegen.render.sections.typescript import render_typescript_section_sdk
from conftest import EVERY_FILE, GOLDEN_CASES, ROOT, SCHEMAS
from support.sdk_checks import check_python_model
from support.tsc import check_declarations

LANGUAGES = ("python", "typescript")
HOSTILE_NAMES = (
    "__class__",
    "__init__",
    "keys",
    "get",
    "items",
    "toString",
    "constructor",
    "__proto__",
    "__dict__",
    "values",
    "__getitem__",
    "",
    "Python",
    "ruby",
)
PROMPT_CASES = (
    "nested_objects",
    "tool_names",
    "hostile_descriptions",
    "empty",
    "recursion",
    "open_closed",
    "mcp_tools_list",
)


def catalog(case: str) -> Any:
    compiled = compile_sources([str(SCHEMAS / f"{case}.json")], require_tools=False)
    assert compiled.catalog is not None
    return compiled.catalog


def test_the_two_tables_have_the_same_languages() -> None:
    assert set(SDK_RENDERERS) == set(RUN_CODE_FLAVORS) == set(LANGUAGES)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_lookups_are_own_key_only(name: str) -> None:
    with pytest.raises(UnknownLanguageError) as info:
        sdk_renderer(name)
    assert '"python", "typescript"' in str(info.value)
    with pytest.raises(UnknownLanguageError, match=r"known: \"python\", \"typescript\""):
        run_code_flavor(name)
    with pytest.raises(UnknownLanguageError):
        run_code_tool(name)
    with pytest.raises(UnknownLanguageError):
        render_sdk_section(catalog("empty"), name)


def test_non_string_languages_fail_too() -> None:
    class Sneaky(str):
        pass

    for value in (1, ("python",), Sneaky("python"), b"python"):
        with pytest.raises(UnknownLanguageError):
            sdk_renderer(value)  # type: ignore[arg-type]


def test_unknown_language_names_the_known_ones() -> None:
    with pytest.raises(UnknownLanguageError) as info:
        run_code_tool("ruby")
    assert str(info.value) == (
        'no run_code flavor registered for language \'ruby\' (known: "python", "typescript")'
    )


def test_no_runtime_harvest_gets_the_typescript_flavor() -> None:
    assert run_code_tool(None) == run_code_tool("typescript")
    assert run_code_flavor(None) is RUN_CODE_FLAVORS["typescript"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_run_code_tool_shape(language: str) -> None:
    tool = run_code_tool(language)
    assert tool["name"] == "run_code"
    assert set(tool) == {"name", "description", "inputSchema", "outputSchema"}
    for schema in (tool["inputSchema"], tool["outputSchema"]):
        Draft202012Validator.check_schema(schema)
    inputs = tool["inputSchema"]
    assert inputs["required"] == ["code", "description"]
    assert inputs["properties"]["code"]["type"] == "string"
    assert inputs["properties"]["description"]["type"] == "string"
    assert inputs["properties"]["code"]["description"] == RUN_CODE_FLAVORS[language].code
    assert tool["description"] == RUN_CODE_FLAVORS[language].described(True)
    assert run_code_tool(language, checked=False)["description"] == (
        RUN_CODE_FLAVORS[language].description
    )
    validator = Draft202012Validator(tool["outputSchema"])
    assert validator.is_valid({"logs": ["a"], "result": {"x": [1, None]}})
    assert validator.is_valid({"logs": []})
    assert not validator.is_valid({"result": 1})
    # The flavor names both required arguments and says how to call tools.
    calls = {
        "python": ("await tools.name(key=value)", 'await tools["exact-name"](key=value)'),
        "typescript": ("await tools.name(args)", 'await tools["name"](args)'),
    }[language]
    for text in ("`code`", "`description`", *calls):
        assert text in tool["description"]
    run_code_tool(language)["inputSchema"]["required"].append("x")
    assert run_code_tool(language)["inputSchema"]["required"] == ["code", "description"]


def test_flavors_differ_by_language() -> None:
    python, typescript = RUN_CODE_FLAVORS["python"], RUN_CODE_FLAVORS["typescript"]
    assert "Python" in python.description and "TypeScript" in typescript.description
    assert "print" in python.code and "console.log" in typescript.code


def test_run_code_schema_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "codegen", "run-code-schema", "--lang", "python"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0
    assert json.loads(result.stdout) == run_code_tool("python")
    bad = subprocess.run(
        [sys.executable, "-m", "codegen", "run-code-schema", "--lang", "toString"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert bad.returncode == 2 and 'known: "python", "typescript"' in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize("case", PROMPT_CASES)
@pytest.mark.parametrize("language", LANGUAGES)
def test_prompt_snapshot(case: str, language: str, golden: Any) -> None:
    text = render_sdk_section(catalog(case), language)
    assert text == golden("prompt", "md", f"{case}.{language}")


def fenced_code(section: str, info: str) -> str:
    """The one fenced block of a section; the section must hold exactly one fence pair."""
    assert section.count("```") == 2, "a description must never close the fence"
    match = re.search(rf"^```{info}\n(.*?)^```$", section, re.S | re.M)
    assert match is not None
    return match.group(1)


HEADER_FACTS = {
    # What the section's instructions must say; what `run_code` takes (`code` and
    # `description`) is in the tool's own definition, which the model sees beside them.
    "python": [
        "`code`",
        "top-level `await` and `return`",
        "await tools.name(key=value)",
        '@tool("exact-name")',
        'await tools["exact-name"](key=value)',
        "plain JSON",
        "do not exist at run time",
        "closed=True",
        "ToolCallError",
        "asyncio.gather",
        "printed",
    ],
    "typescript": [
        "`code`",
        "top-level `await` and `return`",
        "await tools.name(args)",
        'await tools["name"](args)',
        "rejects with `ToolCallError`",
        "Promise.all",
        "console.log",
        "erasable syntax only",
        "JSON",
    ],
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_header_says_what_a_model_must_know(language: str) -> None:
    section = render_sdk_section(catalog("nested_objects"), language)
    header = section[: section.index("```")]
    for fact in HEADER_FACTS[language]:
        assert fact in header, fact


@pytest.mark.parametrize("language", LANGUAGES)
def test_first_bytes_do_not_depend_on_the_tool_set(language: str) -> None:
    sections = [render_sdk_section(catalog(case), language) for case in GOLDEN_CASES[:12]]
    empty = render_sdk_section(catalog("empty"), language)
    fixed = empty[: empty.rindex("```")]  # the whole section of an empty catalog, unfenced
    if language == "typescript":
        fixed = fixed[: fixed.rindex("};")]  # tools are members of `tools`
    assert len(fixed) > 500
    assert all(section.startswith(fixed) for section in sections)


def test_python_sections_parse_and_match_the_sdk() -> None:
    for path in EVERY_FILE:
        compiled = compile_sources([str(path)], require_tools=False)
        assert compiled.catalog is not None
        code = fenced_code(render_sdk_section(compiled.catalog, "python"), "python")
        ast.parse(code)
        assert code == render_python_model_sdk(compiled.catalog)
        check_python_model(code, compiled.catalog)


@pytest.mark.slow
def test_typescript_sections_pass_tsc(tmp_path: Path) -> None:
    files = {}
    for path in EVERY_FILE:
        compiled = compile_sources([str(path)], require_tools=False)
        assert compiled.catalog is not None
        code = fenced_code(render_sdk_section(compiled.catalog, "typescript"), "ts")
        assert code == render_typescript_section_sdk(compiled.catalog)
        files[f"{path.parent.name}_{path.stem}.d.ts"] = code
    check_declarations(files, tmp_path)


def test_prompt_command_matches_the_api() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "prompt",
            str(SCHEMAS / "tool_names.json"),
            "--lang",
            "python",
        ],
        capture_output=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0
    assert result.stdout.decode() == render_sdk_section(catalog("tool_names"), "python")
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "prompt",
            str(SCHEMAS / "tool_names.json"),
            "--lang",
            "constructor",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert bad.returncode == 2 and "known:" in bad.stderr


def test_section_accepts_raw_tool_data() -> None:
    tools = json.loads((SCHEMAS / "nested_objects.json").read_text())
    assert codegen.render_sdk_section(tools, "python") == render_sdk_section(
        catalog("nested_objects"), "python"
    )


def test_run_code_texts_are_read_from_their_template_files(tmp_path: Path) -> None:
    """The prose lives in templates/run_code/: `[name]` sections, paragraphs split by blank
    lines, a paragraph's lines joined by one space, `#` lines left out."""
    from codegen.codemode.presentation.languages import read_texts

    path = tmp_path / "texts.txt"
    path.write_text("# a comment\n[one]\nfirst line\n  second line\n\nnext\n\n[two]\n# x\nonly\n")
    assert read_texts(str(path)) == {"one": ("first line second line", "next"), "two": ("only",)}
    for flavor in RUN_CODE_FLAVORS.values():
        texts = [flavor.description, flavor.code, flavor.listing, flavor.checked, *flavor.search]
        assert all(text and "  " not in text and "\n" not in text for text in texts)
        assert len(flavor.search) == 4
