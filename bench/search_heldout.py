"""Held-out checks for issue 39's ranking items, built from data no weight was chosen on
(imported by `bench_search_ab.py`, which prints them beside plain BM25 and `bm25s`).

1. Brands: the vendored MCP corpus (33 servers) twice, each copy under a made-up two-word
   brand spelled as one word in the prefix (`zenbase__create_issue`), over BFCL's pooled
   functions; one query per tool and spelling: `ZenBase create issue` (CamelCase),
   `zen base create issue` (split), `zenbase create issue` (joined), and the same with
   the prefix split (`zen_base__...`). Only the brand tells the two copies apart.
2. Siblings: per noun of `NOUNS`, a server with `getX`, `getXs`, `create_x` and
   `batch_create_xs`, over BFCL's pool; "list all xs", "get the x with id 42", "create a
   x", "create xs in bulk" must each rank its sibling first.
3. Two tools: pairs of BFCL `simple_python` questions (each with one function), joined by a
   step word ("A, and then b"); both functions in one search's top five.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from codegen.load.namespaces import sanitize

ROOT = Path(__file__).resolve().parent.parent
BRANDS = (
    *("ZenBase", "NovaStore", "AcmeDB", "BlueDesk", "CloudKit", "DataHub", "FlowDesk"),
    *("GreenLeaf", "HyperLog", "InfoVault", "JetMail", "KiteDocs", "LumaPay", "MetaTrack"),
    *("NetPulse", "OpenLedger", "PixelForge", "QuickBase", "RiverSync", "SkyNote", "TeamLoop"),
    *("UniCart", "VectorBox", "WaveChat", "XenoCloud", "YarnWorks", "ZipFleet", "AirPort"),
    *("BrightPath", "CoreMint", "DeepWell", "EchoRoom", "FireGate", "GlowTask", "HarborNet"),
)
OTHER = ("Ori", "Ux")
"""The second copy's brand is the first's with one of these words added (`ZenBaseOri`)."""
NOUNS = (
    *("item", "issue", "order", "user", "invoice", "ticket", "record", "comment", "product"),
    *("customer", "project", "task", "event", "contact", "note", "page", "document", "report"),
    *("message", "payment", "shipment", "account", "policy", "category"),
)


def _words(brand: str) -> list[str]:
    out: list[str] = []
    for ch in brand:
        if ch.isupper() or not out:
            out.append(ch)
        else:
            out[-1] += ch
    return out


def _plural(noun: str) -> str:
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "s"


def brand_cases(split_prefix: bool) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """(definitions, [(query, expected name)]) for the brand check."""
    files = sorted((ROOT / "tests" / "corpus" / "mcp").glob("*.json"))
    definitions: list[dict[str, Any]] = []
    cases: list[tuple[str, str]] = []
    for n, path in enumerate(files):
        tools = json.loads(path.read_text(encoding="utf-8"))["tools"]
        brand = BRANDS[n % len(BRANDS)]
        for copy, camel in enumerate((brand, brand + OTHER[n % 2])):
            words = _words(camel)
            sep = "_" if split_prefix else ""
            prefix = sanitize(sep.join(w.lower() for w in words))
            for tool in tools:
                name = f"{prefix}__{tool['name']}"
                definitions.append({**tool, "name": name})
                if copy:
                    continue
                own = " ".join(tool["name"].replace("-", "_").split("_"))
                for spelled in (camel, " ".join(w.lower() for w in words), camel.lower()):
                    cases.append((f"{spelled} {own}", name))
    return definitions, cases


def sibling_cases() -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    definitions: list[dict[str, Any]] = []
    cases: list[tuple[str, str]] = []
    for noun in NOUNS:
        server = f"{noun}svc"
        many = _plural(noun)
        cap, caps = noun.capitalize(), many.capitalize()
        tools = {
            f"get{cap}": f"Returns the {noun} with the given id, with all its fields.",
            f"get{caps}": f"Returns {many} matching a filter, one page at a time.",
            f"create_{noun}": f"Creates a {noun} from the given fields and returns it.",
            f"batch_create_{many}": f"Creates up to 100 {many} from a list of fields.",
        }
        for own, description in tools.items():
            definitions.append(
                {
                    "name": f"{server}__{own}",
                    "description": description,
                    "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
                }
            )
        cases += [
            (f"list all {many}", f"{server}__get{caps}"),
            (f"show every {noun} on the {noun} service", f"{server}__get{caps}"),
            (f"get the {noun} with id 42", f"{server}__get{cap}"),
            (f"create a {noun}", f"{server}__create_{noun}"),
            (f"create a new {noun} named test", f"{server}__create_{noun}"),
            (f"create {many} in bulk", f"{server}__batch_create_{many}"),
        ]
    return definitions, cases


STEP_WORDS = ("{a}, and then {b}", "{a}, then {b}", "{a}. After that, {b}", "{a}, and also {b}")


def two_tool_cases(questions: list[Any]) -> list[tuple[str, tuple[str, str]]]:
    """Pairs of `simple_python` questions (`bench_search.Case`s), joined by a step word."""
    simple = [c for c in questions if c.category == "simple_python" and len(c.truth) == 1]
    pairs = []
    for n in range(0, len(simple) - 1, 2):
        a, b = simple[n], simple[(n * 7 + 1) % len(simple)]
        if a.truth == b.truth:
            continue
        first = a.query.strip().rstrip(".?!")
        second = b.query.strip()
        second = second[:1].lower() + second[1:]
        query = STEP_WORDS[(n // 2) % len(STEP_WORDS)].format(a=first, b=second)
        pairs.append((query, (a.truth[0], b.truth[0])))
    return pairs


def above(rank: Callable[[str, int], Sequence[str]], cases: list[tuple[str, str]]) -> float:
    """The share of sibling queries whose tool ranks above its server's other tools (in the
    top 50)."""
    ok = 0
    for query, name in cases:
        server = name.split("__")[0]
        mine = [n for n in rank(query, 50) if n.startswith(server + "__")]
        ok += bool(mine) and mine[0] == name
    return ok / len(cases)
