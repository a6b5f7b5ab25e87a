"""Normalization: small named rules that rewrite schemas into one canonical spelling.

Each rule is a pure function from one schema node to a new node (the input is never
mutated). `normalize_schema` applies them to every node of a tree without recursion and
remembers, for every node it creates, the JSON pointer of the node it came from, so later
warnings point into the file the user wrote.

Canonical form after normalization:
- every schema is a dict (boolean schemas become `{}` and `{"not": {}}`);
- `type` is a single string (type arrays and OpenAPI `nullable` become `anyOf`);
- a one-value `enum` is a `const`;
- tuples use `prefixItems` (legacy array `items` and `additionalItems` are translated);
- `definitions` is `$defs` and `$ref`s follow the rename;
- `dependencies` (draft-07 and earlier) is `dependentRequired` (key lists) and
  `dependentSchemas` (schemas);
- draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum` are numbers;
- draft-03 boolean `required` on a property is the parent's `required` list; `extends`,
  `divisibleBy`, the type `any`, schemas in `type` and type names in `disallow` take their
  later spelling;
- `$ref` with type-changing siblings becomes `allOf` (2019-09 and later), or loses them
  (draft-07 and earlier, where siblings of `$ref` are ignored).
The BFCL dialect rule runs first, before validation, because that dialect is not JSON Schema.

`keywords` holds the keyword tables, `rules` the node rules and their table (`RULES`), `walk`
the tree walk (`normalize_schema`, `normalize_node`), `refs` the `$ref` rewriting.
"""

from __future__ import annotations

from .keywords import (
    DOC_KEYWORDS,
    LIST_KEYWORDS,
    MAP_KEYWORDS,
    MODERN_DRAFTS,
    SINGLE_KEYWORDS,
    TYPE_KEYWORDS,
)
from .refs import rewrite_definitions_ref
from .rules import RULES, Rule
from .walk import Normalized, normalize_node, normalize_schema

__all__ = [
    "DOC_KEYWORDS",
    "LIST_KEYWORDS",
    "MAP_KEYWORDS",
    "MODERN_DRAFTS",
    "RULES",
    "SINGLE_KEYWORDS",
    "TYPE_KEYWORDS",
    "Normalized",
    "Rule",
    "normalize_node",
    "normalize_schema",
    "rewrite_definitions_ref",
]
