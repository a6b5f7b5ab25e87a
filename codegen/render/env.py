"""The Jinja environment: created once, templates compiled once.

Templates only lay out finished strings (loops, `if` on booleans); every decision is made in
the renderers' view models. `StrictUndefined` turns a missing value into an error instead
of empty output.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

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


def render(name: str, **context: Any) -> str:
    result: str = template(name).render(**context)
    return result
