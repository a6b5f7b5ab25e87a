"""Search inputs a child process needs too (the determinism tests rank them again under other
hash seeds): the vendored MCP corpus as definitions, the queries ranked, and issue 39's small
catalog of siblings and brand names. Kept light: no pytest, no conftest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codegen.search import SearchIndex, document

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "mcp"


def corpus_definitions() -> list[dict[str, Any]]:
    """Every tool of the vendored MCP corpus, named `server__tool` (the file stem, `-` as
    `_`, is the server)."""
    found = []
    for path in sorted(CORPUS.glob("*.json")):
        prefix = path.stem.replace("-", "_")
        for definition in json.loads(path.read_text(encoding="utf-8"))["tools"]:
            found.append({**definition, "name": f"{prefix}__{definition['name']}"})
    return found


QUERIES = [
    "search",
    "read a file",
    "create an issue in a repository",
    "list tables",
    "navigate the browser to a url and take a screenshot",
    "get_current_time",
    ["find the repository", "write the file", "post to slack"],
]


FILLER = [
    {"name": f"{server}__{verb}_{noun}", "description": f"{verb.capitalize()} {noun}s of {server}."}
    for server in ("acme", "sql", "mongo", "store", "shop", "crm")
    for verb in ("list", "get", "delete", "update")
    for noun in ("collection", "database", "user", "table", "record", "acme_thing")
]


TOOLS = [
    {"name": "acmedb__list_collections", "description": "Lists the collections."},
    {"name": "acmedb__get_document", "description": "Get a document by id."},
    {"name": "shop__getItem", "description": "Get an item by its id, with every field."},
    {"name": "shop__getItems", "description": "Get items, paginated."},
    {"name": "gh__create_issue", "description": "Create a new issue in a repository."},
    {"name": "gh__batch_create_issues", "description": "Create issues in a repository."},
    {"name": "fs__read_file", "description": "Read a file from disk."},
    {"name": "fs__read_files", "description": "Read several files from disk."},
    {"name": "mail__send_email", "description": "Send an email message to a recipient."},
    *(
        {"name": f"notes__read_note{more}", "description": f"Read a note{more.replace('_', ' ')}."}
        for more in ("", "_text", "_tags", "_meta", "_links", "_history")
    ),
    *FILLER,
]


def ranking_index() -> SearchIndex:
    return SearchIndex.build([document(t) for t in TOOLS])
