"""The Jinja environment: created once, templates compiled once.

Templates only lay out finished strings (loops, `if` on booleans); every decision is made in
the renderers' view models. `StrictUndefined` turns a missing value into an error instead
of empty output. Templates in `layout`'s subset (the SDK, section and prompt templates) are
laid out without importing Jinja; the others (the catalogs) go through it.
"""

from __future__ import annotations

import os
from functools import cache
from typing import TYPE_CHECKING, Any

from . import jinja_subset

if TYPE_CHECKING:
    from pathlib import Path

_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
PACKAGE_TEMPLATES = os.path.join(_PACKAGE, "templates")
"""Where the wheel puts `templates/` (hatch force-include)."""
SOURCE_TEMPLATES = os.path.join(os.path.dirname(_PACKAGE), "templates")
"""`templates/` at the top of a source checkout."""


@cache
def _templates_path() -> str:
    """(`os.path`, not `pathlib`: the SDK path reads templates on a cold run, and importing
    `pathlib` would cost it more than that.)"""
    return PACKAGE_TEMPLATES if os.path.isdir(PACKAGE_TEMPLATES) else SOURCE_TEMPLATES


def template_path(*parts: str) -> str:
    """The path of a file under the templates folder (installed or in the checkout)."""
    return os.path.join(_templates_path(), *parts)


def templates_dir() -> Path:
    from pathlib import Path

    return Path(_templates_path())


@cache
def environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(_templates_path()),
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
def _layout(name: str) -> tuple[jinja_subset.Node, ...] | None:
    """The template as a `layout` tree, or None when it needs Jinja."""
    try:
        return jinja_subset.parse(_source(name), _source)
    except jinja_subset.Unsupported:
        return None


def _source(name: str) -> str:
    with open(os.path.join(_templates_path(), name), encoding="utf-8") as file:
        return file.read()


def render(name: str, **context: Any) -> str:
    """The template filled in: through `layout` when it stays in that subset (no Jinja
    start-up on the SDK path), else through Jinja; both give the same bytes."""
    nodes = _layout(name)
    if nodes is not None:
        return jinja_subset.render(nodes, context)
    result: str = template(name).render(**context)
    return result
