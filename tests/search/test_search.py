"""Tool search (`codegen.search`): the exact-name fast path, the server filter and prefixes,
combined queries, determinism, bounds on junk and huge input, the analyzer, and rankings of
natural questions over a hand-made catalog and the vendored MCP corpus."""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import random
import re
from pathlib import Path
from typing import Any

import pytest

from codegen.search import Document, Parameter, Ranking, SearchIndex, Weights, document, semantic
from codegen.search.documents import MAX_DEPTH, MAX_PARAMETERS, split_name
from codegen.search.index import MAX_QUERIES
from codegen.search.terms import MAX_QUERY_TERMS, name_key, query_terms, split_words, stem
from conftest import ROOT
from support import hash_seeds
from support.search_catalogs import QUERIES, corpus_definitions


def tool(name: str, description: str = "", **properties: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties},
    }


def string(description: str = "", **more: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **more}


CATALOG = [
    tool(
        "weather__get_weather",
        "Current weather conditions for a city: temperature, humidity and wind.",
        city=string("City name"),
        units=string("Temperature units", enum=["celsius", "fahrenheit"]),
    ),
    tool(
        "weather__get_forecast",
        "Weather forecast for the next days.",
        city=string("City name"),
        days={"type": "integer", "description": "How many days ahead"},
    ),
    tool(
        "github__get_file",
        "Read the contents of a file in a GitHub repository.",
        owner=string("Repository owner"),
        repo=string("Repository name"),
        path=string("Path of the file"),
    ),
    tool("github__create_issue", "Open a new issue in a repository.", title=string("Title")),
    tool(
        "github__create_pull_request",
        "Create a pull request to merge one branch into another.",
        head=string("The branch with the changes"),
        base=string("The branch to merge into"),
    ),
    tool("github__search", "Search code, issues and repositories on GitHub.", q=string()),
    tool("gitlab__search", "Search projects and merge requests on GitLab.", q=string()),
    tool("search", "Search the web.", query=string("What to look for")),
    tool(
        "slack__post_message",
        "Post a message to a Slack channel.",
        channel=string("Channel id"),
        text=string("Message text"),
    ),
    tool(
        "mail__send_email",
        "Send an email to one or more recipients.",
        to=string("Recipient addresses"),
        subject=string("Subject line"),
        body=string("Message body"),
    ),
    tool(
        "calendar__create_event",
        "Schedule a meeting or event in the calendar.",
        start=string("Start time"),
        attendees={"type": "array", "items": string("Email of an attendee")},
    ),
    tool(
        "files__convert_document",
        "Convert a document between formats.",
        source=string("Path of the document"),
        target={"type": "string", "enum": ["pdf", "docx", "markdown"]},
    ),
    tool(
        "finance__get_stock_price",
        "Latest trading price of a stock by its ticker symbol.",
        symbol=string("Ticker symbol such as AAPL"),
    ),
    tool(
        "translate__translate_text",
        "Translate text from one language into another.",
        text=string("The text"),
        target_language=string("Language code of the translation"),
    ),
    tool(
        "math.factorial",
        "Calculate the factorial of a number.",
        number={"type": "integer", "description": "A non-negative integer"},
    ),
    tool(
        "geo__reverse_geocode",
        "Turn latitude and longitude coordinates into a street address.",
        lat={"type": "number"},
        lon={"type": "number"},
    ),
    tool(
        "shop__list_orders",
        "List the orders of a customer.",
        filters={
            "type": "object",
            "properties": {"status": string("Order status", enum=["shipped", "cancelled"])},
        },
    ),
]


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex.build([document(d) for d in CATALOG])


@pytest.fixture(scope="module")
def corpus() -> SearchIndex:
    return SearchIndex.build([document(d) for d in corpus_definitions()])


# --- the exact-name fast path ------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "weather__get_weather",
        "get_weather",
        "getWeather",
        "GetWeather",
        "get-weather",
        "GET WEATHER",
        "get weather",
        "  get_weather  ",
        "weather.get_weather",
        "weather.getWeather",
        "WEATHER GET WEATHER",
        "weather-get-weather",
    ],
)
def test_any_spelling_of_a_name_ranks_its_tool_first(index: SearchIndex, query: str) -> None:
    assert index.search(query).names[0] == "weather__get_weather"


@pytest.mark.parametrize(
    "query, expected",
    [
        ("github.get_file", "github__get_file"),
        ("githubGetFile", "github__get_file"),
        ("get_file", "github__get_file"),
        ("math.factorial", "math.factorial"),
        ("math_factorial", "math.factorial"),
        ("mathFactorial", "math.factorial"),
        ("MATH FACTORIAL", "math.factorial"),
        ("createPullRequest", "github__create_pull_request"),
    ],
)
def test_names_with_and_without_prefix(index: SearchIndex, query: str, expected: str) -> None:
    assert index.search(query).names[0] == expected


def test_a_name_wins_over_a_better_text_match() -> None:
    """`getForecast` names one tool: it comes first, whatever the other's text says."""
    built = SearchIndex.build(
        [
            document(tool("a__get_forecast", "Weather.")),
            document(tool("b__get_forecast_outlook", "Get the forecast outlook.")),
            document(tool("c__other", "Unrelated.")),
        ]
    )
    assert built.search("get forecast outlook").names[0] == "b__get_forecast_outlook"
    assert built.search("getForecast").names == ("a__get_forecast", "b__get_forecast_outlook")


def test_tools_sharing_their_own_name_all_rank_at_the_top(index: SearchIndex) -> None:
    """Three tools are called `search`: the one without a prefix (its full name) first, then
    the prefixed ones by name, then the rest by score."""
    ranking = index.search("search", k=5)
    assert ranking.names[:3] == ("search", "github__search", "gitlab__search")
    assert index.search("Search", k=3).names == ranking.names[:3]
    assert index.search("github__search", k=1).names == ("github__search",)
    assert index.search("gitlab.search", k=1).names == ("gitlab__search",)


def test_the_fast_path_respects_the_server_filter(index: SearchIndex) -> None:
    assert index.search("search", server="gitlab").names == ("gitlab__search",)
    assert index.search("search", server="").names == ("search",)
    assert index.search("get_weather", server="weather").names[0] == "weather__get_weather"
    assert "weather__get_weather" not in index.search("get_weather", server="github").names


# --- prefixes and the server filter ------------------------------------------------------


@pytest.mark.parametrize(
    "name, expected",
    [
        ("github__get_file", ("github", "get_file")),
        ("a__b__c", ("a", "b__c")),  # the first `__` splits
        ("get_file", ("", "get_file")),
        ("math.factorial", ("", "math.factorial")),
        ("__init", ("", "__init")),  # no prefix before it
        ("tool__", ("", "tool__")),  # nothing after it
        ("", ("", "")),
    ],
)
def test_prefix(name: str, expected: tuple[str, str]) -> None:
    assert split_name(name) == expected
    for doc in (document({"name": name}), Document(name, "Title", "Text.")):
        assert (doc.server, doc.own_name) == expected


def test_the_server_filter_keeps_one_prefix(index: SearchIndex) -> None:
    everything = index.search("repository file issue", k=20)
    github = index.search("repository file issue", k=20, server="github")
    assert github.names and all(n.startswith("github__") for n in github.names)
    assert list(github.names) == [n for n in everything.names if n.startswith("github__")]
    assert index.search("web", server="").names == ("search",)
    assert index.search("weather", server="nosuchserver") == Ranking((), 0, False)


def test_a_prefix_is_searchable_as_words(index: SearchIndex) -> None:
    assert index.search("slack").names[0] == "slack__post_message"
    assert set(index.search("github", k=4).names) == {
        "github__get_file",
        "github__create_issue",
        "github__create_pull_request",
        "github__search",
    }


# --- natural questions ---------------------------------------------------------------------


NATURAL_QUESTIONS = [
    ("What's the temperature in Paris right now?", "weather__get_weather"),
    ("Will it rain in Berlin over the next few days?", "weather__get_forecast"),
    ("Show me the README file of the repo openai/whisper", "github__get_file"),
    ("Open a pull request from my feature branch", "github__create_pull_request"),
    ("Tell the team in the #general channel that the build is green", "slack__post_message"),
    ("Email the report to alice@example.com", "mail__send_email"),
    ("Schedule a meeting with Bob tomorrow at 10", "calendar__create_event"),
    ("Convert this Word document to PDF", "files__convert_document"),
    ("How much is AAPL trading at?", "finance__get_stock_price"),
    ("Translate 'good morning' into Japanese", "translate__translate_text"),
    ("What is 10! ? compute the factorial", "math.factorial"),
    ("Which street is at latitude 48.85, longitude 2.35?", "geo__reverse_geocode"),
    ("Which of my orders were shipped?", "shop__list_orders"),  # a nested enum value
]


@pytest.mark.parametrize("built", ["index", "hybrid"])
@pytest.mark.parametrize("question, expected", NATURAL_QUESTIONS)
def test_natural_questions_find_their_tool(
    request: pytest.FixtureRequest, built: str, question: str, expected: str
) -> None:
    assert request.getfixturevalue(built).search(question, k=3).names[0] == expected


CORPUS_QUESTIONS = [
    ("post a message to a slack channel", "slack__slack_post_message", 1),
    ("convert a time between two timezones", "time__convert_time", 1),
    ("turn an address into coordinates", "google_maps__maps_geocode", 3),
    ("create a pull request on github", "github__create_pull_request", 1),
    ("show the commit log of the repository", "git__git_log", 3),
    ("scale a kubernetes deployment", "kubernetes__kubectl_scale", 3),
    ("take a screenshot of the page", "puppeteer__puppeteer_screenshot", 5),
]


@pytest.mark.parametrize("built", ["corpus", "hybrid_corpus"])
@pytest.mark.parametrize("question, expected, top", CORPUS_QUESTIONS)
def test_questions_over_the_real_corpus(
    request: pytest.FixtureRequest, built: str, question: str, expected: str, top: int
) -> None:
    assert expected in request.getfixturevalue(built).search(question, k=top).names


def test_the_corpus_shares_names_across_servers(corpus: SearchIndex) -> None:
    assert corpus.search("read_file", k=2).names == (
        "desktop_commander__read_file",
        "filesystem__read_file",
    )
    assert corpus.search("list tables", k=1, server="clickhouse").names == (
        "clickhouse__list_tables",
    )


# --- combined queries ----------------------------------------------------------------------


def test_a_list_of_queries_interleaves_their_rankings(index: SearchIndex) -> None:
    """Each step's best, then each one's second, ..., a tool already listed skipped."""
    steps = [
        "current temperature in a city",
        "open an issue in a repository",
        "send an email message",
    ]
    alone = [index.search(step, k=6).names for step in steps]
    assert all(len(names) >= 2 for names in alone)
    expected: dict[str, None] = {}
    for rank in range(6):
        for names in alone:
            if rank < len(names):
                expected.setdefault(names[rank], None)
    combined = index.search(steps, k=6)
    assert combined.names == tuple(expected)[:6]
    assert combined.names[:3] == (
        "weather__get_weather",
        "github__create_issue",
        "mail__send_email",
    )
    assert combined.matched == len({n for step in steps for n in index.search(step, k=99).names})
    assert index.search(["get_weather"], k=1) == index.search("get_weather", k=1)


def test_a_tool_named_by_two_queries_is_listed_once(index: SearchIndex) -> None:
    ranking = index.search(["get_weather", "getWeather", "weather now"], k=3)
    assert ranking.names[0] == "weather__get_weather"
    assert len(set(ranking.names)) == len(ranking.names)


def test_queries_beyond_the_first_ones_are_not_read(index: SearchIndex) -> None:
    nothing = ["zzz"] * MAX_QUERIES
    assert index.search([*nothing, "get_weather"]).names == ()
    assert index.search([*nothing[1:], "get_weather"]).names[0] == "weather__get_weather"


# --- determinism -----------------------------------------------------------------------------


def rankings(built: SearchIndex) -> list[tuple[tuple[str, ...], int]]:
    return [(r.names, r.matched) for r in (built.search(q, k=10) for q in QUERIES)]


@pytest.mark.parametrize("built", ["corpus", "hybrid_corpus"])
def test_the_order_of_the_documents_does_not_matter(
    request: pytest.FixtureRequest, built: str
) -> None:
    expected: SearchIndex = request.getfixturevalue(built)
    docs = [document(d) for d in corpus_definitions()]
    for seed in range(3):
        random.Random(seed).shuffle(docs)
        shuffled = SearchIndex.build(docs, semantic="auto" if expected.semantic else None)
        assert rankings(shuffled) == rankings(expected)


def test_a_name_given_twice_keeps_the_document_that_sorts_first() -> None:
    first = Document("a__x", description="alpha")
    second = Document("a__x", description="beta")
    for docs in ([first, second], [second, first]):
        built = SearchIndex.build(docs)
        assert built.documents == (first,)
        assert built.search("beta").names == ()


SCRIPT = """
import json, logging, socket, sys
def refuse(*args, **kwargs):
    raise OSError("no network here")
socket.socket.connect = refuse
socket.create_connection = refuse
sys.path.insert(0, {tests!r})
from support import hash_seeds
from support.search_catalogs import QUERIES, corpus_definitions
from codegen.search import SearchIndex, document
semantic = {semantic!r}
built = SearchIndex.build([document(d) for d in corpus_definitions()], semantic=semantic)
assert built.semantic == (semantic == "auto")
root = logging.getLogger()
ranked = [[list(r.names), r.matched] for r in (built.search(q, k=10) for q in QUERIES)]
print(json.dumps([ranked, len(root.handlers), root.level]))
"""


@pytest.mark.parametrize("built", ["corpus", "hybrid_corpus"])
def test_the_rankings_are_the_same_in_every_process(
    request: pytest.FixtureRequest, built: str, tmp_path: Path
) -> None:
    """Other hash seeds, no network, another home (no download cache to fall back on):
    the same rankings, and the root logger as Python leaves it (`wordllama` configures it
    when imported)."""
    index: SearchIndex = request.getfixturevalue(built)
    expected = [[list(names), matched] for names, matched in rankings(index)]
    script = SCRIPT.format(tests=str(ROOT / "tests"), semantic="auto" if index.semantic else None)
    for out in hash_seeds.outputs(script, home=tmp_path):
        assert json.loads(out) == [expected, 0, logging.WARNING]


# --- junk, bounds, huge input ----------------------------------------------------------------


def deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string", "description": "bottom"}
    for level in range(levels):
        node = {"type": "object", "properties": {f"level{level}": node}}
    return node


@pytest.mark.parametrize(
    "definition",
    [
        None,
        [],
        "get_weather",
        42,
        {},
        {"name": None},
        {"name": 5, "description": ["a"], "title": {}},
        {"name": "x", "inputSchema": []},
        {"name": "x", "inputSchema": "object"},
        {"name": "x", "inputSchema": {"properties": []}},
        {"name": "x", "inputSchema": {"properties": {"": {}, "a": None, "b": 3, "c": []}}},
        {"name": "x", "inputSchema": {"properties": {"a": {"enum": "abc", "description": 7}}}},
        {"name": "x", "inputSchema": {"properties": {"a": {"enum": [None, {}, [], True, 1.5]}}}},
        {"name": "x", "inputSchema": {"anyOf": "no", "allOf": [1, None], "items": []}},
        {"name": "x", "inputSchema": {"$defs": {"a": 1, "b": {"properties": {"c": {}}}}}},
        {"name": "x", "inputSchema": deep(5000)},
        {"name": "x", "inputSchema": {"properties": {f"p{i}": {} for i in range(100_000)}}},
        {"name": "x", "annotations": {"title": "Shown title"}},
        {"name": "x" * 100_000, "description": "y" * 1_000_000},
    ],
    ids=lambda d: type(d).__name__ if not isinstance(d, dict) else str(sorted(d))[:40],
)
def test_junk_definitions_do_not_raise(definition: Any) -> None:
    doc = document(definition)
    assert isinstance(doc, Document)
    assert len(doc.parameters) <= MAX_PARAMETERS
    built = SearchIndex.build([doc, document(CATALOG[0])])
    assert built.search("weather").names[0] == "weather__get_weather"
    built.search(doc.name[:300])


def test_the_schema_walk_is_bounded() -> None:
    doc = document({"name": "x", "inputSchema": deep(50)})
    assert [p.name for p in doc.parameters] == [f"level{i}" for i in range(49, 49 - MAX_DEPTH, -1)]
    wide = document(
        {"name": "x", "inputSchema": {"properties": {f"p{i}": {} for i in range(1000)}}}
    )
    assert len(wide.parameters) == MAX_PARAMETERS


def test_parameters_are_read_through_nesting_arms_and_items() -> None:
    doc = document(
        {
            "name": "x",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "filter": {
                        "anyOf": [
                            {"type": "object", "properties": {"status": {"const": "open"}}},
                            {"type": "null"},
                        ]
                    },
                    "tags": {
                        "type": "array",
                        "items": {"type": "object", "properties": {"label": {"enum": ["bug", 3]}}},
                    },
                },
            },
        }
    )
    assert doc.parameters == (
        Parameter("filter"),
        Parameter("tags"),
        Parameter("status", values=("open",)),
        Parameter("label", values=("bug", "3")),
    )
    assert document({"name": "x", "annotations": {"title": "T"}}).title == "T"
    assert document({"name": "x", "title": "Own", "annotations": {"title": "T"}}).title == "Own"


def test_a_huge_query_is_cut_to_a_bounded_number_of_terms(index: SearchIndex) -> None:
    letters = "bcfhjkmptvwz"
    words = [  # distinct words the stemmer leaves alone, none a stopword
        "q" + "".join(letters[i // 12**j % 12] for j in range(4)) + "ok" for i in range(20_000)
    ]
    huge = " ".join(words)
    assert len(huge) > 100_000
    terms = query_terms(huge)
    assert len(terms) == MAX_QUERY_TERMS
    assert terms == tuple(stem(w) for w in words[:MAX_QUERY_TERMS])
    assert query_terms("weather " * 50_000) == ("weather",)
    ranking = index.search(huge + " weather")
    assert ranking.names == ()  # "weather" comes after the cut
    assert index.search("weather " + huge).names[0].startswith("weather__")
    assert index.search([huge] * 1000).names == ()


@pytest.mark.parametrize("built", ["index", "hybrid"])
@pytest.mark.parametrize("query", ["", "   ", "the of and", "?!... ---", "\0\n\t", "___"])
def test_queries_with_nothing_to_look_for_find_nothing(
    request: pytest.FixtureRequest, built: str, query: str
) -> None:
    index: SearchIndex = request.getfixturevalue(built)
    assert index.search(query) == Ranking((), 0, False)
    assert index.search([query, query]) == Ranking((), 0, False)


def test_odd_arguments(index: SearchIndex) -> None:
    assert index.search("weather", k=0) == Ranking((), 2, True)
    assert index.search("weather", k=-3).names == ()
    assert index.search([]) == Ranking((), 0, False)
    assert index.search(["weather", 7, None]).names[0].startswith("weather__")  # type: ignore[list-item]
    assert SearchIndex.build([]).search("weather") == Ranking((), 0, False)
    assert SearchIndex.build([Document("")]).documents == ()


def test_a_name_too_long_to_be_real_is_left_out() -> None:
    assert document({"name": "x" * 1000}).name == "x" * 1000
    assert document({"name": "x" * 1001, "description": "weather"}).name == ""
    built = SearchIndex.build([document({"name": "y" * 5000, "description": "weather"})])
    assert built.documents == () and built.search("weather") == Ranking((), 0, False)


def test_weights_choose_the_fields() -> None:
    docs = [document(d) for d in CATALOG]
    no_text = Weights(field=(4.0, 1.0, 2.0, 0.0, 1.0, 0.0, 0.0))
    assert SearchIndex.build(docs).search("humidity").names == ("weather__get_weather",)
    assert SearchIndex.build(docs, no_text).search("humidity").names == ()
    assert SearchIndex.build(docs, no_text).search("celsius").names == ()
    assert SearchIndex.build(docs).search("celsius").names == ("weather__get_weather",)


def test_matched_and_cut(index: SearchIndex) -> None:
    ranking = index.search("weather", k=1)
    assert ranking.matched == 2 and ranking.cut
    assert not index.search("weather", k=2).cut
    assert index.search("forecast days", k=8).matched == 1


# --- the analyzer ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, words",
    [
        ("getWeather", ["get", "weather"]),
        ("get_weather", ["get", "weather"]),
        ("get-weather", ["get", "weather"]),
        ("GET WEATHER", ["get", "weather"]),
        ("github__get_file", ["github", "get", "file"]),
        ("math.factorial", ["math", "factorial"]),
        ("getHTTPServer2", ["get", "http", "server", "2"]),
        ("sha256sum", ["sha", "256", "sum"]),
        ("a/b c", ["a", "b", "c"]),
        ("Café crème", ["café", "crème"]),
        ("获取微信读书排行榜，热门小说", ["获取微信读书排行榜", "热门小说"]),
    ],
)
def test_words(text: str, words: list[str]) -> None:
    assert split_words(text) == words


def test_name_keys_ignore_case_and_separators() -> None:
    keys = {name_key(s) for s in ("getWeather", "get-weather", "GET_WEATHER", "get.weather")}
    assert keys == {"get weather"}
    assert name_key("x" * 1000) == ""


@pytest.mark.parametrize(
    "word, expected",
    [
        ("files", "file"),
        ("file", "file"),
        ("queries", "queri"),
        ("query", "queri"),
        ("classes", "class"),
        ("status", "status"),
        ("analysis", "analysi"),
        ("searching", "search"),
        ("searches", "search"),
        ("mapped", "map"),
        ("running", "run"),
        ("called", "call"),
        ("string", "string"),
        ("need", "need"),
        ("monthly", "month"),
        ("family", "famili"),
        ("apply", "appli"),
        ("calculation", "calcul"),
        ("get", "get"),
        ("id", "id"),
        ("2024", "2024"),
    ],
)
def test_stem(word: str, expected: str) -> None:
    """Porter2 (Snowball English), as the A/B in bench/README.md chose."""
    assert stem(word) == expected


@pytest.mark.parametrize(
    "group",
    [
        ("create", "created", "creates", "creating"),
        ("search", "searches", "searching", "searched"),
        ("query", "queries", "queried"),
        ("update", "updated", "updates", "updating"),
        ("movie", "movies"),
    ],
)
def test_forms_of_a_word_share_a_stem(group: tuple[str, ...]) -> None:
    assert len({stem(word) for word in group}) == 1


def test_stopwords_are_dropped_from_queries() -> None:
    assert query_terms("What is the weather in Paris?") == ("weather", "pari")
    assert query_terms("the of and or") == ()


# --- the semantic ranker (`tool-codegen[search]`) ----------------------------------------------------


def require_model() -> None:
    """The model's package: the test extra installs it, so its absence is a failure."""
    if importlib.util.find_spec("wordllama") is None:
        pytest.fail("wordllama is missing: install the test extra (pip install '.[test]')")


@pytest.fixture(scope="module")
def hybrid() -> SearchIndex:
    require_model()
    built = SearchIndex.build([document(d) for d in CATALOG], semantic="auto")
    assert built.semantic
    return built


@pytest.fixture(scope="module")
def hybrid_corpus() -> SearchIndex:
    require_model()
    built = SearchIndex.build([document(d) for d in corpus_definitions()], semantic="auto")
    assert built.semantic
    return built


def test_the_semantic_ranker_is_asked_for(index: SearchIndex) -> None:
    assert not index.semantic
    assert not SearchIndex.build([document(d) for d in CATALOG], semantic=None).semantic


def test_without_the_model_auto_is_bm25f_alone(
    index: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not installed, or installed but unreadable: the index is BM25F's, and the failure
    is remembered, not tried again per build."""
    for package in ("codegen_no_such_package", "json"):  # `json` has no `WordLlama`
        monkeypatch.setattr(semantic, "_loaded", {})
        monkeypatch.setattr(semantic, "PACKAGE", package)
        built = SearchIndex.build([document(d) for d in CATALOG], semantic="auto")
        assert not built.semantic
        assert semantic.model() is None and semantic._loaded == {package: None}
        assert [built.search(q, k=10) for q in QUERIES] == [index.search(q, k=10) for q in QUERIES]


@pytest.mark.parametrize(
    "question, expected",
    [
        ("How hot is it outside?", "weather__get_weather"),
        ("umbrella needed?", "weather__get_weather"),
        ("say hello in Spanish", "translate__translate_text"),
        ("where am I, given my GPS position", "geo__reverse_geocode"),
        ("chat with my team", "slack__post_message"),
    ],
)
def test_the_semantic_ranker_finds_a_tool_sharing_no_word(
    index: SearchIndex, hybrid: SearchIndex, question: str, expected: str
) -> None:
    assert index.search(question).names == ()
    assert hybrid.search(question, k=3).names[0] == expected


@pytest.mark.parametrize(
    "query, expected",
    [
        ("get_weather", "weather__get_weather"),
        ("GET WEATHER", "weather__get_weather"),
        ("weather.getWeather", "weather__get_weather"),
        ("get_forecast", "weather__get_forecast"),
        ("githubGetFile", "github__get_file"),
        ("math_factorial", "math.factorial"),
        ("createPullRequest", "github__create_pull_request"),
        ("reverse-geocode", "geo__reverse_geocode"),
    ],
)
def test_hybrid_names_still_rank_first(hybrid: SearchIndex, query: str, expected: str) -> None:
    assert hybrid.search(query).names[0] == expected


def test_hybrid_every_name_ranks_its_tool_first(hybrid_corpus: SearchIndex) -> None:
    for doc in hybrid_corpus.documents:
        assert hybrid_corpus.search(doc.name, k=1).names == (doc.name,)
    ranking = hybrid_corpus.search("read_file", k=2)
    assert ranking.names == ("desktop_commander__read_file", "filesystem__read_file")


def test_hybrid_keeps_the_server_filter(hybrid: SearchIndex) -> None:
    for query in ("How hot is it outside?", "repository file issue", "search", "chat"):
        for server in ("github", "weather", "", "gitlab"):
            names = hybrid.search(query, k=20, server=server).names
            assert all(split_name(name)[0] == server for name in names)
    assert hybrid.search("How hot is it outside?", server="weather").names[0] == (
        "weather__get_weather"
    )
    assert hybrid.search("search", server="gitlab").names == ("gitlab__search",)
    assert hybrid.search("How hot is it outside?", server="nosuchserver") == Ranking((), 0, False)


def test_hybrid_huge_and_odd_queries(hybrid: SearchIndex) -> None:
    rng = random.Random(7)
    mixed = " ".join(
        rng.choice(["weather", "文件", "😀" * 5, "a" * 300, "\u202e", "x1"]) for _ in range(30_000)
    )
    for query in (mixed, "😀" * 100_000, "a" * 1_000_000, "\0" * 100_000 + " weather"):
        assert len(hybrid.search(query).names) <= 8
    assert hybrid.search("weather " * 50_000).names[0].startswith("weather__")
    assert len(hybrid.search([mixed] * 1000, k=8).names) <= 8
    assert hybrid.search("weather", k=0).names == ()
    assert SearchIndex.build([], semantic="auto").search("weather") == Ranking((), 0, False)
    one = SearchIndex.build([document(CATALOG[0])], semantic="auto")
    assert one.search("How hot is it outside?").names == ()  # one tool: nothing to compare
    assert one.search("weather").names == ("weather__get_weather",)


def test_embeddings_are_exact_bounded_integers(hybrid: SearchIndex) -> None:
    model = semantic.model()
    assert model is not None and model is semantic.model()  # loaded once per process
    vector = model.embed("current weather in Paris")
    assert all(float(x).is_integer() and abs(x) <= semantic.SCALE for x in vector.tolist())
    assert abs(math.sqrt(math.fsum(x * x for x in vector.tolist())) - semantic.SCALE) < 16
    assert not model.embed("").any()
    cut = "weather forecast " * 1000
    assert model.embed(cut).tolist() == model.embed(cut[: semantic.MAX_QUERY_CHARS]).tolist()
    text = semantic.text(document(CATALOG[0]))
    assert text.startswith("get weather. Current weather conditions") and "city units" in text


def test_the_stem_is_the_same_with_or_without_the_c_stemmer() -> None:
    """`snowballstemmer` uses PyStemmer's C build when it is installed, else its own Python:
    a term must not depend on which one a machine has."""
    from snowballstemmer.english_stemmer import EnglishStemmer

    pure = EnglishStemmer()
    words = {
        word.lower()
        for path in sorted((ROOT / "tests" / "corpus" / "mcp").glob("*.json"))
        for word in re.findall(r"[A-Za-z]{2,}", path.read_text(encoding="utf-8"))
    }
    assert len(words) > 2_000
    assert all(stem(word) == pure.stemWord(word) for word in sorted(words))


# --- speed work that must not move a ranking ---------------------------------------------


def _reference_rank(built: SearchIndex, text: str, k: int, server: str | None) -> list[int]:
    """`_rank` as it was written before its hybrid path went to arrays: dictionaries, the
    semantic module's `fuse`, `heapq.nsmallest`; the order before the sibling step."""
    import heapq

    from codegen.search import index as index_module
    from codegen.search.terms import query_joins

    terms = query_terms(text)
    joins = query_joins(text, terms)
    weights = (1.0,) * len(terms) + (index_module.JOIN_WEIGHT,) * len(joins)
    scores: dict[int, float] = {}
    for term, weight in zip(terms + joins, weights, strict=True):
        posting = built._postings.get(term)
        if posting is None:
            continue
        idf = built._idf_of(term, posting[0]) * weight
        for doc, frequency in zip(*posting, strict=True):
            scores[doc] = scores.get(doc, 0.0) + idf * frequency
    if server is not None:
        scores = {d: s for d, s in scores.items() if built._servers[d] == server}
    if built._semantic is not None and terms:
        scores = built._semantic.fuse(text, scores, server)
    best = heapq.nsmallest(k + 24, scores.items(), key=lambda item: (-item[1], item[0]))
    return [doc for doc, _ in best]


def test_the_hybrid_arrays_choose_as_the_dictionaries_did(hybrid_corpus: SearchIndex) -> None:
    """The hybrid path scores with numpy arrays: the same floats, bit for bit, and the same
    choice as the dictionaries (`fuse`, `nsmallest`) on every corpus tool's description,
    with and without a server."""
    docs = hybrid_corpus.documents
    queries = [d.description[:200] for d in docs if d.description][::3]
    queries += ["list all items", "weather in Paris", "get"]
    for text in queries:
        assert query_terms(text)  # the arrays' path (without terms, BM25F's alone)
        for server in (None, docs[len(text) % len(docs)].server):
            wanted = _reference_rank(hybrid_corpus, text, 8, server)
            chosen, _ = hybrid_corpus._fused_best(
                text,
                *_terms_and_weights(text),
                server,
                set(),
                8 + 24,
            )
            assert chosen == wanted, (text, server)


def _terms_and_weights(text: str) -> tuple[tuple[str, ...], tuple[float, ...]]:
    from codegen.search.index import JOIN_WEIGHT
    from codegen.search.terms import query_joins

    terms = query_terms(text)
    joins = query_joins(text, terms)
    return terms + joins, (1.0,) * len(terms) + (JOIN_WEIGHT,) * len(joins)


def test_a_text_is_analyzed_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build remembers each field text's terms: the same tools built again (serve
    rebuilds on every change of its tool set) analyze no chunk again, and a memo started
    over (past `MAX_MEMO`) gives the same postings."""
    from codegen.search import index as index_module

    calls = []
    analyze = index_module.analyze
    monkeypatch.setattr(
        index_module, "analyze", lambda chunk: calls.append(chunk) or analyze(chunk)
    )
    monkeypatch.setattr(index_module, "_memos", [index_module._Memo()])
    docs = [document(d) for d in corpus_definitions()]
    first = SearchIndex.build(docs)
    assert len(calls) == len(set(calls)) > 0
    made = len(calls)
    again = SearchIndex.build(list(reversed(docs)))
    assert len(calls) == made
    monkeypatch.setattr(index_module, "MAX_MEMO", 1)  # a new memo every build
    fresh = SearchIndex.build(docs)
    assert first._postings == again._postings == fresh._postings
    assert [repr(first._postings[t]) for t in first._postings] == [
        repr(fresh._postings[t]) for t in first._postings
    ]


def test_names_learnt_together_are_what_each_alone_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build works out every name's key and joins at once, their stems in one call of
    the stemmer: the same key (`name_key`) and the same joins (`joins`, those not among the
    name's terms, in order) as each name worked out alone, for every corpus name and
    prefix, and for names long, odd and spelt in every case."""
    from codegen.search import index as index_module
    from codegen.search.terms import joins, name_key

    monkeypatch.setattr(index_module, "_memos", [index_module._Memo()])
    docs = [document(d) for d in corpus_definitions()]
    odd = [
        "getHTTPServer2_list",
        "acme_db__list-collections",
        "x" * 300,
        "the_of_and",
        "é_naïve_Café",
    ]
    docs += [Document(name=name, description="") for name in odd]
    SearchIndex.build(docs)
    memo = index_module._memos[0]
    names = {part for doc in docs for part in (doc.own_name, doc.server)}
    assert len(names) > 300
    for name in sorted(names):
        own = set(memo.texts[name])
        assert memo.keys[name] == name_key(name), name
        assert memo.joined[name] == tuple(j for j in joins(name) if j not in own), name


def test_chunks_cut_ascii_as_the_pattern_does() -> None:
    from codegen.search import terms

    texts = ["".join(map(chr, range(128))), "a\tb\x1cc\x1fd e_f-g.h", "getHTTPServer2 x", ""]
    texts += [d["description"] for d in corpus_definitions()[:200]]
    texts += ["naïve café\u00a0x\u2003y\x85z", "emoji 😀 ok"]
    for text in texts:
        assert terms.chunks(text) == terms._CHUNKS.findall(text)
