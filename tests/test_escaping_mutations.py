"""Mutation check for the escaping code: break one escape rule at a time and show that the
robustness checks notice.

Every string from a schema is escaped where it lands: `codegen/render/text.py` (line
breaks, hidden characters, backtick fences in comments and docstrings), `python.py`
(string literals, docstrings, pragma comments), `typescript.py` (string literals, JSDoc
comments and compiler directives) and `notes.py` via `text.inline`. Each `Mutation` below
rewrites one rule in the source of its module (one snippet, which must occur exactly once,
so the test fails loudly when the code moves), compiles the changed top-level statement
into the module and into every module that imported the name, and runs the checks of
`sdk_checks.check_value` on the fixed adversarial catalog (`hostile_catalog()`: every
hostile text in every place, deterministic, no Hypothesis). Unpatched the checks pass;
under each mutation they must raise `PropertyFailure`. Patches are undone after each test
(`monkeypatch`), and caches that could hold mutated results are cleared.

Run it:

    .venv/bin/pytest -q tests/test_escaping_mutations.py

A mutation that survives (the checks still pass) fails its test: either the rule is not
needed or the checks miss what it protects against.
"""

from __future__ import annotations

import ast
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.robustness_strategies import hostile_catalog
from support.sdk_checks import PropertyFailure, check_value

pytestmark = pytest.mark.slow  # rewrites the source once per escape rule and reruns the checks


@dataclass(frozen=True)
class Mutation:
    """One escape rule broken: `(old, new)` source replacements inside one top-level
    statement of `module`."""

    id: str
    module: str
    edits: tuple[tuple[str, str], ...]
    rule: str


TEXT = "codegen.render.text"
PYSTRINGS = "codegen.render.python.strings"
TYPESCRIPT = "codegen.render.typescript.sdk"

MUTATIONS = (
    Mutation(
        "lines-split-only-at-newline",
        TEXT,
        ((r'"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]"', r'"\r\n|[\n\r]"'),),
        "a description splits at every line break Python or JavaScript knows",
    ),
    Mutation(
        "hidden-c0-controls-raw",
        TEXT,
        ((r'"[\x00-\x08\x0b-\x1f', r'"[\x0b-\x1f'),),
        "NUL and other C0 controls are shown as escapes",
    ),
    Mutation(
        "hidden-bidi-controls-raw",
        TEXT,
        ((r"\u2028-\u202e", r"\u2028\u2029"), (r"\u2060-\u206f", r"\u2060-\u2065\u206a-\u206f")),
        "bidirectional embeddings, overrides and isolates are shown as escapes",
    ),
    Mutation(
        "hidden-line-separators-raw",
        TEXT,
        ((r"\u2028-\u202e", r"\u202a-\u202e"),),
        "U+2028 and U+2029 are shown as escapes (in string literals too)",
    ),
    Mutation(
        "hidden-lone-surrogates-raw",
        TEXT,
        ((r"\ufff9-\ufffb\ud800-\udfff]", r"\ufff9-\ufffb]"),),
        "lone surrogates are shown as escapes (the file stays UTF-8)",
    ),
    Mutation(
        "description-backtick-fence-kept",
        TEXT,
        (('_FENCE = re.compile("`{3,}")', '_FENCE = re.compile("(?!)")'),),
        "three backticks in a description become a tilde fence",
    ),
    Mutation(
        "notes-hidden-characters-raw",
        TEXT,
        (
            (
                'shown = escape_hidden(text.replace("\\n", "\\\\n").replace("\\t", "\\\\t"))',
                'shown = text.replace("\\n", "\\\\n").replace("\\t", "\\\\t")',
            ),
        ),
        "constraint notes that quote a value (pattern, format, default, example) show hidden "
        "characters as escapes",
    ),
    Mutation(
        "python-string-backslash-kept",
        PYSTRINGS,
        (
            (
                'body = escape_hidden(value.replace("\\\\", "\\\\\\\\"))',
                "body = escape_hidden(value)",
            ),
        ),
        "a backslash in a Python string literal is doubled",
    ),
    Mutation(
        "python-string-quote-kept",
        PYSTRINGS,
        (("""return '"' + body.replace('"', '\\\\"') + '"'""", """return '"' + body + '"'"""),),
        "the quote that delimits a Python string literal is escaped inside it",
    ),
    Mutation(
        "python-string-newline-kept",
        PYSTRINGS,
        (('.replace("\\n", "\\\\n").replace("\\t", "\\\\t")', '.replace("\\t", "\\\\t")'),),
        "a newline in a Python string literal is escaped",
    ),
    Mutation(
        "python-string-backtick-fence-kept",
        PYSTRINGS,
        (('body = body.replace("`", "\\\\x60")', "body = body"),),
        "three backticks in a Python string literal are escaped",
    ),
    Mutation(
        "python-pragma-comment-unquoted",
        PYSTRINGS,
        (('text = "> " + text', "text = text"),),
        "a comment that reads as a pragma (`type: ignore`, `fmt: off`) is quoted",
    ),
    Mutation(
        "docstring-backslash-kept",
        PYSTRINGS,
        (('text = line.replace("\\\\", "\\\\\\\\")', "text = line"),),
        "a backslash in a docstring is doubled",
    ),
    Mutation(
        "docstring-quotes-kept",
        PYSTRINGS,
        (("""out.append('\\\\"')""", "out.append(char)"),),
        "quotes that could close a docstring are escaped",
    ),
    Mutation(
        "typescript-string-hidden-raw",
        TYPESCRIPT,
        (("return _UNSAFE_IN_STRING.sub(_unicode_escape, quoted)", "return quoted"),),
        "hidden characters in a TypeScript string literal are `\\uXXXX` escapes",
    ),
    Mutation(
        "typescript-string-del-raw",
        TYPESCRIPT,
        (('if quoted.isascii() and "\\x7f" not in quoted:', "if quoted.isascii():"),),
        "DEL (ASCII, not printable) in a TypeScript string literal is escaped",
    ),
    Mutation(
        "typescript-string-backtick-fence-kept",
        TYPESCRIPT,
        (('quoted = quoted.replace("`", "\\\\u0060")', "quoted = quoted"),),
        "three backticks in a TypeScript string literal are escaped",
    ),
    Mutation(
        "jsdoc-close-kept",
        TYPESCRIPT,
        (('line = line.replace("*/", "*\\\\/")', "line = line"),),
        "`*/` in a description cannot close the JSDoc comment",
    ),
    Mutation(
        "jsdoc-directive-kept",
        TYPESCRIPT,
        (('line = _DIRECTIVE.sub("\\\\\\\\@", line)', "line = line"),),
        "`@ts-ignore` and other directives in a description are escaped",
    ),
)


def _statement_source(source: str, offset: int) -> tuple[int, int]:
    """The line span (1-based, inclusive) of the top-level statement holding `offset`,
    decorators included."""
    line = source.count("\n", 0, offset) + 1
    for node in ast.parse(source).body:
        decorators = getattr(node, "decorator_list", [])
        first = min([node.lineno, *(d.lineno for d in decorators)])
        if first <= line <= (node.end_lineno or node.lineno):
            return first, node.end_lineno or node.lineno
    raise AssertionError(f"no top-level statement at line {line}")


def apply(mutation: Mutation, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compile the mutated statement in its module's namespace and bind every name it
    defines there and in each `codegen` module that imported the original object."""
    module = importlib.import_module(mutation.module)
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    edits = mutation.edits
    spans = set()
    for old, _ in edits:
        assert source.count(old) == 1, f"{mutation.id}: {old!r} is not in {module.__name__} once"
        spans.add(_statement_source(source, source.index(old)))
    assert len(spans) == 1, f"{mutation.id}: the edits span several statements"
    [(first, last)] = spans
    statement = "".join(source.splitlines(keepends=True)[first - 1 : last])
    for old, new in edits:
        statement = statement.replace(old, new)
    namespace: dict[str, Any] = {}
    # Annotations stay unevaluated, as in the module (it imports `annotations`).
    source_code = "from __future__ import annotations\n" + statement
    code = compile(source_code, f"<{mutation.id}>", "exec", dont_inherit=True)
    exec(code, vars(module), namespace)
    for name, value in namespace.items():
        original = getattr(module, name)
        monkeypatch.setattr(module, name, value)
        for other in list(sys.modules.values()):
            if other is module or not getattr(other, "__name__", "").startswith("codegen"):
                continue
            for attribute, bound in list(vars(other).items()):
                if bound is original:
                    monkeypatch.setattr(other, attribute, value)


@pytest.fixture(scope="module")
def hostile() -> dict[str, Any]:
    return hostile_catalog()


def run_checks(value: Any) -> None:
    """The robustness checks without the reordered render (not an escaping concern)."""
    check_value(value, shuffle_seed=None)


def test_checks_pass_unpatched(hostile: dict[str, Any]) -> None:
    run_checks(hostile)


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.id for m in MUTATIONS])
def test_breaking_an_escape_rule_fails_the_checks(
    mutation: Mutation, hostile: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    apply(mutation, monkeypatch)
    try:
        with pytest.raises(PropertyFailure):
            run_checks(hostile)
    finally:
        monkeypatch.undo()


def test_every_mutation_changes_one_rule() -> None:
    """Ids are unique and each mutation edits code that exists today."""
    assert len({m.id for m in MUTATIONS}) == len(MUTATIONS)
    for mutation in MUTATIONS:
        module = importlib.import_module(mutation.module)
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        for old, new in mutation.edits:
            assert old != new and source.count(old) == 1, (mutation.id, old)
