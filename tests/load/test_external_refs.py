"""`$ref`s to other files: bundled into each schema as local definitions (`codegen.load.bundle`),
read only below the source's folder or a `--ref-root` (`codegen.load.ref_files`), in every
command that reads sources, and what goes wrong said where it is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.engine import compile_sources
from codegen.load.sources import load_sources
from support.engine_strategies import assert_every_strategy_agrees

ADDRESS = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "zip": {"$ref": "#/$defs/Zip"}},
    "required": ["city"],
}
COMMON = {"$defs": {"Address": ADDRESS, "Zip": {"type": "string", "pattern": "^[0-9]{5}$"}}}


def write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def tools(*schemas: Any, output: Any = None) -> dict[str, Any]:
    """A tool file: one tool `t0`, `t1`, ... per input schema."""
    listed = []
    for index, schema in enumerate(schemas):
        tool: dict[str, Any] = {"name": f"t{index}", "inputSchema": schema}
        if output is not None:
            tool["outputSchema"] = output
        listed.append(tool)
    return {"tools": listed}


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def ref(target: str) -> dict[str, str]:
    return {"$ref": target}


def errors(result: Any) -> list[str]:
    return [d.format() for d in result.diagnostics if d.is_error]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- bundling -------------------------------------------------------------------------------


def test_a_file_beside_the_tool_is_bundled_as_a_local_definition(here: Path) -> None:
    from codegen.load.definitions import Bundled

    write(here / "common.schema.json", COMMON)
    output = obj(zip=ref("common.schema.json#/$defs/Zip"))
    write(
        here / "tools.json", tools(obj(to=ref("common.schema.json#/$defs/Address")), output=output)
    )
    loaded = load_sources(["tools.json"])
    assert loaded.diagnostics == ()
    (tool,) = loaded.tools
    assert tool.input_schema == {
        "type": "object",
        "properties": {"to": {"$ref": "#/$defs/Address"}},
        "$defs": {"Address": ADDRESS, "Zip": COMMON["$defs"]["Zip"]},
    }
    assert tool.bundled == (
        Bundled("/tools/0/inputSchema/$defs/Address", "common.schema.json", "/$defs/Address"),
        Bundled("/tools/0/inputSchema/$defs/Zip", "common.schema.json", "/$defs/Zip"),
        Bundled("/tools/0/outputSchema/$defs/Zip", "common.schema.json", "/$defs/Zip"),
    )
    assert tool.output_schema["properties"]["zip"] == ref("#/$defs/Zip")
    compiled = compile_sources(["tools.json"])
    assert compiled.catalog is not None and compiled.diagnostics == ()
    names = [t.name for t in compiled.catalog.tools[0].types]
    assert "T0_Address" in names  # named by its key, as if written in place


def test_subfolders_and_dotdot_inside_the_tree(here: Path) -> None:
    write(here / "proj" / "shared" / "common.json", COMMON)
    schema = obj(
        a=ref("../shared/common.json#/$defs/Address"),
        b=ref("../tools/../shared/common.json#/$defs/Zip"),
    )
    write(here / "proj" / "tools" / "a.json", tools(schema))
    write(here / "proj" / "tools" / "b.json", tools(obj(c=ref("deeper/more.json"))))
    write(here / "proj" / "tools" / "deeper" / "more.json", {"type": "string", "$id": "x"})
    loaded = load_sources(["proj"])
    assert errors(loaded) == []
    first, second = loaded.tools
    assert sorted(first.input_schema["$defs"]) == ["Address", "Zip"]
    assert second.input_schema["$defs"] == {"more": {"type": "string"}}  # `$id` dropped
    assert second.input_schema["properties"]["c"] == {"$ref": "#/$defs/more"}


def test_a_cycle_across_files_and_back_into_the_tool(here: Path) -> None:
    write(here / "b.json", {"$defs": {"Node": obj(next=ref("c.json#/$defs/Link"))}})
    link = obj(node=ref("b.json#/$defs/Node"), owner=ref("tools.json#/tools/0/inputSchema"))
    write(here / "c.json", {"$defs": {"Link": link}})
    write(here / "tools.json", tools(obj(head=ref("b.json#/$defs/Node"))))
    (tool,) = load_sources(["tools.json"]).tools
    defs = tool.input_schema["$defs"]
    assert defs["Node"]["properties"]["next"] == {"$ref": "#/$defs/Link"}
    assert defs["Link"]["properties"] == {"node": ref("#/$defs/Node"), "owner": ref("#")}
    compiled = compile_sources(["tools.json"])
    assert compiled.catalog is not None, compiled.errors
    types = {t.name for t in compiled.catalog.tools[0].types}
    assert {"T0_Node", "T0_Link", "T0Args"} <= types


def test_a_ref_into_a_ref_and_refs_inside_the_file(here: Path) -> None:
    write(here / "a.json", {"$defs": {"A": ref("#/$defs/B"), "B": ref("b.yaml#/$defs/C")}})
    (here / "b.yaml").write_text("$defs:\n  C: {type: integer}\n", encoding="utf-8")
    write(here / "tools.json", tools(obj(x=ref("a.json#/$defs/A"))))
    (tool,) = load_sources(["tools.json"]).tools
    assert tool.input_schema["$defs"] == {
        "A": ref("#/$defs/B"),
        "B": ref("#/$defs/C"),
        "C": {"type": "integer"},
    }


def test_one_file_under_several_spellings_is_one_definition(here: Path) -> None:
    write(here / "common.json", COMMON)
    (here / "alias.json").symlink_to("common.json")
    spellings = [
        "common.json#/$defs/Zip",
        "./common.json#/$defs/Zip",
        "sub/../common.json#/$defs/Zip",
        "common.json#/%24defs/Zip",
        "alias.json#/$defs/Zip",
    ]
    schema = obj(**{f"p{i}": ref(target) for i, target in enumerate(spellings)})
    write(here / "tools.json", tools(schema))
    (tool,) = load_sources(["tools.json"]).tools
    assert list(tool.input_schema["$defs"]) == ["Zip"]
    assert {p["$ref"] for p in tool.input_schema["properties"].values()} == {"#/$defs/Zip"}


def test_a_place_inside_a_bundled_definition_is_reached_in_its_copy(here: Path) -> None:
    write(here / "common.json", COMMON)
    inner_first = obj(
        city=ref("common.json#/$defs/Address/properties/city"),
        address=ref("common.json#/$defs/Address"),
    )
    write(here / "tools.json", tools(inner_first))
    (tool,) = load_sources(["tools.json"]).tools
    assert sorted(tool.input_schema["$defs"]) == ["Address", "Zip"]
    assert tool.input_schema["properties"]["city"] == ref("#/$defs/Address/properties/city")


def test_names_avoid_the_schema_own_and_follow_its_draft(here: Path) -> None:
    address = {"title": "Postal address", **obj(zip=ref("zip.json#/$defs/Zip"))}
    write(here / "shared" / "address.schema.json", address)
    write(here / "shared" / "zip.json", {"$defs": {"Zip": {"type": "string"}}})
    schema = {
        **obj(a=ref("shared/address.schema.json"), z=ref("shared/zip.json#/$defs/Zip")),
        "$defs": {"Zip": {"type": "integer"}},
    }
    legacy = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        **obj(z=ref("shared/zip.json#/$defs/Zip")),
    }
    write(here / "tools.json", tools(schema, legacy))
    loaded = load_sources(["tools.json"])
    assert loaded.diagnostics == ()
    first, second = loaded.tools
    assert list(first.input_schema["$defs"]) == ["Zip", "Postal address", "Zip2"]
    assert first.input_schema["$defs"]["Postal address"]["properties"]["zip"] == ref(
        "#/$defs/Zip2"  # the file's own Zip, never the tool's
    )
    assert second.input_schema["definitions"] == {"Zip": {"type": "string"}}
    assert second.input_schema["properties"]["z"] == ref("#/definitions/Zip")
    compiled = compile_sources(["tools.json"])
    assert compiled.catalog is not None, compiled.errors
    assert "T0_PostalAddress" in {t.name for t in compiled.catalog.tools[0].types}


def test_remote_refs_stay_and_are_never_fetched(here: Path) -> None:
    schema = obj(a=ref("https://example.com/a.json#/x"), b=ref("urn:example:b"))
    write(here / "tools.json", tools(schema))
    (tool,) = load_sources(["tools.json"]).tools
    assert tool.input_schema == schema and tool.bundled == ()
    compiled = compile_sources(["tools.json"])
    warnings = [d.message for d in compiled.warnings]
    assert "remote $ref 'https://example.com/a.json#/x' is not followed; typed as any value" in (
        warnings
    )


# --- what is refused ----------------------------------------------------------------------


REFUSED = [
    ("nope.json#/$defs/X", "no such file: proj/tools/nope.json"),
    ("../shared/c.json#/$defs/Nope", "proj/shared/c.json has nothing at /$defs/Nope"),
    ("../shared/c.json#nowhere", "proj/shared/c.json has no $anchor 'nowhere'"),
    ("../shared/bad.json", "proj/shared/bad.json: invalid JSON: Expecting property name"),
    ("../shared", "proj/shared is a directory"),
    ("../shared/fifo.json", "proj/shared/fifo.json is not a regular file"),
    ("../../outside/o.json#/$defs/O", "outside/o.json is outside "),
    ("../shared/link.json#/$defs/O", "outside/o.json is outside "),
    ("file:///etc/hostname", "a file: URL names one machine's file"),
    ("/etc/hostname", "an absolute path names one machine's file"),
    ("../shared/lines.jsonl#/a", "proj/shared/lines.jsonl holds many documents"),
    ("b.json#/tools/0/inputSchema", "proj/tools/b.json holds tool definitions"),
    ("../shared/c.json#/$defs/Nested", "a relative reference below a nested $id"),
]


@pytest.fixture
def refused(here: Path) -> Path:
    """A project whose one tool holds every reference of `REFUSED`."""
    shared = here / "proj" / "shared"
    nested = {"$id": "https://example.com/n.json", "properties": {"a": ref("other.json")}}
    write(shared / "c.json", {"$defs": {"Ok": {"$anchor": "ok"}, "Nested": nested}})
    (shared / "bad.json").write_text('{"a": 1,}', encoding="utf-8")
    (shared / "lines.jsonl").write_text('{"a": 1}\n{"a": 2}\n', encoding="utf-8")
    os.mkfifo(shared / "fifo.json")  # opened without blocking: never hangs the run
    write(here / "outside" / "o.json", {"$defs": {"O": {"type": "string"}}})
    (shared / "link.json").symlink_to(here / "outside" / "o.json")
    write(here / "proj" / "tools" / "b.json", tools({"type": "object"}))
    schema = obj(**{f"p{i}": ref(target) for i, (target, _) in enumerate(REFUSED)})
    write(here / "proj" / "tools" / "a.json", tools(schema))
    return here


def test_every_refused_reference_is_an_error_where_it_is_written(refused: Path) -> None:
    loaded = load_sources(["proj/tools/a.json"], ref_roots=["proj"])
    found = {d.pointer: d for d in loaded.diagnostics}
    for index, (target, problem) in enumerate(REFUSED):
        pointer = f"/tools/0/inputSchema/properties/p{index}/$ref"
        if target.endswith("Nested"):  # the reference inside the other file
            pointer = "/$defs/Nested/properties/a/$ref"
            assert found[pointer].source == "proj/shared/c.json"
        else:
            assert found[pointer].source == "proj/tools/a.json"
        diagnostic = found.pop(pointer)
        assert diagnostic.is_error and problem in diagnostic.message, (target, diagnostic)
        assert diagnostic.message.startswith(f"$ref {target!r}: ") or target.endswith("Nested")
    assert found == {}
    assert len(loaded.tools) == 1  # kept, so validation reports its other problems


def test_a_reference_outside_the_tree_is_refused_unless_allowed(
    refused: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "validate", "proj/tools/a.json")
    assert status == 1
    outside = str(refused.resolve() / "proj" / "shared" / "c.json")
    assert f"{outside} is outside {refused.resolve() / 'proj' / 'tools'}" in out
    assert "pass --ref-root to allow another folder" in out
    status, out, _ = run(capsys, "validate", "proj/tools/a.json", "--ref-root", "proj")
    assert status == 1 and f"{outside} is outside" not in out
    assert "p6/$ref: error" in out and "p7/$ref: error" in out  # outside/ still refused
    status, out, _ = run(
        capsys, "validate", "proj/tools/a.json", "--ref-root", "proj", "--ref-root", "outside"
    )
    assert "p6/$ref: error" not in out and "p7/$ref: error" not in out
    status, _, err = run(capsys, "validate", "proj/tools/a.json", "--ref-root", "nowhere")
    assert status == 2 and "--ref-root nowhere: not a directory" in err


def test_stdin_cannot_resolve_a_relative_reference(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    write(here / "common.json", COMMON)
    text = json.dumps(tools(obj(a=ref("common.json#/$defs/Zip"))))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    status, out, _ = run(capsys, "validate", "-")
    assert status == 1
    assert (
        "<stdin>:/tools/0/inputSchema/properties/a/$ref: error: $ref 'common.json#/$defs/Zip': "
        "a file reference cannot be followed from stdin" in out
    )


def test_reads_are_bounded_and_each_file_is_read_once(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codegen.load import ref_files

    write(here / "common.json", COMMON)
    for index in range(3):
        write(here / f"f{index}.json", {"type": "string"})
    many = [obj(a=ref("common.json#/$defs/Address"), b=ref("./common.json")) for _ in range(300)]
    write(here / "tools.json", tools(*many))
    reads: list[str] = []
    read = ref_files.DiskFiles.read

    def counted(self: Any, key: str, location: str, budget: int) -> bytes | str:
        reads.append(location)
        return read(self, key, location, budget)

    monkeypatch.setattr(ref_files.DiskFiles, "read", counted)
    loaded = load_sources(["tools.json"])
    assert errors(loaded) == [] and len(loaded.tools) == 300
    assert reads == ["common.json"]

    write(here / "few.json", tools(obj(**{f"p{i}": ref(f"f{i}.json") for i in range(3)})))
    monkeypatch.setattr(ref_files, "MAX_FILES", 2)
    assert errors(load_sources(["few.json"])) == [
        "few.json:/tools/0/inputSchema/properties/p2/$ref: error: $ref 'f2.json': more than 2 "
        "referenced files in one run"
    ]
    monkeypatch.setattr(ref_files, "MAX_FILES", 1000)
    monkeypatch.setattr(ref_files, "MAX_BYTES", 40)
    assert errors(load_sources(["few.json"])) == [  # 18 bytes each: two fit
        "few.json:/tools/0/inputSchema/properties/p2/$ref: error: $ref 'f2.json': more than 40 "
        "bytes of referenced files in one run"
    ]


# --- what the user sees -------------------------------------------------------------------


def test_diagnostics_inside_a_bundled_definition_name_its_file(here: Path, tmp_path: Path) -> None:
    common = {
        "$defs": {
            "A": {"type": "object", "properties": {"x": {"type": "strin"}}},
            "B": {"type": "string", "shape": "round"},
        }
    }
    write(here / "common.json", common)
    write(
        here / "tools.json",
        tools(obj(a=ref("common.json#/$defs/A")), obj(b=ref("common.json#/$defs/B"))),
    )
    compiled = compile_sources(["tools.json"])
    assert [d.format() for d in compiled.diagnostics] == [
        "common.json:/$defs/A/properties/x/type: error: 'strin' is not one of ['array', "
        "'boolean', 'integer', 'null', 'number', 'object', 'string']"
    ]
    common["$defs"]["A"] = {"type": "object", "shape": "square"}
    write(here / "common.json", common)
    write(
        here / "tools.json",
        tools(*[obj(a=ref("common.json#/$defs/A"), b=ref("common.json#/$defs/B"))] * 2),
    )
    loaded = load_sources(["tools.json"])
    compiled = compile_sources(["tools.json"])
    assert [d.format() for d in compiled.diagnostics] == [  # once, however many tools
        "common.json:/$defs/A/shape: warning: unknown keyword 'shape' ignored",
        "common.json:/$defs/B/shape: warning: unknown keyword 'shape' ignored",
    ]
    assert_every_strategy_agrees(loaded.tools, loaded.diagnostics, tmp_path / "strategies")


def test_a_file_declaring_another_draft_is_named_in_a_warning(here: Path) -> None:
    write(here / "old.json", {"$schema": "http://json-schema.org/draft-07/schema#", **COMMON})
    write(here / "tools.json", tools(obj(a=ref("old.json#/$defs/Zip"))))
    assert [d.format() for d in load_sources(["tools.json"]).diagnostics] == [
        "old.json:/$schema: warning: declares http://json-schema.org/draft-07/schema#; its "
        "definitions are read in the draft of the schema that refers to them "
        "(https://json-schema.org/draft/2020-12/schema)"
    ]


def test_files_the_tools_refer_to_are_no_sources_of_their_own(here: Path) -> None:
    write(
        here / "defs" / "tools.json",
        tools(obj(a=ref("common.schema.json#/$defs/Zip"), b=ref("bag.json#/Color"))),
    )
    write(here / "defs" / "common.schema.json", COMMON)
    write(here / "defs" / "bag.json", {"Color": {"enum": ["red", "blue"]}})
    loaded = load_sources(["defs"])
    assert loaded.diagnostics == () and [t.name for t in loaded.tools] == ["t0"]
    write(here / "defs" / "unused.schema.json", COMMON)
    assert [d.source for d in load_sources(["defs"]).diagnostics] == ["defs/unused.schema.json"]


def test_plain_schemas_referring_to_each_other_declare_each_type_once(here: Path) -> None:
    person = {"title": "Person", **obj(home=ref("address.schema.json"), friend=ref("#"))}
    address = {"title": "Address", **obj(owner=ref("person.schema.json"), city={"type": "string"})}
    write(here / "s" / "person.schema.json", person)
    write(here / "s" / "address.schema.json", address)
    write(
        here / "s" / "order.schema.json", {"title": "Order", **obj(to=ref("address.schema.json"))}
    )
    for sources in (
        ["s"],
        ["s/person.schema.json", "s/order.schema.json", "s/address.schema.json"],
    ):
        compiled = compile_sources(sources, plain_schemas=True)
        assert compiled.catalog is not None and compiled.diagnostics == (), sources
        declared = sorted(t.name for tool in compiled.catalog.tools for t in tool.types)
        assert declared == ["Address", "Order", "Person"], sources


def test_the_sdk_is_the_same_whatever_the_order_and_hash_seed(here: Path) -> None:
    write(here / "common.json", COMMON)
    write(
        here / "a.json",
        tools(obj(x=ref("common.json#/$defs/Address"), y=ref("common.json#/$defs/Zip"))),
    )
    write(
        here / "b.json",
        {"tools": [{"name": "u", "inputSchema": obj(z=ref("common.json#/$defs/Zip"))}]},
    )
    outputs = set()
    for seed, sources in (("0", ["a.json", "b.json"]), ("1", ["b.json", "a.json"]), ("2", ["."])):
        result = subprocess.run(
            [sys.executable, "-m", "codegen", "sdk", *sources, "--lang", "python"],
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=False,
        )
        assert result.returncode == 0, result.stderr
        outputs.add(result.stdout)
    assert len(outputs) == 1


# --- every command ------------------------------------------------------------------------


@pytest.fixture
def project(here: Path) -> Path:
    """`defs/tools.json` whose tool takes an `Address` from `shared/common.json`."""
    write(here / "shared" / "common.json", COMMON)
    write(here / "defs" / "tools.json", tools(obj(to=ref("../shared/common.json#/$defs/Address"))))
    return here


@pytest.mark.parametrize(
    "command",
    [
        ["sdk", "--lang", "python"],
        ["sdk", "--lang", "typescript"],
        ["validate"],
        ["prompt", "--lang", "python"],
        ["catalog"],
    ],
)
def test_every_command_follows_the_reference(
    project: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    status, out, err = run(capsys, *command, "defs")
    assert status == 1 and "shared/common.json is outside" in out + err
    status, out, err = run(capsys, *command, "defs", "--ref-root", "shared")
    assert status == 0, out + err
    if command[0] == "validate":
        assert "1 tool: 0 errors, 0 warnings" in err
    else:
        assert "city: str" in out and ("T0_Address" in out or command[0] == "prompt")


def test_build_follows_the_reference(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "build", "defs", "-o", "out", "--catalogs", "")
    assert status == 1 and "is outside" in err
    status, _, err = run(capsys, "build", "defs", "-o", "out", "--catalogs", "", "--ref-root", ".")
    assert status == 0, err
    assert "class T0_Address(TypedDict):" in (project / "out" / "tools.py").read_text()


def test_diff_compares_what_the_reference_holds(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(project / "new" / "tools.json", tools(obj(to=ref("common.json#/$defs/Address"))))
    changed = {
        **COMMON,
        "$defs": {**COMMON["$defs"], "Address": {**ADDRESS, "required": ["city", "zip"]}},
    }
    write(project / "new" / "common.json", changed)
    status, out, err = run(
        capsys, "diff", "defs", "new", "--ref-root", "shared", "--format", "json"
    )
    assert status == 0, err
    (tool,) = json.loads(out)["tools"]
    assert tool["name"] == "t0" and [c["kind"] for c in tool["changes"]] == ["field-required"]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=repo,
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


def test_diff_at_a_git_revision_reads_the_referenced_file_there(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(here / "defs" / "common.json", COMMON)
    write(here / "defs" / "tools.json", tools(obj(to=ref("common.json#/$defs/Address"))))
    (here / "defs" / "link.schema").symlink_to("common.json")  # no source: not listed
    _git(here, "init", "-q", "-b", "main")
    _git(here, "add", "-A")
    _git(here, "commit", "-q", "-m", "old")
    changed = {
        **COMMON,
        "$defs": {**COMMON["$defs"], "Address": {**ADDRESS, "required": ["city", "zip"]}},
    }
    write(here / "defs" / "common.json", changed)  # only the referenced file changes
    status, out, err = run(capsys, "diff", "--git", "HEAD", "defs", "--format", "json")
    assert status == 0, err
    (tool,) = json.loads(out)["tools"]
    assert [c["kind"] for c in tool["changes"]] == ["field-required"]

    write(
        here / "defs" / "tools.json",
        tools(obj(to=ref("link.schema#/$defs/Address"), x=ref("gone.json"))),
    )
    _git(here, "add", "-A")
    _git(here, "commit", "-q", "-m", "link")
    status, _, err = run(capsys, "diff", "--git", "HEAD", "defs")
    assert status == 1
    assert "HEAD:defs/tools.json:/tools/0/inputSchema/properties/to/$ref: error" in err
    assert "HEAD:defs/link.schema is a symbolic link (not followed)" in err
    assert "no such file at HEAD: defs/gone.json" in err


def test_the_cache_sees_a_change_to_the_referenced_file_alone(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = ["sdk", "defs", "--lang", "python", "--ref-root", "shared", "--cache", "cache"]
    status, first, err = run(capsys, *arguments)
    assert status == 0, err
    status, again, err = run(capsys, *arguments)
    assert (status, again) == (0, first)
    changed = {**COMMON, "$defs": {**COMMON["$defs"], "Zip": {"type": "integer"}}}
    write(project / "shared" / "common.json", changed)
    status, second, err = run(capsys, *arguments)
    assert status == 0, err
    assert second != first and "zip: NotRequired[int]" in second
    status, fresh, _ = run(capsys, *arguments[:-2])  # what a run without the cache writes
    assert fresh == second


def test_code_mode_registers_what_the_loader_bundled(project: Path) -> None:
    """A host reads its tools with `load_sources` and registers them; the registry itself
    reads no file, whatever a schema it is given refers to."""
    from codegen.codemode.calls.specs import ToolSpec
    from codegen.codemode.registry import ToolRegistry

    (tool,) = load_sources(["defs"], ref_roots=["shared"]).tools
    registry = ToolRegistry(mode="native")
    registry.register(ToolSpec(tool.name, "", tool.input_schema))
    registry.register(ToolSpec("raw", "", obj(a=ref("shared/common.json#/$defs/Zip"))))
    from codegen import ir

    text = ir.describe(registry.sdk_catalog())
    assert "object T0_Address" in text
    assert '"a"?: unknown("remote $ref \'shared/common.json#/$defs/Zip\' is not followed")' in text
