"""`json_schema_to_py` / `json_schema_to_ts`: any JSON value spells as a type, a value that is
not JSON data is the any type, and a failure inside the pipeline is raised, never hidden."""

from __future__ import annotations

from typing import Any

import pytest

import codegen
from codegen import schema_spelling
from codegen.schema_spelling import is_json_data, json_schema_to_py, json_schema_to_ts


@pytest.mark.parametrize(
    "value, expected",
    [
        ({"a": [1, 2.5, None, True, "x"]}, True),
        ([], True),
        ({1: "x"}, False),
        ({"a": {1, 2}}, False),
        ({"a": [b"bytes"]}, False),
        ([{"a": object()}], False),
        ((1, 2), False),
    ],
)
def test_json_data_is_recognised(value: Any, expected: bool) -> None:
    assert is_json_data(value) is expected


def test_a_value_that_is_not_json_data_is_the_any_type() -> None:
    assert json_schema_to_py({"enum": {1, 2}}) == "Any"
    assert json_schema_to_ts({"properties": {"a": object()}}) == "unknown"


def test_a_failure_inside_the_pipeline_surfaces(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(schema: Any) -> Any:
        raise RuntimeError("a bug in the builder")

    monkeypatch.setattr(schema_spelling, "build_type", broken)
    with pytest.raises(RuntimeError, match="a bug in the builder"):
        json_schema_to_py({"type": "string"})
    with pytest.raises(RuntimeError, match="a bug in the builder"):
        json_schema_to_ts({"type": "string"})


def test_the_public_names_point_here() -> None:
    assert codegen.json_schema_to_py is json_schema_to_py
    assert codegen.json_schema_to_ts is json_schema_to_ts
