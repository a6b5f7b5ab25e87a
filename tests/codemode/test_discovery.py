"""Code Mode at any size: the description budget and its tiers, and discovery inside a
program (`catalog.search`, `describe`, `servers`, `names`) over the host's tools."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.codemode.calls.execution import ToolCall
from codegen.codemode.presentation.discovery import (
    FILL_BLOCK,
    MAX_HITS,
    Discovery,
    DiscoveryError,
)
from codegen.codemode.presentation.languages import run_code_flavor
from codegen.codemode.presentation.tiers import DEFAULT_BUDGET, search_text, utf16_units
from codegen.codemode.registry import ToolRegistry, ToolSpec
from codegen.engine import compile_value
from codegen.render.chunks import tool_chunks
from codegen.render.sections import python as python_section
from codegen.render.sections import typescript as typescript_section
from codegen.render.sections.slices import ToolSlice, tool_slice
from codegen.render.sections.summaries import first_sentence
from conftest import ROOT
from support.corpus_registry import Echo, corpus_registry, echo

# --- the budget and its tiers ---------------------------------------------------------------


def test_utf16_units_count_like_javascript() -> None:
    assert utf16_units("abc") == 3
    assert utf16_units("é") == 1
    assert utf16_units("😀") == 2  # past U+FFFF: a surrogate pair
    assert utf16_units("a😀b") == len("a😀b".encode("utf-16-le")) // 2


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_a_small_catalog_is_inlined_and_a_large_one_is_searched(language: str) -> None:
    small = ToolRegistry(mode="code")
    small.register(ToolSpec("time__now", "The time.", {"type": "object"}, handler=echo))
    small.mount_runtime(Echo(language))
    prompt = small.assemble_prompt()
    assert "time__now" in prompt and "catalog.search" not in prompt

    large = corpus_registry(language)
    prompt = large.assemble_prompt()
    assert "catalog.search" in prompt and "Never guess a name" in prompt
    sections = large.prompt.sections(large.root)
    sdk = next(s for s in sections if s.id == "tools:sdk")
    assert utf16_units(sdk.text) <= DEFAULT_BUDGET
    whole = large.assemble_prompt(budget=None)  # no budget: the whole SDK
    assert "github__create_issue" in whole and len(whole) > 50_000


@pytest.mark.parametrize("language", ["python", "typescript"])
@settings(max_examples=60, deadline=None)
@given(budget=st.integers(min_value=1, max_value=4000))
def test_the_search_text_never_exceeds_its_budget_and_keeps_essentials_first(
    language: str, budget: int
) -> None:
    paragraphs = run_code_flavor(language).search
    servers = [("github", "GitHub repositories."), ("time", "The time."), ("x" * 30, "")]
    tiered = search_text(paragraphs, servers, budget)
    assert tiered.units <= budget
    whole = "\n\n".join(paragraphs)
    if budget >= utf16_units(whole):
        assert tiered.text.startswith(whole)
    elif budget >= utf16_units(paragraphs[0]):
        assert whole.startswith(tiered.text)  # a prefix of whole paragraphs
    else:
        assert paragraphs[0].startswith(tiered.text)
        assert tiered.text  # something usable, even under a tiny cap


def test_the_server_index_falls_back_to_names_then_to_none() -> None:
    paragraphs = ("Essentials.",)
    servers = [
        (f"server{n}", "A fairly long summary of what this server is for.") for n in range(9)
    ]
    assert search_text(paragraphs, servers, 2048).index == "summaries"
    assert search_text(paragraphs, servers, 200).index == "names"
    assert search_text(paragraphs, servers, 40).index == "none"


def test_the_log_line_names_the_server_index_given() -> None:
    paragraphs = ["Call tools."]
    named = search_text(paragraphs, [("github", ""), ("slack", "")], 2_048)
    assert "server index: names)" in named.describe(2_048)  # no summary: names only
    summarized = search_text(paragraphs, [("github", "Issues."), ("slack", "")], 2_048)
    assert "server index: summaries)" in summarized.describe(2_048)
    assert "server index: none)" in search_text(paragraphs, [], 2_048).describe(2_048)


def test_the_full_sdk_is_not_rendered_past_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thousands of tools: the names alone exceed the budget, so the section is never
    rendered to find out."""
    registry = corpus_registry()
    rendered: list[int] = []
    monkeypatch.setattr(registry, "_compile", lambda specs: rendered.append(1))
    assert "catalog.search" in registry.assemble_prompt()
    assert rendered == []


def test_bad_budgets_are_refused() -> None:
    for bad in (0, -5, 1.5, "2048", True):
        with pytest.raises(ValueError, match="budget"):
            ToolRegistry(budget=bad)  # type: ignore[arg-type]
    registry = ToolRegistry()
    registry.set_budget(None)
    assert registry.budget is None


def test_the_search_text_does_not_change_when_tools_inside_a_server_change() -> None:
    """Only the servers' names and summaries reach the search tier: a client's prompt cache
    survives tools that come and go inside a server."""
    registry = corpus_registry()
    registry.set_server_summary("time", "Current time, and times converted between zones.")
    before = registry.assemble_prompt()
    remove = registry.register(
        ToolSpec("time__brand_new", "New.", {"type": "object"}, handler=echo)
    )
    assert registry.assemble_prompt() == before
    remove()
    registry.register(ToolSpec("weather__today", "Weather.", {"type": "object"}, handler=echo))
    after = registry.assemble_prompt()
    assert after != before and "weather" in after  # a new server is news


# --- slices: what describe and the hits show --------------------------------------------------


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_describe_and_hits_show_each_tool_as_a_section_holding_it_alone(language: str) -> None:
    """Every line `describe` shows is a line of the section of a catalog holding the tool
    alone, with every comment written in full (`ditto` expanded); the hit's call reaches
    that very tool (the worker binds `tools.X` and `tools["X"]` to the tool named X)."""
    registry = corpus_registry(language)
    found = registry.discovery()
    module = python_section if language == "python" else typescript_section
    for spec in found.specs[::3]:
        alone = compile_value({"tools": [spec.definition()]}).catalog
        assert alone is not None
        chunks = tool_chunks(alone, f"{language}-section", module.section_chunk, None)
        lines = set(module.section_sdk_from_chunks(chunks, dittos=False).splitlines())
        text = found.describe(spec.name)
        missing = [line for line in text.splitlines() if line not in lines]
        assert not missing, (spec.name, missing[:3])
        hit = found.hit_lines([spec.name])[0]
        assert hit.startswith((f"tools.{spec.name}(", f"tools[{json.dumps(spec.name)}]("))
        assert found.slice(spec.name)[0].signature in hit or "..." in hit


def counted_compiles(registry: ToolRegistry) -> list[int]:
    """The size of every tool set the registry compiles from now on."""
    sizes: list[int] = []
    compile_tools = registry._compile

    def counting(specs: tuple[ToolSpec, ...]) -> Any:
        sizes.append(len(specs))
        return compile_tools(specs)

    registry._compile = counting  # type: ignore[method-assign]
    return sizes


def test_a_search_compiles_its_hits_alone_and_never_the_catalog() -> None:
    registry = corpus_registry()
    sizes = counted_compiles(registry)
    found = registry.discovery()
    hits = found.search("create an issue", k=5)["names"]
    assert len(hits) == 5 and sizes == [1] * 5
    found.search("create an issue", k=5)  # made once, then kept
    found.describe(hits[0])
    assert sizes == [1] * 5
    found.fill()
    assert sizes == [1] * len(found.specs) and max(sizes) == 1


def test_a_new_tool_set_keeps_the_slices_of_the_very_same_tools() -> None:
    registry = corpus_registry()
    sizes = counted_compiles(registry)
    first = registry.discovery()
    hits = first.search("read a file", k=4)["names"]
    assert sizes == [1] * 4
    registry.register(
        ToolSpec("extra__read_file", "Read a file.", {"type": "object"}, handler=echo)
    )
    second = registry.discovery()
    assert second is not first
    for name in hits:  # the same specs: kept
        assert second.describe(name) == first.describe(name)
    assert sizes == [1] * 4
    second.describe("extra__read_file")
    assert sizes == [1] * 5
    other = ToolSpec(hits[0], "Another tool by that name.", {"type": "object"}, handler=echo)
    rebuilt = Discovery([other], "python", {}, registry._compile, second)
    assert "Another tool" in rebuilt.describe(hits[0])  # another spec: made again
    assert Discovery([other], "typescript", {}, registry._compile, second)._alone == {}


def test_fill_stops_when_told() -> None:
    registry = corpus_registry()
    sizes = counted_compiles(registry)
    found = registry.discovery()
    asked: list[int] = []

    def stop() -> bool:
        asked.append(len(sizes))
        return len(asked) > 2

    found.fill(stop)
    assert len(sizes) == 2 * FILL_BLOCK < len(found.specs)
    assert asked == [0, FILL_BLOCK, 2 * FILL_BLOCK]


def test_a_hit_sentence_tells_the_tool_apart_from_its_servers_others() -> None:
    shared = "# Tools\nPurpose: 1. Error Responses: 400 bad request."
    registry = ToolRegistry(mode="code")
    for name, own in (("a", "Reads a file."), ("b", "Writes a file."), ("c", "Lists files.")):
        registry.register(
            ToolSpec(f"files__{name}", f"{shared}\n\n{own}", {"type": "object"}, handler=echo)
        )
    registry.register(ToolSpec("other__a", f"{shared}\n\nOther.", {"type": "object"}, handler=echo))
    registry.mount_runtime(Echo("python"))
    found = registry.discovery()
    assert found.hit_lines(["files__b"]) == ["tools.files__b() -> Any  # Writes a file."]
    assert found.slice("files__a")[0].summary == "Reads a file."
    # alone on its server, nothing is shared: the first sentence that is no stub
    assert found.slice("other__a")[0].summary == "Error Responses: 400 bad request."


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_a_result_type_shared_with_an_earlier_tool_is_shown_under_its_own_name(
    language: str,
) -> None:
    """Two tools that return the same shape: the whole section declares it once, under the
    first tool's name; a hit and a description show each tool's own."""
    output = {"type": "object", "properties": {"content": {"type": "string"}}}
    tools = [
        {"name": name, "inputSchema": {"type": "object"}, "outputSchema": output}
        for name in ("create_directory", "get_file_info")
    ]
    registry = ToolRegistry(mode="code")
    for tool in tools:
        registry.register(
            ToolSpec(tool["name"], "", tool["inputSchema"], handler=echo, output_schema=output)
        )
    registry.mount_runtime(Echo(language))
    found = registry.discovery()
    hit, text = found.slice("get_file_info")
    assert "GetFileInfoOutput" in hit.signature and "CreateDirectoryOutput" not in hit.signature
    declared = (
        "class GetFileInfoOutput(" if language == "python" else "interface GetFileInfoOutput "
    )
    assert declared in text and "CreateDirectoryOutput" not in text
    assert "CreateDirectoryOutput" in found.slice("create_directory")[0].signature
    assert "GetFileInfoOutput" in found.search("get file info", k=1)["text"]
    assert "CreateDirectoryOutput" not in found.describe("get_file_info")


def alone(tool: dict[str, Any], language: str = "python") -> tuple[ToolSlice, str]:
    """The slice of `tool` compiled alone."""
    catalog = compile_value({"tools": [tool]}).catalog
    assert catalog is not None
    return tool_slice(catalog, language)


def test_a_slice_carries_every_type_its_tool_uses() -> None:
    shared = {
        "type": "object",
        "properties": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
        "required": ["address"],
    }
    hit, text = alone({"name": "second", "description": "Ship it. Fast.", "inputSchema": shared})
    assert "class Address(" in text and "city" in text
    assert hit.call == "tools.second" and hit.summary == "Ship it."
    assert hit.signature == "(address: Address) -> Any"


def test_a_slice_is_cut_from_a_catalog_of_one_tool() -> None:
    tools = [{"name": name, "inputSchema": {"type": "object"}} for name in ("a", "b")]
    catalog = compile_value({"tools": tools}).catalog
    assert catalog is not None
    with pytest.raises(ValueError, match="one tool, not 2"):
        tool_slice(catalog, "python")
    with pytest.raises(ValueError, match="no model-facing section"):
        tool_slice(catalog, "rust")


def test_call_forms() -> None:
    names = ("get-user", "class", "plain")
    python = {n: alone({"name": n, "inputSchema": {"type": "object"}})[0].call for n in names}
    assert python == {
        "get-user": 'tools["get-user"]',
        "class": 'tools["class"]',
        "plain": "tools.plain",
    }
    typescript = {
        n: alone({"name": n, "inputSchema": {"type": "object"}}, "typescript")[0].call
        for n in names
    }
    assert typescript["get-user"] == 'tools["get-user"]' and typescript["class"] == "tools.class"


def test_first_sentence() -> None:
    assert first_sentence("Read a file. Then more.") == "Read a file."
    assert first_sentence("Version 1.2 is here") == "Version 1.2 is here"
    assert first_sentence("Line one\ncontinues here. Next.") == "Line one continues here."
    assert first_sentence("First paragraph\n\nSecond.") == "First paragraph"
    assert first_sentence("") == ""
    assert len(first_sentence("word " * 200)) <= 160


# --- the catalog's answers ------------------------------------------------------------------


def discovery(language: str = "python") -> Discovery:
    return corpus_registry(language).discovery()


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_eight_hits_stay_under_about_two_thousand_characters(language: str) -> None:
    found = discovery(language)
    for query in ("create a pull request", "list files in a directory", "take a screenshot"):
        answer = found.search(query)
        assert len(answer["names"]) == 8 and answer["cut"] is True
        assert answer["matched"] > 8
        assert len(answer["text"]) <= 2_100, answer["text"]
        lines = answer["text"].splitlines()
        assert len(lines) == 9 and lines[-1].startswith("(8 of ")
        for name, line in zip(answer["names"], lines, strict=False):
            assert line.startswith("tools.") and name in line.split("(")[0]


def test_search_filters_by_server_and_combines_queries() -> None:
    found = discovery()
    answer = found.search("list", k=5, server="kubernetes")
    assert answer["names"] and all(n.startswith("kubernetes__") for n in answer["names"])
    steps = found.search(["create an issue on GitHub", "send a Slack message"], k=6)
    servers = {name.split("__")[0] for name in steps["names"]}
    assert {"github", "slack"} <= servers


def test_describe_servers_and_names() -> None:
    found = discovery()
    text = found.describe("time__get_current_time")
    assert text.startswith("async def time__get_current_time(")
    servers = found.servers()
    assert {"name": "time", "summary": "", "tools": 2} in servers
    assert [s["name"] for s in servers] == sorted(s["name"] for s in servers)
    assert found.names("time") == ["time__convert_time", "time__get_current_time"]
    assert len(found.names()) == sum(s["tools"] for s in servers)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda d: d.search("x", k=0), "k must be a positive integer"),
        (lambda d: d.search("x", k="3"), "k must be a positive integer"),
        (lambda d: d.search(3), "query must be a string or a list"),
        (lambda d: d.search(["q"] * 33), "query must be a string or a list"),
        (lambda d: d.search("x", server="nope"), "no server 'nope'; servers: "),
        (lambda d: d.describe(7), "name must be a tool's name"),
        (lambda d: d.names("nope"), "no server 'nope'"),
        (lambda d: d.answer("drop", {}), "no operation 'drop'"),
        (lambda d: d.answer("search", []), "malformed request"),
    ],
)
def test_bad_questions_get_clear_errors(call: Any, message: str) -> None:
    with pytest.raises(DiscoveryError, match=message.replace("(", r"\(")):
        call(discovery())


def test_k_is_capped() -> None:
    answer = discovery().search("file", k=10_000)
    assert len(answer["names"]) <= MAX_HITS


def test_a_cut_list_suggests_only_what_would_show_more() -> None:
    found = discovery()
    small = found.search("file", k=3)["text"].splitlines()[-1]
    assert small.endswith("use more specific words, server=, or a larger k)"), small
    capped = found.search("file", k=10_000)
    assert capped["cut"] and len(capped["names"]) == MAX_HITS
    footer = capped["text"].splitlines()[-1]
    assert "larger k" not in footer and f"k is at most {MAX_HITS}" in footer, footer
    by_server = found.search("get", k=2, server="github")["text"].splitlines()[-1]
    assert "server=" not in by_server and "a larger k" in by_server, by_server


def test_an_unknown_name_gets_the_closest_tools_not_every_tool() -> None:
    found = discovery()
    message = found.unknown("get_current_time", "catalog.describe")
    assert message.startswith('catalog.describe: no tool named "get_current_time"; closest by')
    assert "tools.time__get_current_time(" in message
    assert message.count("\n") <= 7  # a handful of hits, however many tools there are
    assert "nothing like it" in found.unknown("___")  # no word to search with


def test_answers_are_shared_per_tool_set() -> None:
    registry = corpus_registry()
    first = registry.discovery()
    assert registry.discovery() is first
    remove = registry.register(ToolSpec("extra__tool", "x", {"type": "object"}, handler=echo))
    assert registry.discovery() is not first
    remove()
    assert registry.discovery() is first  # the earlier set is still kept


# --- inside real programs ----------------------------------------------------------------------


def shadowing_registry(language: str) -> ToolRegistry:
    """Tools named like the discovery API: `search` and `catalog` are tools like any other."""
    registry = ToolRegistry(mode="code")
    for name in ("search", "catalog", "describe", "files__read_file"):
        registry.register(
            ToolSpec(name, f"The {name} tool.", {"type": "object"}, handler=_named(name))
        )
    return registry


def _named(name: str) -> Any:
    async def handler(arguments: Any, context: Any) -> Any:
        return f"tool {name}"

    return handler


def execute(registry: ToolRegistry, program: str) -> Any:
    call = ToolCall("run_code", {"code": program, "description": "Find tools"}, "run")
    return asyncio.run(registry.execute(call))


PYTHON_SHADOWING = """\
hits = await catalog.search("read a file")
return [
    await tools.search(),
    await tools.catalog(),
    await tools["describe"](),
    hits.names[0],
    isinstance(hits, str),
    (await catalog.describe("search")).splitlines()[0],
]
"""

TYPESCRIPT_SHADOWING = """\
const hits = await catalog.search("read a file");
return [
  await tools.search(),
  await tools.catalog(),
  await tools["describe"](),
  hits.names[0],
  String(hits).startsWith("tools."),
  (await catalog.describe("search")).split("\\n")[1],
];
"""


def test_no_tool_shadows_the_catalog_and_it_shadows_no_tool_python() -> None:
    from codegen.codemode.runtimes.python import PythonRuntime, RuntimeLimits

    registry = shadowing_registry("python")
    runtime = PythonRuntime(RuntimeLimits(timeout=30))
    registry.mount_runtime(runtime)
    try:
        result = execute(registry, PYTHON_SHADOWING)
    finally:
        asyncio.run(runtime.aclose())
    assert result.value["result"] == [
        "tool search",
        "tool catalog",
        "tool describe",
        "files__read_file",
        True,
        "async def search() -> Any:",
    ], result.content


@pytest.mark.parametrize("setup", ["transpile", "strip"])
def test_no_tool_shadows_the_catalog_and_it_shadows_no_tool_typescript(setup: str) -> None:
    from support.typescript_nodes import SETUPS, runtime

    if setup not in SETUPS:
        pytest.fail(f"unknown TypeScript setup {setup!r}")
    registry = shadowing_registry("typescript")
    mounted = runtime(setup)
    registry.mount_runtime(mounted)
    try:
        result = execute(registry, TYPESCRIPT_SHADOWING)
    finally:
        asyncio.run(mounted.aclose())
    assert result.value["result"] == [
        "tool search",
        "tool catalog",
        "tool describe",
        "files__read_file",
        True,
        " search(args: { [key: string]: JsonValue }): Promise<JsonValue>",
    ], result.content


def test_a_failed_search_never_awaited_ends_no_typescript_run() -> None:
    """As a tool call's, a `catalog.search` promise nobody awaits is no unhandled rejection
    (which would end the run as an exception)."""
    from support.typescript_nodes import runtime

    registry = shadowing_registry("typescript")
    mounted = runtime("strip")
    registry.mount_runtime(mounted)
    program = 'catalog.search(5); await new Promise((r) => setTimeout(r, 200)); return "ran on";'
    try:
        result = execute(registry, program)
    finally:
        asyncio.run(mounted.aclose())
    assert not result.is_error and result.value["result"] == "ran on", result.content


@pytest.mark.parametrize("budget", [700, 1500, DEFAULT_BUDGET, 1_000_000])
def test_the_wire_keeps_description_and_instructions_within_the_budget(budget: int) -> None:
    from codegen.codemode.presentation.prompt import CODE_ONLY
    from codegen.serve.wire import wire_view

    registry = corpus_registry(budget=budget)
    registry.set_server_summary("github", "GitHub repositories, issues and pull requests.")
    described = wire_view(registry, "description")
    (run_code,) = described.definitions
    assert described.instructions is None and described.tier is not None
    assert utf16_units(run_code["description"]) <= budget
    assert described.tier.tier == ("full" if budget == 1_000_000 else "search")
    instructed = wire_view(registry, "instructions")
    assert instructed.instructions is not None
    assert utf16_units(instructed.instructions) <= budget
    if budget >= DEFAULT_BUDGET:
        assert instructed.instructions.startswith(CODE_ONLY)
    assert instructed.definitions[0]["description"] == registry.run_code_spec().description


README_CALLS = """\
print(await catalog.describe("time__convert_time"))   # the declaration the SDK shows
await catalog.names("time")      # ["time__convert_time", "time__get_current_time"]
await catalog.search(["create an issue on GitHub", "post it to Slack"], k=6)  # one per step
await catalog.search("list files", server="filesystem")
"""


def test_the_readme_catalog_calls_run_in_a_program() -> None:
    """README.md's list of catalog calls, run as a program over every vendored server, each
    call's value returned."""
    from codegen.codemode.runtimes.python import PythonRuntime, RuntimeLimits

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert README_CALLS in readme
    program = "\n".join(
        f"found_{n} = {line.split('  #')[0]}" if line.startswith("await") else line
        for n, line in enumerate(README_CALLS.splitlines())
    )
    program += "\nreturn [found_1, found_2.names, found_3.names]"
    registry = corpus_registry()
    runtime = PythonRuntime(RuntimeLimits(timeout=30))
    registry.mount_runtime(runtime)
    try:
        result = execute(registry, program)
    finally:
        asyncio.run(runtime.aclose())
    assert not result.is_error, result.content
    names, steps, files = result.value["result"]
    assert names == ["time__convert_time", "time__get_current_time"]
    assert {name.split("__")[0] for name in steps} >= {"github", "slack"}
    assert files and all(name.startswith("filesystem__") for name in files)
    assert result.value["logs"][0].startswith("async def time__convert_time(")


def test_serve_loads_the_search_model_once_names_are_past_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An upstream whose tools' names alone are past the budget starts the embedding
    model's load in serve's warm-up thread at once (while the others start), not at the
    first search, and the Chinese dictionary's when it describes tools in Chinese; within
    the budget nothing is loaded early."""
    import io
    from types import SimpleNamespace

    from codegen.mcp.config import Upstream
    from codegen.serve import mcp_server
    from codegen.serve.mcp_server import Host

    asked: list[list[Any]] = []
    monkeypatch.setattr(Host, "_warm", lambda self, warmers: asked.append(warmers))

    def connection(prefix: str) -> Any:
        upstream = Upstream(name=prefix, prefix=prefix, pointer=f"/mcpServers/{prefix}")
        return SimpleNamespace(upstream=upstream, call=None, about=())

    def tools(count: int) -> tuple[dict[str, Any], ...]:
        return tuple({"name": f"tool_{i}", "description": "Does a thing."} for i in range(count))

    registry = ToolRegistry(mode="code", budget=600)
    host = Host(registry, "description", io.StringIO())
    host.mount(connection("small"), tools(3))
    assert asked == []
    host.mount(connection("large"), tools(60))
    assert asked == [[mcp_server._load_search_model]]
    # an upstream describing its tools in Chinese also has the dictionary read early
    chinese = (*tools(59), {"name": "rank", "description": "获取微信读书排行榜"})
    host.mount(connection("zh"), chinese)
    assert asked[-1] == [mcp_server._load_search_model, mcp_server._load_dictionary]
    # a hostile listing's huge descriptions are judged on what the search reads of them
    from codegen.search import documents, glosses

    judged: list[int] = []
    chinese_text = glosses.chinese
    monkeypatch.setattr(glosses, "chinese", lambda t: judged.append(len(t)) or chinese_text(t))
    huge = "é" * 50_000_000 + "获取微信读书排行榜"  # Chinese only past the part read
    host.mount(connection("huge"), (*tools(59), {"name": "big", "description": huge}))
    assert judged and max(judged) <= documents.MAX_DESCRIPTION
    assert asked[-1] == [mcp_server._load_search_model]
