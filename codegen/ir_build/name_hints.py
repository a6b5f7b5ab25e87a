"""Naming hints: the name a schema node's type would take, read from where the node sits.

The builder asks for a hint before it claims a name from the `names.NameAllocator`; the
allocator makes it unique. Hints depend only on the node's own tool and place (a `$defs`
key, a property key, a discriminating `const`, a title), never on the order of the walk, so
every reference to a node agrees on its name.
"""

from __future__ import annotations

from typing import Any

from ..identifiers import camel_case, type_base


def arm_hints(hint: str, arms: list[Any]) -> list[str]:
    """Names for union arms: a discriminating `const`, else distinct titles, else 1, 2, ..."""
    objects = [
        a
        for a in arms
        if isinstance(a, dict) and "$ref" not in a and isinstance(a.get("properties"), dict)
    ]
    if len(objects) >= 2:
        # Only a key every object declares can discriminate; trying just the keys of the
        # object with the fewest keeps this linear in the size of the arms.
        fewest = min((a["properties"] for a in objects), key=len)
        for key in objects[0]["properties"]:
            if key not in fewest:
                continue
            values = [const_of(a["properties"].get(key)) for a in objects]
            parts = [camel_case(v) if isinstance(v, str) else "" for v in values]
            if all(parts) and len(set(parts)) == len(parts):
                return _named_arms(hint, arms, objects, parts)
        titles = [
            camel_case(a["title"]) if isinstance(a.get("title"), str) else "" for a in objects
        ]
        if all(titles) and len(set(titles)) == len(titles):
            return _named_arms(hint, arms, objects, titles)
    return [f"{hint}{i + 1}" for i in range(len(arms))]


def _named_arms(hint: str, arms: list[Any], objects: list[Any], parts: list[str]) -> list[str]:
    """`hint + part` for each object arm, `hint + position` for the others. Arms are
    matched by identity while both lists hold them."""
    by_arm = dict(zip(map(id, objects), parts, strict=True))
    return [
        hint + by_arm[id(a)] if id(a) in by_arm else f"{hint}{i + 1}" for i, a in enumerate(arms)
    ]


def const_of(schema: Any) -> Any:
    """The one value a node admits by `const` or a one-value `enum`, else None."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    values = schema.get("enum")
    return values[0] if isinstance(values, list) and len(values) == 1 else None


def home_hint(pointer: str, root_hint: str, defs_prefix: str) -> str:
    """The name a referenced node takes: derived from where it lives (its JSON pointer in
    the document), not from the place that refers to it, so every reference agrees.
    `root_hint` names the document's root (`Stem_Args`); `$defs` at the top start from
    `defs_prefix` (`Stem_`), or are their key alone when it is empty."""
    name = root_hint
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    index = 0
    while index < len(tokens):
        token = tokens[index]
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if token in ("$defs", "definitions") and following is not None:
            prefix = defs_prefix if index == 0 else name
            # No prefix (a plain schema's `$defs`): the key alone, made a valid type name.
            name = (
                prefix + (camel_case(following) or "Def") if prefix else type_base(following, "Def")
            )
            index += 2
        elif token in ("properties", "patternProperties") and following is not None:
            name += camel_case(following) or "Field"
            index += 2
        elif token in ("prefixItems", "anyOf", "oneOf") and following is not None:
            name += str(int(following) + 1) if following.isdigit() else ""
            index += 2
        elif token == "additionalProperties":
            name += "Value"
            index += 1
        else:
            index += 2 if token == "allOf" else 1
    return name
