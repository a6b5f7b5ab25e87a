"""Offline docs catalogs: Markdown, JSON and HTML pinned by snapshots, the HTML page (its
grouping by server and its filter) checked in a real headless Chromium, hostile text kept
inert in every format."""

from __future__ import annotations

import base64
import hashlib
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
from codegen.render.catalog import DEFAULT_TITLE, anchor, render_catalog
from conftest import CORPUS, GOLDEN_CASES, ROOT, SCHEMAS
from support.chromium_devtools import Page, browser

SNAPSHOT_CASES = ("nested_objects", "union_discriminated")


def catalog(case: str) -> ir.Catalog:
    compiled = compile_sources([str(SCHEMAS / f"{case}.json")], require_tools=False)
    assert compiled.catalog is not None
    return compiled.catalog


@pytest.mark.parametrize("case", SNAPSHOT_CASES)
@pytest.mark.parametrize("fmt", ["md", "json", "html"])
def test_catalog_snapshot(case: str, fmt: str, golden: Any) -> None:
    assert render_catalog(catalog(case), fmt) == golden("catalog", fmt, case)


SERVER_SOURCES = ("time.json", "fetch.json", "sequential-thinking.json")
"""Three small MCP servers of the corpus: a catalog grouped by server."""


def servers_catalog(order: tuple[str, ...] = SERVER_SOURCES) -> ir.Catalog:
    compiled = compile_sources([str(CORPUS / "mcp" / name) for name in order], namespace=True)
    assert compiled.catalog is not None
    return compiled.catalog


@pytest.mark.parametrize("fmt", ["md", "json", "html"])
def test_grouped_catalog_snapshot(fmt: str, golden: Any) -> None:
    assert render_catalog(servers_catalog(), fmt) == golden("catalog", fmt, "servers")


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
        "server",
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
        self.attrs: list[tuple[str, dict[str, str | None]]] = []
        self.raw: dict[str, list[str]] = {"script": [], "style": []}
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        self.attrs.append((tag, values))
        if values.get("id"):
            self.ids.append(values["id"] or "")
        for key in ("href", "src", "action", "formaction", "srcset", "poster", "data"):
            if values.get(key):
                self.links.append(values[key] or "")
        if tag in self.raw:
            self._in = tag
            self.raw[tag].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self.raw[self._in][-1] += data


def _csp_source(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def check_own_page(text: str) -> _Structure:
    """One self-contained page: no external resource, no handler attribute, one script
    and one style sheet (the page's own), each allowed by the Content-Security-Policy's
    hash and nothing else allowed."""
    parser = _Structure()
    parser.feed(text)
    assert parser.tags.count("script") == 1 and parser.tags.count("style") == 1
    assert "link" not in parser.tags and "img" not in parser.tags
    assert "iframe" not in parser.tags and "object" not in parser.tags
    assert "form" not in parser.tags and "base" not in parser.tags
    assert all(link.startswith("#") for link in parser.links)
    for tag, attrs in parser.attrs:
        assert not any(key.startswith("on") or key == "style" for key in attrs), tag
    [script_attrs] = [attrs for tag, attrs in parser.attrs if tag == "script"]
    assert script_attrs == {}
    [policy] = [
        attrs["content"]
        for tag, attrs in parser.attrs
        if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy"
    ]
    assert policy is not None
    [script], [style] = parser.raw["script"], parser.raw["style"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives == {
        "default-src": "'none'",
        "style-src": _csp_source(style),
        "script-src": _csp_source(script),
        "base-uri": "'none'",
        "form-action": "'none'",
    }
    assert "innerHTML" not in script and "outerHTML" not in script
    assert "insertAdjacentHTML" not in script and "document.write" not in script
    assert "eval(" not in script and "Function(" not in script
    return parser


def test_html_is_one_self_contained_file() -> None:
    text = render_catalog(catalog("hostile_descriptions"), "html")
    parser = check_own_page(text)
    tools = catalog("hostile_descriptions").tools
    assert [i for i in parser.ids if i.startswith("tool-")] == [anchor(t.name) for t in tools]
    assert text.count("<script>") == 1  # the page's own; the description's </script> is escaped


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
    page = render_catalog(compiled.catalog, "html", title=hostile)
    parser = check_own_page(page)
    assert "b" not in parser.tags
    reader = _Text()
    reader.feed(page)
    texts = "\n".join(reader.texts)
    # title (twice: contents and section), description, table, page title (twice: <title>
    # and <h1>)
    assert texts.count(hostile) >= 6
    assert json.dumps(hostile) in texts  # the annotation's value, as JSON
    assert "&lt;" not in texts and "&amp;" not in texts and "&#" not in texts


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("chromium is not installed: `apt-get install chromium` (scripts/test does)")
    return found


CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def run_chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
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
    assert dom.stdout.count("<script") == 1  # the page's own filter; hostile text stays text
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


FILTER_SERVERS: dict[str, list[tuple[str, str | None, str]]] = {
    "alpha": [
        ("list_issues", "List issues", "Lists the issues of a repository."),
        ("create_issue", None, "Opens a new Issue in a repository."),
        ("get_file", None, "Reads one file."),
    ],
    "beta": [
        ("send_message", None, "Posts a message to a channel."),
        ("list_channels", None, "Lists every channel."),
    ],
    "gamma": [
        (
            "convert_time",
            None,
            "Converts a time between zones. </script><script>document.title = 'pwned'</script>",
        ),
        ("now", "Current time", "The time now, <b>bold</b> & plain."),
    ],
}
"""Three servers whose words the filter test picks tools by."""


def write_servers(directory: Path, servers: dict[str, list[tuple[str, str | None, str]]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for server, tools in servers.items():
        records = [
            {"name": name, "description": description, "inputSchema": {"type": "object"}}
            | ({"title": title} if title else {})
            for name, title, description in tools
        ]
        (directory / f"{server}.json").write_text(json.dumps({"server": server, "tools": records}))


def filter_catalog(directory: Path) -> ir.Catalog:
    write_servers(directory, FILTER_SERVERS)
    compiled = compile_sources([str(directory)], namespace=True)
    assert compiled.catalog is not None
    return compiled.catalog


def test_html_groups_tools_by_server(tmp_path: Path) -> None:
    page = render_catalog(filter_catalog(tmp_path / "servers"), "html")
    parser = check_own_page(page)
    groups = [i for i in parser.ids if i.startswith("server-")]
    assert groups == ["server-alpha", "server-beta", "server-gamma"]
    # The list of servers, then each server's heading, its contents and its tools.
    servers = page.index('<nav class="servers"')
    assert all(page.index(f'href="#{group}"') > servers for group in groups)
    order = [page.index(f'<div class="group" id="{group}">') for group in groups]
    assert order == sorted(order)
    alpha = page[order[0] : order[1]]
    assert '<h2><a href="#server-alpha"><code>alpha</code></a></h2>' in alpha
    tocs = re.findall(r'<li><a href="#(tool-[^"]+)">', alpha)
    assert tocs == [
        anchor(f"alpha__{name}") for name in ("create_issue", "get_file", "list_issues")
    ]
    sections = re.findall(r'<section id="(tool-[^"]+)">', alpha)
    assert sections == tocs
    assert '<h3><a href="#tool-alpha__create_issue">alpha__create_issue</a></h3>' in alpha
    assert "3 tools from 3 servers" not in page and "7 tools from 3 servers" in page
    assert '<span class="count">3 tools</span>' in page


def test_a_catalog_without_servers_is_one_group_without_a_heading() -> None:
    markdown = render_catalog(catalog("nested_objects"), "md")
    assert "server" not in markdown.lower() and "Other tools" not in markdown
    assert markdown.startswith("# Tool catalog\n\n1 tool.\n\n## Contents\n\n")
    page = render_catalog(catalog("nested_objects"), "html")
    assert "<p>1 tool; types in typescript.</p>" in page and "Other tools" not in page
    assert page.count('<div class="group" id="tools">') == 1 and "server-" not in page
    assert "<h2><a" in page and "<h3><a" not in page  # tools are the second level
    assert '<nav class="servers"' not in page


def test_tools_without_a_server_follow_the_servers() -> None:
    compiled = compile_value(
        [
            {"name": name, "inputSchema": {"type": "object"}}
            for name in ("zeta", "b__one", "a__two", "__lead", "trail__", "a__b__c")
        ]
    )
    assert compiled.catalog is not None
    page = render_catalog(compiled.catalog, "html")
    groups = re.findall(r'<div class="group" id="([^"]+)">', page)
    assert groups == ["server-a", "server-b", "other-tools"]
    other = page[page.index('id="other-tools"') :]
    assert re.findall(r'<section id="(tool-[^"]+)">', other) == [
        anchor(name) for name in ("__lead", "trail__", "zeta")
    ]
    assert "5 tools from 2 servers, 3 without one" not in page
    assert "6 tools from 2 servers, 3 without one" in page
    markdown = render_catalog(compiled.catalog, "md")
    assert "## Other tools" in markdown and "- [Other tools](#other-tools) (3 tools)" in markdown
    data = json.loads(render_catalog(compiled.catalog, "json"))
    assert {t["name"]: t["server"] for t in data["tools"]} == {
        "__lead": None,
        "a__b__c": "a",
        "a__two": "a",
        "b__one": "b",
        "trail__": None,
        "zeta": None,
    }


@pytest.mark.parametrize(
    "name", ["a__b", "a__b__c", "a___b", "_a__b", "a__", "__b", "____", "ab", "a_b", ""]
)
def test_the_server_of_a_tool_is_code_modes(name: str) -> None:
    """`render` cannot import the loader or Code Mode, so it keeps its own copy of the rule:
    the same separator as `--namespace`, the same server as `catalog.servers()`."""
    from codegen.codemode.presentation.discovery import server_of as code_mode_server_of
    from codegen.load.namespaces import SEPARATOR
    from codegen.render import catalog as catalog_module

    assert catalog_module.SEPARATOR == SEPARATOR
    assert (catalog_module.server_of(name) or "") == code_mode_server_of(name)


def test_markdown_groups_tools_by_server(tmp_path: Path) -> None:
    text = render_catalog(filter_catalog(tmp_path / "servers"), "md")
    assert "7 tools from 3 servers.\n\n## Servers\n\n- [`alpha`](#server-alpha) (3 tools)\n" in text
    assert '\n<a id="server-beta"></a>\n\n## `beta`\n\n### Tools\n\n' in text
    assert "\n### `beta__list_channels`\n" in text and "\n#### Input schema\n" in text
    headings = re.findall(r"^## (.*)$", text, re.M)
    assert headings == ["Servers", "`alpha`", "`beta`", "`gamma`"]


@pytest.mark.parametrize("fmt", ["md", "json", "html"])
def test_same_catalog_in_any_input_order_gives_the_same_bytes(fmt: str, tmp_path: Path) -> None:
    first = render_catalog(servers_catalog(), fmt)
    again = render_catalog(servers_catalog(tuple(reversed(SERVER_SOURCES))), fmt)
    assert first == again
    write_servers(tmp_path / "one", FILTER_SERVERS)
    write_servers(tmp_path / "two", dict(reversed(list(FILTER_SERVERS.items()))))
    pages = []
    for directory, backwards in ((tmp_path / "one", False), (tmp_path / "two", True)):
        files = sorted((str(path) for path in directory.iterdir()), reverse=backwards)
        compiled = compile_sources(files, namespace=True)
        assert compiled.catalog is not None
        pages.append(render_catalog(compiled.catalog, fmt))
    assert pages[0] == pages[1]


def test_title_is_set_and_escaped() -> None:
    nested = catalog("nested_objects")
    for fmt in ("md", "html"):
        assert DEFAULT_TITLE in render_catalog(nested, fmt)
        assert DEFAULT_TITLE not in render_catalog(nested, fmt, title="My tools")
    page = render_catalog(nested, "html", title="My tools")
    assert "<title>My tools</title>" in page and "<h1>My tools</h1>" in page
    hostile = "<b>A & B</b>\n*x* [y](z) `c` #"
    page = render_catalog(nested, "html", title=hostile)
    assert "<title>&lt;b&gt;A &amp; B&lt;/b&gt;\\n*x* [y](z) `c` #</title>" in page
    markdown = render_catalog(nested, "md", title=hostile)
    assert markdown.startswith("# &lt;b&gt;A &amp; B&lt;/b&gt; \\*x\\* \\[y\\](z) \\`c\\` \\#\n")
    assert render_catalog(nested, "json", title="My tools") == render_catalog(nested, "json")


def _page_state(page: Page) -> dict[str, Any]:
    state: dict[str, Any] = page.evaluate(
        """({
        tools: [...document.querySelectorAll("main section")]
            .filter((e) => e.checkVisibility()).map((e) => e.id),
        groups: [...document.querySelectorAll("main > .group")]
            .filter((e) => e.checkVisibility()).map((e) => e.id),
        entries: [...document.querySelectorAll("nav li")]
            .filter((e) => e.checkVisibility())
            .map((e) => e.querySelector("a").getAttribute("href").slice(1)),
        counts: [...document.querySelectorAll("nav.servers .count")]
            .map((e) => e.textContent),
        count: document.getElementById("filter-count").textContent,
        filter: document.getElementById("filter").checkVisibility(),
        title: document.title,
        styled: getComputedStyle(document.querySelector("main section")).borderTopStyle,
    })"""
    )
    return state


def _shown(*names: str) -> dict[str, list[str]]:
    """The tools, groups and contents entries visible when exactly `names` match."""
    servers = sorted({name.split("__")[0] for name in names})
    tools = sorted(names)
    return {
        "tools": [anchor(name) for name in tools],
        "groups": [f"server-{server}" for server in servers],
        "entries": [f"server-{server}" for server in servers] + [anchor(name) for name in tools],
    }


@pytest.mark.slow
def test_html_filter_in_a_real_browser(tmp_path: Path) -> None:
    """Typing into the filter hides the tools that do not match, their contents entries and
    the groups left empty, and counts what is left; without JavaScript everything shows and
    the filter does not."""
    title = "Servers & <tools>"
    html_file = tmp_path / "catalog.html"
    html_file.write_text(
        render_catalog(filter_catalog(tmp_path / "servers"), "html", title=title),
        encoding="utf-8",
    )
    everything = _shown(
        *(f"{s}__{name}" for s, tools in FILTER_SERVERS.items() for name, _, _ in tools)
    )
    with browser(chromium(), CHROMIUM_FLAGS, tmp_path / "browser") as started:
        page = started.page()
        page.open(html_file.as_uri())
        state = _page_state(page)
        assert {key: state[key] for key in ("tools", "groups", "entries")} == everything
        assert state["count"] == "7 tools" and state["filter"] is True
        assert state["counts"] == ["3 tools", "2 tools", "2 tools"]
        assert state["title"] == title and state["styled"] == "solid"  # the style's hash holds

        page.evaluate("document.getElementById('filter-query').focus()")
        steps = [
            # every word must match, in any case, in the name or the description
            ("issue REPO", "2 of 7 tools", _shown("alpha__create_issue", "alpha__list_issues")),
            ("list", "2 of 7 tools", _shown("alpha__list_issues", "beta__list_channels")),
            ("current", "1 of 7 tools", _shown("gamma__now")),  # the title
            ("gamma__conv", "1 of 7 tools", _shown("gamma__convert_time")),  # the name
            ("<b>", "1 of 7 tools", _shown("gamma__now")),  # text as the page shows it
            ("zzz", "0 of 7 tools", {"tools": [], "groups": [], "entries": []}),
            ("", "7 tools", everything),
        ]
        typed = ""
        for query, count, expected in steps:
            page.backspace(len(typed))
            page.type(query)
            typed = query
            page.wait_for(
                f"document.getElementById('filter-count').textContent === {json.dumps(count)}",
                f"the count after typing {query!r}",
            )
            state = _page_state(page)
            assert page.evaluate("document.getElementById('filter-query').value") == query
            assert {key: state[key] for key in ("tools", "groups", "entries")} == expected, query
            assert state["count"] == count
        page.backspace(len(typed))
        page.type("issue")
        page.wait_for(
            "document.getElementById('filter-count').textContent === '2 of 7 tools'",
            "the count after typing 'issue'",
        )
        # alpha: list_issues, create_issue; beta and gamma: none (their groups hidden)
        assert _page_state(page)["counts"] == ["2 of 3 tools", "0 of 2 tools", "0 of 2 tools"]
        assert page.problems() == []
        assert page.evaluate("document.title") == title  # the hostile description stayed text

        plain = started.page(javascript=False)
        plain.open(html_file.as_uri())
        state = _page_state(plain)
        assert {key: state[key] for key in ("tools", "groups", "entries")} == everything
        assert state["filter"] is False and state["count"] == ""
        assert state["title"] == title and state["styled"] == "solid"
        assert plain.problems() == []


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


def test_catalog_title_from_the_command_line_and_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--title` wins; else `catalog_title` of `[tool.codegen]`, which `build`'s catalogs
    take too; else the default. A wrong value is a usage error naming the key."""
    from codegen.cli import main

    shutil.copy(SCHEMAS / "maps.json", tmp_path / "maps.json")
    monkeypatch.chdir(tmp_path)
    maps = catalog("maps")

    def run(*args: str) -> tuple[int, str, str]:
        status = main(list(args))
        out, err = capsys.readouterr()
        return status, out, err

    assert run("catalog", "maps.json", "--format", "html")[1] == render_catalog(maps, "html")
    status, out, _ = run("catalog", "maps.json", "--format", "html", "--title", "Maps & <co>")
    assert status == 0 and out == render_catalog(maps, "html", title="Maps & <co>")
    assert "<h1>Maps &amp; &lt;co&gt;</h1>" in out
    status, _, err = run("catalog", "maps.json", "--title", " ")
    assert status == 2 and "--title" in err and "non-empty title" in err

    (tmp_path / "pyproject.toml").write_text(
        '[tool.codegen]\nsources = ["maps.json"]\nout = "out"\ncatalog_title = "Project tools"\n'
    )
    status, out, _ = run("catalog", "maps.json")
    assert status == 0 and out == render_catalog(maps, "md", title="Project tools")
    assert out.startswith("# Project tools\n")
    status, out, _ = run("catalog", "maps.json", "--format", "html", "--title", "Mine")
    assert out == render_catalog(maps, "html", title="Mine")
    assert run("build", "-q")[0] == 0
    for fmt in ("md", "html", "json"):
        written = (tmp_path / "out" / f"tools.catalog.{fmt}").read_text(encoding="utf-8")
        assert written == render_catalog(maps, fmt, title="Project tools")

    (tmp_path / "pyproject.toml").write_text("[tool.codegen]\ncatalog_title = 3\n")
    status, _, err = run("catalog", "maps.json")
    assert status == 2 and "catalog_title" in err and "expected a non-empty string" in err


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_every_golden_case_renders_in_every_format(case: str) -> None:
    for fmt in ("md", "json", "html"):
        for language in ("typescript", "python"):
            text = render_catalog(catalog(case), fmt, language)
            text.encode("utf-8")
            if fmt == "json":
                json.loads(text)
