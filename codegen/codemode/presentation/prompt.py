"""System prompt assembly: sections with ids and an order, regenerated per assembly.

Built-in sections: `tools:code-only` (order 99, only under `code`: run_code is the only tool
a model can call directly) and `tools:sdk` (order 150, under `code` and `both`: the SDK
section in the mounted runtime's language). Hosts add their own, for example per-tool
guidance. A section that tells the model to call a native tool directly says so with
`direct_call=True`; under `code` the built-in assemble listener drops exactly those, so
unrelated sections (structured-output instructions, say) are never lost to a guess based on
ids. Further listeners may reshape the list; their output is authoritative. The same inputs
always give the same bytes.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .tiers import KEEP

if TYPE_CHECKING:
    from ..calls.scopes import Scope
    from .tiers import Tiered


class PromptHost(Protocol):
    """What assembling a prompt reads from the registry (`ToolRegistry` is one)."""

    def mode_for(self, scope: Scope | None) -> str: ...

    def require_runtime(self, scope: Scope | None = None) -> Any: ...

    def sdk_tier(self, scope: Scope | None = None, budget: Any = ...) -> Tiered: ...


CODE_ONLY = (
    "Only one tool can be called directly in this session: run_code. Every other tool is "
    "available inside a run_code program through the SDK below, called as it shows. "
    "Calling any other tool directly fails with an unknown-tool error."
)


@dataclass(frozen=True)
class PromptContext:
    registry: PromptHost
    scope: Scope
    mode: str
    budget: Any = KEEP
    """The SDK section's budget for this assembly (`tiers.KEEP`: the registry's)."""


@dataclass(frozen=True)
class PromptSection:
    """`text` is a string or a function of the `PromptContext`; empty text drops it."""

    id: str
    order: int
    text: str | Callable[[PromptContext], str]
    direct_call: bool = False

    def render(self, context: PromptContext) -> str:
        return self.text(context) if callable(self.text) else self.text


@dataclass(frozen=True)
class RenderedSection:
    id: str
    order: int
    text: str
    direct_call: bool = False


AssembleListener = Callable[[list[RenderedSection], PromptContext], list[RenderedSection]]


def _code_only(context: PromptContext) -> str:
    return CODE_ONLY if context.mode == "code" else ""


def _sdk(context: PromptContext) -> str:
    """The SDK section when it fits the budget, else the discovery text (`tiers`)."""
    if context.mode == "native":
        return ""
    return context.registry.sdk_tier(context.scope, context.budget).text


def drop_direct_call_guidance(
    sections: list[RenderedSection], context: PromptContext
) -> list[RenderedSection]:
    """Under `code`, a section that tells the model to call a native tool directly would
    send it to a call that fails; drop exactly the sections flagged so."""
    if context.mode != "code":
        return sections
    return [s for s in sections if not s.direct_call]


BUILT_IN = (
    PromptSection("tools:code-only", 99, _code_only),
    PromptSection("tools:sdk", 150, _sdk),
)


class PromptAssembler:
    """The sections of every scope, and the listeners that reshape an assembled list."""

    def __init__(self, registry: PromptHost) -> None:
        self.registry = registry
        self.listeners: list[AssembleListener] = [drop_direct_call_guidance]
        self._own: weakref.WeakKeyDictionary[Scope, dict[str, PromptSection]] = (
            weakref.WeakKeyDictionary()
        )
        """Each scope's own sections by id; a scope that is dropped takes its along."""

    def add(self, section: PromptSection, scope: Scope) -> None:
        """A section for `scope` and its descendants; it replaces one with the same id."""
        self._own.setdefault(scope, {})[section.id] = section

    def add_listener(self, listener: AssembleListener) -> None:
        self.listeners.append(listener)

    def sections(self, scope: Scope, budget: Any = KEEP) -> list[RenderedSection]:
        """`budget`: the SDK section's, when not the registry's (`tiers.KEEP`)."""
        mode = self.registry.mode_for(scope)
        if mode != "native":
            self.registry.require_runtime(scope)
        context = PromptContext(self.registry, scope, mode, budget)
        chosen: dict[str, PromptSection] = {s.id: s for s in BUILT_IN}
        for each in scope.chain():  # the nearest scope's section shadows the same id
            chosen.update(self._own.get(each, {}))
        rendered = [
            RenderedSection(s.id, s.order, s.render(context), s.direct_call)
            for s in chosen.values()
        ]
        result = sorted((s for s in rendered if s.text), key=lambda s: (s.order, s.id))
        for listener in self.listeners:
            result = list(listener(result, context))
        return result

    def assemble(self, scope: Scope, budget: Any = KEEP) -> str:
        return "\n\n".join(section.text for section in self.sections(scope, budget))
