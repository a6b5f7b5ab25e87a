"""Losslessness of the model-facing SDK sections, checked mechanically.

For every tool, every value its JSON definition carries that a caller needs must be found in
what the section shows for that tool: each description (the tool's and every schema
node's), enum and const value, default (in full), range, length and count bound, pattern,
format and example. The check reads the section back the way a reader does, not through
the renderer's own helpers:

- Python: docstrings as Python decodes them, comments as `tokenize` gives them, string and
  number constants as `ast` gives them, parameter defaults by `ast.literal_eval`.
- TypeScript: `//` comments, and string literal types decoded as JSON.

Escaping is normalized on both sides by one documented rule, implemented here on its own:
line breaks in descriptions are line breaks in the section (whitespace runs compare as one
space); inside a quoted value they are `\\n`/`\\t`; control, invisible and bidirectional
characters are `\\xNN`/`\\uNNNN`; a run of three backticks is the same run of tildes; a
comment line a checker would obey (`type: ignore`) is quoted with `> `; a TypeScript
comment writes `*/` as `*\\/` and `@ts-` as `\\@ts-`.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\ud800-\udfff]"
)
LINE_BREAKS = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
FENCE = re.compile("`{3,}")
PRAGMA_QUOTE = re.compile(
    r"^> (?=(type:|mypy:|pyright:|fmt:|yapf:|pylint:|ruff:|isort:|noqa|pragma:|nosec|pyre-|"
    r"pytype:|black:))",
    re.IGNORECASE,
)
BOUNDS = (
    ("minimum", "maximum", "{}..{}", ">= {}", "<= {}"),
    ("minLength", "maxLength", "length {}..{}", "length >= {}", "length <= {}"),
    ("minItems", "maxItems", "{}..{} items", "items >= {}", "items <= {}"),
    ("minProperties", "maxProperties", "{}..{} keys", "keys >= {}", "keys <= {}"),
)


ANY = "\x00"
"""In an expected note: any bound (the other arm's, when `allOf` arms merged)."""

UNEXPRESSED = frozenset({"not", "if", "then", "else", "dependentSchemas", "contains"})
"""Keywords whose subschemas no type can express: they only narrow what the node's other
keywords allow, so the node keeps its type and a note states the condition in full (`not
{...}`, `if {...} then {...} else {...}`, `if "key" is present: {...}`, `contains {...}`,
its description with it). Their subschemas are not read as the node's own (a value under
`not` is one the tool refuses)."""


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown_text(text: str) -> str:
    """A description as the section shows it, whitespace folded."""
    joined = " ".join(LINE_BREAKS.split(text)).expandtabs(4)
    return fold(
        FENCE.sub(lambda m: "~" * len(m.group()), HIDDEN.sub(lambda m: _escape(m.group()), joined))
    )


def shown_value(text: str) -> str:
    """A quoted value (default, example, pattern) as a one-line note shows it."""
    text = text.replace("\n", "\\n").replace("\t", "\\t")
    text = HIDDEN.sub(lambda m: _escape(m.group()), text)
    return FENCE.sub(lambda m: "~" * len(m.group()), text)


def fold(text: str) -> str:
    return " ".join(text.split())


def py_value(value: Any) -> str:
    """A JSON value in Python literal syntax, as the notes spell it."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return _py_str(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(py_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{_py_str(k)}: {py_value(v)}" for k, v in value.items()) + "}"


def _py_str(value: str) -> str:
    """A Python string literal as the SDKs quote one: backslashes doubled, line breaks,
    tabs and hidden characters escaped, backticks as `\\x60` when three touch; double
    quotes unless the text holds more double than single quotes."""
    body = value.replace("\\", "\\\\")
    body = HIDDEN.sub(lambda m: _escape(m.group()), body).replace("\n", "\\n").replace("\t", "\\t")
    if "```" in body:
        body = body.replace("`", "\\x60")
    if body.count('"') > body.count("'"):
        return "'" + body.replace("'", "\\'") + "'"
    return '"' + body.replace('"', '\\"') + '"'


def ts_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


# --- what the JSON carries ----------------------------------------------------------------


@dataclass
class Expected:
    texts: list[tuple[str, str]] = field(default_factory=list)
    """(where, description)"""
    literals: list[tuple[str, Any]] = field(default_factory=list)
    """(where, enum or const value)"""
    defaults: list[tuple[str, Any]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    """(where, note text the section must show: a bound, pattern or format)"""
    examples: list[tuple[str, Any]] = field(default_factory=list)
    multiples: list[tuple[str, Any]] = field(default_factory=list)
    """(where, multipleOf): shown as itself or a multiple of it (`allOf` arms take their
    least common multiple)"""
    structured: list[tuple[str, Any]] = field(default_factory=list)
    """(where, an object or array `enum`/`const` value): no type spells it, so a note shows
    its JSON text in full"""
    conditions: list[tuple[str, str]] = field(default_factory=list)
    """(where, the JSON text of a narrowing condition: `not`, `if`/`then`/`else`,
    `dependentSchemas`, `contains`, the keys `dependentRequired` names) that a note must
    show in full"""


def _nodes(schema: Any, pointer: str) -> Iterator[tuple[str, dict[str, Any]]]:
    stack = [(pointer, schema)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            yield where, node
            for key, child in node.items():
                if key in ("enum", "const", "default", "examples", "example", "required"):
                    continue
                if key in UNEXPRESSED:
                    continue  # degraded with a warning: the type cannot say it
                if key in ("properties", "$defs", "definitions", "patternProperties"):
                    if isinstance(child, dict):
                        stack.extend((f"{where}/{key}/{k}", v) for k, v in child.items())
                else:
                    stack.append((f"{where}/{key}", child))
        elif isinstance(node, list):
            stack.extend((f"{where}/{i}", v) for i, v in enumerate(node))


_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_LISTED = ("anyOf", "oneOf", "allOf", "prefixItems", "items")
_SINGLE = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
)


def keywords_sorted(schema: Any) -> Any:
    """A schema as a note quotes it: the keywords of every schema object in sorted order
    (their order is not content); names of properties and definitions, values, and what
    an unknown keyword holds, as written."""
    if not isinstance(schema, dict):
        return schema
    result = {}
    for key in sorted(schema):
        value = schema[key]
        if key in _NAMED and isinstance(value, dict):
            value = {name: keywords_sorted(v) for name, v in value.items()}
        elif key in _LISTED and isinstance(value, list):
            value = [keywords_sorted(v) for v in value]
        elif key in _SINGLE:
            value = keywords_sorted(value)
        result[key] = value
    return result


def _number(value: Any) -> str:
    return json.dumps(value)


def expected_values(definition: Any) -> Expected:
    """Every value of one tool's definition the section must show."""
    found = Expected()
    if isinstance(definition.description, str) and definition.description.strip():
        found.texts.append(("description", definition.description))
    for label, schema in (("input", definition.input_schema), ("output", definition.output_schema)):
        for where, node in _nodes(schema, label):
            description = node.get("description")
            if isinstance(description, str) and description.strip():
                found.texts.append((where, description))
            if isinstance(node.get("enum"), list):
                for value in node["enum"]:
                    kind = found.structured if isinstance(value, dict | list) else found.literals
                    kind.append((where, value))
            if "const" in node:
                kind = (
                    found.structured if isinstance(node["const"], dict | list) else found.literals
                )
                kind.append((where, node["const"]))
            if "not" in node and node["not"] != {}:
                found.conditions.append((where, ts_value(keywords_sorted(node["not"]))))
            if "if" in node and ("then" in node or "else" in node):
                found.conditions.append((where, ts_value(keywords_sorted(node["if"]))))
                found.conditions.extend(
                    (where, ts_value(keywords_sorted(node[k])))
                    for k in ("then", "else")
                    if k in node
                )
            if isinstance(node.get("dependentSchemas"), dict):
                found.conditions.extend(
                    (where, ts_value(keywords_sorted(v))) for v in node["dependentSchemas"].values()
                )
            if isinstance(node.get("contains"), dict):
                found.conditions.append((where, ts_value(keywords_sorted(node["contains"]))))
            for legacy in ("dependentRequired", "dependencies"):
                listed = node.get(legacy)
                for key, needed in listed.items() if isinstance(listed, dict) else ():
                    if isinstance(needed, list) and needed:  # a key list: names them all
                        found.conditions.append((where, f"if {ts_value(key)} is present: "))
                        found.conditions.extend((where, ts_value(name)) for name in needed)
                    elif isinstance(needed, dict):  # draft-07's schema form
                        found.conditions.append((where, ts_value(keywords_sorted(needed))))
            if "default" in node:
                found.defaults.append((where, node["default"]))
            examples = node.get("examples")
            if isinstance(examples, list):
                found.examples.extend((where, v) for v in examples)
            elif "example" in node:
                found.examples.append((where, node["example"]))
            for low, high, both, only_low, only_high in BOUNDS:
                lo, hi = node.get(low), node.get(high)
                lo = lo if _is_number(lo) else None
                hi = hi if _is_number(hi) else None
                if low == "minimum" and node.get("exclusiveMinimum") is True:  # draft-04
                    lo, only_low = lo, "> {}"
                    found.notes.append(
                        (where, only_low.format(_number(lo)))
                    ) if lo is not None else None
                    lo = None
                if high == "maximum" and node.get("exclusiveMaximum") is True:
                    found.notes.append((where, f"< {_number(hi)}")) if hi is not None else None
                    hi = None
                if lo is not None and hi is not None:
                    found.notes.append((where, both.format(_number(lo), _number(hi))))
                elif lo is not None:
                    # alone, or merged with another arm's upper bound (`allOf`)
                    found.notes.append(
                        (where, f"{only_low.format(_number(lo))}|{both.format(_number(lo), ANY)}")
                    )
                elif hi is not None:
                    found.notes.append(
                        (where, f"{only_high.format(_number(hi))}|{both.format(ANY, _number(hi))}")
                    )
            for keyword, spelled in (
                ("exclusiveMinimum", "> {}"),
                ("exclusiveMaximum", "< {}"),
            ):
                if _is_number(node.get(keyword)):
                    found.notes.append((where, spelled.format(_number(node[keyword]))))
            if _is_number(node.get("multipleOf")):
                found.multiples.append((where, node["multipleOf"]))
            for keyword in ("pattern", "format"):
                if isinstance(node.get(keyword), str) and node[keyword].strip():
                    if keyword == "pattern" and where.endswith("/propertyNames"):
                        # The pattern every key matches is a note of the object's keys.
                        spelled = shown_value(ts_value(node[keyword]))
                        found.notes.append((where, f"keys match {spelled}"))
                        continue
                    found.notes.append((where, f"{keyword}: {shown_value(node[keyword])}"))
    return found


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# --- what the section shows ---------------------------------------------------------------


@dataclass
class Shown:
    prose: str
    """Docstrings and comments, folded, in order."""
    notes: str
    """Comments as written (one line each), joined by newlines."""
    strings: set[str]
    constants: list[Any]
    defaults: list[Any]
    code: str = ""
    """TypeScript: the code outside comments and string literals (literal types)."""


def python_shown(code: str) -> Shown:
    """What one tool's part of the Python section shows."""
    module = ast.parse(code)
    docs = [
        ast.get_docstring(node, clean=False) or ""
        for node in ast.walk(module)
        if isinstance(node, ast.AsyncFunctionDef)
    ]
    comments = []
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT:
            text = token.string[1:]
            text = text[1:] if text.startswith(" ") else text
            comments.append(PRAGMA_QUOTE.sub("", text))
    constants = [n.value for n in ast.walk(module) if isinstance(n, ast.Constant)]
    constants += [  # a negative number is the constant under a unary minus
        -n.operand.value
        for n in ast.walk(module)
        if isinstance(n, ast.UnaryOp)
        and isinstance(n.op, ast.USub)
        and isinstance(n.operand, ast.Constant)
        and isinstance(n.operand.value, int | float)
        and not isinstance(n.operand.value, bool)
    ]
    defaults = []
    for node in ast.walk(module):
        if isinstance(node, ast.AsyncFunctionDef):
            for default in node.args.kw_defaults:
                if default is not None and not (
                    isinstance(default, ast.Constant) and default.value is Ellipsis
                ):
                    defaults.append(ast.literal_eval(default))
    return Shown(
        fold(" ".join([*docs, *comments])),
        "\n".join(comments),
        {c for c in constants if isinstance(c, str)},
        constants,
        defaults,
    )


_TS_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def typescript_shown(code: str) -> Shown:
    """What one tool's part of the TypeScript section shows."""
    comments = []
    strings: set[str] = set()
    outside = []
    for line in code.split("\n"):
        head, sep, comment = _split_comment(line)
        for literal in _TS_STRING.findall(head):
            strings.add(json.loads(literal))
        outside.append(_TS_STRING.sub('""', head))
        if sep:
            comments.append(comment.replace("*\\/", "*/").replace("\\@", "@"))
    return Shown(fold(" ".join(comments)), "\n".join(comments), strings, [], [], "\n".join(outside))


def _split_comment(line: str) -> tuple[str, str, str]:
    """Code and `// ` comment of one line (a `//` inside a string literal is code)."""
    masked = _TS_STRING.sub(lambda m: "x" * len(m.group()), line)
    at = masked.find("// ")
    if at < 0:
        if masked.endswith("//"):  # an empty comment line
            return line[:-2], "//", ""
        return line, "", ""
    return line[:at], "// ", line[at + 3 :]


# --- `ditto` as a reader expands it ---------------------------------------------------------
#
# The rule the `run_code` instructions state, read literally: a field's (or a Python
# parameter's) comment is the one on its line or the comment lines just before it; a `ditto`
# on a field's line repeats the comment last written on a field of the same name above, in
# whichever form. A field is any line that starts (indented) with a key and `:`, quoted or
# not; nothing here knows which fields the generator may write `ditto` on.

_TS_FIELD = re.compile(r'^\s+([A-Za-z_$][A-Za-z0-9_$]*|"(?:[^"\\]|\\.)*")\??: ')


def _python_lines(text: str) -> tuple[dict[int, tuple[int, str, bool]], dict[int, str]]:
    """Per line index: its comment (column of the text, text, whether it is the whole
    line), and the key of the field the line starts with."""
    lines = text.split("\n")
    comments: dict[int, tuple[int, str, bool]] = {}
    keys: dict[int, str] = {}
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    for at, token in enumerate(tokens):
        row, column = token.start[0] - 1, token.start[1]
        first = not lines[row][:column].strip()
        if token.type == tokenize.COMMENT:
            comments[row] = (column + 2, token.string[2:], first)
        elif (
            token.type in (tokenize.NAME, tokenize.STRING)
            and first
            and column > 0
            and tokens[at + 1].type == tokenize.OP
            and tokens[at + 1].string == ":"
        ):
            name = token.string
            keys[row] = name if token.type == tokenize.NAME else ast.literal_eval(name)
    return comments, keys


def _typescript_lines(text: str) -> tuple[dict[int, tuple[int, str, bool]], dict[int, str]]:
    comments: dict[int, tuple[int, str, bool]] = {}
    keys: dict[int, str] = {}
    for index, line in enumerate(text.split("\n")):
        head, sep, comment = _split_comment(line)
        if sep:
            comments[index] = (len(head) + len(sep), comment, not head.strip())
        found = _TS_FIELD.match(head)
        if found is not None:
            key = found.group(1)
            keys[index] = json.loads(key) if key.startswith('"') else key
    return comments, keys


def expand_dittos(text: str, language: str) -> str:
    """The section with every `ditto` comment on a field's line replaced by the comment
    last written on a field of the same name above it (on that field's line, or the comment
    lines just before it, joined by line breaks). A `ditto` with no such field above raises
    KeyError."""
    lines = text.split("\n")
    comments, keys = (_python_lines if language == "python" else _typescript_lines)(text)
    last: dict[str, str] = {}
    above: list[str] = []  # the comment lines since the last line of code
    for index, line in enumerate(lines):
        comment = comments.get(index)
        key = keys.get(index)
        if key is None:
            above = [*above, comment[1]] if comment is not None and comment[2] else []
            continue
        if comment is not None:
            column, written, _ = comment
            if written == "ditto":
                lines[index] = line[:column] + last[key]
            else:
                last[key] = written
        elif above:
            last[key] = "\n".join(above)
        above = []
    return "\n".join(lines)


# --- the check ----------------------------------------------------------------------------


def missing(definition: Any, shown: Shown, language: str) -> list[str]:
    """What the tool's section part does not show, as `where: what` lines."""
    expected = expected_values(definition)
    problems = []
    for where, text in expected.texts:
        if shown_text(text) not in shown.prose:
            problems.append(f"{where}: description {text[:80]!r}")
    for where, value in expected.literals:
        if isinstance(value, str):
            ok = value in shown.strings
        elif language == "python":
            ok = any(type(c) is type(value) and c == value for c in shown.constants) or (
                re.search(rf"(?<![\w.]){re.escape(py_value(value))}(?![\w.])", shown.notes)
                is not None
            )
        else:  # a literal type in the code, or a value in a note
            pattern = rf"(?<![\w.]){re.escape(ts_value(value))}(?![\w.])"
            ok = re.search(pattern, shown.code + "\n" + shown.notes) is not None
        if not ok:
            problems.append(f"{where}: enum/const {value!r:.80}")
    for where, value in expected.defaults:
        spelled = py_value(value) if language == "python" else ts_value(value)
        in_signature = any(type(d) is type(value) and d == value for d in shown.defaults)
        if not in_signature and f"default: {shown_value(spelled)}" not in shown.notes:
            problems.append(f"{where}: default {spelled[:80]}")
    for where, value in expected.examples:
        spelled = shown_value(py_value(value) if language == "python" else ts_value(value))
        if spelled not in shown.notes:
            problems.append(f"{where}: example {spelled[:80]}")
    for where, note in expected.notes:
        choices = ["[^;\n]*".join(map(re.escape, c.split(ANY))) for c in note.split("|")]
        if not any(re.search(choice, shown.notes) for choice in choices):
            problems.append(f"{where}: note {note[:80]!r}")
    for where, value in expected.structured:
        if shown_value(ts_value(value)) not in shown.notes:
            problems.append(f"{where}: enum/const {ts_value(value)[:80]}")
    for where, condition in expected.conditions:
        if shown_value(condition) not in shown.notes:
            problems.append(f"{where}: condition {condition[:80]}")
    for where, step in expected.multiples:
        shown_steps = [float(m) for m in re.findall(r"multiple of ([-\d.e+]+)", shown.notes)]
        if not any(m == step or (m / step).is_integer() for m in shown_steps if step):
            problems.append(f"{where}: multiple of {step}")
    return problems
