"""`$ref`s after `definitions` becomes `$defs`: a pointer rewritten only where it reaches into
a `definitions` object that was renamed, not into data that merely has the key."""

from __future__ import annotations

from typing import Any

from .keywords import LIST_KEYWORDS, MAP_KEYWORDS, SINGLE_KEYWORDS
from .rules import Schema, definitions_to_defs


def decoded(fragment: str) -> str:
    """A URI fragment's JSON pointer with percent-escapes decoded."""
    if "%" not in fragment:
        return fragment
    from urllib.parse import unquote  # only here: the CLI's start-up does without it

    return unquote(fragment)


def _ref_tokens(ref: str) -> list[str]:
    """The tokens of a local reference (`#/a/b~1c`), unescaped."""
    return [decoded(t).replace("~1", "/").replace("~0", "~") for t in ref[2:].split("/")]


def _member_kind(token: str, value: Any) -> str:
    """What a schema's member `token` holding `value` is, for a walk along a pointer: a map
    or list of subschemas, one subschema, or data (a key no keyword defines)."""
    if token in MAP_KEYWORDS:
        return "map"
    if token in LIST_KEYWORDS and isinstance(value, list):
        return "list"
    return "schema" if token in SINGLE_KEYWORDS else "data"


def target_under_data(root: Any, ref: str) -> tuple[Any, Any] | None:
    """The container and key of a local reference's target in the normalized tree when its
    path leaves keyword positions (a schema kept under a key no keyword defines), with every
    container below that point copied so the target can be replaced without touching the
    input; None when the path stays on keywords (the walk reached the target) or leads
    nowhere."""
    tokens = _ref_tokens(ref)
    node = root
    expect = "schema"
    for index, token in enumerate(tokens):
        key: str | int = token
        if isinstance(node, dict) and token in node:
            child = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            key = int(token)
            child = node[key]
        else:
            return None
        if expect == "schema":
            expect = _member_kind(token, child)
        elif expect in ("map", "list"):
            expect = "schema"
        if index == len(tokens) - 1:
            return (node, key) if expect == "data" and isinstance(child, dict | bool) else None
        if expect == "data":
            if not isinstance(child, dict | list):
                return None
            child = dict(child) if isinstance(child, dict) else list(child)
            node[key] = child
        node = child
    return None


def rewrite_definitions_ref(ref: str, root: Schema) -> str:
    """Follow a local `$ref` through the original tree and rename each `definitions`
    keyword it passes to `$defs` (only where the rule renamed it)."""
    if not ref.startswith("#/"):
        return ref
    tokens = _ref_tokens(ref)
    if "definitions" not in tokens:
        return ref
    node: Any = root
    out = []
    expect = "schema"
    for token in tokens:
        if expect == "schema":
            if not isinstance(node, dict):
                return ref
            renamed = token == "definitions" and definitions_to_defs(node) is not node
            out.append("$defs" if renamed else token)
            node = node.get(token)
            expect = _member_kind(token, node)
        else:
            out.append(token)
            if expect == "data":
                continue
            if isinstance(node, dict):
                node = node.get(token)
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return ref
            expect = "schema"
    return "#/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t in out)
