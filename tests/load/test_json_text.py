"""Strict decoding: every refusal names its position."""

from __future__ import annotations

import pytest

from codegen.load import json_text as jsontext
from codegen.load.json_text import DecodeProblem


def problem(text: str) -> DecodeProblem:
    with pytest.raises(DecodeProblem) as info:
        jsontext.loads(text)
    return info.value


def test_plain_json_decodes_with_exact_big_integers() -> None:
    assert jsontext.loads('{"a": [1, 2.5, 123456789012345678901234567890]}') == {
        "a": [1, 2.5, 123456789012345678901234567890]
    }


def test_duplicate_key_names_line_column_and_pointer() -> None:
    found = problem('{\n  "tools": [\n    {"name": "a", "name": "b"}\n  ]\n}')
    assert found.message == 'duplicate key "name"'
    assert (found.line, found.column) == (3, 19)
    assert found.pointer == "/tools/0/name"


def test_duplicate_key_deep_inside_arrays_and_objects() -> None:
    found = problem('[{"x": 1}, {"y": {"z": [1, {"k": 1, "k": 2}]}}]')
    assert found.pointer == "/1/y/z/1/k"


def test_duplicate_key_after_strings_with_escapes() -> None:
    found = problem('{"a\\"b": "x,\\"y\\"", "q": {}, "a\\"b": 1}')
    assert found.message == 'duplicate key "a\\"b"'
    assert found.pointer == '/a"b'


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused(constant: str) -> None:
    found = problem(f'{{"a": [1, {constant}]}}')
    assert "not valid JSON" in found.message
    assert found.pointer == "/a/1"
    assert found.line == 1 and found.column == 11


def test_syntax_error_has_position() -> None:
    found = problem('{"a": 1,\n "b": }')
    assert found.message.startswith("invalid JSON")
    assert (found.line, found.column) == (2, 7)


def test_invalid_utf8_names_the_byte_and_position() -> None:
    with pytest.raises(DecodeProblem) as info:
        jsontext.decode_bytes(b'{"a":\n "\xff"}')
    assert "0xff" in info.value.message
    assert (info.value.line, info.value.column) == (2, 3)


def test_utf8_bom_is_dropped() -> None:
    assert jsontext.loads(jsontext.decode_bytes(b'\xef\xbb\xbf{"a": 1}')) == {"a": 1}


def test_nesting_beyond_the_limit_is_refused_without_recursion_error() -> None:
    deep = "[" * 5000 + "]" * 5000
    found = problem(deep)
    assert "nesting" in found.message


def test_nesting_depth_is_iterative() -> None:
    value: list[object] = []
    for _ in range(100_000):
        value = [value]
    assert jsontext.nesting_depth(value) == 100_001


def test_json_lines_report_their_line() -> None:
    with pytest.raises(DecodeProblem) as info:
        jsontext.loads_lines('{"a": 1}\n\n{"b": NaN}\n')
    assert info.value.line == 3


def test_yaml_is_strict_too() -> None:
    assert jsontext.load_yaml("name: a\nitems: [1, 2]\n") == {"name": "a", "items": [1, 2]}
    with pytest.raises(DecodeProblem, match="duplicate key"):
        jsontext.load_yaml("a: 1\na: 2\n")
    with pytest.raises(DecodeProblem, match="not valid JSON"):
        jsontext.load_yaml("when: 2024-01-01\n")
    with pytest.raises(DecodeProblem, match="non-finite"):
        jsontext.load_yaml("x: .nan\n")


def test_json_lines_break_only_at_line_feed() -> None:
    text = '{"d": "a\u2028b\u2029c\x85d"}\r\n\r\n  \n{"d": 2}\n'
    assert jsontext.loads_lines(text) == [(1, {"d": "a\u2028b\u2029c\x85d"}), (4, {"d": 2})]


def test_json_lines_error_position_after_separator_characters() -> None:
    with pytest.raises(DecodeProblem) as info:
        jsontext.loads_lines('{"d": "\u2028"}\r\n{"d": "\u2029", }\n')
    assert info.value.message.startswith("invalid JSON")
    assert (info.value.line, info.value.column) == (2, 12)


def test_json_lines_separator_outside_strings_is_not_a_line_break() -> None:
    with pytest.raises(DecodeProblem) as info:
        jsontext.loads_lines('{"d": 1}\u2028{"d": 2}\n')
    assert (info.value.line, info.value.column) == (1, 9)
