"""The vendored MCP corpus as a Code Mode registry: every server's recorded tools under its
file's name as server prefix, a handler that echoes, and a stand-in runtime whose language
is all that the views read. Shared by the discovery and listing-tier tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codegen.codemode.presentation.tiers import DEFAULT_BUDGET
from codegen.codemode.registry import ToolRegistry, ToolSpec
from conftest import ROOT

CORPUS = sorted((ROOT / "tests" / "corpus" / "mcp").glob("*.json"))


def recorded(path: Path) -> list[dict[str, Any]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    tools: list[dict[str, Any]] = document["tools"] if isinstance(document, dict) else document
    return tools


class Echo:
    """A stand-in runtime: only its language matters to the views tested here."""

    def __init__(self, language: str) -> None:
        self.language = language

    async def run(self, *args: Any) -> Any:
        raise AssertionError("not run")


async def echo(arguments: Any, context: Any) -> Any:
    return arguments


def corpus_registry(language: str = "python", budget: int | None = DEFAULT_BUDGET) -> ToolRegistry:
    """Every vendored server's tools, each under its file's name as server prefix."""
    registry = ToolRegistry(mode="code", budget=budget)
    for path in CORPUS:
        for tool in recorded(path):
            registry.register(
                ToolSpec(
                    f"{path.stem.replace('-', '_')}__{tool['name']}",
                    tool.get("description") or "",
                    tool.get("inputSchema") or {"type": "object"},
                    handler=echo,
                )
            )
    registry.mount_runtime(Echo(language))
    return registry
