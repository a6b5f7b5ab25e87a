"""The fast decoding path changes nothing: same values, same refusals, same messages."""

from __future__ import annotations

import json
import math
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.load import fast_json as fastjson
from codegen.load import json_text as jsontext
from codegen.load.json_text import DecodeProblem
from codegen.load.sources import load_sources
from codegen.render.targets import target
from conftest import CORPUS, FIXTURES, SCHEMAS


def outcome(text: str) -> tuple[str, Any]:
    """What `jsontext.loads` makes of `text`: the pickled value (exact about types, `-0.0`
    and big integers) or the problem it reports."""
    try:
        return "value", pickle.dumps(jsontext.loads(text), protocol=5)
    except DecodeProblem as problem:
        return "problem", (problem.message, problem.line, problem.column, problem.pointer)
    except ValueError as error:  # the standard library's own refusals (too many digits)
        return "error", str(error)


def slow_outcome(text: str) -> tuple[str, Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsontext, "try_loads", lambda text, utf8=None: fastjson.NOT_DECODED)
        return outcome(text)


def same_value(one: Any, two: Any) -> bool:
    """Equal, and of the same types all the way down (`1` is not `1.0` nor `True`)."""
    if type(one) is not type(two):
        return False
    if isinstance(one, dict):
        return list(one) == list(two) and all(same_value(one[k], two[k]) for k in one)
    if isinstance(one, list):
        return len(one) == len(two) and all(same_value(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, float) and math.copysign(1, one) != math.copysign(1, two):
        return False
    return bool(one == two)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(10**40), 10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=500, deadline=None)
@given(json_values, st.booleans(), st.sampled_from([None, 0, 2]))
def test_values_are_those_of_the_standard_library(
    value: Any, ensure_ascii: bool, indent: int | None
) -> None:
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)
    decoded = fastjson.try_loads(text)
    assert decoded is not fastjson.NOT_DECODED
    assert same_value(decoded, json.loads(text))
    assert same_value(jsontext.loads(text, text.encode("utf-8")), json.loads(text))


json_like_text = st.lists(
    st.sampled_from(
        [*'{}[]:," \n\t\\u0123456789.eE+-abtrfalsenul', "NaN", "Infinity", '"a"', "\ud800"]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=1500, deadline=None)
@given(json_like_text)
def test_any_text_gets_the_same_value_or_the_same_problem(text: str) -> None:
    assert outcome(text) == slow_outcome(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"x": {"k": [1, {"d": 1, "d": 1}]}}',
        "[NaN]",
        '{"a": -Infinity}',
        '"\\ud800"',
        '{"a": "\\udc00x"}',
        "[1,]",
        '{"a": 1} x',
        "\ufeff{}",
        "01",
        '"a\tb"',
        "[" + "1" * 5000 + "]",
        "[" * 201 + "]" * 201,
        '{"a":' * 300 + "1" + "}" * 300,
        "[" * 513 + "]" * 513,
        "",
        "   ",
    ],
)
def test_refusals_and_edge_cases_are_those_of_the_strict_decoder(text: str) -> None:
    assert outcome(text) == slow_outcome(text)


def test_nesting_the_fast_path_accepts_is_within_the_documented_limit() -> None:
    """`jsontext` skips its own depth walk for what `jiter` decodes: that is only right while
    `jiter` refuses anything nested deeper than `MAX_NESTING`."""
    assert fastjson.NESTING_LIMIT <= jsontext.MAX_NESTING
    for opener, closer in (("[", "]"), ('{"a":', "}")):
        depth = fastjson.NESTING_LIMIT
        assert fastjson.try_loads(opener * depth + "1" + closer * depth) is not fastjson.NOT_DECODED
        depth += 1
        assert fastjson.try_loads(opener * depth + "1" + closer * depth) is fastjson.NOT_DECODED
    # Between the two limits the standard library decodes it; past MAX_NESTING nobody does.
    deep = jsontext.MAX_NESTING
    assert jsontext.nesting_depth(jsontext.loads("[" * deep + "]" * deep)) == deep
    with pytest.raises(DecodeProblem, match="exceeds the limit of 512"):
        jsontext.loads("[" * (deep + 1) + "]" * (deep + 1))


def test_values_share_nothing_between_documents() -> None:
    """No string cache across documents: a decoded value, and anything pickled from it
    (cache keys), depends on its own text only."""
    one = fastjson.try_loads('{"description": "a longer text that a cache would keep"}')
    two = fastjson.try_loads('{"description": "a longer text that a cache would keep"}')
    assert one == two
    assert one["description"] is not two["description"]


def catalog_files() -> list[str]:
    return [str(CORPUS), str(SCHEMAS), str(FIXTURES / "invalid")]


def loaded_everything() -> tuple[Any, ...]:
    loaded = load_sources(catalog_files(), namespace=True)
    return loaded.tools, loaded.diagnostics


def test_loading_every_catalog_gives_the_same_tools_and_diagnostics() -> None:
    fast = loaded_everything()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsontext, "try_loads", lambda text, utf8=None: fastjson.NOT_DECODED)
        slow = loaded_everything()
    assert fast[1] == slow[1]
    assert len(fast[0]) == len(slow[0]) > 400
    for one, two in zip(fast[0], slow[0], strict=True):
        assert one == two
        assert same_value(one.input_schema, two.input_schema)
        assert same_value(one.output_schema, two.output_schema)


def test_the_bundled_sdks_are_the_same_on_the_standard_library_path() -> None:
    from codegen.engine import compile_sources

    fast = compile_sources([str(SCHEMAS)])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsontext, "try_loads", lambda text, utf8=None: fastjson.NOT_DECODED)
        slow = compile_sources([str(SCHEMAS)])
    assert fast.catalog is not None and slow.catalog is not None
    assert fast.diagnostics == slow.diagnostics
    for language in ("python", "typescript"):
        renderer = target(language)
        assert renderer.render(fast.catalog, None) == renderer.render(slow.catalog, None)
