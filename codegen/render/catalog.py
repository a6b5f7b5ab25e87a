"""Offline docs catalogs: every tool with its types, a parameter table and its raw schemas.

Takes an IR catalog and returns Markdown, JSON or one self-contained HTML file (inline CSS
and one small inline script, an anchor per tool). Tools are grouped by server: the prefix of
a namespaced name (`server__tool`, as `--namespace` and `codegen serve` name them, the rule
Code Mode's `catalog.servers()` uses); a catalog without one is a single group with no
heading. Each group has a table of contents, and a catalog of several servers a list of
them. The HTML page filters tools as the reader types (every word of the query must occur in
a tool's name, title or description); without JavaScript the filter stays hidden and every
tool shows. Types are spelled in TypeScript unless another SDK language is asked for. Works
without a code runtime or a network, and is deterministic like the SDKs: no timestamps,
versions or paths; tools and groups in code-point order whatever the input order.

Tool text is untrusted: Markdown puts descriptions in fenced blocks longer than any backtick
run they contain and escapes table cells; the HTML template autoescapes every value, its
script reads tool text only as `textContent` and writes only numbers and its own words, and
the page's Content-Security-Policy allows no script or style but its own (by hash).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from .. import ir
from .._support import progress
from .._support.run_memos import run_memos
from .notes import notes
from .targets import Target, target
from .templates import render, templates_dir
from .text import escape_hidden

CATALOG_FORMATS = ("md", "json", "html")
"""Formats of the docs catalog (`codegen catalog --format`)."""
CATALOG_VERSION = 1
"""Version of the JSON catalog's own layout (not of any tool)."""
DEFAULT_TITLE = "Tool catalog"
"""The heading of the Markdown and HTML catalogs unless a title is given."""
SEPARATOR = "__"
"""Between a server's prefix and a tool's own name (`load.namespaces.SEPARATOR`; render
does not import the loader)."""


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    type: str
    required: bool
    default: str | None
    constraints: str
    description: str


@dataclass(frozen=True, slots=True)
class ToolPage:
    """Everything the catalog shows about one tool, as finished strings."""

    name: str
    anchor: str
    server: str | None
    """The prefix before the first `__` (`server_of`); None for a name without one."""
    title: str | None
    description: str | None
    annotations: dict[str, Any] | None
    args_type: str
    output_type: str
    types: str
    parameter_groups: tuple[tuple[str, tuple[Parameter, ...]], ...]
    input_schema: Any
    output_schema: Any


@dataclass(frozen=True, slots=True)
class ToolGroup:
    """The tools of one server, in code-point order of their names."""

    server: str | None
    """None: the tools whose names have no server prefix."""
    anchor: str
    pages: tuple[ToolPage, ...]


def _id_text(name: str) -> str:
    return "".join(
        c if c.isascii() and (c.isalnum() or c in "_-") else f".{ord(c):x}." for c in name
    )


def anchor(name: str) -> str:
    """A unique, stable HTML id for a tool name: any character outside `[A-Za-z0-9_-]` is
    spelled `.<hex>.` (a dot included), so different names never share an anchor."""
    return "tool-" + _id_text(name)


def group_anchor(server: str | None, grouped: bool = True) -> str:
    """The id of a group: `server-<name>` (spelled like a tool's anchor), `other-tools` for
    the tools without a server beside servers, `tools` for a catalog without servers."""
    if server is not None:
        return "server-" + _id_text(server)
    return "other-tools" if grouped else "tools"


def server_of(name: str) -> str | None:
    """The server of a tool name: its prefix before the first `__`, when both sides are
    non-empty (`codemode.discovery.server_of`'s rule); else None."""
    head, separator, rest = name.partition(SEPARATOR)
    return head if separator and head and rest else None


def tool_groups(pages: list[ToolPage]) -> list[ToolGroup]:
    """The pages by server: servers in code-point order, then the tools without one; each
    group's tools in code-point order. A catalog without servers is one group."""
    found: dict[str | None, list[ToolPage]] = {}
    for page in pages:
        found.setdefault(page.server, []).append(page)
    grouped = any(server is not None for server in found)
    order: list[str | None] = [*sorted(server for server in found if server is not None)]
    if None in found:
        order.append(None)
    return [
        ToolGroup(
            server,
            group_anchor(server, grouped),
            tuple(sorted(found[server], key=lambda page: page.name)),
        )
        for server in order
    ]


def _parameters(fields: tuple[ir.Field, ...], spelling: Target) -> tuple[Parameter, ...]:
    rows = []
    for item in fields:
        found = notes(item.docs, spelling.literal)
        default = next((n.text for n in found if n.kind == "default"), None)
        rest = "; ".join(n.text for n in found if n.kind != "default")
        rows.append(
            Parameter(
                item.key,
                spelling.spell(item.type),
                item.required,
                default,
                rest,
                item.docs.description or "",
            )
        )
    return tuple(rows)


def _argument_objects(tool: ir.Tool) -> list[tuple[str, ir.ObjectType]]:
    """The object types a caller fills in: the arguments type, or each object arm of it."""
    named = {t.name: t for t in tool.types}
    target = named.get(tool.args.name) if isinstance(tool.args, ir.RefType) else None
    if isinstance(target, ir.ObjectType):
        return [(target.name, target)]
    if isinstance(target, ir.AliasType):
        arms = target.target.arms if isinstance(target.target, ir.UnionType) else (target.target,)
        found = []
        for arm in arms:
            obj = named.get(arm.name) if isinstance(arm, ir.RefType) else None
            if isinstance(obj, ir.ObjectType):
                found.append((obj.name, obj))
        return found
    return []


def tool_pages(catalog: ir.Catalog, language: str = "typescript") -> list[ToolPage]:
    spelling = target(language)
    pages = []
    progress.begin("rendering the catalog", len(catalog.tools))
    for tool in catalog.tools:
        groups = tuple(
            (name, _parameters(obj.fields, spelling)) for name, obj in _argument_objects(tool)
        )
        pages.append(
            ToolPage(
                name=tool.name,
                anchor=anchor(tool.name),
                server=server_of(tool.name),
                title=tool.title,
                description=tool.description,
                annotations=json.loads(tool.annotations) if tool.annotations else None,
                args_type=spelling.spell(tool.args),
                output_type=spelling.spell(tool.output) if tool.output else spelling.any_type,
                types=spelling.declarations(tool),
                parameter_groups=groups,
                input_schema=json.loads(tool.input_schema),
                output_schema=json.loads(tool.output_schema) if tool.output_schema else None,
            )
        )
        progress.advance()
    progress.begin("laying out the catalog")
    return pages


# --- JSON -------------------------------------------------------------------------------


def render_catalog_json(
    catalog: ir.Catalog, language: str = "typescript", title: str | None = None
) -> str:
    """Data, not a page: `title` is not part of it, and tools stay in catalog order, each
    with its `server` (None without one)."""
    pages = tool_pages(catalog, language)
    data = {
        "catalog_version": CATALOG_VERSION,
        "language": language,
        "tools": [
            {
                "name": p.name,
                "server": p.server,
                "title": p.title,
                "description": p.description,
                "annotations": p.annotations,
                "args_type": p.args_type,
                "output_type": p.output_type,
                "types": p.types,
                "parameters": [
                    {
                        "type_name": group,
                        "fields": [
                            {
                                "name": r.name,
                                "type": r.type,
                                "required": r.required,
                                "default": r.default,
                                "constraints": r.constraints,
                                "description": r.description,
                            }
                            for r in rows
                        ],
                    }
                    for group, rows in p.parameter_groups
                ],
                "input_schema": p.input_schema,
                "output_schema": p.output_schema,
            }
            for p in pages
        ],
    }
    return (
        json.dumps(data, indent=2, ensure_ascii=False)
        .encode("utf-8", "backslashreplace")
        .decode("utf-8")
        + "\n"
    )


# --- Markdown ---------------------------------------------------------------------------

_BACKTICKS = re.compile("`+")


def _fenced(text: str, info: str = "") -> str:
    """A fenced block that no backtick run inside `text` can close."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _code_span(text: str) -> str:
    """Inline code that works whatever backticks the text holds."""
    text = " ".join(escape_hidden(text).split())
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _cell(text: str) -> str:
    """A Markdown table cell: one line, pipes and HTML escaped."""
    flat = " ".join(escape_hidden(text).split())
    return html.escape(flat, quote=False).replace("|", "\\|")


def _markdown_view(page: ToolPage, language: str) -> dict[str, Any]:
    return {
        "heading": _code_span(page.name),
        "anchor": page.anchor,
        "title": _cell(page.title) if page.title else None,
        "description": _fenced(escape_hidden(page.description), "text")
        if page.description
        else None,
        "annotations": ", ".join(
            f"{_code_span(k)}: {_code_span(json.dumps(v))}" for k, v in page.annotations.items()
        )
        if page.annotations
        else None,
        "signature": _code_span(f"{page.args_type} -> {page.output_type}"),
        "groups": [
            (
                _code_span(group),
                [
                    "| "
                    + " | ".join(
                        [
                            _code_span(r.name),
                            _code_span(r.type),
                            "yes" if r.required else "no",
                            _code_span(r.default) if r.default is not None else "",
                            _cell(r.constraints),
                            _cell(r.description),
                        ]
                    )
                    + " |"
                    for r in rows
                ],
            )
            for group, rows in page.parameter_groups
        ],
        "types": _fenced(page.types, target(language).fence),
        "input_schema": _fenced(_json(page.input_schema), "json"),
        "output_schema": _fenced(_json(page.output_schema), "json")
        if page.output_schema is not None
        else None,
    }


def _json(value: Any) -> str:
    return (
        json.dumps(value, indent=2, ensure_ascii=False)
        .encode("utf-8", "backslashreplace")
        .decode("utf-8")
    )


_MARKDOWN_INLINE = frozenset("\\`*_[]#~|$")
"""What can start markup inside a heading's text (emphasis, code, links, a closing `#`
run, GitHub's strikethrough, tables and math); `!` starts an image only before `[`."""


def _markdown_text(text: str) -> str:
    """Plain text on one line of Markdown: whitespace folded, hidden characters shown, `&`,
    `<` and `>` as entities and the characters that start inline markup backslash-escaped,
    so nothing in it is markup."""
    flat = html.escape(" ".join(escape_hidden(text).split()), quote=False)
    return "".join("\\" + c if c in _MARKDOWN_INLINE else c for c in flat)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _summary(count: int, groups: list[ToolGroup]) -> str:
    """`12 tools`, or `12 tools from 3 servers` (and `, 2 without one`)."""
    servers = sum(1 for group in groups if group.server is not None)
    if not servers:
        return _plural(count, "tool")
    loose = sum(len(group.pages) for group in groups if group.server is None)
    rest = f", {loose} without one" if loose else ""
    return f"{_plural(count, 'tool')} from {_plural(servers, 'server')}{rest}"


def _outline(pages: list[ToolPage]) -> tuple[list[ToolGroup], bool, str, int]:
    """What the Markdown and HTML pages decide alike: the pages by server (`tool_groups`),
    whether servers head the groups, the summary line, and the level of a tool's heading
    (2, or 3 under its server's)."""
    groups = tool_groups(pages)
    grouped = any(group.server is not None for group in groups)
    return groups, grouped, _summary(len(pages), groups), 3 if grouped else 2


def render_catalog_markdown(
    catalog: ir.Catalog, language: str = "typescript", title: str | None = None
) -> str:
    pages = tool_pages(catalog, language)
    groups, grouped, summary, level = _outline(pages)
    return render(
        "catalog/catalog.md.jinja",
        title=_markdown_text(title or DEFAULT_TITLE),
        summary=summary,
        grouped=grouped,
        contents_heading="### Tools" if grouped else "## Contents",
        tool_heading="#" * level,
        part_heading="#" * (level + 1),
        groups=[
            {
                "heading": _code_span(group.server) if group.server is not None else "Other tools",
                "anchor": group.anchor,
                "count": _plural(len(group.pages), "tool"),
                "tools": [_markdown_view(page, language) for page in group.pages],
            }
            for group in groups
        ],
    )


# --- HTML -------------------------------------------------------------------------------


def _line(text: str) -> str:
    """Text on one line: a newline or tab in a name shows as `\\n` / `\\t`, hidden
    characters as visible escapes. The template escapes it for HTML (autoescape)."""
    return escape_hidden(text.replace("\n", "\\n").replace("\t", "\\t"))


def _block(text: str) -> str:
    """Text keeping its line breaks (shown with `white-space: pre-wrap`), hidden characters
    as visible escapes; the template escapes it for HTML."""
    return escape_hidden(text)


def _html_view(page: ToolPage) -> dict[str, Any]:
    """Plain strings: the HTML template escapes every value it prints (autoescape), so no
    text reaches the page unescaped and none is escaped twice."""
    return {
        "name": _line(page.name),
        "anchor": _line(page.anchor),
        "title": _line(page.title) if page.title else None,
        "description": _block(page.description) if page.description else None,
        "annotations": [(_line(k), _line(json.dumps(v))) for k, v in page.annotations.items()]
        if page.annotations
        else [],
        "signature": _line(f"{page.args_type} -> {page.output_type}"),
        "groups": [
            (
                _line(group),
                [
                    (
                        _line(r.name),
                        _line(r.type),
                        "yes" if r.required else "no",
                        _line(r.default or ""),
                        _line(r.constraints),
                        _line(r.description),
                    )
                    for r in rows
                ],
            )
            for group, rows in page.parameter_groups
        ],
        "types": _block(page.types),
        "input_schema": _block(_json(page.input_schema)),
        "output_schema": _block(_json(page.output_schema))
        if page.output_schema is not None
        else None,
    }


def _html_group(group: ToolGroup) -> dict[str, Any]:
    """`server`: the server's name (shown as code), None for the tools without one;
    `label`: what the group's contents are called."""
    server = None if group.server is None else _line(group.server)
    return {
        "server": server,
        "label": "Contents" if server is None else f"Tools of {server}",
        "anchor": group.anchor,
        "count": _plural(len(group.pages), "tool"),
        "tools": [_html_view(page) for page in group.pages],
    }


@dataclass(frozen=True, slots=True)
class _Asset:
    """The page's own style sheet or script: its text as it goes between the tags, and
    the CSP source that allows exactly that text."""

    text: str
    source: str


@cache
def _asset(name: str) -> _Asset:
    """`templates/catalog/<name>`, placed after a line break (so the page reads well) and
    hashed as placed: a `'sha256-...'` source the Content-Security-Policy lists. (`hashlib`
    and `base64` imported here: every command that reads `[tool.codegen]` imports this module
    for `CATALOG_FORMATS`, and only the HTML page needs them.)"""
    import base64
    import hashlib

    text = "\n" + (templates_dir() / "catalog" / name).read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return _Asset(text, f"'sha256-{digest}'")


def content_security_policy() -> str:
    """Nothing loads but the page's own style sheet and script, each allowed by its hash,
    so markup that reached the page any other way could neither run nor fetch anything."""
    style, script = _asset("catalog.css"), _asset("filter.js")
    return (
        f"default-src 'none'; style-src {style.source}; script-src {script.source}; "
        "base-uri 'none'; form-action 'none'"
    )


def render_catalog_html(
    catalog: ir.Catalog, language: str = "typescript", title: str | None = None
) -> str:
    pages = tool_pages(catalog, language)
    groups, grouped, summary, level = _outline(pages)
    return render(
        "catalog/catalog.html.jinja",
        title=_line(title or DEFAULT_TITLE),
        summary=summary,
        grouped=grouped,
        tool_heading=f"h{level}",
        part_heading=f"h{level + 1}",
        groups=[_html_group(group) for group in groups],
        language=language,
        csp=content_security_policy(),
        style=_asset("catalog.css").text,
        script=_asset("filter.js").text,
    )


RENDERERS = {
    "md": render_catalog_markdown,
    "json": render_catalog_json,
    "html": render_catalog_html,
}


def render_catalog(
    catalog: ir.Catalog,
    fmt: str = "md",
    language: str = "typescript",
    *,
    title: str | None = None,
) -> str:
    """The catalog in `md`, `json` or `html`, types spelled in `language`; `title` heads
    the Markdown and HTML pages (default `Tool catalog`; escaped like any text)."""
    if fmt not in RENDERERS:
        known = ", ".join(CATALOG_FORMATS)
        raise ValueError(f"unknown catalog format {fmt!r}; known: {known}")
    with run_memos():
        return RENDERERS[fmt](catalog, language, title)
