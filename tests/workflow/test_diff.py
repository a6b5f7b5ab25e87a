"""`codegen diff`: pairs of golden catalogs pinned as Markdown and JSON reports, the
breaking/non-breaking rules, `--git REV`, and the exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.engine import compile_value
from codegen.workflow.diff import code_span, diff_catalogs, path_text
from conftest import FIXTURES, ROOT

DIFF = FIXTURES / "diff"
CASES = sorted(p.name for p in DIFF.iterdir() if (p / "old.json").exists())

BREAKING_CASES = {
    "added_removed",
    "closed_and_any",
    "enum_narrowed",
    "enum_widened",  # a new value in an output breaks its readers
    "nested_object",
    "new_required_arg",
    "output_changes",
    "required_flags",
    "type_changed",
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_the_cases_cover_the_issue() -> None:
    required = {
        "added_removed",
        "new_required_arg",
        "new_optional_arg",
        "enum_narrowed",
        "enum_widened",
        "type_changed",
        "description_only",
        "nested_object",
        "no_change",
    }
    assert required <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_markdown_report(
    case: str, golden: Any, capsys: pytest.CaptureFixture[str], at_root: None
) -> None:
    old, new = (f"tests/fixtures/diff/{case}/{side}.json" for side in ("old", "new"))
    status, text, err = run(capsys, "diff", old, new)
    assert (status, err) == (0, "")
    assert text == golden("diff", "md", case)


@pytest.mark.parametrize("case", CASES)
def test_json_report(
    case: str, golden: Any, capsys: pytest.CaptureFixture[str], at_root: None
) -> None:
    old, new = (f"tests/fixtures/diff/{case}/{side}.json" for side in ("old", "new"))
    status, text, err = run(capsys, "diff", old, new, "--format", "json")
    assert (status, err) == (0, "")
    assert text == golden("diff", "json", case)
    report = json.loads(text)
    assert report["breaking"] is (case in BREAKING_CASES)
    assert report["summary"]["breaking_changes"] == sum(
        change["breaking"] for tool in report["tools"] for change in tool["changes"]
    )


@pytest.mark.parametrize("case", CASES)
def test_fail_on_breaking(case: str, capsys: pytest.CaptureFixture[str], at_root: None) -> None:
    old, new = (f"tests/fixtures/diff/{case}/{side}.json" for side in ("old", "new"))
    status, _, err = run(capsys, "diff", old, new, "--fail-on-breaking")
    assert status == (1 if case in BREAKING_CASES else 0)
    assert ("breaking change" in err) is (case in BREAKING_CASES)


def _kinds(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[tuple[str, bool, str]]:
    before, after = compile_value({"tools": old}).catalog, compile_value({"tools": new}).catalog
    assert before is not None and after is not None
    return [
        (change.kind, change.breaking, path_text(change.path))
        for tool in diff_catalogs(before, after).tools
        for change in tool.changes
    ]


def _tool(args: dict[str, Any], output: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    tool: dict[str, Any] = {"name": "t", "description": "d", "inputSchema": args}
    if output is not None:
        tool["outputSchema"] = output
    return [tool]


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # Arguments: what callers send.
        (
            {"x": {"type": "string"}},
            {"x": {"type": "string"}, "y": {"type": "integer"}},
            [("field-added-optional", False, "y")],
        ),
        ({"x": {"type": "integer"}}, {"x": {"type": "number"}}, [("type-widened", False, "x")]),
        ({"x": {"type": "number"}}, {"x": {"type": "integer"}}, [("type-narrowed", True, "x")]),
        ({"x": {"enum": ["a"]}}, {"x": {"type": "string"}}, [("type-widened", False, "x")]),
        ({"x": {"enum": ["a", "b"]}}, {"x": {"enum": ["b", "c"]}}, [("enum-changed", True, "x")]),
        ({"x": {"enum": ["a", "b"]}}, {"x": {"enum": ["b", "a"]}}, []),
        ({"x": {"type": "string"}}, {"x": {}}, [("type-widened", False, "x")]),
        (
            {"x": {"type": ["string", "null"]}},
            {"x": {"type": "string"}},
            [("type-narrowed", True, "x")],
        ),
        (
            {"x": {"type": "array", "items": {"type": "string"}}},
            {"x": {"type": "object", "additionalProperties": {"type": "string"}}},
            [("type-changed", True, "x")],
        ),
        (
            {"x": {"type": "object", "additionalProperties": {"type": "integer"}}},
            {"x": {"type": "object", "additionalProperties": {"type": "string"}}},
            [("type-changed", True, "x{}")],
        ),
        (
            {"x": {"type": "string", "description": "a"}},
            {"x": {"type": "string", "description": "b"}},
            [("field-description", False, "x")],
        ),
    ],
)
def test_argument_rules(
    old: dict[str, Any], new: dict[str, Any], expected: list[tuple[str, bool, str]]
) -> None:
    assert _kinds(_tool(_object(old)), _tool(_object(new))) == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # Outputs: what callers receive; widening breaks readers, narrowing does not.
        ({"x": {"type": "integer"}}, {"x": {"type": "number"}}, [("type-widened", True, "x")]),
        ({"x": {"type": "number"}}, {"x": {"type": "integer"}}, [("type-narrowed", False, "x")]),
        ({"x": {"enum": ["a", "b"]}}, {"x": {"enum": ["a"]}}, [("enum-narrowed", False, "x")]),
        (
            {"x": {"type": "string"}},
            {"x": {"type": "string"}, "y": {"type": "string"}},
            [("field-added-optional", False, "y")],
        ),
        (
            {"x": {"type": "string"}, "y": {"type": "string"}},
            {"x": {"type": "string"}},
            [("field-removed", True, "y")],
        ),
    ],
)
def test_output_rules(
    old: dict[str, Any], new: dict[str, Any], expected: list[tuple[str, bool, str]]
) -> None:
    args = _object({})
    assert _kinds(_tool(args, _object(old)), _tool(args, _object(new))) == expected


def test_named_types_compare_by_structure_not_by_name() -> None:
    """Renaming a tool's `$defs` entry, or moving a type inline, is no change."""
    old = _tool(
        {
            "type": "object",
            "$defs": {"Point": _object({"x": {"type": "number"}}, ("x",))},
            "properties": {"at": {"$ref": "#/$defs/Point"}},
        }
    )
    new = _tool(
        {
            "type": "object",
            "$defs": {"Coordinates": _object({"x": {"type": "number"}}, ("x",))},
            "properties": {"at": {"$ref": "#/$defs/Coordinates"}},
        }
    )
    inline = _tool(_object({"at": _object({"x": {"type": "number"}}, ("x",))}))
    assert _kinds(old, new) == [] and _kinds(old, inline) == []


def test_markdown_is_safe_for_hostile_names() -> None:
    assert code_span("a`b") == "``a`b``"
    assert code_span("`x`") == "`` `x` ``"
    assert code_span("line\nbreak\u202e") == "`line\\nbreak\\u202e`"


def test_invalid_sources_and_usage(capsys: pytest.CaptureFixture[str], at_root: None) -> None:
    status, out, err = run(
        capsys, "diff", "tests/fixtures/invalid/bad_schemas.json", "schemas/arrays.json"
    )
    assert status == 1 and out == ""
    assert (
        "tests/fixtures/invalid/bad_schemas.json:/tools/0/inputSchema/" in err
        and ": error: " in err
    )
    assert "nothing compared" in err
    status, _, err = run(capsys, "diff", "schemas/arrays.json")
    assert status == 2 and "expected two sources" in err
    status, _, err = run(capsys, "diff", "schemas/arrays.json", "no/such.json")
    assert status == 2 and "no/such.json: no such file or directory" in err
    status, _, err = run(capsys, "diff", "a", "b", "--format", "html")
    assert status == 2 and "invalid choice: 'html'" in err


def test_directories_and_output_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], at_root: None
) -> None:
    report = tmp_path / "report.md"
    status, out, _ = run(capsys, "diff", "schemas", "schemas", "-o", str(report), "--verbose")
    assert (status, out) == (0, "")
    assert report.read_text().startswith("# Tool catalog changes\n\nNo changes: ")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
            "GIT_CONFIG_GLOBAL": os.devnull,
        },
    )


def test_git_revision_against_the_working_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / "defs" / ".hidden").mkdir(parents=True)
    case = DIFF / "nested_object"
    shutil.copy(case / "old.json", repo / "defs" / "listing.json")
    shutil.copy(DIFF / "added_removed" / "old.json", repo / "defs" / "files.json")
    (repo / "defs" / ".hidden" / "skip.json").write_text("not json")
    (repo / "defs" / "notes.txt").write_text("not a tool file")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "old")
    shutil.copy(case / "new.json", repo / "defs" / "listing.json")
    shutil.copy(DIFF / "added_removed" / "new.json", repo / "defs" / "files.json")
    (repo / "defs" / "extra.yaml").write_text(
        "tools:\n  - name: ping\n    inputSchema: {type: object}\n"
    )

    monkeypatch.chdir(repo)
    status, text, err = run(capsys, "diff", "--git", "HEAD", "defs", "--format", "json")
    assert (status, err) == (0, "")
    report = json.loads(text)
    assert [(t["name"], t["status"]) for t in report["tools"]] == [
        ("delete_file", "removed"),
        ("list_dir", "changed"),
        ("ping", "added"),
        ("write_file", "added"),
    ]
    # The same changes as comparing the two files directly.
    listing = next(t for t in report["tools"] if t["name"] == "list_dir")
    expected = json.loads((ROOT / "snapshots" / "diff" / "nested_object.json").read_text())
    assert listing["changes"] == expected["tools"][0]["changes"]

    # From a subdirectory, with a file source, a configured table, and a bad revision.
    monkeypatch.chdir(repo / "defs")
    status, text, _ = run(capsys, "diff", "--git", "HEAD", "listing.json", "--fail-on-breaking")
    assert status == 1 and "### `list_dir` — breaking" in text
    (repo / "pyproject.toml").write_text('[tool.codegen]\nsources = ["defs"]\nout = "sdk"\n')
    status, text, _ = run(capsys, "diff", "--git", "HEAD")
    assert status == 0 and "2 tools added, 1 removed, 1 changed" in text
    status, _, err = run(capsys, "diff", "--git", "no-such-rev", "listing.json")
    assert status == 2 and "--git 'no-such-rev': no such revision" in err

    # Invalid definitions at the revision are reported under REV:path.
    (repo / "defs" / "files.json").write_text("{")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "broken")
    shutil.copy(DIFF / "added_removed" / "new.json", repo / "defs" / "files.json")
    status, _, err = run(capsys, "diff", "--git", "HEAD", ".")
    assert status == 1
    assert "HEAD:./files.json:: error: invalid JSON: " in err


def test_a_source_missing_at_the_revision_counts_as_added(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README").write_text("x")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "first")
    shutil.copy(DIFF / "new_required_arg" / "new.json", repo / "tools.json")
    monkeypatch.chdir(repo)
    status, text, _ = run(capsys, "diff", "--git", "HEAD", "tools.json")
    assert status == 0
    assert "1 tool added, 0 removed, 0 changed, 0 unchanged." in text
    status, _, err = run(capsys, "diff", "--git", "HEAD", "-")
    assert status == 2 and "stdin" in err


def test_every_pair_of_golden_schemas_compares_without_error() -> None:
    """Robustness: recursion, aliases, tuples, unions and degraded nodes on both sides.
    Tools are renamed by position so that unrelated types really are compared."""
    from dataclasses import replace

    from codegen import ir
    from codegen.engine import compile_sources
    from codegen.workflow.diff import render_json, render_markdown

    catalogs = []
    for path in sorted((ROOT / "schemas").glob("*.json")):
        catalog = compile_sources([str(path)], require_tools=False).catalog
        assert catalog is not None
        tools = tuple(replace(tool, name=f"t{i}") for i, tool in enumerate(catalog.tools))
        catalogs.append(ir.Catalog(tools))
    for old in catalogs:
        for new in catalogs:
            result = diff_catalogs(old, new)
            if old is new:
                assert result.tools == ()
            assert render_markdown(result) == render_markdown(diff_catalogs(old, new))
            json.loads(render_json(result))


def test_git_revision_with_namespace_derives_the_same_prefixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old side, read from git, is namespaced by the same rule as the working tree."""
    repo = tmp_path / "repo"
    (repo / "dumps").mkdir(parents=True)
    tool = {"name": "echo", "inputSchema": {"type": "object"}}
    dump = repo / "dumps" / "harvested.json"
    dump.write_text(json.dumps({"server": "mcp-servers/everything", "tools": [tool]}))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "old")
    ping = {"name": "ping", "inputSchema": {"type": "object"}}
    dump.write_text(json.dumps({"server": "mcp-servers/everything", "tools": [tool, ping]}))
    monkeypatch.chdir(repo)
    status, text, err = run(
        capsys, "diff", "--namespace", "--git", "HEAD", "dumps", "--format", "json"
    )
    assert (status, err) == (0, "")
    assert [(t["name"], t["status"]) for t in json.loads(text)["tools"]] == [
        ("everything__ping", "added")
    ]

    # Two files with one prefix at the revision: the error names both, under REV:path.
    (repo / "dumps" / "everything.json").write_text(json.dumps({"tools": [ping]}))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "clash")
    status, _, err = run(capsys, "diff", "--namespace", "--git", "HEAD", "dumps")
    assert status == 1
    assert 'HEAD:dumps/harvested.json:/server: error: --namespace prefix "everything"' in err
    assert "prefix of HEAD:dumps/everything.json" in err
