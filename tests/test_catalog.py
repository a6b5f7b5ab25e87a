"""Offline docs catalogs: Markdown and JSON pinned by snapshots, HTML checked in a real
headless Chromium, hostile text kept inert in every format."""

from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen import ir
from codegen.engine import compile_sources, compile_value
from codegen.render.catalog import anchor, render_catalog
from conftest import CORPUS, GOLDEN_CASES, ROOT, SCHEMAS

SNAPSHOT_CASES = ("nested_objects", "union_discriminated")


def catalog(case: str) -> ir.Catalog:
    compiled = compile_sources([str(SCHEMAS / f"{case}.json")], require_tools=False)
    assert compiled.catalog is not None
    return compiled.catalog


@pytest.mark.parametrize("case", SNAPSHOT_CASES)
@pytest.mark.parametrize("fmt", ["md", "json"])
def test_catalog_snapshot(case: str, fmt: str, golden: Any) -> None:
    assert render_catalog(catalog(case), fmt) == golden("catalog", fmt, case)


def test_python_flavor_spells_python_types() -> None:
    text = render_catalog(catalog("nested_objects"), "md", "python")
    assert "class CreateEventArgs(TypedDict):" in text
    assert "`list[CreateEvent_ArgsAttendees]`" in text
    data = json.loads(render_catalog(catalog("nested_objects"), "json", "python"))
    assert data["language"] == "python"
    assert data["tools"][0]["output_type"] == "CreateEventOutput"


def test_json_catalog_has_every_field() -> None:
    data = json.loads(render_catalog(catalog("defaults_constraints"), "json"))
    tool = next(t for t in data["tools"] if t["name"] == "list_items")
    assert set(tool) == {
        "name",
        "title",
        "description",
        "annotations",
        "args_type",
        "output_type",
        "types",
        "parameters",
        "input_schema",
        "output_schema",
    }
    [group] = tool["parameters"]
    limit = next(f for f in group["fields"] if f["name"] == "limit")
    assert limit == {
        "name": "limit",
        "type": "number",
        "required": False,
        "default": "20",
        "constraints": "1..100",
        "description": "Page size",
    }
    raw = json.loads((SCHEMAS / "defaults_constraints.json").read_text())["tools"][0]
    assert tool["input_schema"] == raw["inputSchema"]


def test_annotations_and_union_arguments_are_listed() -> None:
    data = json.loads(render_catalog(catalog("mcp_tools_list"), "json"))
    assert data["tools"][0]["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    tools = json.loads(render_catalog(catalog("oneof_variants"), "json"))["tools"]
    variants = next(tool for tool in tools if tool["name"] == "select")
    assert [g["type_name"] for g in variants["parameters"]] == ["Select_Args1", "Select_Args2"]


@pytest.mark.parametrize("fmt", ["md", "json", "html"])
def test_deterministic_and_free_of_paths(fmt: str) -> None:
    first = render_catalog(catalog("tool_names"), fmt)
    assert first == render_catalog(catalog("tool_names"), fmt)
    assert str(ROOT) not in first and "schemas/" not in first


def test_anchors_are_unique_and_stable() -> None:
    names = ["a.b", "a-b", "a_b", "a b", "a.2e.b", "ä", "_"]
    anchors = [anchor(n) for n in names]
    assert len(set(anchors)) == len(names)
    assert all(re.fullmatch(r"tool-[A-Za-z0-9_.-]+", a) for a in anchors)


def test_markdown_keeps_hostile_text_inside_its_fence() -> None:
    text = render_catalog(catalog("hostile_descriptions"), "md")
    # Every fence opened by the catalog is closed by a line of at least its length before
    # any other Markdown: count fence lines and their matching.
    stack: list[str] = []
    outside: list[str] = []
    for line in text.splitlines():
        match = re.fullmatch(r"(`{3,})([a-z]*)", line)
        if match and stack and match.group(1) == stack[-1] and not match.group(2):
            stack.pop()
        elif match and not stack:
            stack.append(match.group(1))
        elif not stack:
            outside.append(line)
    assert not stack
    prose = "\n".join(outside)  # what a Markdown renderer would interpret
    assert "<script" not in prose and "<!--" not in prose and "</script" not in prose


class _Structure(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if values.get("id"):
            self.ids.append(values["id"])
        for key in ("href", "src"):
            if values.get(key):
                self.links.append(values[key] or "")


def test_html_is_one_self_contained_file() -> None:
    text = render_catalog(catalog("hostile_descriptions"), "html")
    parser = _Structure()
    parser.feed(text)
    assert "script" not in parser.tags and "link" not in parser.tags
    assert "img" not in parser.tags and "iframe" not in parser.tags
    assert all(link.startswith("#") for link in parser.links)
    tools = catalog("hostile_descriptions").tools
    assert [i for i in parser.ids] == [anchor(t.name) for t in tools]
    assert "<script>" not in text  # the description's </script> is escaped


class _Text(html.parser.HTMLParser):
    """Every text node and attribute value, as a browser decodes it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.texts.extend(value for _, value in attrs if value)


def test_html_escapes_every_value_exactly_once() -> None:
    """The template autoescapes: markup in any tool text stays text, and nothing is escaped
    twice (a hand-escaped value would read back as `&lt;` on the page)."""
    hostile = "<b class=\"x\">Tom's & Jerry's</b> </script><script>alert(1)</script>"
    compiled = compile_value(
        {
            "name": "probe",
            "title": hostile,
            "description": hostile,
            "annotations": {"note": hostile},
            "inputSchema": {
                "type": "object",
                "properties": {"q": {"type": "string", "description": hostile, "default": "<&>"}},
            },
        }
    )
    assert compiled.catalog is not None
    page = render_catalog(compiled.catalog, "html")
    parser = _Structure()
    parser.feed(page)
    assert "script" not in parser.tags and "b" not in parser.tags
    reader = _Text()
    reader.feed(page)
    texts = "\n".join(reader.texts)
    assert texts.count(hostile) >= 3  # title (twice: contents and section), description, table
    assert json.dumps(hostile) in texts  # the annotation's value, as JSON
    assert "&lt;" not in texts and "&amp;" not in texts and "&#" not in texts


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("chromium is not installed: `apt-get install chromium` (scripts/test does)")
    return found


def run_chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.slow
def test_html_in_a_real_browser(tmp_path: Path) -> None:
    compiled = compile_sources(
        [
            str(CORPUS / "mcp" / "filesystem.json"),
            str(SCHEMAS / "hostile_descriptions.json"),
            str(SCHEMAS / "tool_names.json"),
        ],
        namespace=True,
    )
    assert compiled.catalog is not None
    page = tmp_path / "catalog.html"
    page.write_text(render_catalog(compiled.catalog, "html"), encoding="utf-8")
    dom = run_chromium("--dump-dom", page.as_uri(), profile=tmp_path / "profile-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    for tool in compiled.catalog.tools:
        assert f'<section id="{anchor(tool.name)}">' in dom.stdout, tool.name
    assert "<script" not in dom.stdout
    shot = tmp_path / "catalog.png"
    result = run_chromium(
        f"--screenshot={shot}",
        "--window-size=1280,2400",
        "--hide-scrollbars",
        page.as_uri(),
        profile=tmp_path / "profile-shot",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000, "a blank page would compress to almost nothing"
    keep = os.environ.get("CODEGEN_ARTIFACTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "catalog.png")
    sys.stdout.write(f"catalog screenshot: {shot}\n")


def test_catalog_command(tmp_path: Path) -> None:
    out = tmp_path / "catalog.html"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "catalog",
            str(SCHEMAS / "maps.json"),
            "--format",
            "html",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_text() == render_catalog(catalog("maps"), "html")
    md = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen",
            "catalog",
            str(SCHEMAS / "maps.json"),
            "--lang",
            "python",
            "--input-format",
            "mcp",
        ],
        capture_output=True,
        check=False,
        cwd=ROOT,
    )
    assert md.returncode == 0
    assert md.stdout.decode() == render_catalog(catalog("maps"), "md", "python")


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_every_golden_case_renders_in_every_format(case: str) -> None:
    for fmt in ("md", "json", "html"):
        for language in ("typescript", "python"):
            text = render_catalog(catalog(case), fmt, language)
            text.encode("utf-8")
            if fmt == "json":
                json.loads(text)
