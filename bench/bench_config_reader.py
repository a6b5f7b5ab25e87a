"""A/B: serve's hand-written config reader against a JSON Schema of the same config checked
by `jsonschema`.

Run by hand from the repository root:

    .venv/bin/python bench/bench_config_reader.py [--runs N] [--sample N] [--examples]

Over the corpus of `tests/support/config_corpus.py` (the example config and minimal
ones, mutated key by key: wrong types, wrong enums, extra, missing and renamed keys, both
or neither of command and url, bad sizes and addresses; every config written to a file):

- A, the reader: `load_servers_file` on the file, then the `policy` through Code Mode's
  rule parser, as `serve` does at start; its first `Diagnostic`.
- B, the schema: the file decoded (`json_text`, as the reader decodes it), then
  `Draft202012Validator(codegen/mcp/serve_config.schema.json).iter_errors`, and
  `jsonschema.exceptions.best_match` of the errors (the one error a tool would show).

It prints: how often the two accept the same configs (outside and inside the cases the
schema's `$comment` lists as beyond it); over the configs both refuse, how often each
side's pointer is at the place the mutation changed or inside it (the most specific),
above it (an ancestor) or elsewhere; message pairs for typical mistakes; time per config
for each side (the median of `--runs` interleaved passes over the corpus, divided by its
size), and the one-time cost of each in a fresh interpreter (import, and for B the
validator's build).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import jsonschema  # noqa: E402

from codegen.load import json_text  # noqa: E402
from support.config_corpus import (  # noqa: E402
    Case,
    check,
    corpus,
    environment,
    load_schema,
    read,
)

EXAMPLES = (
    "stdio: /mcpServers/time/args/0 = 7",
    'example: /codegen/limits/memory = "12XB"',
    'example: /codegen/mode = "Code"',
    "stdio: /mcpServers/time/bogus added",
    'example: /codegen/sandbox = "none"',
    "stdio: /mcpServers/time/command removed",
    'stdio: /mcpServers/time/url = "https://x"',
    'http: /mcpServers/remote/type = "stdio"',
    'stdio: /mcpServers/time/headers = {"A": "b"}',
    'settings: /codegen/http = "host:65536"',
    "example: /codegen/description_budget = 511",
    'settings: /codegen/policy/rules/1/class = "write"',
    "stdio: /mcpServers/time/disabled = true",
    "stdio: server named '---'",
)
"""Labels of the corpus whose two messages are shown."""


PLACES = ("at it", "inside it", "above it", "elsewhere")


def place(found: str, wanted: str) -> str:
    """Where a reported pointer is, from the place the mutation changed: at it, inside it
    (the wrong value within a replaced one, a child key: as specific), above it (an
    ancestor: less specific) or elsewhere."""
    if found == wanted:
        return "at it"
    if found.startswith(wanted + "/") or (wanted == "" and found):
        return "inside it"
    if wanted.startswith(found + "/") or (found == "" and wanted):
        return "above it"
    return "elsewhere"


def specific(found: str, wanted: str) -> bool:
    return place(found, wanted) in ("at it", "inside it")


def verdicts(cases: list[Case], paths: list[Path]) -> list[tuple[Case, Any, Any]]:
    """Each config's two verdicts: the reader's first `Diagnostic` and the schema's
    (pointer, message), None where a side accepts."""
    checker = jsonschema.Draft202012Validator(load_schema())
    with environment():
        return [(c, read(p), check(checker, c.config)) for c, p in zip(cases, paths, strict=True)]


def timed(paths: list[Path], side: Callable[[Path], Any]) -> float:
    with environment():
        start = time.perf_counter()
        for path in paths:
            side(path)
        return time.perf_counter() - start


def one_time(code: str, runs: int) -> float:
    """Median seconds `code` takes in a fresh interpreter (it prints its own timing)."""
    found = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
        found.append(float(out))
    return statistics.median(found)


START = "import time; t = time.perf_counter(); "
IMPORT_A = START + "import codegen.mcp.config; print(time.perf_counter() - t)"
IMPORT_B = (
    "import codegen.mcp.config, json, importlib.resources as r; "
    + START
    + "import jsonschema; "
    + "s = json.loads(r.files('codegen.mcp').joinpath('serve_config.schema.json').read_text()); "
    + "v = jsonschema.Draft202012Validator(s); v.is_valid({'mcpServers': {}}); "
    + "print(time.perf_counter() - t)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sample", type=int, default=None, help="configs (default: all)")
    parser.add_argument("--examples", action="store_true", help="print every message pair")
    args = parser.parse_args()

    cases = corpus(sample=args.sample)
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for number, case in enumerate(cases):
            path = Path(folder) / f"{number}.json"
            path.write_text(json.dumps(case.config), encoding="utf-8")
            paths.append(path)
        found = verdicts(cases, paths)
        checker = jsonschema.Draft202012Validator(load_schema())

        def schema_side(path: Path) -> Any:
            document = json_text.loads(json_text.decode_bytes(path.read_bytes()))
            return jsonschema.exceptions.best_match(checker.iter_errors(document))

        times: dict[str, list[float]] = {"reader": [], "schema": []}
        for _ in range(args.runs):
            times["reader"].append(timed(paths, read))
            times["schema"].append(timed(paths, schema_side))

    report(found, times, len(cases), args)
    a = one_time(IMPORT_A, args.runs)
    b = one_time(IMPORT_B, args.runs)
    print(f"\nOne-time, fresh interpreter (median of {args.runs}):")
    print(f"- A: `import codegen.mcp.config`: {a * 1000:.1f} ms")
    print("- B, on top of it: `import jsonschema`, the schema loaded, the validator built and")
    print(f"  run once: {b * 1000:.1f} ms")


def report(
    found: list[tuple[Case, Any, Any]], times: dict[str, list[float]], size: int, args: Any
) -> None:
    plain = [(c, r, s) for c, r, s in found if c.semantic is None]
    beyond = [(c, r, s) for c, r, s in found if c.semantic is not None]
    agree = sum((r is None) == (s is None) for _, r, s in plain)
    refused = sum(r is not None for _, r, _ in found)
    print(f"Corpus: {size} configs ({refused} refused by the reader, {size - refused} accepted)")
    print(f"- agreement outside the documented cases: {agree} of {len(plain)}")
    reasons = Counter(
        (c.semantic, "reader only" if s is None else "both") for c, r, s in beyond if r is not None
    )
    reasons.update((c.semantic, "schema only") for c, r, s in beyond if r is None and s is not None)
    print(
        f"- documented cases: {len(beyond)}: "
        + ", ".join(f"{reason} {side} {count}" for (reason, side), count in sorted(reasons.items()))
    )

    both = [(c, r, s) for c, r, s in plain if r is not None and s is not None]
    a = Counter(place(r.pointer, c.at) for c, r, _ in both)
    b = Counter(place(s[0], c.at) for c, _, s in both)
    print(f"\nPointer of the first error, over the {len(both)} configs both refuse:")
    print("| side | at the place | inside it | above it | elsewhere | most specific |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, count in (("A reader", a), ("B schema, `best_match`", b)):
        cells = " | ".join(f"{count[k]}" for k in PLACES)
        best = count["at it"] + count["inside it"]
        print(f"| {name} | {cells} | {100 * best / len(both):.1f}% |")
    above = Counter(mutation(c.label) for c, r, s in both if not specific(s[0], c.at))
    print(f"- where B is above or elsewhere, by mutation: {dict(above.most_common(6))}")
    above = Counter(mutation(c.label) for c, r, s in both if not specific(r.pointer, c.at))
    print(f"- where A is above or elsewhere, by mutation: {dict(above.most_common(6))}")
    ahead = sum(specific(r.pointer, c.at) and not specific(s[0], c.at) for c, r, s in both)
    behind = sum(not specific(r.pointer, c.at) and specific(s[0], c.at) for c, r, s in both)
    print(f"- A most specific where B is not: {ahead}; B where A is not: {behind}")

    print("\nMessages (A reader | B schema):")
    by_label = {c.label: (c, r, s) for c, r, s in found}
    labels = [c.label for c, r, s in both] if args.examples else list(EXAMPLES)
    for label in labels:
        if label not in by_label:
            print(f"- {label}: not in this corpus")
            continue
        _, r, s = by_label[label]
        shown_a = "accepted" if r is None else f"`{r.pointer}`: {r.message}"
        shown_b = "accepted" if s is None else f"`{s[0]}`: {cut(s[1])}"
        print(f"- {label}\n  - A {shown_a}\n  - B {shown_b}")

    print(f"\nTime per config, median of {len(times['reader'])} passes over the corpus:")
    for name, runs in times.items():
        median = statistics.median(runs) / size
        spread = (min(runs) / size, max(runs) / size)
        print(f"- {name}: {median * 1e6:.0f} µs (runs {spread[0] * 1e6:.0f}-{spread[1] * 1e6:.0f})")
    ratio = statistics.median(times["schema"]) / statistics.median(times["reader"])
    print(f"- schema / reader: {ratio:.1f}x")


def mutation(label: str) -> str:
    """The kind of mutation a corpus label names: "replaced", "removed", "added", ..."""
    if " = " in label:
        return "replaced"
    if ": server named " in label:
        return "server renamed"
    if ": server " in label:
        return "server added"
    return label.rsplit(" ", 1)[-1]


def cut(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


if __name__ == "__main__":
    main()
