"""Strict JSON and YAML decoding with positions in every error.

Tool definitions come from files people edit by hand and from servers we do not control, so
the decoder refuses what `json.loads` quietly accepts: duplicate keys (the last one would
win silently), `NaN` and `Infinity` (not JSON, and not representable in the SDKs), and
invalid UTF-8. Every refusal names the line and column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import join_pointer
from .fast_json import NOT_DECODED, try_loads

MAX_NESTING = 512
"""Deepest container nesting accepted in a document; deeper input is rejected, not parsed."""


@dataclass(frozen=True, slots=True)
class DecodeProblem(Exception):
    """Why a text could not be decoded, with a 1-based position and the pointer if known."""

    message: str
    line: int = 0
    column: int = 0
    pointer: str = ""

    def describe(self) -> str:
        where = f" at line {self.line} column {self.column}" if self.line else ""
        return f"{self.message}{where}"


class _Duplicate(Exception):
    pass


class _NonFinite(Exception):
    pass


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Duplicate(key)
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise _NonFinite(name)


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs_hook, parse_constant=_reject_constant)


def without_bom(data: bytes) -> bytes:
    """The bytes after a UTF-8 byte order mark, if there is one."""
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def decode_bytes(data: bytes) -> str:
    """UTF-8 (an optional BOM is dropped) or a `DecodeProblem` at the first bad byte."""
    data = without_bom(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8", "replace")
        line, column = _position(prefix, len(prefix))
        raise DecodeProblem(f"invalid UTF-8 (byte 0x{data[exc.start]:02x})", line, column) from None


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def loads(text: str, utf8: bytes | None = None) -> Any:
    """Decode one strict JSON document. `utf8`: the same text as UTF-8 bytes, when the
    caller has them. Clean documents take `fast_json`'s path; anything it refuses is decoded
    here again, and the problem reported from here."""
    value = try_loads(text, utf8)
    if value is not NOT_DECODED:
        return value
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise DecodeProblem(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except (_Duplicate, _NonFinite):
        raise _locate_problem(text) from None
    except RecursionError:
        raise DecodeProblem(f"nesting deeper than {MAX_NESTING} levels") from None
    depth = nesting_depth(value)
    if depth > MAX_NESTING:
        raise DecodeProblem(f"nesting depth {depth} exceeds the limit of {MAX_NESTING}")
    return value


def loads_lines(text: str) -> list[tuple[int, Any]]:
    """Decode JSON Lines: (line number, value) for every non-blank line. Lines end at LF
    only (a CR LF ending is tolerated): a record's strings may hold U+2028, U+2029, U+0085
    and the other characters `str.splitlines` would also break at, as in a `.json` file."""
    records = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if not line.strip(" \t\r"):
            continue
        try:
            records.append((number, loads(line)))
        except DecodeProblem as problem:
            raise DecodeProblem(problem.message, number, problem.column, problem.pointer) from None
    return records


def nesting_depth(value: Any) -> int:
    """Container nesting depth, computed without recursion: one level at a time, so a
    node costs no stack entry of its own (this runs on every BFCL schema)."""
    containers = (dict, list)  # a tuple: `isinstance` with `dict | list` is slower
    level = [value] if isinstance(value, containers) else []
    depth = 0
    while level:
        depth += 1
        deeper: list[Any] = []
        push = deeper.append
        for node in level:
            for child in node.values() if isinstance(node, dict) else node:
                if isinstance(child, containers):
                    push(child)
        level = deeper
    return depth


scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:Infinity|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|true|false|null|NaN")


def _locate_problem(text: str) -> DecodeProblem:
    """Find the first duplicate key or non-finite constant; only runs on the error path."""
    # Each frame: [container, pointer, seen keys or next index].
    stack: list[list[Any]] = []
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    expect_value = True
    while pos < len(text):
        char = text[pos]
        if expect_value:
            if char in "{[":
                kind = "object" if char == "{" else "array"
                pointer = _child_pointer(stack)
                stack.append([kind, pointer, set() if kind == "object" else 0, None])
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if pos < len(text) and text[pos] in "}]":
                    stack.pop()
                    pos += 1
                    expect_value = False
                    continue
                if kind == "object":
                    problem, pos = _read_key(text, pos, stack)
                    if problem:
                        return problem
                continue
            if char == '"':
                _, pos = scanstring(text, pos + 1)
            else:
                match = _SCALAR.match(text, pos)
                if match is None:
                    break
                if match.group().lstrip("-") in ("NaN", "Infinity"):
                    line, column = _position(text, pos)
                    return DecodeProblem(
                        f"{match.group()} is not valid JSON (numbers must be finite)",
                        line,
                        column,
                        _child_pointer(stack),
                    )
                pos = match.end()
            expect_value = False
            continue
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= len(text):
            break
        char = text[pos]
        if char in "}]":
            stack.pop()
            pos += 1
        elif char == ",":
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
            frame = stack[-1]
            if frame[0] == "array":
                frame[2] += 1
                expect_value = True
            else:
                problem, pos = _read_key(text, pos, stack)
                if problem:
                    return problem
                expect_value = True
        else:
            break
    return DecodeProblem("invalid JSON")


def _read_key(text: str, pos: int, stack: list[list[Any]]) -> tuple[DecodeProblem | None, int]:
    frame = stack[-1]
    key, end = scanstring(text, pos + 1)
    if key in frame[2]:
        line, column = _position(text, pos)
        pointer = join_pointer(frame[1], key)
        return DecodeProblem(
            f"duplicate key {json.dumps(key, ensure_ascii=False)}", line, column, pointer
        ), end
    frame[2].add(key)
    frame[3] = key
    end = _WS.match(text, end).end()  # type: ignore[union-attr]
    return None, _WS.match(text, end + 1).end()  # type: ignore[union-attr]


def _child_pointer(stack: list[list[Any]]) -> str:
    if not stack:
        return ""
    kind, pointer, state, key = stack[-1]
    return join_pointer(pointer, key if kind == "object" else state)


def load_yaml(text: str) -> Any:
    """Decode YAML with the same strictness: no duplicate keys, JSON-compatible values only."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        pass

    def construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                mark = key_node.start_mark
                raise DecodeProblem(
                    f"mapping key {key!r} is not a string", mark.line + 1, mark.column + 1
                )
            if key in mapping:
                mark = key_node.start_mark
                raise DecodeProblem(
                    f"duplicate key {json.dumps(key, ensure_ascii=False)}",
                    mark.line + 1,
                    mark.column + 1,
                )
            mapping[key] = loader.construct_object(value_node, deep=True)
        return mapping

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    try:
        value = yaml.load(text, Loader=StrictLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        raise DecodeProblem(f"invalid YAML: {exc.problem}", line, column) from None
    except yaml.YAMLError as exc:
        raise DecodeProblem(f"invalid YAML: {exc}") from None
    except RecursionError:
        raise DecodeProblem(f"nesting deeper than {MAX_NESTING} levels") from None
    _check_json_compatible(value)
    depth = nesting_depth(value)
    if depth > MAX_NESTING:
        raise DecodeProblem(f"nesting depth {depth} exceeds the limit of {MAX_NESTING}")
    return value


def _check_json_compatible(value: Any) -> None:
    """YAML has dates, binary and non-finite floats; tool definitions must be plain JSON."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, dict):
            stack.extend((v, join_pointer(pointer, k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, join_pointer(pointer, i)) for i, v in enumerate(node))
        elif isinstance(node, float) and (node != node or node in (float("inf"), float("-inf"))):
            raise DecodeProblem("non-finite number is not valid JSON", pointer=pointer)
        elif node is not None and not isinstance(node, str | int | float | bool):
            raise DecodeProblem(f"{type(node).__name__} value is not valid JSON", pointer=pointer)
