"""What a model reads before it can call a tool, per catalog: the whole SDK section in the
`run_code` description, against the budgeted description plus a typical discovery flow
(one search, two describes).

For every catalog in the repository (the bundled `schemas/`, each vendored server, the whole
vendored corpus as one namespaced session), ToolUniverse and BFCL, in both languages:

- the tier `codegen serve` would choose at the default budget, and the description's size in
  UTF-16 code units (it must be within 2,048 for every catalog);
- `o200k_base` tokens of the whole section (the full tier's cost, were there no budget);
- tokens of the flow a model follows in the search tier: the description, one
  `catalog.search` answer (8 hits) and two `catalog.describe` answers (the first two hits);
  the query is the first sentence of the middle tool's description, as a model would ask
  for that tool.

Run: `python bench/bench_discovery.py` (downloads the large catalogs on first use).

`--first-search [--runs N]`: the first `catalog.search` of a process at ToolUniverse's first
3,000 tools, in each language, each run in a fresh process, cold (nothing done before: the
semantic model's load included when the `search` extra is installed) and as serve does it
(the model loaded while upstreams start, the warm-up started at the listing and the search
asked at once; the wait counted from the listing; its CPU time, every thread's, beside);
then the parts again in a fresh `Discovery` (the search index, the first search's eight hit
lines, each tool compiled alone, and one `describe`), and the p50 / p95
of 200 later searches through `Discovery.search` (hit lines included), each after a little
Python work.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogs import ROOT, bfcl_catalog, tooluniverse_catalog
from tokens import o200k_counter

from codegen.codemode.presentation.languages import sdk_renderer
from codegen.codemode.presentation.tiers import DEFAULT_BUDGET
from codegen.codemode.registry import CodeModeError, ToolRegistry, ToolSpec
from codegen.codemode.run_code.definition import with_sdk
from codegen.load.formats import BFCL_TYPES, JSON_TYPES
from codegen.load.namespaces import sanitize
from codegen.render.sections.summaries import first_sentence
from codegen.serve.wire import run_code_description


class Language:
    def __init__(self, name: str) -> None:
        self.language = name

    async def run(self, *args: Any) -> Any:
        raise NotImplementedError


async def _echo(arguments: Any, context: Any) -> Any:
    return arguments


def registry_of(tools: list[dict[str, Any]], language: str) -> ToolRegistry:
    registry = ToolRegistry(mode="code", budget=DEFAULT_BUDGET)
    seen: set[str] = set()
    for tool in tools:
        if tool["name"] in seen:
            continue
        seen.add(tool["name"])
        try:
            registry.register(
                ToolSpec(
                    tool["name"],
                    tool.get("description") or "",
                    tool.get("inputSchema") or {"type": "object"},
                    handler=_echo,
                )
            )
        except CodeModeError:
            continue  # a schema a server could not serve either
    registry.mount_runtime(Language(language))
    return registry


def recorded(path: Path, prefix: str = "") -> list[dict[str, Any]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    tools = document["tools"] if isinstance(document, dict) else document
    if not isinstance(tools, list):
        tools = [tools]
    return [{**tool, "name": f"{prefix}{tool['name']}"} for tool in tools if isinstance(tool, dict)]


def json_types(schema: Any) -> Any:
    """BFCL's type names (`dict`, `float`, ...) as JSON Schema's, everywhere in a schema."""
    if isinstance(schema, list):
        return [json_types(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    spelled = {key: json_types(value) for key, value in schema.items()}
    kind = schema.get("type")
    if isinstance(kind, str):
        spelled["type"] = BFCL_TYPES.get(kind, kind)
        if spelled["type"] not in JSON_TYPES:
            del spelled["type"]
    return spelled


def of_definitions(definitions: Any) -> list[dict[str, Any]]:
    return [
        {
            "name": d.name,
            "description": d.description or "",
            "inputSchema": json_types(d.input_schema)
            if isinstance(d.input_schema, dict)
            else {"type": "object"},
        }
        for d in definitions
    ]


def typical_query(tools: list[dict[str, Any]]) -> str:
    """What a model looking for the middle tool would ask: its description's first sentence
    (else its name's words), never its name."""
    tool = tools[len(tools) // 2]
    sentence = first_sentence(tool.get("description") or "")
    return sentence or " ".join(tool["name"].replace("__", " ").replace("_", " ").split())


def catalogs() -> list[tuple[str, list[dict[str, Any]]]]:
    found: list[tuple[str, list[dict[str, Any]]]] = []
    for path in sorted((ROOT / "schemas").rglob("*.json")):
        try:
            found.append((f"schemas/{path.name}", recorded(path)))
        except (KeyError, TypeError, ValueError):
            continue
    corpus = sorted((ROOT / "tests" / "corpus" / "mcp").glob("*.json"))
    for path in corpus:
        found.append((f"corpus/{path.stem}", recorded(path)))
    whole = [tool for path in corpus for tool in recorded(path, sanitize(path.stem) + "__")]
    found.append(("corpus, all 33 servers", whole))
    found.append(("tooluniverse", of_definitions(tooluniverse_catalog().tools)))
    found.append(("bfcl", of_definitions(bfcl_catalog().tools)))
    return found


FIRST_SEARCH = """
import json, sys, threading, time
sys.path.insert(0, sys.argv[1])
import bench_discovery as bench
from catalogs import tooluniverse_catalog
from codegen.search import semantic
tools = bench.of_definitions(tooluniverse_catalog().tools)[:3000]
times = {}
if sys.argv[3] == "serve":  # as serve: the model loaded while upstreams start, then
    start = time.perf_counter()  # the warm-up thread started at the listing
    semantic.model()
    times["model"] = time.perf_counter() - start
registry = bench.registry_of(tools, sys.argv[2])
found = registry.discovery()
start, cpu = time.perf_counter(), time.process_time()
if sys.argv[3] == "serve":
    warm = threading.Thread(target=lambda: (found.warm(), found.fill()))  # as serve does
    warm.start()
found.search(bench.typical_query(tools))
times["first"] = time.perf_counter() - start
times["first_cpu"] = time.process_time() - cpu  # every thread's
if sys.argv[3] == "serve":
    warm.join()
registry._discoveries.clear()  # the parts again, in a fresh Discovery (the model loaded)
again = registry.discovery()
start = time.perf_counter()
hits = again.index().search(bench.typical_query(tools), 8).names
times["index"] = time.perf_counter() - start
start = time.perf_counter()
again.hit_lines(list(hits))
times["hits"] = time.perf_counter() - start
start = time.perf_counter()
again.describe(hits[0])
times["describe"] = time.perf_counter() - start
later = []
for tool in tools[::15]:
    sum(range(20_000))
    start = time.perf_counter()
    found.search(tool["description"][:120] or tool["name"])
    later.append(time.perf_counter() - start)
times["later"] = later
print(json.dumps(times))
"""


def first_search(runs: int) -> None:
    """The first search's wait and later searches' time, each run in a fresh process:
    "cold", the first search of a process that did nothing before (the model's load
    included); "serve", as `codegen serve` does it: the model loaded while the upstreams
    start (`Host.mount`), the warm-up thread started when the tools are listed and the
    search asked at that very moment (the wait counted from the listing)."""
    print(
        "| language | how | first search, s (CPU s) | model before, s | again: index, s / 8 hit "
        "lines / a describe, ms | later p50 / p95, ms |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    here = str(Path(__file__).resolve().parent)
    for language in ("python", "typescript"):
        for how in ("cold", "serve"):
            for _ in range(runs):
                out = subprocess.run(
                    [sys.executable, "-c", FIRST_SEARCH, here, language, how],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                found = json.loads(out.splitlines()[-1])
                later = sorted(found["later"])
                p95 = later[min(len(later) - 1, round(0.95 * (len(later) - 1)))]
                model = f"{found['model']:.2f}" if "model" in found else ""
                print(
                    f"| {language} | {how} | {found['first']:.2f} ({found['first_cpu']:.2f}) | {model} | "
                    f"{found['index']:.2f} / {found['hits'] * 1000:.1f} / {found['describe'] * 1000:.1f} | "
                    f"{statistics.median(later) * 1000:.2f} / {p95 * 1000:.2f} |"
                )
                sys.stdout.flush()


def main() -> None:
    if "--first-search" in sys.argv[1:]:
        runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
        first_search(runs)
        return
    count = o200k_counter()
    print(
        "| catalog | tools | language | tier | description (UTF-16 units) | whole section "
        "(tokens) | description + search + 2 describes (tokens) | ratio |"
    )
    print("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: |")
    worst = 0
    for name, tools in catalogs():
        for language in ("python", "typescript"):
            registry = registry_of(tools, language)
            tier = run_code_description(registry)
            worst = max(worst, tier.units)
            definition = registry.run_code_spec().definition()
            section = sdk_renderer(language)(registry.sdk_catalog())
            whole = count(with_sdk(definition, section)["description"])
            if tier.tier == "full":
                flow = count(tier.text)
            else:
                found = registry.discovery()
                answer = found.search(typical_query(tools))
                describes = [found.describe(hit) for hit in answer["names"][:2]]
                flow = sum(count(text) for text in (tier.text, answer["text"], *describes))
            print(
                f"| {name} | {len(registry.visible())} | {language} | {tier.tier} | "
                f"{tier.units:,} | {whole:,} | {flow:,} | {flow / whole:.3f} |"
            )
            sys.stdout.flush()
    print(f"\nlargest description: {worst:,} UTF-16 units (budget {DEFAULT_BUDGET:,})")


if __name__ == "__main__":
    main()
