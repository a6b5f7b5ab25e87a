"""What a tool says of itself in its MCP annotations, read strictly, for the policy.

The reading is the one the model sees (`render/sections/hints.py`, `marks_of`): a hint
counts only when it is an exact JSON boolean, and `destructiveHint` / `idempotentHint` only
for a tool that is not read-only. The classes a rule can name are the markers of an exact
`true` (`read-only`, `destructive`, `idempotent`, `open-world`), and `unannotated` for a
tool that states none of the four hints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...render.sections.hints import MARKS, marks_of

CLASSES = (*(if_true for _, if_true, _ in MARKS), "unannotated")
"""The annotation classes a rule may name (`any` matches every tool besides)."""


@dataclass(frozen=True, slots=True)
class ToolHints:
    """The classes of one tool, from its annotations."""

    classes: frozenset[str] = frozenset({"unannotated"})

    @classmethod
    def of(cls, annotations: Any) -> ToolHints:
        stated = isinstance(annotations, Mapping) and any(
            isinstance(annotations.get(key), bool) for key, _, _ in MARKS
        )
        if not stated:
            return cls()
        return cls(frozenset(mark for mark in marks_of(annotations) if mark in CLASSES))

    @property
    def read_only(self) -> bool:
        return "read-only" in self.classes

    @property
    def annotated(self) -> bool:
        return "unannotated" not in self.classes
