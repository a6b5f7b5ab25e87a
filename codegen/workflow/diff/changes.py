"""What a difference between two catalogs is: a `Change` located in a tool, a tool's changes,
the catalog's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ... import ir

Part = Literal["tool", "args", "output"]
Status = Literal["added", "removed", "changed"]

DIFF_VERSION = 1
"""Version of the JSON report's layout."""


@dataclass(frozen=True, slots=True)
class Change:
    """One difference, located by the part of the tool (`args`, `output` or the `tool`
    itself) and the path of field keys inside it (`[]` array items, `{}` map values,
    `[n]` tuple items, `*` other keys of an object)."""

    kind: str
    breaking: bool
    part: Part
    path: tuple[str, ...] = ()
    old: str | None = None
    new: str | None = None
    added: tuple[ir.Scalar, ...] = ()
    removed: tuple[ir.Scalar, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolDiff:
    name: str
    status: Status
    changes: tuple[Change, ...]

    @property
    def breaking(self) -> bool:
        return any(change.breaking for change in self.changes)


@dataclass(frozen=True, slots=True)
class CatalogDiff:
    """Only tools with a difference are listed; `unchanged` counts the others."""

    tools: tuple[ToolDiff, ...]
    unchanged: int

    def count(self, status: Status) -> int:
        return sum(1 for tool in self.tools if tool.status == status)

    @property
    def breaking_changes(self) -> int:
        return sum(1 for tool in self.tools for change in tool.changes if change.breaking)

    @property
    def breaking(self) -> bool:
        return self.breaking_changes > 0
