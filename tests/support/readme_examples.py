"""Reading the README's examples in tests that run them as written."""

from __future__ import annotations

import re

from conftest import ROOT

NPX = """#!/bin/sh
# Stands in for npx: starts the locally installed server instead of downloading it.
echo $$ >> {pids}
[ "$1" = "-y" ] && shift
[ "$1" = "@modelcontextprotocol/server-everything" ] || {{
    echo "npx stand-in: unexpected arguments: $*" >&2
    exit 2
}}
shift
exec {server} "$@"
"""
"""Paths are written in: the MCP SDK starts servers with a reduced environment."""


def section(heading: str, stop: str = r"^## ") -> str:
    """The README from `heading` up to the next line matching `stop`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert heading in readme, f"README.md lost its section {heading!r}"
    text = readme[readme.index(heading) :]
    following = re.search(stop, text[len(heading) :], re.MULTILINE)
    return text[: len(heading) + following.start()] if following else text


def fenced(markdown: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", markdown, re.MULTILINE | re.DOTALL)
