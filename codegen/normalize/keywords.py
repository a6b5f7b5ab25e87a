"""The keyword tables of JSON Schema the normalizer and the builder read: which keywords hold
one schema, a list or a map of them, which only document, which belong to which type."""

from __future__ import annotations

SINGLE_KEYWORDS = frozenset(
    {
        "additionalProperties",
        "additionalItems",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
        "items",
    }
)
LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
MAP_KEYWORDS = frozenset(
    {
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
    }
)
DOC_KEYWORDS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
    }
)
TYPE_KEYWORDS = {
    "string": frozenset(
        {
            "minLength",
            "maxLength",
            "pattern",
            "format",
            "contentMediaType",
            "contentEncoding",
            "contentSchema",
        }
    ),
    "number": frozenset(
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"}
    ),
    "array": frozenset(
        {
            "items",
            "prefixItems",
            "additionalItems",
            "minItems",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
            "unevaluatedItems",
        }
    ),
    "object": frozenset(
        {
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "minProperties",
            "maxProperties",
            "dependentRequired",
            "dependentSchemas",
            "dependencies",
            "unevaluatedProperties",
        }
    ),
}
TYPED_KEYWORDS: frozenset[str] = frozenset().union(*TYPE_KEYWORDS.values())
"""Every keyword that belongs to one type."""
UNSHARED = TYPED_KEYWORDS | {"type", "enum", "const"}
"""Keywords a type array's arms take one by one; every other one stays beside the union."""
TYPE_KEYWORDS["integer"] = TYPE_KEYWORDS["number"]
MODERN_DRAFTS = frozenset({"2019-09", "2020-12"})

BFCL_ANY = frozenset({"any", "", "Any", "Object"})
"""BFCL type names that mean any value."""
