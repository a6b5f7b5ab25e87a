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


CHECKED = (
    "Programs are type-checked against the SDK before they run: a definitely wrong call "
    "refuses the run before any tool is called."
)


@dataclass(frozen=True, slots=True)
class RunCodeFlavor:
    """The language-specific texts of the `run_code` definition: its description when the
    SDK comes with it, its `code` parameter, and the paragraphs of its description when the
    tools are found from the program instead (`tiers`: essentials first)."""

    description: str
    code: str
    search: tuple[str, ...]
    listing: str = ""
    """The listing tier's paragraph in place of the search tier's third (every tool is
    listed below it)."""
    checked: str = CHECKED
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

_RUN_CODE_TEXTS: Mapping[str, RunCodeFlavor] = MappingProxyType(
    {
        "python": RunCodeFlavor(
            description=(
                "Run a Python program against the tools described in the system prompt. It takes "
                "two required arguments: `code`, the body of an async Python function (top-level "
                "`await` and `return` work), and `description`, a short summary of what the "
                "program does. Inside the program three names are defined, `tools`, `catalog` "
                "(search the tools) and `ToolCallError`: call a tool with keyword arguments, "
                "`await tools.name(key=value)`, "
                'or `await tools["exact-name"](key=value)` for one the SDK marks '
                '`@tool("exact-name")`, passing plain JSON values. Only what the program prints '
                "and the JSON value it returns come back, so extract what matters instead of "
                "returning whole tool results."
            ),
            code=(
                "The program: the body of an async Python function. Top-level `await` and "
                "`return` work; `tools`, `catalog` and `ToolCallError` are defined; print() "
                "output and the returned JSON value are the result."
            ),
            search=(
                "Run a Python program against this session's tools. `code` is the body of an "
                "async function (top-level `await` and `return` work); `description` says in "
                "five to ten words what it does. Only what the program prints and the JSON value "
                "it returns come back, so extract what matters.",
                "Call a tool with keyword arguments, `await tools.name(key=value)`, or "
                '`await tools["exact-name"](key=value)` when the name is not an identifier, '
                "passing plain JSON values; a failed call raises `ToolCallError`. Run "
                "independent calls with `asyncio.gather`.",
                "The tools are too many to list here: find them from the program with `catalog`. "
                "Never guess a name: search, then call; both can happen in one program. For "
                'example: `print(await catalog.search("current time in a city"))` prints one '
                "line per tool with its exact call, required arguments, result type and summary "
                "(the result's `.names` holds the names, best first).",
                '`await catalog.describe("name")` returns one tool\'s full declaration with the '
                "types it uses. `catalog.search(query, k=8, server=None)` also takes a list of "
                "queries, one per step of a task. `await catalog.servers()` lists the servers, "
                '`await catalog.names("server")` the tools of one.',
            ),
            listing=(
                "Every tool is listed below by server, with its arguments (`?` marks an "
                "optional one); never call one that is not listed. Before a call whose "
                'argument types you do not know, `print(await catalog.describe("name"))` '
                "prints its full declaration; `catalog.search(...)` finds tools by what they do."
            ),
        ),
        "typescript": RunCodeFlavor(
            description=(
                "Run a TypeScript program against the tools described in the system prompt. It "
                "takes two required arguments: `code`, the body of an async function (top-level "
                "`await` and `return` work; types are stripped before it runs, so use erasable "
                "syntax only: no enums or namespaces), and `description`, a short summary of "
                "what the program does. Call a tool with `await tools.name(args)`, or "
                '`await tools["name"](args)` when its name is not an identifier. Only what the '
                "program logs with console.log and the JSON value it returns come back, so "
                "extract what matters instead of returning whole tool results."
            ),
            code=(
                "The program: the body of an async TypeScript function. Top-level `await` and "
                "`return` work; types are stripped before it runs; `tools`, `catalog` and "
                "`ToolCallError` are defined; console.log output and the returned JSON value are "
                "the result."
            ),
            search=(
                "Run a TypeScript program against this session's tools. `code` is the body of an "
                "async function (top-level `await` and `return` work; types are stripped, so use "
                "erasable syntax only: no enums or namespaces); `description` says in five to "
                "ten words what it does. Only what the program logs with console.log and the "
                "JSON value it returns come back, so extract what matters.",
                "Call a tool with one object of JSON values, `await tools.name(args)`, or "
                '`await tools["exact-name"](args)` when the name is not an identifier; a failed '
                "call rejects with `ToolCallError`. Run independent calls with `Promise.all`.",
                "The tools are too many to list here: find them from the program with `catalog`. "
                "Never guess a name: search, then call; both can happen in one program. For "
                'example: `console.log(await catalog.search("current time in a city"))` logs '
                "one line per tool with its exact call, required arguments, result type and "
                "summary (the result's `.names` holds the names, best first).",
                '`await catalog.describe("name")` returns one tool\'s full declaration with the '
                "types it uses. `catalog.search(query, { k: 8, server })` also takes an array "
                "of queries, one per step of a task. `await catalog.servers()` lists the "
                'servers, `await catalog.names("server")` the tools of one.',
            ),
            listing=(
                "Every tool is listed below by server, with its arguments (`?` marks an "
                "optional one); never call one that is not listed. Before a call whose "
                'argument types you do not know, `console.log(await catalog.describe("name"))` '
                "logs its full declaration; `catalog.search(...)` finds tools by what they do."
            ),
        ),
    }
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
