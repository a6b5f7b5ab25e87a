"""Local `$ref` resolution inside one schema document.

Supports JSON pointers (`#/$defs/Node`, `#/properties/a`, `#` for the root, with `~0`, `~1`
and percent escapes), plain-name fragments (`#node`, from `$anchor` or a draft-07
`$id: "#node"`), and absolute references to the document's own `$id`. Anything else is a
remote reference, which is never fetched: the caller degrades that node and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import join_pointer


def _unquote(fragment: str) -> str:
    """Percent escapes decoded (`urllib` is imported only when there is one)."""
    if "%" not in fragment:
        return fragment
    from urllib.parse import unquote

    return unquote(fragment)


@dataclass(frozen=True, slots=True)
class Resolved:
    """The node a reference points to, and its JSON pointer from the root."""

    node: Any
    pointer: str


class RefResolver:
    """Resolves references against one (normalized) schema root."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self._anchors: dict[str, Resolved] | None = None
        self._draft: str | None = None
        base = root.get("$id") if isinstance(root, dict) else None
        self._base = base.partition("#")[0] if isinstance(base, str) else None

    def resolve(self, ref: str) -> Resolved | str:
        """The target, or a message saying why it cannot be resolved."""
        document, _, fragment = ref.partition("#")
        if document and document != self._base:
            return f"remote $ref {ref!r} is not followed"
        if not fragment:
            return Resolved(self.root, "")
        if fragment.startswith("/"):
            return self._pointer(_unquote(fragment), ref)
        anchor = self._anchor_map().get(_unquote(fragment))
        return anchor if anchor is not None else f"$ref {ref!r}: no $anchor {fragment!r}"

    def _pointer(self, pointer: str, ref: str) -> Resolved | str:
        node = self.root
        path = ""
        tokens = [raw.replace("~1", "/").replace("~0", "~") for raw in pointer[1:].split("/")]
        for index, token in enumerate(tokens):
            if isinstance(node, dict):
                following = tokens[index + 1] if index + 1 < len(tokens) else None
                token = self._renamed(node, token, following)
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return f"$ref {ref!r} points to nothing"
            path = join_pointer(path, token)
        return Resolved(node, path)

    def _renamed(self, node: dict[str, Any], token: str, following: str | None) -> str:
        """The keyword normalization put in place of a legacy one the reference still
        names: `definitions` became `$defs`, and a tuple's array `items` (before draft
        2020-12) became `prefixItems`. Normalization rewrites the references it walks past,
        but not those inside a subschema that only a non-keyword container holds
        (`#/definitions/group/inner`), nor those into a tuple's items; the resolver then
        finds the same node as the modern spelling would."""
        if token == "definitions" and token not in node and isinstance(node.get("$defs"), dict):
            return "$defs"
        if (
            token == "items"
            and following is not None
            and following.isdigit()
            and not isinstance(node.get("items"), list)
            and isinstance(node.get("prefixItems"), list)
            and self._legacy_items()
        ):
            return "prefixItems"
        return token

    def _legacy_items(self) -> bool:
        """Whether the document's draft spelled tuples as array `items` (before 2020-12)."""
        if self._draft is None:
            from ..validate.checks import draft_of

            self._draft = draft_of(self.root)[0]
        return self._draft != "2020-12"

    def _anchor_map(self) -> dict[str, Resolved]:
        if self._anchors is None:
            anchors: dict[str, Resolved] = {}
            stack: list[tuple[Any, str]] = [(self.root, "")]
            while stack:
                node, pointer = stack.pop()
                if isinstance(node, dict):
                    for key in ("$anchor", "$dynamicAnchor"):
                        if isinstance(node.get(key), str):
                            anchors.setdefault(node[key], Resolved(node, pointer))
                    node_id = node.get("$id") if pointer else None
                    if isinstance(node_id, str) and node_id.startswith("#"):
                        anchors.setdefault(node_id[1:], Resolved(node, pointer))
                    stack.extend(
                        (v, join_pointer(pointer, k))
                        for k, v in node.items()
                        if k not in ("const", "enum", "default", "examples")
                    )
                elif isinstance(node, list):
                    stack.extend((v, join_pointer(pointer, i)) for i, v in enumerate(node))
            self._anchors = anchors
        return self._anchors
