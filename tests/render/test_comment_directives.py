"""Comment text never turns into a `black` directive.

`black` obeys `fmt: off`, `fmt: on` and `fmt: skip` (and yapf's spellings) not only at
the start of a comment but as any piece of it between `# ` marks or `;`. A schema's
description lands in such comments, so `comment_lines` quotes the directive words of a
comment `black` would obey, and leaves every other comment as it was. `black`'s own
predicate is the oracle here.
"""

from __future__ import annotations

from black.comments import contains_fmt_directive
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.render.python.strings import PRAGMAS, comment_lines

PIECES = st.sampled_from(
    [
        "fmt: skip",
        "fmt:skip",
        "fmt: off",
        "fmt:on",
        "yapf: disable",
        "yapf: enable",
        "# ",
        "#",
        ";",
        "; ",
        " ",
        "  ",
        "> ",
        "text",
        "fmt",
        ":",
        "skip",
        "type: ignore",
        "é",
    ]
)
TEXTS = st.lists(PIECES, max_size=8).map("".join)


@settings(max_examples=3_000, deadline=None)
@given(TEXTS)
def test_no_comment_is_a_formatter_directive(text: str) -> None:
    for line in comment_lines([text], "    "):
        assert not contains_fmt_directive(line.strip()), line


@settings(max_examples=3_000, deadline=None)
@given(TEXTS)
def test_other_comments_keep_their_text(text: str) -> None:
    line = f"# {text.rstrip()}" if text.rstrip() else "#"
    if contains_fmt_directive(line) or text.rstrip().lstrip().lower().startswith(PRAGMAS):
        return
    assert comment_lines([text], "") == [line]


def test_the_example_that_found_it() -> None:
    text = 'media type: <script>"); import pwn_os # fmt: skip'
    assert comment_lines([text], "") == ['# media type: <script>"); import pwn_os # > fmt: skip']
    assert comment_lines(["a; fmt: off; b"], "") == ["# a; > fmt: off; b"]
