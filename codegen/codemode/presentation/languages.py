"""Language dispatch: which SDK a model sees and how `run_code` is described to it.

Two tables keyed by language name, both built over the render targets
(`render.targets.TARGETS`). `SDK_RENDERERS` maps a language to the function that renders the
model-facing SDK section; `RUN_CODE_FLAVORS` maps it to the two `run_code` texts that must
match that SDK. Adding a language is one target plus its `run_code` texts here.

Lookups are own-key only (`"__class__"`, `"keys"` or `"toString"` never resolve to an
attribute or method), and an unknown language fails loudly, naming the known ones: a model
must never see instructions for one language over a runtime for another. The one exception is
`language=None`, which means no code runtime at all (offline harvesting of definitions):
it gets the TypeScript flavor, because nothing there reaches a model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ...errors import CodegenError
from ...render.targets import TARGETS
from ...render.templates import template_path

HARVEST_LANGUAGE = "typescript"
"""The flavor used when no runtime is mounted (`language=None`)."""


class UnknownLanguageError(CodegenError):
    """A language with no entry in the dispatch tables."""

    exit_code = 2

    def __init__(self, language: object, table: str, known: tuple[str, ...]) -> None:
        self.language = language
        self.known = known
        names = ", ".join(f'"{name}"' for name in known)
        super().__init__(f"no {table} registered for language {language!r} (known: {names})")


@dataclass(frozen=True, slots=True)
class RunCodeFlavor:
    """The language-specific texts of the `run_code` definition: its description when the
    SDK comes with it, its `code` parameter, and the paragraphs of its description when the
    tools are found from the program instead (`tiers`: essentials first)."""

    description: str
    code: str
    search: tuple[str, ...]
    listing: str
    """The listing tier's paragraph in place of the search tier's third (every tool is
    listed below it)."""
    checked: str
    """The sentence that says programs are checked before they run: the end of the
    description, and of the search tier's calling paragraph, when they are."""

    def described(self, checked: bool) -> str:
        return f"{self.description} {self.checked}" if checked else self.description

    def search_paragraphs(self, checked: bool) -> tuple[str, ...]:
        if not checked:
            return self.search
        first, calling, *rest = self.search
        return (first, f"{calling} {self.checked}", *rest)

    def listing_paragraphs(self, checked: bool) -> tuple[str, ...]:
        """The search tier's paragraphs, with `listing` in place of the one that says the
        tools are too many to list."""
        first, calling, _, *rest = self.search_paragraphs(checked)
        return (first, calling, self.listing, *rest)


SDK_RENDERERS: Mapping[str, Callable[[Any], str]] = MappingProxyType(
    {name: target.section for name, target in TARGETS.items()}
)
"""The prompt section of each render target (`render.targets`)."""


def read_texts(path: str) -> dict[str, tuple[str, ...]]:
    """A `templates/run_code/` file: `[name]` sections of paragraphs (separated by a blank
    line, their lines joined by one space); `#` lines are comments. The prose a model reads
    lives there, beside the other templates, not in code."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    paragraph: list[str] = []

    def close() -> None:
        if paragraph and current is not None:
            current.append(" ".join(paragraph))
        paragraph.clear()

    with open(path, encoding="utf-8") as file:
        for raw in file:
            line = raw.rstrip("\n")
            if line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                close()
                current = sections.setdefault(line[1:-1], [])
            elif not line.strip():
                close()
            else:
                paragraph.append(line.strip())
    close()
    return {name: tuple(paragraphs) for name, paragraphs in sections.items()}


def _flavor(language: str) -> RunCodeFlavor:
    """A language's `run_code` texts, from `templates/run_code/<language>.txt` and the
    shared `checked.txt`."""
    texts = read_texts(template_path("run_code", f"{language}.txt"))
    (checked,) = read_texts(template_path("run_code", "checked.txt"))["checked"]
    (description,) = texts["description"]
    (code,) = texts["code"]
    (listing,) = texts["listing"]
    return RunCodeFlavor(description, code, texts["search"], listing, checked)


_RUN_CODE_TEXTS: Mapping[str, RunCodeFlavor] = MappingProxyType(
    {name: _flavor(name) for name in TARGETS}
)


RUN_CODE_FLAVORS: Mapping[str, RunCodeFlavor] = MappingProxyType(
    {name: _RUN_CODE_TEXTS[name] for name in TARGETS}
)
"""The `run_code` texts of each render target, so the two tables always agree."""


def known_languages() -> tuple[str, ...]:
    return tuple(SDK_RENDERERS)


def _lookup(table: Mapping[str, Any], language: object, label: str) -> Any:
    """An own-key lookup: only exact string keys of the table resolve."""
    if type(language) is str and language in table:
        return table[language]
    raise UnknownLanguageError(language, label, tuple(table))


def sdk_renderer(language: str) -> Callable[[Any], str]:
    """The SDK section renderer of a language; no fallback."""
    renderer: Callable[[Any], str] = _lookup(SDK_RENDERERS, language, "SDK renderer")
    return renderer


def run_code_flavor(language: str | None) -> RunCodeFlavor:
    """The `run_code` flavor of a language; `None` (no runtime) is the TypeScript flavor."""
    if language is None:
        language = HARVEST_LANGUAGE
    flavor: RunCodeFlavor = _lookup(RUN_CODE_FLAVORS, language, "run_code flavor")
    return flavor


def render_sdk_section(catalog: Any, language: str) -> str:
    """The model-facing SDK section (instructions, then the SDK in a fenced code block) of a
    catalog in a language. Accepts an IR catalog or any loadable tool data."""
    renderer = sdk_renderer(language)
    from ...engine import as_catalog

    return renderer(as_catalog(catalog))
