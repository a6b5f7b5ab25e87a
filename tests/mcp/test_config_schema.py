"""The JSON Schema of serve's config (`codegen/mcp/serve_config.schema.json`) against the
reader it describes (`codegen.mcp.config`).

The schema ships for editors (a config's `"$schema"` points at it) and serves here as an
oracle: over a corpus of configs made from the example and minimal ones, mutated key by key,
the reader accepts a config exactly when the schema does, except where the schema's
`$comment` says it cannot follow the reader (`SEMANTIC`, which also says which side refuses
there). `bench/bench_config_reader.py` measures both over the same corpus.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.codemode.approval.hints import CLASSES
from codegen.codemode.approval.rules import ACTIONS, POLICY_KEYS, RULE_KEYS
from codegen.mcp.config import (
    CHECK_PROGRAMS,
    HTTP_LIMIT_KEYS,
    LIMIT_KEYS,
    MODES,
    SANDBOXES,
    SDK_PLACES,
    SERVER_KEYS,
    SETTING_KEYS,
    TRANSPORT_TYPES,
    load_servers_file,
)
from codegen.mcp.config_example import example_config
from conftest import ROOT
from support.config_corpus import (
    ADDED,
    BY_KEY,
    NAMES,
    SCHEMA_NAME,
    SECONDS,
    SEMANTIC,
    SIZES,
    WRONG,
    Verdicts,
    at,
    bases,
    check,
    corpus,
    environment,
    judge,
    load_schema,
    places,
    read,
    replaced,
    semantic,
    validator,
)

# --- the tests --------------------------------------------------------------------------


def test_the_schema_is_valid_against_its_metaschema() -> None:
    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    broken = {**schema, "properties": {**schema["properties"], "codegen": {"type": "objekt"}}}
    with pytest.raises(jsonschema.SchemaError):
        jsonschema.Draft202012Validator.check_schema(broken)


def undescribed(schema: dict[str, Any], node: Any = ..., path: str = "") -> Iterator[str]:
    """Pointers of the config's places whose property has no description: what an editor
    would show no help for (through `properties`, `additionalProperties`, `items`, `anyOf`
    and `$ref`, as a config's values are reached)."""
    node = schema if node is ... else node
    if not isinstance(node, dict):
        return
    if "$ref" in node:
        yield from undescribed(schema, schema["$defs"][node["$ref"].split("/")[-1]], path)
    for name, item in node.get("properties", {}).items():
        if not (isinstance(item, dict) and item.get("description")):
            yield f"{path}/{name}"
        yield from undescribed(schema, item, f"{path}/{name}")
    for key in ("additionalProperties", "items"):
        yield from undescribed(schema, node.get(key), f"{path}/*")
    for item in node.get("anyOf", []):
        yield from undescribed(schema, item, path)


def test_the_schema_names_every_key_of_the_reader_with_help() -> None:
    schema = load_schema()
    server = schema["$defs"]["server"]
    settings_ = schema["properties"]["codegen"]["properties"]
    assert tuple(server["properties"]) == SERVER_KEYS
    assert tuple(settings_) == SETTING_KEYS
    kinds = {"#/$defs/seconds": "seconds", "#/$defs/count": "count", "#/$defs/size": "size"}
    for table, keys in (("limits", LIMIT_KEYS), ("http_limits", HTTP_LIMIT_KEYS)):
        found = {k: kinds[v["$ref"]] for k, v in settings_[table]["properties"].items()}
        assert found == keys
    assert settings_["mode"]["enum"] == [*MODES, None]
    assert settings_["sdk"]["enum"] == [*SDK_PLACES, None]
    assert settings_["check_programs"]["enum"] == [*CHECK_PROGRAMS, None]
    assert settings_["sandbox"]["enum"] == [*SANDBOXES, None]
    enabled = schema["$defs"]["enabledServer"]
    assert enabled["properties"]["type"]["enum"] == list(TRANSPORT_TYPES)
    policy = settings_["policy"]["properties"]
    rule = schema["$defs"]["rule"]
    assert tuple(policy) == POLICY_KEYS and tuple(rule["properties"]) == RULE_KEYS
    assert rule["properties"]["action"]["enum"] == list(ACTIONS)
    assert rule["properties"]["class"]["enum"] == [*CLASSES, "any"]
    assert list(undescribed(schema)) == []
    bare = {"properties": {"x": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"properties": {"y": {}}}}}
    assert list(undescribed(bare)) == ["/x", "/x/y"]
    for reason in ("${VAR}", "absolute path", "prefix", "2048.0", "lang"):
        assert reason in schema["$comment"], reason


def test_the_example_config_validates() -> None:
    checker = validator()
    assert check(checker, example_config()) is None
    broken = example_config()
    broken["mcpServers"]["time"]["args"] = "mcp-server-time"
    assert check(checker, broken) == (
        "/mcpServers/time/args",
        "'mcp-server-time' is not of type 'array'",
    )


def test_a_top_level_schema_key_is_ignored_by_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "serve.json"
    config = {"$schema": "file:///x/serve_config.schema.json", **bases()["stdio"]}
    path.write_text(json.dumps(config), encoding="utf-8")
    with environment():
        loaded = load_servers_file(path, "serve.json")
        assert [upstream.name for upstream in loaded.upstreams] == ["time"]
        assert check(validator(), config) is None
        inside = {"codegen": {"$schema": "x"}, **bases()["stdio"]}
        path.write_text(json.dumps(inside), encoding="utf-8")
        problem = read(path)
        assert problem is not None and problem.pointer == "/codegen/$schema"
        assert check(validator(), inside) is not None


def test_a_port_of_other_digits_is_refused_not_a_crash(tmp_path: Path) -> None:
    """`isdigit` took superscripts that `int` refuses (a traceback); `isdecimal` is `int`'s
    own test, so a port of Arabic-Indic digits still reads as it did."""
    path = tmp_path / "serve.json"
    for port, refused in (("²", True), ("٣", False), ("8765", False)):
        config = {"codegen": {"http": f"127.0.0.1:{port}"}, **bases()["stdio"]}
        path.write_text(json.dumps(config), encoding="utf-8")
        with environment():
            problem = read(path)
        assert (problem is not None) == refused, port
        if problem is not None:
            assert problem.pointer == "/codegen/http" and "HOST:PORT" in problem.message


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> list[Verdicts]:
    return judge(corpus(), tmp_path_factory.mktemp("configs"))


def test_the_corpus_is_large_and_mixed(verdicts: list[Verdicts]) -> None:
    assert len(verdicts) >= 1000
    accepted = [v for v in verdicts if v.reader is None]
    assert 100 <= len(accepted) <= len(verdicts) - 500
    assert corpus() == corpus()  # deterministic
    labels = {v.case.label.split(":")[0] for v in verdicts}
    assert labels == set(bases())


def test_the_reader_accepts_what_the_schema_accepts(verdicts: list[Verdicts]) -> None:
    """Outside the documented cases the two agree on every config; inside them the reader
    refuses, and each documented case has a config only the reader refuses."""
    disagree = [
        (v.case.label, v.reader, v.schema)
        for v in verdicts
        if v.case.semantic is None and (v.reader is None) != (v.schema is None)
    ]
    assert disagree == []
    beyond: dict[str, int] = {}
    for v in verdicts:
        if v.case.semantic is not None:
            refuses = v.reader if SEMANTIC[v.case.semantic] == "reader" else v.schema
            assert refuses is not None, v.case.label
            if (v.reader is None) != (v.schema is None):
                beyond[v.case.semantic] = beyond.get(v.case.semantic, 0) + 1
    assert set(beyond) == set(SEMANTIC), beyond


def test_the_oracle_can_tell(tmp_path: Path) -> None:
    """A schema one rule looser than the reader disagrees on the corpus."""
    schema = load_schema()
    del schema["$defs"]["enabledServer"]["oneOf"]
    looser = jsonschema.Draft202012Validator(schema)
    cases = [c for c in corpus(sample=300) if "swapped" in c.label or "removed" in c.label]
    verdicts = judge(cases, tmp_path)
    assert any(check(looser, v.case.config) is None and v.reader is not None for v in verdicts)


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    """A base config with one to four mutations of the corpus's kinds stacked at places
    drawn anew after each: replaced by a value of the pools, removed, or an extra key."""
    config = copy.deepcopy(draw(st.sampled_from(list(bases().values()))))
    for _ in range(draw(st.integers(1, 4))):
        found = list(places(config))
        if not found or not isinstance(config, dict):
            break
        path = draw(st.sampled_from(found))
        key = next((token for token in reversed(path) if isinstance(token, str)), "")
        pool = (*WRONG, *BY_KEY.get(key, ()), *SIZES, *SECONDS, *ADDED.get(key, ()))
        parent = at(config, path[:-1])
        action = draw(st.sampled_from(("replace", "remove", "add")))
        if action == "remove" and isinstance(parent, dict):
            config = replaced(config, path[:-1], {k: v for k, v in parent.items() if k != path[-1]})
        elif action == "add" and isinstance(at(config, path), dict):
            name = draw(st.sampled_from((*SERVER_KEYS, *SETTING_KEYS, *NAMES, "bogus")))
            value = draw(st.sampled_from(pool))
            config = replaced(config, path, {**at(config, path), name: value})
        else:
            config = replaced(config, path, draw(st.sampled_from(pool)))
    return config


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(mutated())
def test_stacked_mutations_agree_too(config: Any) -> None:
    """Several mutations at once (Hypothesis, derandomized): the reader accepts a config
    exactly when the schema does, but for the documented cases."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "serve.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        with environment():
            problem = read(path)
    verdict = check(validator(), config)
    reason = semantic(config)
    if reason is None:
        assert (problem is None) == (verdict is None), (config, problem, verdict)
    else:
        assert (problem if SEMANTIC[reason] == "reader" else verdict) is not None, (config, reason)


def test_the_readme_tells_how_to_use_the_schema() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    serve = readme[readme.index("## Code Mode for any MCP client") :]
    serve = serve[: serve.index("\n## ", 1)]
    assert f"codegen/mcp/{SCHEMA_NAME}" in serve
    assert (ROOT / "codegen" / "mcp" / SCHEMA_NAME).is_file()
    assert '"$schema"' in serve


def test_serve_prints_the_schema_it_ships(capsys: pytest.CaptureFixture[str]) -> None:
    from codegen.cli import main

    assert main(["serve", "--print-config-schema"]) == 0
    out, err = capsys.readouterr()
    shipped = ROOT / "codegen" / "mcp" / SCHEMA_NAME
    assert json.loads(out) == json.loads(shipped.read_text(encoding="utf-8"))
    assert err == f"(the file: {shipped.resolve()})\n"
