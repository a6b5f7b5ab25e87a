"""Robustness: any input renders to valid code or a clear error, and nothing hostile becomes
code (properties 1-4, checked by `sdk_checks`).

Inputs are Hypothesis-generated: whole tool catalogs with hostile text in every name,
description, title, key, enum value, const, default, example, pattern, format and `$defs`
key (`robustness_strategies.catalogs`), the same with an injection marker planted in every
text, and schemas generated from the draft-07 meta-schema with `hypothesis-jsonschema`.
Every example is checked on its own (parse, structure, escaping, reordered input); `tsc`,
the command line in a fresh interpreter and another hash seed run once per test over the
examples collected, because each costs a process start. Each example is a whole catalog, so
a few dozen per test are a fair sample; `bench/fuzz.py` runs the same
properties for as long as asked.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.robustness_strategies import (
    catalogs,
    hostile_catalog,
    marked_text,
    meta_catalogs,
    to_json,
)
from support.sdk_checks import (
    Rendered,
    check_black,
    check_cli,
    check_value,
    expected_renders,
    subprocess_renders,
    tsc_failures,
)

pytestmark = [
    pytest.mark.slow,  # Hypothesis over hundreds of hostile catalogs, tsc and black included
    pytest.mark.filterwarnings("ignore:Generating overly large repr"),
]
"""Strategies that nest each other have long reprs; Hypothesis warns when it builds one."""

SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
    print_blob=True,
)

CLI_EXAMPLES = 6
"""Inputs per test also run through `codegen sdk` (four that compile, two that do not)."""
SUBPROCESS_EXAMPLES = 3
"""Inputs per test also run in a fresh interpreter with another hash seed."""
TSC_EXAMPLES = 80
"""Declarations files per test type-checked with tsc (in one Node run)."""
BLACK_SHARE = 3
"""One Python SDK in this many (chosen by a hash of the input, so a failure replays and
shrinks) is checked to be a `black` fixed point."""


class Batch:
    """Examples collected during one Hypothesis test for the checks that need a process:
    tsc over the declarations files, `codegen sdk` on a few inputs, and the same in a fresh
    interpreter with another `PYTHONHASHSEED`. Inputs are kept as files, so a failure
    names one to rerun."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.count = 0
        self.declarations: dict[str, tuple[str, Any]] = {}
        self.compiled: list[tuple[Path, Rendered]] = []
        self.rejected: list[tuple[Path, Rendered]] = []

    def add(self, value: Any, rendered: Rendered) -> None:
        self.count += 1
        text = to_json(value)
        path = self.directory / f"example-{self.count:04d}.json"
        if rendered.python is not None and zlib.crc32(text.encode()) % BLACK_SHARE == 0:
            check_black(rendered.python)
        kept = self.compiled if rendered.catalog is not None else self.rejected
        if len(kept) < (4 if kept is self.compiled else 2):
            path.write_text(text, encoding="utf-8")
            kept.append((path, rendered))
        if (
            rendered.typescript is not None
            and len(self.declarations) < TSC_EXAMPLES
            and rendered.typescript not in {ts for ts, _ in self.declarations.values()}
        ):
            path.write_text(text, encoding="utf-8")
            self.declarations[path.name] = (rendered.typescript, rendered.catalog)

    def finish(self) -> None:
        """tsc, the command line, and another hash seed over what was collected."""
        assert self.count > 0 and self.declarations and self.compiled
        failures = tsc_failures(self.declarations, self.directory)
        assert not failures, _report(self.directory, failures)
        for path, rendered in [*self.compiled, *self.rejected]:
            check_cli(path, rendered)
        chosen = [*self.compiled[: SUBPROCESS_EXAMPLES - 1], *self.rejected[:1]]
        expected: dict[tuple[str, str], tuple[int, str]] = {}
        for path, rendered in chosen:
            expected.update(expected_renders(path, rendered))
        assert subprocess_renders([p for p, _ in chosen], "4242") == expected


def _report(directory: Path, failures: dict[str, str]) -> str:
    name, problem = sorted(failures.items())[0]
    return f"{len(failures)} file(s) fail tsc; first: {directory / name}\n{problem[:3000]}"


@pytest.fixture
def batch(tmp_path: Path) -> Batch:
    return Batch(tmp_path)


def run_examples(
    strategy: st.SearchStrategy[Any], examples: int, batch: Batch
) -> Callable[[], None]:
    """A Hypothesis test over `strategy` that checks each example and collects it."""

    @settings(SETTINGS, max_examples=examples)
    @given(value=strategy, seed=st.integers(0, 2**32 - 1))
    def check(value: Any, seed: int) -> None:
        batch.add(value, check_value(value, shuffle_seed=seed))

    return check


def test_hostile_catalogs(batch: Batch) -> None:
    run_examples(catalogs(), 80, batch)()
    batch.finish()


def test_marked_catalogs_never_inject(batch: Batch) -> None:
    """Every text holds a marker statement (Python, TypeScript, closing quotes or comment
    delimiters first); `check_value` finds it only inside strings and comments."""
    run_examples(catalogs(text=marked_text()), 60, batch)()
    batch.finish()


def test_meta_schema_generated_schemas(batch: Batch) -> None:
    """Schemas the draft-07 meta-schema accepts, as both input and output schema."""
    run_examples(meta_catalogs(), 60, batch)()
    batch.finish()


def test_fixed_hostile_catalog(tmp_path: Path) -> None:
    """The fixed adversarial catalog (every hostile text in every place) renders, passes
    every check and tsc, is a `black` fixed point, and the command line agrees with the
    library."""
    value = hostile_catalog()
    rendered = check_value(value)
    assert rendered.catalog is not None and not rendered.compiled.warnings
    assert rendered.typescript is not None and rendered.python is not None
    check_black(rendered.python)
    assert len(rendered.catalog.tools) == len(value["tools"])
    failures = tsc_failures({"hostile": (rendered.typescript, rendered.catalog)}, tmp_path)
    assert not failures, failures
    path = tmp_path / "hostile.json"
    path.write_text(to_json(value), encoding="utf-8")
    check_cli(path, rendered)


def test_lone_surrogates_from_a_file(tmp_path: Path) -> None:
    """A `\\ud800` escape in JSON text decodes to a lone surrogate; both SDKs show it as an
    escape instead of writing text that is not UTF-8."""
    path = tmp_path / "surrogate.json"
    path.write_text(
        '{"name": "s", "description": "a \\ud800 b", "inputSchema": {"type": "object", '
        '"properties": {"k\\udfff": {"enum": ["\\udbff"]}}}}',
        encoding="ascii",
    )
    rendered = check_value(json.loads(path.read_text()))
    assert rendered.python is not None and rendered.typescript is not None
    assert '"""a \\\\ud800 b"""' in rendered.python
    assert '"k\\udfff"' in rendered.python and '"\\udbff"' in rendered.python
    assert '"k\\udfff"' in rendered.typescript and '"\\udbff"' in rendered.typescript
    check_cli(path, rendered)
