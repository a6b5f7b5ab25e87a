"""Soundness: every instance a tool's input schema accepts, its generated Python TypedDict
accepts too, and the cheapest wrong instances are rejected.

For every tool of the corpus (`conftest.CORPUS_FILES`, with `CODEGEN_EXTRA_CORPUS`) and of
every golden case, `hypothesis-jsonschema` draws instances from the input schema (the
schema as written; for the BFCL dialect, as translated to JSON Schema), to which the
schema's own `examples` and `default`s are added. Every instance that `jsonschema` confirms
is valid must pass pydantic's validation of the tool's `<Tool>Args` TypedDict (lax mode:
JSON has no tuples, and an SDK caller passes plain lists and dicts), imported from the real
generated module. The reverse, for two mutations of each valid instance that the schema
rejects: a required property given a value of another JSON type, and a required key left
out. Lax mode is strict enough for those because each wrong value is one pydantic never
coerces (a string for a number or a boolean, a number for a string, a number for a list or
an object); pydantic ignores unknown keys, so closed objects are not checked in reverse.

Besides the drawn instances, `CALLS` lists calls as a caller writes them and wrong ones for
shapes a generator has got wrong (`tests/fixtures/call_shapes.json`: closed objects whose keys
nest in a union, arrays of any values); each must be accepted exactly when the schema accepts
it (a closed object is `closed=True`, which pydantic reads, so its other keys are checked).

A rejected valid instance fails the test unless its tool is listed in `DEGRADATIONS` with the
reason; a schema `hypothesis-jsonschema` cannot generate from is counted, not hidden. Each
source prints its rates (run with `-n 0 -s` to see them all).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis_jsonschema import from_schema
from pydantic import TypeAdapter, ValidationError
from pydantic.errors import PydanticSchemaGenerationError
from pydantic_core import SchemaError

from codegen import ir
from codegen.engine import compile_definitions
from codegen.load.sources import load_sources
from codegen.normalize import normalize_schema
from codegen.render.python.sdk import render_python_sdk
from codegen.validate.checks import draft_of
from conftest import CORPUS, CORPUS_FILES, FIXTURES, GOLDEN_CASES, SCHEMAS, corpus_id
from support import jsonschema_strategies

pytestmark = pytest.mark.slow  # every corpus SDK against generated instances

DEGRADATIONS: dict[tuple[str, str], str] = {
    ("golden/type_inference", "infer"): (
        "a node without `type` takes the one type its keywords belong to (the case's own"
        " description): JSON Schema also lets every other type through such a node"
    ),
    ("golden/empty_property_name", "set_header"): (
        "an object with the empty key is a `dict[str, ...]` in Python (no TypedDict may"
        " declare the key ``): it accepts every valid instance, and also missing keys"
    ),
}
"""(source id, tool name) -> why its TypedDict may reject a valid instance. Keep it short:
each entry is a documented degradation or a `known defect: ...` of the generator."""

EXAMPLES_PER_TOOL = int(os.environ.get("CODEGEN_SOUNDNESS_EXAMPLES", "6"))
"""Instances drawn per tool, besides the schema's own examples and defaults (raise it with
`CODEGEN_SOUNDNESS_EXAMPLES` for a deeper run by hand)."""

MAX_OWN_VALUES = 10
"""Property `examples` and `default`s tried per tool, each in a drawn instance."""

CALL_SHAPES = FIXTURES / "call_shapes.json"

SOURCES = [
    *(pytest.param(path, id=corpus_id(path)) for path in CORPUS_FILES),
    *(pytest.param(SCHEMAS / f"{case}.json", id=f"golden/{case}") for case in GOLDEN_CASES),
    pytest.param(CALL_SHAPES, id="fixtures/call_shapes"),
]

CALLS: dict[tuple[str, str], list[tuple[Any, bool]]] = {
    ("fixtures/call_shapes", "make_spec"): [
        ({"files": [{"path": "x", "type": "DEFAULT"}]}, True),
        ({"files": [{"path": "x"}, {"path": "y", "type": "t"}]}, True),
        ({"files": [], "env": {"name": "A", "value": "1"}}, True),
        ({"files": [], "env": {"name": "A"}}, True),
        ({"files": [], "anything": [1, "a", {"k": 1}, None, []]}, True),
        ({"files": [], "grid": [[1, "a"], []]}, True),
        ({"files": [{"path": "x", "typo": "t"}]}, False),
        ({"files": [{"path": 1}]}, False),
        ({"files": [{"type": "t"}]}, False),
        ({"files": [], "env": {"name": "A", "valeu": "1"}}, False),
        ({"files": [], "anything": {}}, False),
        ({"files": [], "anything": {"k": 1}}, False),
        ({"files": [], "grid": [[1], {"k": 1}]}, False),
        ({"files": {}}, False),
    ],
}
"""(source id, tool name) -> calls a caller writes and wrong ones, each with whether the
schema takes it: the TypedDict must agree."""

WRONG_VALUE = {
    "string": 12345,
    "integer": "not a number",
    "number": "not a number",
    "boolean": "not a boolean",
    "array": 7,
    "object": 7,
    "null": "not null",
}
"""A value of another JSON type for each declared type, one lax pydantic never coerces."""


jsonschema_strategies.prepare()


def source_id(path: Path) -> str:
    if path.is_relative_to(CORPUS):
        return corpus_id(path)
    return f"fixtures/{path.stem}" if path.is_relative_to(FIXTURES) else f"golden/{path.stem}"


def import_sdk(text: str, directory: Path, name: str) -> Any:
    """Import a generated SDK module. Before Python 3.12 pydantic needs `typing_extensions`'
    TypedDict: a module that declares a closed one imports it already; any other imports
    `typing`'s (right for type checkers), swapped here."""
    if sys.version_info < (3, 12) and "from typing_extensions import TypedDict" not in text:
        text = text.replace("    TypedDict as TypedDict,\n", "", 1)
        text = text.replace(
            "\nclass ToolCallError",
            "\nfrom typing_extensions import TypedDict\n\n\nclass ToolCallError",
            1,
        )
    path = directory / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def oracle_schema(definition: Any) -> Any:
    """The input schema as JSON Schema: BFCL dialect records translated as the pipeline does."""
    schema = definition.input_schema
    if definition.dialect == "bfcl":
        schema = normalize_schema(schema, draft_of(schema)[0], "bfcl").schema
    return schema


def validator_for(schema: Any) -> Any:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def draw(schema: Any, count: int) -> list[Any]:
    """`count` instances (fewer when the space is small), the same on every run."""
    found: list[Any] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(from_schema(schema))
    def collect(value: Any) -> None:
        found.append(value)

    collect()
    return found


def own_examples(schema: Any, drawn: list[Any]) -> list[Any]:
    """The root's `examples` and `default`, and each property's `examples` and `default`
    put in the first drawn object, and an object of the properties' defaults alone; the
    caller keeps the valid ones."""
    if not isinstance(schema, dict):
        return []
    found = list(schema["examples"]) if isinstance(schema.get("examples"), list) else []
    if "default" in schema:
        found.append(schema["default"])
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return found
    values: list[tuple[str, Any]] = []
    for key, sub in properties.items():
        if isinstance(sub, dict):
            if "default" in sub:
                values.append((key, sub["default"]))
            if isinstance(sub.get("examples"), list):
                values.extend((key, example) for example in sub["examples"][:3])
    defaults = {
        key: sub["default"]
        for key, sub in properties.items()
        if isinstance(sub, dict) and "default" in sub
    }
    if defaults:
        found.append(defaults)
    base = next((value for value in drawn if isinstance(value, dict)), None)
    if base is not None:
        found.extend({**base, key: value} for key, value in values[:MAX_OWN_VALUES])
    return found


def mutations(schema: Any, instance: Any) -> list[tuple[str, Any]]:
    """A wrong-typed value for each required property with one declared type, and the
    instance without each required key."""
    if not isinstance(schema, dict) or not isinstance(instance, dict):
        return []
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    found: list[tuple[str, Any]] = []
    for key in required:
        if key not in instance:
            continue
        declared = properties.get(key, {})
        kind = declared.get("type") if isinstance(declared, dict) else None
        if isinstance(kind, str) and kind in WRONG_VALUE:
            found.append((f"wrong type for {key!r}", {**instance, key: WRONG_VALUE[kind]}))
        found.append((f"missing {key!r}", {k: v for k, v in instance.items() if k != key}))
    return found


def accepts(adapter: TypeAdapter[Any], instance: Any) -> bool:
    try:
        adapter.validate_python(copy.deepcopy(instance))
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("path", SOURCES)
def test_typeddicts_accept_exactly_valid_instances(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = source_id(path)
    loaded = load_sources([str(path)], require_tools=False)
    compiled = compile_definitions(loaded.tools, loaded.diagnostics)
    assert compiled.catalog is not None, compiled.errors
    definitions = {d.name: d for d in loaded.tools}
    module_name = "soundness_" + re.sub(r"\W", "_", source)
    module = import_sdk(render_python_sdk(compiled.catalog), tmp_path, module_name)
    counts: Counter[str] = Counter()
    failures: list[str] = []
    try:
        for tool in compiled.catalog.tools:
            counts["tools"] += 1
            if not isinstance(tool.args, ir.RefType):  # a degraded root: `Any`, accepts all
                counts[f"tools whose args are {type(tool.args).__name__} (not checked)"] += 1
                continue
            schema = oracle_schema(definitions[tool.name])
            validator = validator_for(schema)
            try:
                adapter: TypeAdapter[Any] = TypeAdapter(getattr(module, tool.args.name))  # lax
            except (PydanticSchemaGenerationError, SchemaError) as exc:
                counts["tools pydantic cannot model"] += 1
                counts[
                    f"  ({type(exc).__name__}: {str(exc).splitlines()[0][:60].replace(',', ';')})"
                ] += 1
                continue
            try:
                # a copy: hypothesis-jsonschema rewrites the schema it is given in place
                instances = draw(copy.deepcopy(schema), EXAMPLES_PER_TOOL)
            except Exception as exc:  # counted and printed with its type, never hidden
                counts["tools hypothesis-jsonschema cannot generate for"] += 1
                counts[f"  ({type(exc).__name__})"] += 1
                instances = []
            drawn = len(instances)
            instances += own_examples(schema, instances)
            documented = DEGRADATIONS.get((source, tool.name))
            for call, right in CALLS.get((source, tool.name), []):
                counts["calls checked"] += 1
                if validator.is_valid(call) != right:
                    failures.append(f"{tool.name}: CALLS has it wrong: {json.dumps(call)}")
                elif accepts(adapter, call) != right:
                    verb = "rejects right" if right else "accepts wrong"
                    failures.append(f"{tool.name}: {verb} call {json.dumps(call)}")
            for index, instance in enumerate(instances):
                origin = "drawn" if index < drawn else "own examples and defaults"
                if not validator.is_valid(instance):
                    counts[f"invalid {origin} (skipped)"] += 1
                    continue
                counts["valid instances checked"] += 1
                counts[f"  of them {origin}"] += 1
                if accepts(adapter, instance):
                    counts["accepted"] += 1
                elif documented:
                    counts["rejected, documented"] += 1
                else:
                    counts["rejected"] += 1
                    failures.append(f"{tool.name}: rejects valid {json.dumps(instance)[:300]}")
                for what, wrong in mutations(schema, instance):
                    if validator.is_valid(wrong):
                        continue
                    counts["mutations checked"] += 1
                    if not accepts(adapter, wrong):
                        counts["mutations rejected"] += 1
                    elif documented:
                        counts["mutations accepted, documented"] += 1
                    else:
                        failures.append(f"{tool.name}: accepts {what}: {json.dumps(wrong)[:300]}")
    finally:
        sys.modules.pop(module_name, None)
    with capsys.disabled():
        rates = ", ".join(f"{k} {v}" for k, v in counts.items()) or "no tools"
        print(f"\nsoundness {source}: {rates}")
    assert not failures, "\n".join(failures)
