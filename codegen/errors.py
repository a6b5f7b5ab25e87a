"""Diagnostics and the exceptions the pipeline raises.

Every stage reports problems as `Diagnostic`s instead of raising, so a run can show all of
them at once. Exceptions are kept for the two cases the CLI maps to exit code 2: bad usage
and input it cannot read at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Level = Literal["error", "warning"]


@dataclass(frozen=True, slots=True, order=True)
class Diagnostic:
    """One problem, located by the source it came from and a JSON pointer into it."""

    source: str
    pointer: str
    message: str
    level: Level = "error"

    def format(self) -> str:
        """`source:pointer: level: message`, the line the CLI prints."""
        return f"{self.source}:{self.pointer}: {self.level}: {self.message}"

    @property
    def is_error(self) -> bool:
        return self.level == "error"


def pointer_key(pointer: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key of a JSON pointer: array indexes compare as numbers (`/tools/2` before
    `/tools/10`), every other token as text."""
    return tuple((1, int(t), "") if _index(t) else (2, 0, t) for t in pointer.split("/"))


def _index(token: str) -> bool:
    """ASCII digits only: `str.isdigit` also accepts `¹` or `①`, which `int` refuses."""
    return token.isascii() and token.isdigit()


def source_key(source: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key of a source name: line numbers (`file.jsonl:12`) compare as numbers."""
    return tuple(
        (1, int(t), "") if _index(t) else (2, 0, t) for t in re.split(r"([0-9]+)", source) if t
    )


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Sorted by (source, pointer, message), duplicates removed, so output is stable."""
    unique = set(diagnostics)
    return tuple(
        sorted(
            unique, key=lambda d: (source_key(d.source), pointer_key(d.pointer), d.message, d.level)
        )
    )


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.is_error for d in diagnostics)


class CodegenError(Exception):
    """Base class of the errors the CLI reports without a traceback."""

    exit_code = 1


class UsageError(CodegenError):
    """Bad command-line usage or an unreadable source: exit code 2."""

    exit_code = 2


class InvalidInputError(CodegenError):
    """The input was read but is invalid; carries the diagnostics that say why."""

    exit_code = 1

    def __init__(self, diagnostics: tuple[Diagnostic, ...]) -> None:
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.is_error]
        first = errors[0].format() if errors else "invalid input"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(first + more)


def escape_pointer_token(token: str | int) -> str:
    """RFC 6901 escaping of one reference token."""
    return str(token).replace("~", "~0").replace("/", "~1")


def join_pointer(base: str, *tokens: str | int) -> str:
    """Append tokens to a JSON pointer (`""` is the document root)."""
    return base + "".join("/" + escape_pointer_token(t) for t in tokens)
