"""Issue 39's ranking items: brand names spelled joined or split, siblings told apart by
number and batch words, one question that needs two tools, distinct summaries."""

from __future__ import annotations

import subprocess
import sys

from codegen.codemode.registry import ToolRegistry, ToolSpec
from codegen.render.sections.summaries import summaries
from codegen.search import document
from codegen.search.clauses import clauses
from codegen.search.terms import analyze, joins
from conftest import ROOT
from support.corpus_registry import Echo, echo
from support.search_catalogs import ranking_index


def test_camel_case_brand_finds_the_joined_prefix_first() -> None:
    search = ranking_index().search
    for query in ("AcmeDB list collections", "acmedb list collections"):
        assert search(query, 10).names[0] == "acmedb__list_collections", query
    # split, the brand also reads as the `acme` server's words: among the first two
    assert "acmedb__list_collections" in search("acme db list collections", 10).names[:2]


def test_split_and_joined_forms() -> None:
    assert analyze("AcmeDB") == ("acm", "db", "acmedb")
    assert joins("acme_db list") == ["acmedb", "dblist"]
    assert joins("the db") == []


def test_number_and_batch_words_choose_between_siblings() -> None:
    search = ranking_index().search
    assert search("list all items", 5).names[0] == "shop__getItems"
    assert search("get the item 42", 5).names[0] == "shop__getItem"
    assert search("create an issue", 5).names[0] == "gh__create_issue"
    assert search("create issues", 5).names[0] == "gh__create_issue"  # batch only when asked
    assert search("create issues in bulk", 5).names[0] == "gh__batch_create_issues"


def test_two_clause_question_returns_both_tools() -> None:
    names = ranking_index().search("read the note and then email it to Bob", 5).names
    assert "notes__read_note" in names and "mail__send_email" in names


def test_a_misspelt_word_finds_the_word_one_edit_away() -> None:
    """An unknown query word of 7 letters or more also searches the indexed term one edit
    from it that the most tools hold; a known word, a short one and a word no edit brings
    home search nothing more."""
    search = ranking_index().search
    assert search("messsage", 3).names[0] == "mail__send_email"
    assert search("recipeint", 3).names[0] == "mail__send_email"
    assert all("collection" in name for name in search("collectoins", 3).names)
    assert search("documnet", 3).names[0] == "acmedb__get_document"
    assert search("emial", 3).names == ()  # 5 letters: too short to guess at
    assert search("zzzzzzzzzz", 3).names == ()


def test_a_respelling_reads_only_its_own_catalogs_words(monkeypatch) -> None:
    """A catalog respells from the words its own tools write, whatever else the process
    indexed before (serve builds an index per scope, all through one process memo) and
    whether the memo started over: the same catalog and question, the same tools."""
    from codegen.search import index

    monkeypatch.setattr(index, "_memos", [index._Memo()])
    sums = [
        {"name": "math__calc", "description": "Calculate a sum."},
        {"name": "text__upper", "description": "Upper-case a text."},
    ]
    alone = index.SearchIndex.build([document(d) for d in sums])
    assert alone.search("caclulating totals", 3).names == ()  # `calculating` is not written
    index.SearchIndex.build([document({"name": "x__y", "description": "Calculating all day."})])
    again = index.SearchIndex.build([document(d) for d in sums])
    assert again.search("caclulating totals", 3).names == ()
    assert again.search("caclulate totals", 3).names == ("math__calc",)
    built = ranking_index()
    index._memos[0] = index._Memo()  # started over, empty
    assert built.search("recipeint", 3).names[0] == "mail__send_email"
    other = index.SearchIndex.build([document({"name": "x__recipe_book", "description": "Cook."})])
    assert other.search("recipeint", 3).names == ()  # `recipient` is written in another index


def test_respellings_and_unknown_words() -> None:
    from codegen.search import terms

    near = terms.respellings("caculate", {"calculate", "calculated", "cacophony"})
    assert terms.stem("calculate") in near and len(near) == len(set(near))
    known = {terms.stem("calculate")}.__contains__
    words = "Caculate the informatin of calculate, naïveté and the throughput-xyz caculate"
    assert terms.unknown_words(words, known) == ["caculate", "informatin", "throughput"]
    many = " ".join(f"unknownword{letter}" for letter in "abcdefghij")
    assert len(terms.unknown_words(many, known)) == terms.MAX_MISSPELT
    longest = "q" * terms.MAX_RESPELT_LETTERS
    assert terms.unknown_words(f"{longest} {longest}q", known) == [longest]
    assert terms.respellings("caculate", {"calculated", "calculate"}) == near == ["calcul"]


def test_a_query_of_unknown_words_respells_only_the_first_few(monkeypatch) -> None:
    """A long paste of unknown words costs at most `MAX_MISSPELT` respellings, each of a
    word of at most `MAX_RESPELT_LETTERS` letters (a 4,000-letter word once took seconds)."""
    from codegen.search import index, terms

    calls: list[str] = []
    respellings = terms.respellings
    monkeypatch.setattr(index, "respellings", lambda w, k: calls.append(w) or respellings(w, k))
    query = " ".join(f"qwertyuiop{n}x{chr(97 + n % 26) * 3}" for n in range(5_000))
    built = ranking_index()
    built.search(query, 5)
    assert 0 < len(calls) <= terms.MAX_MISSPELT
    calls.clear()
    built.search("a" * 1_000_000, 5)
    built.search(" ".join(["b" * 40, "c" * 33, "d" * 32]), 5)
    assert calls == ["d" * 32]


def test_clauses() -> None:
    assert clauses("read the file and then email it to Bob") == ["read the file", "email it to Bob"]
    assert clauses("the sum of 2 and 3") == ["the sum of 2 and 3"]
    assert len(clauses("find the file. Then do it")) == 1  # "do it" is no step of its own


def test_distinct_summary_over_boilerplate() -> None:
    names = ["s__read", "s__write", "s__drop", "t__only"]
    lead = "## 🔧 Tool\n\nPurpose: 1. Error Responses: 400 on a bad request. "
    descriptions = [
        lead + "Reads a file from disk.",
        lead + "Writes a file to disk.",
        lead + "Drops a file.",
        "Error Responses: 400 on a bad request. Still its own.",
    ]
    assert summaries(names, descriptions) == [
        "Reads a file from disk.",
        "Writes a file to disk.",
        "Drops a file.",
        "Error Responses: 400 on a bad request.",
    ]


def test_a_hit_shows_the_distinct_summary() -> None:
    lead = "## 🔧 Tool\n\nPurpose: 1. Error Responses: 400 on a bad request. "
    tools = [
        {"name": f"s__{verb}", "description": lead + f"{verb.capitalize()}s a file on disk."}
        for verb in ("read", "write", "drop")
    ]
    registry = ToolRegistry(mode="code")
    for tool in tools:
        registry.register(
            ToolSpec(tool["name"], tool["description"], {"type": "object"}, handler=echo)
        )
    registry.mount_runtime(Echo("python"))
    found = registry.discovery()
    assert found.slice("s__read")[0].summary == "Reads a file on disk."
    assert found.hit_lines(["s__write"]) == ["tools.s__write() -> Any  # Writes a file on disk."]


def test_rankings_are_the_same_under_any_hash_seed() -> None:
    code = (
        f"import json, sys; sys.path.insert(0, {str(ROOT / 'tests')!r});"
        "from support.search_catalogs import ranking_index;"
        "i = ranking_index();"
        "print(json.dumps([i.search(q, 8).names for q in ("
        "'AcmeDB list collections', 'list all items', 'create an issue',"
        "'read the file and then email it to Bob', ['get item', 'send mail'])]))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1
