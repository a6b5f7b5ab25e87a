"""Schema text made safe to place in code: line splitting, hidden characters, the cache."""

from __future__ import annotations

from codegen.load.sources import load_sources
from codegen.render.text import _lines, description_lines, escape_hidden, split_lines
from conftest import CORPUS_FILES


def test_every_line_break_splits() -> None:
    text = "a\nb\rc\r\nd\x0be\x0cf\x1cg\x1dh\x1ei\x85j\u2028k\u2029l"
    assert split_lines(text) == list("abcdefghijkl")


def test_hidden_characters_become_visible() -> None:
    assert escape_hidden("a\x00b\x1bc\x7fd\u202ee\ud800f\ufeff") == (
        "a\\x00b\\x1bc\\x7fd\\u202ee\\ud800f\\ufeff"
    )
    assert escape_hidden("tab\tand emoji \U0001f600 stay") == "tab\tand emoji \U0001f600 stay"


def test_description_lines_shape() -> None:
    assert description_lines(None) == () and description_lines("  \n \n") == ()
    assert description_lines("  first\n\n\n    indented\n      more\n\n") == (
        "first",
        "",
        "indented",
        "  more",
    )
    assert description_lines("a\tb") == ("a   b",)


def test_fast_path_is_exact_on_the_corpus() -> None:
    """One-line printable ASCII takes a shortcut; it must give what the general case gives."""
    texts = {"", "  ", " padded ", "a  b", "x\n", "tab\there", 'q"uote', "back\\slash"}
    for tool in load_sources([str(p) for p in CORPUS_FILES], namespace=True).tools:
        texts.add(tool.description or "")
        schema = tool.input_schema
        for prop in (schema.get("properties") or {}).values() if isinstance(schema, dict) else ():
            if isinstance(prop, dict) and isinstance(prop.get("description"), str):
                texts.add(prop["description"])
    for text in texts:
        assert description_lines(text) == (_lines(text) if text else ()), text
