"""Loading every supported format from real examples, and the source rules."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from codegen.engine import compile_sources
from codegen.errors import UsageError
from codegen.load import sources as load_module
from codegen.load.sources import expand_sources, load_sources, load_value
from codegen.render.python.sdk import render_python_sdk
from conftest import CORPUS, FIXTURES, SCHEMAS


def test_mcp_server_dump_loads_as_is() -> None:
    result = load_sources([str(CORPUS / "mcp" / "memory.json")])
    assert not result.diagnostics
    names = [t.name for t in result.tools]
    assert "create_relations" in names and len(names) == 9
    tool = next(t for t in result.tools if t.name == "create_relations")
    assert tool.format == "mcp"
    assert tool.pointer == f"/tools/{names.index('create_relations')}"
    assert tool.input_pointer == tool.pointer + "/inputSchema"
    assert tool.output_schema is not None and tool.title == "Create Relations"
    assert tool.annotations == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    }


def test_mcp_tools_list_result_with_cursor() -> None:
    dump = json.loads((CORPUS / "mcp" / "everything.json").read_text())
    result = load_value({"tools": dump["tools"], "nextCursor": "page-2"})
    assert not result.diagnostics
    assert [t.name for t in result.tools] == [t["name"] for t in dump["tools"]]


def test_single_tool_and_plain_list() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object"}}
    assert [t.name for t in load_value(tool).tools] == ["t"]
    assert [t.name for t in load_value([tool, {**tool, "name": "u"}]).tools] == ["t", "u"]


def test_openai_chat_and_responses_shapes() -> None:
    result = load_sources([str(SCHEMAS / "openai_tools.json")])
    assert not result.diagnostics
    by_name = {t.name: t for t in result.tools}
    chat = by_name["get_weather"]
    assert chat.format == "openai" and chat.input_pointer == "/0/function/parameters"
    assert chat.input_schema["required"] == ["city", "unit"]
    responses = by_name["get_time"]
    assert responses.input_pointer == "/1/parameters"
    assert by_name["no_parameters"].input_schema == {"type": "object", "properties": {}}


def test_anthropic_tools_and_builtin_server_tools() -> None:
    result = load_sources([str(SCHEMAS / "anthropic_tools.json")])
    assert [t.name for t in result.tools] == ["get_stock_price"]
    assert result.tools[0].input_pointer == "/tools/0/input_schema"
    [warning] = result.diagnostics
    assert warning.level == "warning" and "web_search_20250305" in warning.message


ANTHROPIC_BUILT_INS = [
    {"type": "computer_20241022", "name": "computer", "display_width_px": 1024},
    {"type": "computer_20250124", "name": "computer", "display_height_px": 768},
    {"type": "text_editor_20250124", "name": "str_replace_editor"},
    {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
    {"type": "bash_20250124", "name": "bash"},
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
    {"type": "web_fetch_20250910", "name": "web_fetch"},
    {"type": "code_execution_20250825", "name": "code_execution"},
    {"type": "memory_20250818", "name": "memory"},
]


@pytest.mark.parametrize("tool", ANTHROPIC_BUILT_INS, ids=lambda tool: tool["type"])
def test_anthropic_built_in_tools_are_skipped_with_a_warning(tool: dict[str, object]) -> None:
    result = load_value({"tools": [tool]})
    assert not result.tools
    [warning] = result.diagnostics
    assert warning.level == "warning"
    assert f"built-in tool of type {tool['type']!r} has no schema" in warning.message


@pytest.mark.parametrize(
    "document",
    [
        {"name": "demo", "version": "1.0.0", "type": "module", "dependencies": {}},
        {"name": "demo", "type": "commonjs", "main": "index.js"},
        {"name": "ADDGENE_API_KEY", "type": "secret", "requirement": "required"},
        {"name": "x", "type": "web_search"},  # a kind without its version date
    ],
    ids=["package.json module", "package.json commonjs", "a secret", "no version date"],
)
def test_a_document_with_a_name_and_a_type_is_not_a_built_in_tool(
    document: dict[str, object],
) -> None:
    """Only `<kind>_<YYYYMMDD>` is an Anthropic built-in's type; anything else beside a name
    is not a tool at all, and says so."""
    result = load_value(document, "package.json")
    assert not result.tools
    [error] = result.diagnostics
    assert error.is_error and error.source == "package.json"
    assert error.message.startswith(
        "not a tool definition in any known format (mcp, openai, anthropic, bfcl, tooluniverse)"
    )


def test_bfcl_jsonl_records_with_function_lists() -> None:
    result = load_sources([str(FIXTURES / "bfcl_records.jsonl")])
    assert not result.diagnostics
    java = result.tools[0]
    assert java.name == "GeometryPresentation.createPresentation"
    assert java.dialect == "bfcl" and java.format == "bfcl"
    assert java.source.endswith("bfcl_records.jsonl:1")
    assert java.input_pointer == "/function/0/parameters"
    assert java.input_schema["type"] == "dict"


def test_bfcl_json_file_that_is_really_json_lines() -> None:
    result = load_sources([str(FIXTURES / "bfcl_math_api.json")])
    assert not result.diagnostics
    assert [t.name for t in result.tools] == [
        "absolute_value",
        "add",
        "divide",
        "imperial_si_conversion",
    ]
    assert result.tools[0].output_schema is not None
    assert result.tools[0].output_pointer == "/response"


def test_forced_format_rejects_other_shapes() -> None:
    value = [{"name": "a", "input_schema": {"type": "object"}}]
    assert load_value(value, fmt="anthropic").tools
    result = load_value(value, fmt="openai")
    assert not result.tools
    assert "not a tool in the 'openai' format" in result.diagnostics[0].message


def test_forced_bfcl_format_reads_plain_functions() -> None:
    value = {"name": "f", "parameters": {"type": "dict", "properties": {}}}
    [tool] = load_value(value, fmt="bfcl").tools
    assert tool.dialect == "bfcl"


def test_tooluniverse_configs_with_parameter_and_return_schema() -> None:
    record = {
        "type": "RESTTool",
        "name": "UniProt_get_entry",
        "description": "Fetch one UniProt entry.",
        "parameter": {"type": "object", "properties": {"accession": {"type": "string"}}},
        "return_schema": {"type": "object", "properties": {"id": {"type": "string"}}},
        "fields": {"endpoint": "https://example.org"},
    }
    for fmt in ("auto", "tooluniverse"):
        result = load_value([record], fmt=fmt)
        assert not result.diagnostics
        [tool] = result.tools
        assert tool.format == "tooluniverse"
        assert tool.input_pointer == "/0/parameter"
        assert tool.output_pointer == "/0/return_schema"
        assert tool.output_schema == record["return_schema"]
    rejected = load_value([{"name": "a", "inputSchema": {"type": "object"}}], fmt="tooluniverse")
    assert not rejected.tools
    assert "not a tool in the 'tooluniverse' format" in rejected.diagnostics[0].message


def test_records_that_are_not_tools_are_errors() -> None:
    result = load_value({"tools": [42, {"description": "no name"}]})
    assert not result.tools
    assert [d.pointer for d in result.diagnostics] == ["/tools/0", "/tools/1"]
    assert all(d.level == "error" for d in result.diagnostics)


def test_envelope_errors_point_at_the_field() -> None:
    result = load_value(
        {
            "tools": [
                {"name": "", "inputSchema": {}},
                {"name": 3, "inputSchema": {}},
                {"name": "ok", "description": 5, "inputSchema": []},
                {"name": "ok2", "inputSchema": {}, "annotations": "x", "title": ["t"]},
            ]
        }
    )
    messages = {(d.pointer, d.message) for d in result.diagnostics}
    assert ("/tools/0/name", "name must be a non-empty string") in messages
    assert ("/tools/1/name", "name must be a string, not a number") in messages
    assert ("/tools/2/description", "description must be a string, not a number") in messages
    assert (
        "/tools/2/inputSchema",
        "schema must be an object or a boolean, not an array",
    ) in messages
    assert ("/tools/3/annotations", "annotations must be an object, not a string") in messages
    assert ("/tools/3/title", "title must be a string, not an array") in messages
    assert not result.tools


def test_directory_order_is_sorted_relative_path(tmp_path: Path) -> None:
    for relative in ["b.json", "a/z.yaml", "a/b.jsonl", "c.txt", ".hidden/x.json", "A.json"]:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("[]")
    found = [display for display, _ in expand_sources([str(tmp_path)])]
    base = str(tmp_path)
    assert found == [f"{base}/A.json", f"{base}/a/b.jsonl", f"{base}/a/z.yaml", f"{base}/b.json"]


def test_yaml_sources(tmp_path: Path) -> None:
    path = tmp_path / "tools.yaml"
    path.write_text("tools:\n  - name: greet\n    inputSchema:\n      type: object\n")
    [tool] = load_sources([str(path)]).tools
    assert tool.name == "greet" and tool.source == str(path)


def test_stdin_source() -> None:
    stream = io.BytesIO(b'{"name": "from_stdin", "inputSchema": {"type": "object"}}')
    [tool] = load_sources(["-"], stdin=stream).tools
    assert tool.source == "<stdin>"


def test_decode_errors_become_diagnostics(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"tools": [{"name": "a", "name": "b"}]}')
    [problem] = load_sources([str(path)]).diagnostics
    assert problem.pointer == "/tools/0/name"
    assert problem.message == 'duplicate key "name" at line 1 column 26'


@pytest.mark.parametrize(
    "bad",
    [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80"],
    ids=["ff", "truncated", "surrogate", "overlong", "past-max"],
)
def test_invalid_utf8_in_a_json_file_is_reported_as_before(tmp_path: Path, bad: bytes) -> None:
    """A `.json` file is decoded to text only when `jiter` refuses it, so `jiter` must
    refuse every invalid UTF-8 sequence the text decoder reports."""
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"name": "a", "description": "x' + bad + b'", "inputSchema": {}}')
    [problem] = load_sources([str(path)]).diagnostics
    assert problem.message == f"invalid UTF-8 (byte 0x{bad[0]:02x}) at line 1 column 32"


def test_missing_and_unreadable_sources_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load_sources([str(tmp_path / "missing.json")])
    locked = tmp_path / "locked.json"
    locked.write_text("[]")

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # Permissions cannot refuse root, so the module's `open` refuses instead.
    monkeypatch.setattr(load_module, "open", refuse, raising=False)
    with pytest.raises(UsageError, match=r"locked\.json: cannot read: Permission denied"):
        load_sources([str(locked)])


def test_namespace_prefixes_server_name_or_file_stem(tmp_path: Path) -> None:
    # The prefix is derived (`namespaces`): `desktop-commander` is not an identifier.
    result = load_sources(
        [str(CORPUS / "mcp" / "desktop-commander.json"), str(CORPUS / "github-mcp-toolsnaps.json")],
        namespace=True,
    )
    names = {t.name for t in result.tools}
    assert "desktop_commander__read_file" in names  # the `server` field
    assert "github_mcp_toolsnaps__create_issue" in names  # no `server`: the file stem
    assert all("__" in name for name in names)
    tool = next(t for t in result.tools if t.name == "desktop_commander__read_file")
    assert tool.namespace == "desktop_commander"


def test_json_lines_record_with_line_separator_in_a_description(tmp_path: Path) -> None:
    record = {
        "name": "f",
        "description": "first\u2028second\u2029third",
        "inputSchema": {"type": "object", "properties": {"x": {"description": "a\u2028b"}}},
    }
    text = json.dumps(record, ensure_ascii=False)
    (tmp_path / "tools.jsonl").write_text(text + "\r\n" + text.replace('"f"', '"g"') + "\n")
    (tmp_path / "tool.json").write_text(text)
    lines = load_sources([str(tmp_path / "tools.jsonl")])
    whole = load_sources([str(tmp_path / "tool.json")])
    assert not lines.diagnostics and not whole.diagnostics
    assert [t.name for t in lines.tools] == ["f", "g"]
    assert lines.tools[1].source.endswith("tools.jsonl:2")
    assert lines.tools[0].description == whole.tools[0].description == record["description"]


def test_json_lines_error_names_the_line_after_a_line_separator(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text('{"name": "a\u2028b"}\n{"name": }\n')
    result = load_sources([str(path)])
    assert not result.tools
    [problem] = result.diagnostics
    assert "line 2 column 10" in problem.message


BMI = {
    "name": "bmi",
    "description": "Body mass index.",
    "input_schema": {
        "type": "dict",
        "properties": {
            "weight": {"type": "float", "description": "kg"},
            "height": {"type": "float", "description": "m", "optional": True},
        },
        "required": ["weight", "height"],
    },
    "output_schema": {"type": "dict", "properties": {"bmi": {"type": "float"}}},
}


@pytest.mark.parametrize("fmt", ["bfcl", "auto"])
def test_bfcl_function_doc_keyed_input_schema(fmt: str) -> None:
    result = load_value([BMI], fmt=fmt)
    assert not result.diagnostics
    [tool] = result.tools
    assert (tool.format, tool.dialect) == ("bfcl", "bfcl")
    assert tool.input_schema == BMI["input_schema"]
    assert tool.output_schema == BMI["output_schema"]
    assert (tool.input_pointer, tool.output_pointer) == ("/0/input_schema", "/0/output_schema")


def test_bfcl_input_schema_doc_compiles_to_typed_arguments() -> None:
    from codegen.engine import compile_value

    compiled = compile_value([BMI], fmt="bfcl")
    assert compiled.catalog is not None and not compiled.diagnostics
    [tool] = compiled.catalog.tools
    [args, _] = tool.types
    assert [(f.key, f.required) for f in args.fields] == [("weight", True), ("height", False)]


def test_bfcl_response_and_parameters_keys_mix() -> None:
    record = {"name": "f", "input_schema": {"type": "dict", "properties": {}}, "response": {}}
    [tool] = load_value(record, fmt="bfcl").tools
    assert (tool.input_pointer, tool.output_pointer) == ("/input_schema", "/response")


def test_bfcl_schema_under_both_keys_is_an_error() -> None:
    record = {**BMI, "parameters": BMI["input_schema"]}
    result = load_value(record, fmt="bfcl")
    assert not result.tools
    assert "both 'parameters' and 'input_schema'" in result.diagnostics[0].message


def test_anthropic_tool_with_json_schema_types_stays_anthropic() -> None:
    record = {"name": "a", "input_schema": {"type": "object", "properties": {}}}
    [tool] = load_value(record).tools
    assert (tool.format, tool.dialect) == ("anthropic", "json-schema")


def test_functions_of_a_bfcl_record_take_its_place_in_order() -> None:
    from codegen.load.formats import extract_tools

    document = [
        {"name": "first", "inputSchema": {"type": "object"}},
        {
            "id": "r",
            "function": [
                {"name": "f1", "parameters": {"type": "dict", "properties": {}}},
                {"name": "f2", "parameters": {"type": "dict", "properties": {}}},
            ],
        },
        {"name": "last", "inputSchema": {"type": "object"}},
    ]
    tools, problems = extract_tools(document, "mixed.json")
    assert problems == []
    assert [(t.name, t.pointer) for t in tools] == [
        ("first", "/0"),
        ("f1", "/1/function/0"),
        ("f2", "/1/function/1"),
        ("last", "/2"),
    ]


def test_output_schema_beside_input_schema_is_read(tmp_path: Path) -> None:
    """The snake_case spelling several tool formats use: the output schema is read, so the
    result is typed, never `Any` without a word."""
    output = {"type": "object", "properties": {"r": {"type": "integer"}}, "required": ["r"]}
    record = {"name": "a", "input_schema": {"type": "object"}, "output_schema": output}
    [tool] = load_value({"tools": [record]}).tools
    assert (tool.format, tool.output_schema) == ("anthropic", output)
    assert tool.output_pointer == "/tools/0/output_schema"
    path = tmp_path / "snake.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    sdk = render_python_sdk(compile_sources([str(path)]).catalog)  # type: ignore[arg-type]
    assert "async def a(self, args: AArgs) -> AOutput: ..." in sdk
    assert "class AOutput(TypedDict):\n    r: int\n" in sdk


@pytest.mark.parametrize(
    ("record", "pointer", "words"),
    [
        (
            {"name": "b", "inputSchema": {"type": "object"}, "output_schema": {}},
            "/0/output_schema",
            "'output_schema' is not read in the mcp format (its output schema is 'outputSchema')",
        ),
        (
            {"type": "function", "function": {"name": "c", "parameters": {}, "outputSchema": {}}},
            "/0/function/outputSchema",
            "'outputSchema' is not read in the openai format (it has no output schema)",
        ),
        (
            {"name": "d", "input_schema": {"type": "object"}, "return_schema": {}},
            "/0/return_schema",
            "'return_schema' is not read in the anthropic format",
        ),
    ],
    ids=["mcp", "openai", "anthropic"],
)
def test_an_output_schema_a_format_does_not_read_is_a_warning(
    record: dict[str, object], pointer: str, words: str
) -> None:
    result = load_value([record], "tools.json")
    [tool] = result.tools
    assert tool.output_schema is None
    [warning] = result.diagnostics
    assert (warning.source, warning.pointer, warning.level) == ("tools.json", pointer, "warning")
    assert words in warning.message


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        (True, "MCP requires an object schema for inputSchema; true takes any value"),
        (False, "MCP requires an object schema for inputSchema; false takes no value at all"),
        ({"type": "array"}, "MCP requires an object schema for inputSchema, not type 'array'"),
    ],
    ids=["true", "false", "array"],
)
def test_an_mcp_input_schema_that_is_no_object_is_a_warning(
    schema: object, words: str, tmp_path: Path
) -> None:
    path = tmp_path / "server.json"
    path.write_text(json.dumps({"tools": [{"name": "t", "inputSchema": schema}]}))
    result = load_sources([str(path)])
    [tool] = result.tools
    assert tool.input_schema == schema
    [warning] = result.diagnostics
    assert (warning.source, warning.pointer, warning.level) == (
        str(path),
        "/tools/0/inputSchema",
        "warning",
    )
    assert warning.message == words


@pytest.mark.parametrize(
    "schema", [{"type": "object"}, {}, {"type": ["object", "null"]}, {"properties": {}}]
)
def test_an_mcp_input_schema_that_may_be_an_object_loads_quietly(schema: object) -> None:
    result = load_value({"name": "t", "inputSchema": schema})
    assert result.tools and not result.diagnostics
