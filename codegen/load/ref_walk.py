"""The `$ref`s of one schema, found and rewritten without touching the schema.

`rewrite_refs` walks a schema's subschemas (not the values of `const`, `enum`, `default` and
`examples`, which are data, and taking the keys of `properties`, `$defs` and the other maps
of names as names, not keywords) and asks a callback about every `$ref` it meets; the
callback's answer replaces the reference. Only the containers on the path to a changed
reference are copied, so an untouched subtree stays the caller's object and a file's
definition shared by many tools costs no copy per tool. The walk recurses once per level of
nesting, which the strict decoder bounds (`json_text.MAX_NESTING`).

Also the JSON-pointer helpers the bundler shares: a fragment to its tokens, tokens to a
canonical pointer, a pointer followed through a document.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import join_pointer

DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "example"})
"""Keywords whose values are data: a `$ref` key inside them is no reference."""
NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
"""Keywords whose value maps names to subschemas."""
RESOURCE_KEYWORDS = ("$id", "$anchor", "$schema")
"""What a bundled copy drops: it is no longer the resource its `$id` named, its anchors
would compete with the referring schema's own, and the referring schema's draft applies."""

Where = Any
"""Where a node sits, made cheaply while walking: the starting pointer (a string), or a
(parent, token) pair below it; `pointer_at` spells it, only when a message needs it."""
OnRef = Callable[[str, Where, bool], str | None]
"""`(reference, where the node holding it sits, under a nested $id)` -> the reference to
write instead, or None to keep it."""
_CONTAINERS = (dict, list)


def rewrite_refs(
    schema: Any, pointer: str, on_ref: OnRef, copy: bool = False, root: bool = True
) -> Any:
    """`schema` with every `$ref` the callback answers for replaced; the same object when
    nothing changed. `pointer`: the schema's place in its document, where the callback is
    told each reference sits. `copy`: the schema is being bundled elsewhere, so its
    resource keywords go too. `root`: the schema is a document's root, so its own `$id` is
    no nested one."""
    if not isinstance(schema, _CONTAINERS):
        return schema
    return _node(schema, pointer, on_ref, copy, False, root)


def pointer_at(where: Where) -> str:
    """The JSON pointer of a place the walk passed."""
    tokens = []
    while isinstance(where, tuple):
        where, token = where
        tokens.append(token)
    return join_pointer(where, *reversed(tokens))


def _node(node: Any, where: Where, on_ref: OnRef, copy: bool, nested: bool, top: bool) -> Any:
    if isinstance(node, list):
        items = None
        for index, item in enumerate(node):
            if isinstance(item, _CONTAINERS):
                new = _node(item, (where, index), on_ref, copy, nested, False)
                if new is not item:
                    items = items or list(node)
                    items[index] = new
        return node if items is None else items
    node_id = node.get("$id")
    if not top and isinstance(node_id, str) and not node_id.startswith("#"):
        nested = True  # an embedded resource: references below it have another base
    changed: dict[str, Any] | None = None
    for key, value in node.items():
        if key == "$ref":
            if isinstance(value, str):
                written = on_ref(value, where, nested)
                if written is not None and written != value:
                    changed = changed or {}
                    changed[key] = written
            continue
        if not isinstance(value, _CONTAINERS) or key in DATA_KEYWORDS:
            continue
        if key in NAME_MAPS and isinstance(value, dict):
            new = _names(value, (where, key), on_ref, copy, nested)
        else:
            new = _node(value, (where, key), on_ref, copy, nested, False)
        if new is not value:
            changed = changed or {}
            changed[key] = new
    dropped = copy and any(key in node for key in RESOURCE_KEYWORDS)
    if changed is None and not dropped:
        return node
    result = (
        {key: changed.get(key, value) for key, value in node.items()} if changed else dict(node)
    )
    if dropped:
        for key in RESOURCE_KEYWORDS:
            if isinstance(result.get(key), str):
                del result[key]
    return result


def _names(
    members: dict[str, Any], where: Where, on_ref: OnRef, copy: bool, nested: bool
) -> dict[str, Any]:
    """A map of names to subschemas (`properties`, `$defs`, ...): each member a schema."""
    result = None
    for name, child in members.items():
        if isinstance(child, dict):
            new = _node(child, (where, name), on_ref, copy, nested, False)
            if new is not child:
                result = result or dict(members)
                result[name] = new
    return members if result is None else result


def fragment_tokens(fragment: str) -> list[str] | None:
    """The tokens of a JSON-pointer fragment (`/a/b~1c`, percent escapes decoded), or None
    when the fragment is not a pointer (a plain name, `#node`)."""
    if "%" in fragment:
        from urllib.parse import unquote

        fragment = unquote(fragment)
    if not fragment:
        return []
    if not fragment.startswith("/"):
        return None
    return [token.replace("~1", "/").replace("~0", "~") for token in fragment[1:].split("/")]


def pointer_tokens(pointer: str) -> list[str]:
    """The tokens of a JSON pointer (no percent escapes: a pointer, not a fragment)."""
    if not pointer:
        return []
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]


def as_pointer(tokens: list[str]) -> str:
    """Tokens as a canonical JSON pointer: one spelling for each place."""
    return join_pointer("", *tokens)


def as_fragment(pointer: str) -> str:
    """A JSON pointer as the fragment of a local reference: `%` escaped, since readers of
    a reference decode percent escapes."""
    return "#" + pointer.replace("%", "%25")


def follow(document: Any, tokens: list[str]) -> tuple[bool, Any]:
    """(found, the value) at the pointer made of `tokens`."""
    node = document
    for token in tokens:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return False, None
    return True, node


def anchor_pointer(document: Any, name: str) -> str | None:
    """The pointer of the subschema a plain-name fragment (`#node`) names: its `$anchor`,
    or a draft-07 `$id` of `#node`; None when the document has none. Found in document
    order, so the first of two equal anchors wins, always the same one."""
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, dict):
            if node.get("$anchor") == name or node.get("$id") == "#" + name:
                return pointer
            children = [
                (value, join_pointer(pointer, key))
                for key, value in node.items()
                if key not in DATA_KEYWORDS and isinstance(value, dict | list)
            ]
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(
                reversed([(value, join_pointer(pointer, i)) for i, value in enumerate(node)])
            )
    return None
