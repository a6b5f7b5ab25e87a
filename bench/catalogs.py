"""The real catalogs the benchmarks use, fetched from the package registries on first use.

- `corpus`: the vendored MCP server dumps (`tests/corpus`), one catalog per file.
- `bfcl`: BFCL's function docs from the `bfcl-eval` wheel (JSON Lines in `.json` files; the
  same function appears in many test records, so names are de-duplicated, first one kept).
- `tooluniverse`: ToolUniverse's tool configs from the `tooluniverse` wheel (files that are
  not tool lists, and one file with a duplicate JSON key, are left out).

Wheels are downloaded with `pip download --no-deps` into `bench/.cache/` (nothing is
installed) and unpacked there.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from codegen.load.definitions import ToolDefinition
from codegen.load.sources import load_sources

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"

TOOLUNIVERSE_SKIP = {
    "mcp_contracts.lock.json",
    "mcpautoloadertool_defaults.json",
    "paleobiology_tools.json",
    "smolagent_tool_schema.json",
    "tool_page_index.json",
    "toolfinderkeyword_defaults.json",
}


@dataclass(frozen=True)
class Catalog:
    name: str
    tools: tuple[ToolDefinition, ...]
    files: tuple[Path, ...]


def wheel(package: str) -> Path:
    """The unpacked wheel of `package` (downloaded once)."""
    target = CACHE / package
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary",
            ":all:",
            "-d",
            str(CACHE),
            package,
        ],
        check=True,
    )
    found = sorted(CACHE.glob(f"{package.replace('-', '_')}-*.whl"))
    with zipfile.ZipFile(found[-1]) as archive:
        archive.extractall(target)
    return target


def corpus_catalogs() -> list[Catalog]:
    files = sorted((ROOT / "tests" / "corpus").rglob("*.json"))
    return [
        Catalog(f"corpus/{path.stem}", load_sources([str(path)]).tools, (path,)) for path in files
    ]


def _unique(tools: tuple[ToolDefinition, ...]) -> tuple[ToolDefinition, ...]:
    seen: set[str] = set()
    kept = []
    for tool in tools:
        if tool.name not in seen:
            seen.add(tool.name)
            kept.append(tool)
    return tuple(kept)


def bfcl_catalog() -> Catalog:
    data = wheel("bfcl-eval") / "bfcl_eval" / "data"
    files = sorted(p for p in data.glob("BFCL_v4_*.json")) + sorted(
        (data / "multi_turn_func_doc").glob("*.json")
    )
    loaded = load_sources([str(p) for p in files], fmt="bfcl")
    return Catalog("bfcl", _unique(loaded.tools), tuple(files))


def tooluniverse_catalog() -> Catalog:
    data = wheel("tooluniverse") / "tooluniverse" / "data"
    files = sorted(
        p
        for p in data.rglob("*.json")
        if "broken_apis" not in p.parts and p.name not in TOOLUNIVERSE_SKIP
    )
    loaded = load_sources([str(p) for p in files], namespace=True)
    return Catalog("tooluniverse", _unique(loaded.tools), tuple(files))


def large_catalogs() -> list[Catalog]:
    return [bfcl_catalog(), tooluniverse_catalog()]


def catalog_files(folder: Path) -> dict[str, list[str]]:
    """The large catalogs written as files in `folder` (on first use) that `codegen`
    reads; the source arguments of each: BFCL as JSON Lines of its own records, ToolUniverse
    as one MCP tool list."""
    bfcl = folder / "bfcl.jsonl"
    tooluniverse = folder / "tooluniverse.json"
    if not bfcl.is_file() or not tooluniverse.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            json.dumps({"name": t.name, "description": t.description, "parameters": t.input_schema})
            for t in bfcl_catalog().tools
        ]
        bfcl.write_text("\n".join(lines) + "\n", encoding="utf-8")
        records = [
            {
                "name": t.name,
                "description": t.description,
                "inputSchema": t.input_schema,
                **({"outputSchema": t.output_schema} if t.output_schema is not None else {}),
            }
            for t in tooluniverse_catalog().tools
        ]
        tooluniverse.write_text(json.dumps({"tools": records}), encoding="utf-8")
    return {
        "bfcl": [str(bfcl), "--input-format", "bfcl"],
        "tooluniverse": [str(tooluniverse)],
    }
