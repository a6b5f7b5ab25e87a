"""A fast yes/no check of a schema against its draft's meta-schema.

Meta-schema validation with `jsonschema` costs about a millisecond per tool schema (most of it
resolving the 2020-12 vocabularies' references), which dominates a whole render. Almost
every real schema is valid, so the pipeline asks this module first: it compiles each draft's
meta-schema (taken from the same `jsonschema` package) into nested closures once, and answers
"valid" in microseconds. Only when it says "invalid" does `validate` run `jsonschema` for the
authoritative messages, so the diagnostics are exactly `jsonschema`'s.

The compiler supports the keywords the meta-schemas use; a meta-schema with any other
assertion keyword makes `compiled_check` return None, and the caller falls back to
`jsonschema` for everything. The test suite checks agreement with `jsonschema` on the corpus,
the golden cases and random schemas.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from functools import cache
from typing import Any

Check = Callable[[Any], bool]

META_URIS = {
    "draft-03": "http://json-schema.org/draft-03/schema",
    "draft-04": "http://json-schema.org/draft-04/schema",
    "draft-06": "http://json-schema.org/draft-06/schema",
    "draft-07": "http://json-schema.org/draft-07/schema",
    "2019-09": "https://json-schema.org/draft/2019-09/schema",
    "2020-12": "https://json-schema.org/draft/2020-12/schema",
}

_IGNORED = frozenset(
    {
        "$schema",
        "$id",
        "id",
        "$vocabulary",
        "$dynamicAnchor",
        "$recursiveAnchor",
        "$anchor",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "$defs",
        "definitions",
    }
)
"""Keywords that assert nothing here (`format` is an annotation unless a format checker is
configured, and the pipeline configures none)."""


@cache
def meta_documents() -> dict[str, Any]:
    """The official meta-schemas by URI, read from the files `jsonschema` depends on
    (`jsonschema_specifications`) without importing it: importing its registry costs more
    start-up time than the whole compiled check saves."""
    import json

    documents: dict[str, Any] = {}
    for location in _specification_folders():
        for folder, subfolders, names in os.walk(location):
            subfolders.sort()
            for name in sorted(names):
                if name.startswith("."):
                    continue
                with open(os.path.join(folder, name), encoding="utf-8") as file:
                    contents = json.load(file)
                uri = _document_id(contents)
                if uri is not None:
                    documents[uri] = contents
    return documents


@cache
def _specification_folders() -> tuple[str, ...]:
    """The `schemas` folders of the `jsonschema_specifications` package, found on
    `sys.path` as the import system would find a regular package; `importlib.util` (a few
    milliseconds to import) only when it is elsewhere (a zip, a custom finder). Looked up
    once per process, not once per meta-schema document."""
    for entry in sys.path:
        folder = os.path.join(entry or ".", "jsonschema_specifications", "schemas")
        if os.path.isfile(os.path.join(folder, os.pardir, "__init__.py")) and os.path.isdir(folder):
            return (folder,)
    import importlib.util

    spec = importlib.util.find_spec("jsonschema_specifications")
    locations = (spec.submodule_search_locations or []) if spec else []
    return tuple(os.path.join(location, "schemas") for location in locations)


def _document_id(contents: Any) -> str | None:
    uri = contents.get("$id", contents.get("id")) if isinstance(contents, dict) else None
    return uri.rstrip("#") if isinstance(uri, str) else None


_DRAFT_FOLDERS = re.compile(
    r"https?://json-schema\.org/(?:draft-0(\d)/schema|draft/(\d{4})-(\d\d)/(schema|meta/[a-z-]+))"
)
"""A meta-schema URI and where `jsonschema_specifications` keeps its document:
`draft-07/schema` in `draft7/metaschema.json`, `draft/2020-12/schema` in
`draft202012/metaschema.json`, `draft/2020-12/meta/core` in `draft202012/vocabularies/core`."""


@cache
def meta_document(uri: str) -> Any:
    """The meta-schema document `uri` names: only its own file is read when the package
    keeps it where its URI says (a cold run reads one to nine files, not all twenty); any
    other URI, or a file whose `$id` is not `uri`, falls back to reading them all."""
    import json

    found = _DRAFT_FOLDERS.fullmatch(uri)
    if found is not None:
        old_draft, year, month, name = found.groups()
        if old_draft is not None:
            relative = os.path.join(f"draft{old_draft}", "metaschema.json")
        elif name == "schema":
            relative = os.path.join(f"draft{year}{month}", "metaschema.json")
        else:
            relative = os.path.join(f"draft{year}{month}", "vocabularies", name[len("meta/") :])
        for folder in _specification_folders():
            try:
                with open(os.path.join(folder, relative), encoding="utf-8") as file:
                    contents = json.load(file)
            except (OSError, ValueError):
                continue
            if _document_id(contents) == uri:
                return contents
    return meta_documents()[uri]


class Unsupported(Exception):
    """The meta-schema uses a keyword this compiler does not implement."""


def _equal(one: Any, two: Any) -> bool:
    """JSON equality as `jsonschema` defines it: `True` is not `1`, `1` is `1.0`."""
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    if isinstance(one, str) or isinstance(two, str):
        return isinstance(one, str) and isinstance(two, str) and one == two
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(_equal(one[k], two[k]) for k in one)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    result: bool = one == two
    return result


def _every(checks: list[Check]) -> Check:
    """One check that passes when all pass (a plain loop: this runs for every node)."""
    if len(checks) == 1:
        return checks[0]

    def check(value: Any) -> bool:
        for each in checks:  # noqa: SIM110 - a loop is faster than all() over a generator
            if not each(value):
                return False
        return True

    return check


def _unique(items: list[Any]) -> bool:
    """No two items are `_equal`: one hashable key per item, so linear, not pairwise."""
    if set(map(type, items)) <= _JUST_STR:  # the usual case (`required`): plain strings
        return len(set(items)) == len(items)
    return len({_hashable(item) for item in items}) == len(items)


_JUST_STR = frozenset((str,))


def _hashable(value: Any) -> Any:
    """A key equal for exactly the values `_equal` calls equal (booleans tagged apart from
    numbers, `1` and `1.0` alike as Python already has them)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, dict):
        return ("object", frozenset((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("array", tuple(_hashable(v) for v in value))
    if value is None:
        return ("null",)
    return ("number", value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _any_of(arms: list[Check]) -> Check:
    """A check passed when one of `arms` passes."""

    def any_of(v: Any) -> bool:
        for arm in arms:  # noqa: SIM110 - a loop is faster than any() over a generator
            if arm(v):
                return True
        return False

    return any_of


def _type_check(name: str, draft: str) -> Callable[[Any], bool]:
    legacy = draft in ("draft-03", "draft-04")  # `1.0` is not an integer
    if name == "any" and draft == "draft-03":
        return _always
    checks: dict[str, Callable[[Any], bool]] = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
        "number": _is_number,
        "integer": (lambda v: isinstance(v, int) and not isinstance(v, bool))
        if legacy
        else (
            lambda v: (
                (isinstance(v, int) and not isinstance(v, bool))
                or (isinstance(v, float) and v.is_integer())
            )
        ),
    }
    if name not in checks:
        raise Unsupported(f"type {name!r}")
    return checks[name]


class _Parts:
    """What one meta-schema node asserts, gathered before its check is made: the `type`
    constraints, one property table (its own `properties` and those of the `allOf` arms
    that only declare properties), its `additionalProperties` and every other keyword's
    check. Made into one closure, so a schema node costs a call or two, not one per
    keyword and vocabulary."""

    def __init__(self) -> None:
        self.types: dict[tuple[str, ...], Any] = {}
        self.table: dict[str, list[Check]] = {}
        self.merged = False
        self.additional: tuple[Check, frozenset[str], list[re.Pattern[str]]] | None = None
        self.rest: list[Check] = []

    def build(self, draft: str, type_only: dict[Check, tuple[type, ...]]) -> Check:
        """The node's check; one that only tests the type is recorded in `type_only`."""
        kinds: tuple[type, ...] | None = None
        for names in self.types:  # the same constraint from several vocabularies: once
            if all(name in _PLAIN for name in names):
                found = tuple(_PLAIN[name] for name in names)
                if kinds is None:
                    kinds = found
                    continue
            else:
                found = None
            self.rest.insert(0, _type_test(names, found, draft))
        table = {
            name: type_only.get(check, check)
            for name, checks in self.table.items()
            for check in (_every(checks),)
        }
        additional = self.additional
        if additional is not None and self.merged:
            # Properties merged from `allOf` are not this node's own: keep the check apart.
            self.rest.append(_additional(*additional))
            additional = None
        others = _every(self.rest) if self.rest else None
        if table or additional is not None:
            return _object_check(kinds, table, additional, others)
        if kinds is None:
            return others if others is not None else _always
        only = kinds
        if others is None:
            check = lambda v: isinstance(v, only)  # noqa: E731
            type_only[check] = only
            return check
        return lambda v: isinstance(v, only) and others(v)


_PLAIN: dict[str, type] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}
"""Type names that one `isinstance` decides (no `int`/`bool` subtlety)."""


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _type_test(names: tuple[str, ...], kinds: tuple[type, ...] | None, draft: str) -> Check:
    if kinds is not None:
        return lambda v: isinstance(v, kinds)
    tests = [_type_check(name, draft) for name in names]
    if len(tests) == 1:
        return tests[0]
    return lambda v: any(test(v) for test in tests)


def _additional(extra: Check, known: frozenset[str], patterns: list[re.Pattern[str]]) -> Check:
    def additional(v: Any) -> bool:
        if isinstance(v, dict):
            for k, item in v.items():
                if (
                    k not in known
                    and not (patterns and any(p.search(k) for p in patterns))
                    and not extra(item)
                ):
                    return False
        return True

    return additional


def _object_check(
    kinds: tuple[type, ...] | None,
    table: dict[str, Check | tuple[type, ...]],
    additional: tuple[Check, frozenset[str], list[re.Pattern[str]]] | None,
    others: Check | None,
) -> Check:
    """A node with a property table or `additionalProperties`: the type, then one pass over
    an object's members, then the rest. A member whose check only tests its type
    (`description`, `title`, ...) has the types in the table, tested without a call."""
    if additional is None:

        def properties(v: Any) -> bool:
            if kinds is not None and not isinstance(v, kinds):
                return False
            if isinstance(v, dict):
                for key, item in v.items():
                    each = table.get(key)
                    if each is None:
                        continue
                    if each.__class__ is tuple:
                        if not isinstance(item, each):
                            return False
                    elif not each(item):  # type: ignore[operator]
                        return False
            return others is None or others(v)

        return properties
    extra, known, patterns = additional

    def members(v: Any) -> bool:
        if kinds is not None and not isinstance(v, kinds):
            return False
        if isinstance(v, dict):
            for key, item in v.items():
                each = table.get(key)
                if each is not None:
                    if each.__class__ is tuple:
                        if not isinstance(item, each):
                            return False
                    elif not each(item):  # type: ignore[operator]
                        return False
                elif (
                    key not in known
                    and not (patterns and any(p.search(key) for p in patterns))
                    and not extra(item)
                ):
                    return False
        return others is None or others(v)

    return members


_PLAIN_RELATIVE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_./-]*(?:#.+)?")
"""A relative reference that is a plain path (`meta/core`, as the 2019-09 and 2020-12
meta-schemas refer to their vocabularies): no scheme, query, leading `/` or `.` segment."""


def _joined(base: str, ref: str) -> str:
    """`urljoin(base, ref)`, without importing `urllib.parse` for the references the
    meta-schemas hold: within the document (`#...`), or a plain relative path against an
    `http(s)` base with a path."""
    document = base.partition("#")[0]
    web = document.startswith(("http://", "https://"))
    if ref.startswith("#") and web:
        return document + ref if ref != "#" else document
    slash = document.rfind("/")
    path = ref.partition("#")[0]
    if (
        web
        and _PLAIN_RELATIVE.fullmatch(ref)
        and not {".", "..", ""} & set(path.split("/"))
        and slash > document.index("//") + 1
        and "?" not in document
    ):
        return document[: slash + 1] + ref
    from urllib.parse import urljoin

    return urljoin(base, ref)


def _resolved(base: str, ref: str) -> tuple[str, str]:
    """The document URI and fragment `ref` names, relative to `base`."""
    uri, _, fragment = _joined(base, ref).partition("#")
    return uri or base, fragment


class _Compiler:
    def __init__(self, draft: str) -> None:
        self.draft = draft
        self.root_uri = META_URIS[draft]
        self.compiled: dict[tuple[str, str], Check] = {}
        self.pending: dict[tuple[str, str], list[Check]] = {}
        self.type_only: dict[Check, tuple[type, ...]] = {_always: (object,)}
        """Checks that only test `isinstance(value, types)`, and those types."""
        self.string_enums: dict[Check, frozenset[str]] = {}
        """Checks that only test for one of some strings (`enum`), and those strings."""

    def document(self, uri: str) -> Any:
        return meta_document(uri.rstrip("#"))

    def reference(self, base: str, ref: str) -> Check:
        """A check for `$ref` resolved against `base`, compiled on first use. Only a
        reference met again while its own target compiles (refs recurse) goes through a
        deferred call; every other one is the target's check itself."""
        uri, fragment = _resolved(base, ref)
        key = (uri, fragment)
        found = self.compiled.get(key)
        if found is not None:
            return found
        cell = self.pending.get(key)
        if cell is not None:
            later = cell

            def deferred(value: Any) -> bool:
                return later[0](value)

            return deferred
        cell = self.pending[key] = []
        node: Any = self.document(uri)
        for token in fragment.split("/")[1:] if fragment else []:
            node = node[token.replace("~1", "/").replace("~0", "~")]
        check = self.schema(node, uri)
        cell.append(check)
        del self.pending[key]
        self.compiled[key] = check
        return check

    def schema(self, node: Any, base: str) -> Check:
        if node is True or node == {}:
            return _always
        if node is False:
            return _never
        if not isinstance(node, dict):
            raise Unsupported("non-schema node")
        if isinstance(node.get("$id"), str) and node["$id"].startswith("http"):
            base = node["$id"].rstrip("#")
        parts = _Parts()
        for key, value in node.items():
            if key not in _IGNORED:
                self.gather(parts, key, value, node, base)
        return parts.build(self.draft, self.type_only)

    def gather(self, parts: _Parts, key: str, value: Any, node: dict[str, Any], base: str) -> None:
        """Add one keyword of a node to its parts."""
        if key == "type":
            names = tuple(value) if isinstance(value, list) else (value,)
            if self.draft == "draft-03" and not all(isinstance(n, str) for n in names):
                parts.rest.append(self.draft03_type(names, base))
                return
            for name in names:
                _type_check(name, self.draft)  # an unknown name is Unsupported
            parts.types.setdefault(names, None)
        elif key == "properties":
            for name, sub in value.items():
                parts.table.setdefault(name, []).append(self.schema(sub, base))
        elif key == "additionalProperties":
            extra = self.schema(value, base)
            known = frozenset(node.get("properties", {}))
            patterns = [re.compile(p) for p in node.get("patternProperties", {})]
            parts.additional = (extra, known, patterns)
        elif key == "allOf":
            self.all_of(parts, value, base)
        else:
            check = self.keyword(key, value, node, base)
            if check is not None:
                parts.rest.append(check)

    def draft03_type(self, names: tuple[Any, ...], base: str) -> Check:
        """Draft-03's `type` whose list holds schemas as well as names: a value matches
        when it has one of the named types or is valid against one of the schemas."""
        if not all(isinstance(n, str | dict) for n in names):
            raise Unsupported("type")
        simple = [_type_check(n, self.draft) for n in names if isinstance(n, str)]
        return _any_of(simple + [self.schema(n, base) for n in names if isinstance(n, dict)])

    def all_of(self, parts: _Parts, arms: list[Any], base: str) -> None:
        """`allOf`: the arms that only declare `properties` (the 2019-09 and 2020-12
        vocabularies) are merged into the node's own property table and types, so each
        schema node is walked once instead of once per vocabulary."""
        rest: list[Check] = []
        for arm in arms:
            target, target_base = arm, base
            if isinstance(arm, dict) and set(arm) == {"$ref"}:
                target_base = _joined(base, arm["$ref"]).rstrip("#")
                target = self.document(target_base) if "#" not in arm["$ref"] else None
            keys = set(target) - _IGNORED if isinstance(target, dict) else {"?"}
            if (
                isinstance(target, dict)
                and keys <= {"properties", "type", "$dynamicRef"}
                and "properties" in keys
            ):
                parts.merged = True
                for other in ("properties", "type", "$dynamicRef"):
                    if other in target:
                        self.gather(parts, other, target[other], target, target_base)
            else:
                rest.append(self.schema(arm, base))
        parts.rest.extend(rest)

    def keyword(self, key: str, value: Any, node: dict[str, Any], base: str) -> Check | None:
        if key == "$ref":
            return self.reference(base, value)
        if key in ("$dynamicRef", "$recursiveRef"):
            if value not in ("#meta", "#"):
                raise Unsupported(key)
            return self.reference(self.root_uri, "#")
        if key == "propertyNames":
            key_check = self.schema(value, base)
            return lambda v: not isinstance(v, dict) or all(key_check(k) for k in v)
        if key == "items":
            if not isinstance(value, dict | bool):
                raise Unsupported("array items")
            each = self.schema(value, base)
            if each is _always:  # `items: true` asserts nothing
                return None

            def items(v: Any) -> bool:
                if isinstance(v, list):
                    for item in v:
                        if not each(item):
                            return False
                return True

            return items
        if key == "anyOf":
            arms = [self.schema(sub, base) for sub in value]
            if len(arms) == 2 and arms[0] in self.string_enums:  # `type`: a name or a list
                names, second = self.string_enums[arms[0]], arms[1]
                return lambda v: (isinstance(v, str) and v in names) or second(v)
            if len(arms) == 2:  # the meta-schemas' usual shape (`type`, `items`)
                first, second = arms
                return lambda v: first(v) or second(v)
            return _any_of(arms)
        if key == "enum":
            options = list(value)
            if all(isinstance(option, str) for option in options):
                allowed = frozenset(options)
                check = lambda v: isinstance(v, str) and v in allowed  # noqa: E731
                self.string_enums[check] = allowed
                return check
            return lambda v: any(_equal(v, option) for option in options)
        if key == "minItems":
            return lambda v: not isinstance(v, list) or len(v) >= value
        if key == "uniqueItems":
            return (lambda v: not isinstance(v, list) or _unique(v)) if value else None
        if key == "minimum":
            if node.get("exclusiveMinimum") is True:  # draft-04's boolean form
                return lambda v: not _is_number(v) or v > value
            return lambda v: not _is_number(v) or v >= value
        if key == "exclusiveMinimum":
            if isinstance(value, bool):
                return None  # applied by `minimum`
            return lambda v: not _is_number(v) or v > value
        if key == "pattern":
            compiled = re.compile(value)
            return lambda v: not isinstance(v, str) or compiled.search(v) is not None
        if key == "dependencies":
            needs = {
                k: [d] if isinstance(d, str) and self.draft == "draft-03" else list(d)
                for k, d in value.items()
                if isinstance(d, list) or (isinstance(d, str) and self.draft == "draft-03")
            }
            if len(needs) != len(value):
                raise Unsupported("schema dependencies")
            return lambda v: (
                not isinstance(v, dict)
                or all(all(r in v for r in required) for k, required in needs.items() if k in v)
            )
        if key == "patternProperties":
            pairs = [(re.compile(p), self.schema(s, base)) for p, s in value.items()]
            return lambda v: (
                not isinstance(v, dict)
                or all(check(item) for k, item in v.items() for p, check in pairs if p.search(k))
            )
        raise Unsupported(key)


@cache
def compiled_check(draft: str) -> Check | None:
    """The compiled meta-schema of a draft, or None when it cannot be compiled."""
    if draft not in META_URIS:
        return None
    try:
        compiler = _Compiler(draft)
        return compiler.reference(compiler.root_uri, "#")
    except (Unsupported, KeyError, re.error):
        return None


def is_valid(draft: str, schema: Any) -> bool | None:
    """True/False when the compiled meta-schema can answer, None when it cannot."""
    check = compiled_check(draft)
    if check is None:
        return None
    try:
        return bool(check(schema))
    except (RecursionError, TypeError, ValueError):
        return None
