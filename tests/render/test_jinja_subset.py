"""`render.layout` gives Jinja's bytes for every template it accepts, and keeps Jinja off the
SDK path.

Jinja is the authority: each bundled template the layout subset accepts is rendered by both
on generated contexts, and so are generated templates of the subset (text with blanks and
line breaks around every kind of tag), under the environment's `trim_blocks`,
`lstrip_blocks` and `keep_trailing_newline`.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.render import jinja_subset as layout
from codegen.render.templates import environment, templates_dir
from conftest import ROOT

TEMPLATES = sorted(
    str(path.relative_to(templates_dir())) for path in templates_dir().rglob("*.jinja")
)
SDK_PATH = [
    "python/sdk.py.jinja",
    "python/section.pyi.jinja",
    "typescript/sdk.d.ts.jinja",
    "typescript/section.d.ts.jinja",
    "prompt/python.md.jinja",
    "prompt/typescript.md.jinja",
]


def _load(name: str) -> str:
    return (templates_dir() / name).read_text(encoding="utf-8")


def _parsed(name: str) -> tuple[layout.Node, ...] | None:
    try:
        return layout.parse(_load(name), _load)
    except layout.Unsupported:
        return None


def _names(nodes: tuple[layout.Node, ...], bound: frozenset[str] = frozenset()) -> dict[str, str]:
    """Context names a tree reads: "text", "items" (a loop's sequence) or "flag"."""
    found: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, layout.Var) and node.name not in bound:
            found.setdefault(node.name, "text")
        elif isinstance(node, layout.For):
            found[node.items] = "items"
            found.update(_names(node.body, bound | {node.target}))
        elif isinstance(node, layout.If):
            if not node.test.startswith("loop.") and node.test not in bound:
                found.setdefault(node.test, "flag")
            found.update(_names(node.then + node.otherwise, bound))
    return found


TEXT = st.text(alphabet=st.sampled_from(list("ab {}%#\n\t\"'\\é")), max_size=12)
VALUES = {
    "text": TEXT,
    "items": st.lists(TEXT, max_size=4),
    "flag": st.booleans(),
}


def test_the_sdk_path_templates_are_in_the_subset() -> None:
    for name in SDK_PATH:
        assert _parsed(name) is not None, name
    assert _parsed("catalog/catalog.html.jinja") is None  # autoescape and attributes: Jinja


@pytest.mark.parametrize("name", [n for n in TEMPLATES if _parsed(n) is not None])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_accepted_template_renders_as_jinja_does(name: str, data: Any) -> None:
    nodes = _parsed(name)
    assert nodes is not None
    context = {key: data.draw(VALUES[kind]) for key, kind in _names(nodes).items()}
    expected = environment().get_template(name).render(**context)
    assert layout.render(nodes, context) == expected


BLANKS = st.sampled_from(["", " ", "  ", "\n", " \n", "\n ", "\n\n", "\t", "x", "x\n", "\n  "])


@st.composite
def templates(draw: st.DrawFn, depth: int = 2, in_loop: bool = False) -> str:
    """A template of the subset: blanks and text around vars, comments, `for`s and `if`s."""
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        parts.append(draw(BLANKS))
        kind = draw(st.sampled_from(["var", "comment", "for", "if", "text"]))
        if kind == "var":
            parts.append(
                draw(st.sampled_from(["{{ x }}", "{{x}}", "{{ item }}" if in_loop else "{{ y }}"]))
            )
        elif kind == "comment":
            parts.append("{# note #}")
        elif kind == "text":
            parts.append(draw(st.sampled_from(["a", "b c", "a\nb"])))
        elif kind == "for" and depth:
            body = draw(templates(depth - 1, True))
            parts.append("{% for item in xs %}" + body + draw(BLANKS) + "{% endfor %}")
        elif kind == "if" and depth:
            test = draw(
                st.sampled_from(
                    ["flag", "not flag", *(["loop.first", "not loop.last"] if in_loop else [])]
                )
            )
            then = draw(templates(depth - 1, in_loop))
            otherwise = draw(st.one_of(st.none(), templates(depth - 1, in_loop)))
            tail = "" if otherwise is None else "{% else %}" + otherwise + draw(BLANKS)
            parts.append(f"{{% if {test} %}}" + then + draw(BLANKS) + tail + "{% endif %}")
        parts.append(draw(BLANKS))
    return "".join(parts)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    source=templates(),
    x=TEXT,
    y=TEXT,
    xs=st.lists(TEXT, max_size=5),
    flag=st.booleans(),
)
def test_generated_templates_render_as_jinja_does(
    source: str, x: str, y: str, xs: list[str], flag: bool
) -> None:
    context = {"x": x, "y": y, "xs": xs, "flag": flag}
    expected = environment().from_string(source).render(**context)
    assert layout.render(layout.parse(source, _load), context) == expected


@pytest.mark.parametrize(
    "source",
    ["{{ x | upper }}", "{{ a.b }}", "{%- if x %}{% endif %}", "{% set a = 1 %}", "{% if %}"],
)
def test_anything_else_is_left_to_jinja(source: str) -> None:
    with pytest.raises(layout.Unsupported):
        layout.parse(source, _load)


def test_a_missing_value_is_an_error_as_with_strict_undefined() -> None:
    with pytest.raises(NameError):
        layout.render(layout.parse("{{ x }}", _load), {})


def test_a_cold_sdk_run_never_imports_jinja(tmp_path: Any) -> None:
    program = (
        "import sys\n"
        "from codegen.cli import main\n"
        "for lang in ('python', 'typescript'):\n"
        f"    assert main(['sdk', {str(ROOT / 'schemas' / 'nested_objects.json')!r}, '--lang', lang,"
        f" '-q', '-o', {str(tmp_path / 'out')!r}]) == 0\n"
        "    assert main(['prompt', "
        f"{str(ROOT / 'schemas' / 'nested_objects.json')!r}, '--lang', lang, '-o', "
        f"{str(tmp_path / 'p.md')!r}]) == 0\n"
        "print('jinja2' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout == "False\n"


def test_the_one_template_lookup_finds_the_wheels_copy_and_the_checkouts() -> None:
    """The wheel puts `templates/` inside the package (`codegen/templates`); a source
    checkout has it beside the package. The lookup must name exactly those two places,
    whichever of them exists here."""
    import os

    import codegen
    from codegen.render import templates

    package = os.path.dirname(os.path.realpath(codegen.__file__))
    assert os.path.join(package, "templates") == templates.PACKAGE_TEMPLATES
    assert os.path.join(os.path.dirname(package), "templates") == templates.SOURCE_TEMPLATES
    assert os.path.isfile(os.path.join(str(templates.templates_dir()), "python", "sdk.py.jinja"))
