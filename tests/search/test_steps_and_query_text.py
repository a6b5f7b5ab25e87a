"""Ranking round three: more words that start a step of a question (`clauses`), and the
semantic ranker reading a query's words as it reads a tool's name (`semantic.query_text`)."""

from __future__ import annotations

import importlib.util

import pytest

from codegen.search import SearchIndex, document
from codegen.search.clauses import clauses
from codegen.search.semantic import query_text
from support.search_catalogs import corpus_definitions


@pytest.mark.parametrize(
    "question, expected",
    [
        (
            "Book a room in Paris. Secondly, find a flight to Rome",
            ["Book a room in Paris", "find a flight to Rome"],
        ),
        (
            "Book a room in Paris. Second, find a flight to Rome",
            ["Book a room in Paris", "find a flight to Rome"],
        ),
        (
            "Translate hello to Spanish. In addition to that get the time in London",
            ["Translate hello to Spanish", "get the time in London"],
        ),
        (
            "Find the area under the curve. And find the derivative at x=3.",
            ["Find the area under the curve", "find the derivative at x=3."],
        ),
        (
            "Convert 5 euros to dollars; moreover, show the weather in Oslo",
            ["Convert 5 euros to dollars", "show the weather in Oslo"],
        ),
    ],
)
def test_more_words_start_a_step(question: str, expected: list[str]) -> None:
    assert clauses(question) == expected


@pytest.mark.parametrize(
    "question",
    [
        "Calculate the speed in metres per second of a falling stone",
        "Sum the second row of the table",
        "Read the file and summarize it for the team",
    ],
)
def test_an_ordinal_or_a_plain_and_inside_a_sentence_is_no_step(question: str) -> None:
    assert clauses(question) == [question]


def test_a_query_is_embedded_as_its_lower_cased_words() -> None:
    assert query_text("Get the CurrentWeather, in 2024!") == "get the current weather in 2024"
    assert query_text("😀 文件") == "文件 document file"  # Chinese: its words' senses after it


def test_capitals_do_not_change_the_semantic_ranking() -> None:
    if importlib.util.find_spec("wordllama") is None:
        pytest.fail("wordllama is missing: install the test extra (pip install '.[test]')")
    hybrid = SearchIndex.build([document(d) for d in corpus_definitions()], semantic="auto")
    for question in ("Take A Screenshot Of The Page", "Which Branches Does The Repo Have?"):
        assert hybrid.search(question, 8) == hybrid.search(question.lower(), 8)
