"""The Jinja environment: created once, templates compiled once.

Templates only lay out finished strings (loops, `if` on booleans); every decision is made in
the renderers' view models. `StrictUndefined` turns a missing value into an error instead
of empty output. Templates in `layout`'s subset (the SDK, section and prompt templates) are
laid out without importing Jinja; the others (the catalogs) go through it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from . import layout

PACKAGE_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
"""Where the wheel puts `templates/` (hatch force-include)."""
SOURCE_TEMPLATES = Path(__file__).resolve().parent.parent.parent / "templates"
"""`templates/` at the top of a source checkout."""


def templates_dir() -> Path:
    return PACKAGE_TEMPLATES if PACKAGE_TEMPLATES.is_dir() else SOURCE_TEMPLATES


@cache
def environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        auto_reload=False,
    )


@cache
def template(name: str) -> Any:
    return environment().get_template(name)


@cache
def _layout(name: str) -> tuple[layout.Node, ...] | None:
    """The template as a `layout` tree, or None when it needs Jinja."""
    try:
        return layout.parse(_source(name), _source)
    except layout.Unsupported:
        return None


def _source(name: str) -> str:
    return (templates_dir() / name).read_text(encoding="utf-8")


def render(name: str, **context: Any) -> str:
    """The template filled in: through `layout` when it stays in that subset (no Jinja
    start-up on the SDK path), else through Jinja; both give the same bytes."""
    nodes = _layout(name)
    if nodes is not None:
        return layout.render(nodes, context)
    result: str = template(name).render(**context)
    return result
