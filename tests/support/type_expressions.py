"""Hypothesis strategies for the black-compatible layout's type expressions
(`codegen.render.python.black_layout`): names and string literals of many widths, nested
subscripts, `*tuple[...]` tails and unions. Shared by the layout and robustness tests."""

from __future__ import annotations

from hypothesis import strategies as st

from codegen.render.python import black_layout as fmt

names = st.builds(lambda n: "N" + "a" * n, st.sampled_from([2, 8, 15, 30, 60, 90]))


strings = st.builds(lambda n: '"' + "s" * n + '"', st.sampled_from([1, 5, 20, 50, 95]))


atoms = st.one_of(names, strings, st.sampled_from(["int", "str", "None", "Any"])).map(fmt.Atom)


def _subs(children: st.SearchStrategy[fmt.Expr]) -> st.SearchStrategy[fmt.Expr]:
    single = st.builds(
        lambda head, arg: fmt.Sub(head, (arg,)), st.sampled_from(["list", "NotRequired"]), children
    )
    multi = st.builds(
        lambda head, args: fmt.Sub(head, tuple(args)),
        st.sampled_from(["Literal", "dict", "tuple"]),
        st.lists(children, min_size=1, max_size=6),
    )
    rest = st.builds(
        lambda args, tail: fmt.Sub("tuple", (*args, fmt.Sub("*tuple", (tail, fmt.Atom("..."))))),
        st.lists(children, min_size=1, max_size=3),
        children,
    )
    return st.one_of(single, multi, rest)


def _union(children: st.SearchStrategy[fmt.Expr]) -> st.SearchStrategy[fmt.Expr]:
    arms = children.filter(lambda e: not isinstance(e, fmt.Union))
    return st.lists(arms, min_size=2, max_size=5).map(lambda a: fmt.Union(tuple(a)))


exprs = st.recursive(atoms, lambda c: st.one_of(_subs(c), _union(c)), max_leaves=14)
