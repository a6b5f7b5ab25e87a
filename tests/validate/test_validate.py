"""Validation: meta-schemas per draft, envelope rules, duplicates, and the real corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.engine import compile_sources, compile_value
from codegen.errors import pointer_key
from codegen.load.definitions import ToolDefinition
from codegen.load.sources import load_value
from codegen.validate.checks import check_schema, draft_of
from conftest import CORPUS, CORPUS_FILES, corpus_id

# Warnings per corpus file. The corpus is clean today; a change that starts warning about
# real tools shows up here first.
CORPUS_WARNINGS: dict[str, int] = {}


def test_draft_detection() -> None:
    assert draft_of({}) == ("2020-12", None)
    assert draft_of({"$schema": "http://json-schema.org/draft-07/schema#"})[0] == "draft-07"
    assert draft_of({"$schema": "https://json-schema.org/draft-07/schema"})[0] == "draft-07"
    assert draft_of({"$schema": "http://json-schema.org/draft-04/schema#"})[0] == "draft-04"
    assert draft_of({"$schema": "http://json-schema.org/draft-06/schema#"})[0] == "draft-06"
    assert draft_of({"$schema": "https://json-schema.org/draft/2019-09/schema"})[0] == "2019-09"
    draft, warning = draft_of({"$schema": "https://example.com/my-meta"})
    assert draft == "2020-12" and warning and "unknown $schema" in warning


@pytest.mark.parametrize(
    "schema, pointer, fragment",
    [
        ({"type": "strng"}, "/s/type", "'strng' is not one of ['array', 'boolean'"),
        ({"properties": {"a": {"type": 5}}}, "/s/properties/a/type", "5 is not one of"),
        ({"required": "a"}, "/s/required", "is not of type 'array'"),
        ({"minimum": "1"}, "/s/minimum", "is not of type 'number'"),
        ({"items": [{"type": "string"}]}, "/s/items", "is not of type"),
    ],
)
def test_meta_schema_errors_point_into_the_schema(
    schema: dict, pointer: str, fragment: str
) -> None:
    [problem] = check_schema(schema, "f.json", "/s")
    assert problem.level == "error"
    assert problem.pointer == pointer
    assert fragment in problem.message


def test_each_draft_uses_its_own_meta_schema() -> None:
    legacy_tuple = {"items": [{"type": "string"}]}
    assert check_schema(legacy_tuple, "f", "") != []
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **legacy_tuple}
    assert check_schema(draft7, "f", "") == []
    draft4_bool = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "minimum": 0,
        "exclusiveMinimum": True,
    }
    assert check_schema(draft4_bool, "f", "") == []
    assert (
        check_schema({**draft4_bool, "$schema": "http://json-schema.org/draft-07/schema#"}, "f", "")
        != []
    )


def test_unknown_meta_schema_is_a_warning() -> None:
    [warning] = check_schema({"$schema": "urn:custom", "type": "object"}, "f", "/s")
    assert warning.level == "warning" and warning.pointer == "/s/$schema"


def test_boolean_schemas_are_valid() -> None:
    assert check_schema(True, "f", "") == [] and check_schema(False, "f", "") == []


@pytest.mark.slow
def test_too_deep_schema_is_rejected_quickly() -> None:
    schema: dict = {"type": "string"}
    for _ in range(100_000):
        schema = {"type": "array", "items": schema}
    [problem] = check_schema(schema, "f", "")
    assert "exceeds the limit" in problem.message


def test_every_problem_is_collected_and_sorted() -> None:
    compiled = compile_value(
        {
            "tools": [
                {"name": "a", "inputSchema": {"type": "nope", "properties": {"x": {"type": 1}}}},
                {"name": "a", "inputSchema": {"minLength": -1}},
                {"name": "b", "inputSchema": {}, "outputSchema": {"required": [1]}},
            ]
        }
    )
    assert not compiled.ok
    keys = [(d.source, pointer_key(d.pointer), d.message) for d in compiled.diagnostics]
    assert keys == sorted(keys)
    assert [d.pointer for d in compiled.errors] == [
        "/tools/0/inputSchema/properties/x/type",
        "/tools/0/inputSchema/type",
        "/tools/1",
        "/tools/1/inputSchema/minLength",
        "/tools/2/outputSchema/required/0",
    ]
    assert any("duplicate tool name" in d.message for d in compiled.errors)


def test_duplicate_names_name_both_sources() -> None:
    compiled = compile_sources(
        [str(CORPUS / "mcp" / "filesystem.json"), str(CORPUS / "mcp" / "desktop-commander.json")]
    )
    duplicates = [d for d in compiled.errors if "duplicate tool name" in d.message]
    assert {d.message.split('"')[1] for d in duplicates} == {
        "read_file",
        "read_multiple_files",
        "write_file",
        "create_directory",
        "list_directory",
        "move_file",
        "get_file_info",
    }
    first = duplicates[0]
    assert first.source.endswith("filesystem.json")
    assert "desktop-commander.json:/tools/" in first.message
    assert "--namespace" in first.message


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[corpus_id(p) for p in CORPUS_FILES])
def test_corpus_file_has_no_errors(path: Path) -> None:
    compiled = compile_sources([str(path)])
    assert compiled.errors == ()
    assert len(compiled.warnings) == CORPUS_WARNINGS.get(corpus_id(path), 0), compiled.warnings
    assert compiled.catalog is not None
    assert len(compiled.catalog.tools) == len(compiled.definitions) > 0


def test_whole_corpus_reports_exactly_the_cross_file_duplicates() -> None:
    compiled = compile_sources([str(CORPUS)])
    names: dict[str, set[str]] = {}
    for tool in compiled.definitions:
        names.setdefault(tool.name, set()).add(tool.source)
    shared = {name for name, sources in names.items() if len(sources) > 1}
    assert len(shared) == 54
    reported = [d for d in compiled.errors]
    assert all("duplicate tool name" in d.message for d in reported)
    assert {d.message.split('"')[1] for d in reported} == shared
    occurrences = sum(len(s) - 1 for s in names.values())
    assert len(reported) == occurrences == 63


def test_whole_corpus_with_namespace_is_valid() -> None:
    compiled = compile_sources([str(CORPUS)], namespace=True)
    assert compiled.errors == ()
    assert compiled.catalog is not None and len(compiled.catalog.tools) == 486


def test_definitions_are_not_mutated_by_the_pipeline() -> None:
    import copy

    value = {
        "tools": [
            {
                "name": "t",
                "inputSchema": {
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "type": "object",
                    "definitions": {"X": {"type": ["string", "null"]}},
                    "properties": {
                        "x": {"$ref": "#/definitions/X"},
                        "n": {"type": "string", "nullable": True},
                    },
                },
            }
        ]
    }
    before = copy.deepcopy(value)
    assert compile_value(value).ok
    assert value == before


def test_in_memory_definitions_validate_too() -> None:
    [tool] = load_value({"name": "x", "inputSchema": {"type": "object"}}).tools
    assert isinstance(tool, ToolDefinition)


def test_sort_keys_take_only_ascii_digits_as_numbers() -> None:
    """`str.isdigit` holds for `¹` and `①`, which `int` refuses: a property named so must
    sort as text, never crash the sort (found by the hostile catalogs)."""
    from codegen.errors import source_key

    assert pointer_key("/properties/¹/type") == (
        (2, 0, ""),
        (2, 0, "properties"),
        (2, 0, "¹"),
        (2, 0, "type"),
    )
    assert pointer_key("/tools/10") > pointer_key("/tools/2")
    assert source_key("a①.json:12") == ((2, 0, "a①.json:"), (1, 12, ""))
