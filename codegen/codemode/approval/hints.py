"""What a tool says of itself in its MCP annotations, read strictly.

A hint counts only when it is an exact JSON boolean (`readOnlyHint`, `destructiveHint`,
`idempotentHint`, `openWorldHint`); anything else reads as absent, never as a guess. The
classes a policy rule can name follow from them: `read-only`, `destructive` (said, and not
read-only: MCP gives destructiveHint meaning only for a tool that writes), `idempotent`,
`open-world`, and `unannotated` for a tool that states none of the four (`idempotent`, like
`destructive`, only for a tool that is not read-only; the marks the model sees,
`render/sections/hints.py`, follow the same reading).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

HINT_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")

CLASSES = ("read-only", "destructive", "idempotent", "open-world", "unannotated")
"""The annotation classes a rule may name (`any` matches every tool besides)."""


def _flag(annotations: Mapping[str, Any], key: str) -> bool | None:
    value = annotations.get(key)
    return value if isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class ToolHints:
    """The four hints a tool states; None where it states nothing usable."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    @classmethod
    def of(cls, annotations: Any) -> ToolHints:
        if not isinstance(annotations, Mapping):
            return cls()
        return cls(*(_flag(annotations, key) for key in HINT_KEYS))

    @property
    def annotated(self) -> bool:
        return any(
            hint is not None
            for hint in (self.read_only, self.destructive, self.idempotent, self.open_world)
        )

    @property
    def classes(self) -> frozenset[str]:
        found = set()
        if self.read_only is True:
            found.add("read-only")
        if self.destructive is True and self.read_only is not True:
            found.add("destructive")
        if self.idempotent is True and self.read_only is not True:
            found.add("idempotent")
        if self.open_world is True:
            found.add("open-world")
        if not self.annotated:
            found.add("unannotated")
        return frozenset(found)
