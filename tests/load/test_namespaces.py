"""`--namespace` prefixes: the rule, what it gives the real corpus, and its two errors."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from codegen.cli import main
from codegen.identifiers import is_method_name
from codegen.load.namespaces import derive, namespaced, sanitize, split
from codegen.load.sources import load_sources, load_value
from conftest import ROOT

SHARED_MCP = ROOT / "tests" / "corpus" / "mcp"
"""The repository's copy of the shared corpus of MCP server dumps."""

TOOL = {"name": "echo", "inputSchema": {"type": "object"}}


@pytest.mark.parametrize(
    "candidate, prefix",
    [
        ("everything", "everything"),
        ("mcp-servers/everything", "everything"),
        ("desktop-commander", "desktop_commander"),
        ("Bright Data", "bright_data"),
        ("ai.perplexity/mcp-server", "mcp_server"),
        ("42crunch", "mcp_42crunch"),
        ("测试", ""),  # nothing ASCII left: the next candidate is tried
        ("", ""),
        ("/", ""),
        ("___", ""),
        ("mcp-servers/", "mcp_servers"),  # the last non-empty segment
        ("a\\b\\c", "c"),
        ("Sentry MCP", "sentry_mcp"),
        ("chrome_devtools", "chrome_devtools"),
        ("a--b..c", "a_b_c"),  # runs collapse, so a prefix never holds "__"
        ("__init__", "init"),
        ("-7-", "mcp_7"),
        ("Ｆｉｇｍａ ＭＣＰ", "figma_mcp"),  # NFKC first: full-width letters are ASCII after it
        ("Ǆ", "d"),  # NFKC splits the digraph into "D" and "Ž", which is not ASCII
        ("KELVIN \u212a", "kelvin_k"),
        ("café/测试", ""),  # the last segment counts, even when an earlier one has ASCII
        ("测试 server", "server"),
    ],
)
def test_rule(candidate: str, prefix: str) -> None:
    assert sanitize(candidate) == prefix
    assert "__" not in prefix and not prefix.startswith("_") and not prefix.endswith("_")
    assert all(c in "abcdefghijklmnopqrstuvwxyz0123456789_" for c in prefix)
    assert not prefix[:1].isdigit()


@pytest.mark.parametrize(
    "document, stem, expected",
    [
        ({"server": "mcp-servers/everything"}, "dump", ("everything", "/server")),
        (
            {"server": "测试", "serverInfo": {"name": "Bright Data"}},
            "x",
            ("bright_data", "/serverInfo/name"),
        ),
        (
            {"serverInfo": {"name": "mcp-servers/everything"}},
            "x",
            ("everything", "/serverInfo/name"),
        ),
        ({"server": 42, "serverInfo": {"name": 7}}, "desktop-commander", ("desktop_commander", "")),
        ({"server": "", "serverInfo": {"name": "测试"}}, "42crunch", ("mcp_42crunch", "")),
        ({"server": "测试"}, "测试", None),
        ([TOOL], None, None),  # stdin has no stem
        ({"server": "time"}, None, ("time", "/server")),
    ],
)
def test_candidates_in_order(document: Any, stem: str | None, expected: Any) -> None:
    found = derive(document, stem)
    assert (found and (found.name, found.pointer)) == expected


def test_split_undoes_namespaced() -> None:
    for name in ("echo", "_private", "a__b", "get-env", "__x", "x_"):
        prefix = sanitize("mcp-servers/everything")
        assert split(namespaced(prefix, name)) == (prefix, name)
    assert split("plain") == (None, "plain")


def test_harvested_dump_gets_the_last_segment(tmp_path: Path) -> None:
    dump = tmp_path / "harvested.json"
    dump.write_text(json.dumps({"server": "mcp-servers/everything", "tools": [TOOL]}))
    [tool] = load_sources([str(dump)], namespace=True).tools
    assert (tool.name, tool.namespace) == ("everything__echo", "everything")
    assert split(tool.name) == ("everything", "echo")  # the name the server knows


def test_every_method_name_stays_a_method_name(capsys: pytest.CaptureFixture[str]) -> None:
    plain = load_sources([str(SHARED_MCP)]).tools
    result = load_sources([str(SHARED_MCP)], namespace=True)
    assert not [d for d in result.diagnostics if d.is_error]
    assert len(result.tools) == len(plain)
    lost = []
    for before, after in zip(plain, result.tools, strict=True):
        assert after.namespace is not None and split(after.name) == (after.namespace, before.name)
        if is_method_name(before.name) and not is_method_name(after.name):
            lost.append(after.name)
    assert lost == []
    methods = sum(is_method_name(t.name) for t in result.tools)
    assert methods >= sum(is_method_name(t.name) for t in plain)
    with capsys.disabled():
        print(f"\n{methods} of {len(result.tools)} namespaced corpus tools are methods")


def _dump(path: Path, server: str, *names: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tools = [{**TOOL, "name": name} for name in names]
    path.write_text(json.dumps({"server": server, "tools": tools}), encoding="utf-8")
    return path


def test_two_sources_with_one_prefix_are_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _dump(tmp_path / "a" / "everything.json", "everything", "echo")
    second = _dump(tmp_path / "b" / "dump.json", "mcp-servers/everything", "echo", "add")
    out = tmp_path / "out" / "sdk.py"
    messages = []
    for order in ((first, second), (second, first)):
        status = main(["sdk", "--lang", "python", "--namespace", *map(str, order), "-o", str(out)])
        _, err = capsys.readouterr()
        assert status == 1 and not out.exists() and not out.parent.exists()
        messages.append(err)
    assert messages[0] == messages[1]  # sources are sorted: the order given does not matter
    [line] = messages[0].splitlines()
    assert line.startswith(f'{second}:/server: error: --namespace prefix "everything"')
    assert str(first) in line and '"server" "mcp-servers/everything"' in line
    assert "duplicate tool name" not in messages[0]  # one error, not one per tool

    assert main(["validate", "--namespace", str(first), str(second)]) == 1
    assert "1 tool: 1 error" in capsys.readouterr().err  # the second file's tools are left out
    assert main(["validate", "--namespace", str(first)]) == 0
    capsys.readouterr()


def test_documents_of_one_file_share_their_prefix(tmp_path: Path) -> None:
    lines = tmp_path / "records.jsonl"
    lines.write_text(
        "\n".join(
            json.dumps({"server": "mcp-servers/everything", "tools": [{**TOOL, "name": n}]})
            for n in ("echo", "add")
        )
        + "\n"
    )
    result = load_sources([str(lines)], namespace=True)
    assert not result.diagnostics
    assert [t.name for t in result.tools] == ["everything__echo", "everything__add"]
    other = _dump(tmp_path / "everything.json", "everything", "ping")
    clash = load_sources([str(lines), str(other)], namespace=True)
    [problem] = clash.diagnostics
    assert problem.source == f"{lines}:1" and problem.pointer == "/server"
    assert str(other) in problem.message
    assert [t.name for t in clash.tools] == ["everything__ping"]  # `everything.json` sorts first


def test_stdin_needs_a_server_name(capsys: pytest.CaptureFixture[str]) -> None:
    dump = json.dumps({"server": "mcp-servers/everything", "tools": [TOOL]}).encode()
    [tool] = load_sources(["-"], namespace=True, stdin=io.BytesIO(dump)).tools
    assert tool.name == "everything__echo" and tool.source == "<stdin>"

    for value, pointer in (({"server": "测试", "tools": [TOOL]}, "/server"), ([TOOL], "")):
        data = json.dumps(value).encode()
        result = load_sources(["-"], namespace=True, stdin=io.BytesIO(data))
        [problem] = result.diagnostics
        assert not result.tools and problem.is_error
        assert (problem.source, problem.pointer) == ("<stdin>", pointer)
        assert "cannot derive a prefix" in problem.message and "stdin" in problem.message
    # Without --namespace nothing changes.
    assert load_sources(["-"], stdin=io.BytesIO(json.dumps([TOOL]).encode())).tools


def test_an_explicit_prefix_follows_the_same_rule() -> None:
    [tool] = load_value([TOOL], namespace="mcp-servers/everything").tools
    assert (tool.name, tool.namespace) == ("everything__echo", "everything")
    result = load_value([TOOL], source="mem", namespace="测试")
    [problem] = result.diagnostics
    assert not result.tools and problem.is_error and problem.source == "mem"
    assert '"测试"' in problem.message
