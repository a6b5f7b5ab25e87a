"""Fitting a run's output: within budget by the estimate, cut only between whole values, the
kept paths of the same types, and a note naming what was cut; the estimate never under a
real tokenizer's count on varied text."""

from __future__ import annotations

import base64
import gzip
import json
import math
import random
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.codemode.presentation import fitting
from codegen.codemode.presentation.fitting import (
    DEFAULT_RESULT_TOKENS,
    MIN_BUDGET,
    bound,
    estimate_tokens,
    fit_run_output,
    fit_text,
    run_text,
)
from codegen.codemode.presentation.fitting import o200k as tokenizer
from codegen.codemode.presentation.fitting.cutter import Cutter
from conftest import CORPUS, ROOT
from support.o200k import o200k_counter

MARKER = re.compile(r"(.*)… \[cut: ([\d,]+) more characters\]", re.DOTALL)


def within(value: dict[str, Any], budget: int) -> bool:
    """Both texts of a run within budget: the model's text and `structuredContent`."""
    return (
        estimate_tokens(json.dumps(value)) <= budget and estimate_tokens(run_text(value)) <= budget
    )


def same_shape(original: Any, fitted: Any) -> list[str]:
    """The problems of a cut value against the original (empty: none): every kept path has
    the original's type; arrays are prefixes of items, objects prefixes of keys, a string is
    the original or a prefix of it with a marker counting the rest, scalars are equal.
    An explicit stack: values nest deeper than the test's recursion allows."""
    problems: list[str] = []
    stack = [("$", original, fitted)]
    while stack:
        path, one, two = stack.pop()
        if type(one) is not type(two):
            problems.append(f"{path}: {type(one).__name__} became {type(two).__name__}")
        elif isinstance(one, list):
            if len(two) > len(one):
                problems.append(f"{path}: {len(two)} items of {len(one)}")
            stack.extend((f"{path}[{i}]", one[i], two[i]) for i in range(min(len(one), len(two))))
        elif isinstance(one, dict):
            if list(two) != list(one)[: len(two)]:
                problems.append(f"{path}: keys {list(two)} are not a prefix of {list(one)}")
            stack.extend((f"{path}.{key}", one[key], two[key]) for key in two if key in one)
        elif isinstance(one, str):
            match = MARKER.fullmatch(two)
            if two != one and not (
                match
                and one.startswith(match[1])
                and len(one) - len(match[1]) == int(match[2].replace(",", ""))
            ):
                problems.append(f"{path}: {two[:40]!r} is neither {one[:40]!r} nor cut from it")
        elif one != two:
            problems.append(f"{path}: {one!r} became {two!r}")
    return problems


def lines_from(original: list[str], kept: list[str]) -> bool:
    """Whether each kept log line is an original one, or one shortened, in order."""
    rest = iter(original)
    for line in kept:
        match = MARKER.fullmatch(line)
        if not any(
            each == line or (match is not None and each.startswith(match[1])) for each in rest
        ):
            return False
    return True


def check_fitted(value: dict[str, Any], budget: int = DEFAULT_RESULT_TOKENS) -> fitting.Fitted:
    """Fit `value`, and check what every fitting promises."""
    fitted = fit_run_output(value, budget)
    assert within(fitted.value, budget)
    assert json.loads(json.dumps(fitted.value)) == fitted.value
    assert list(fitted.value) in (list(value), [key for key in value if key != "result"])
    assert lines_from(value["logs"], fitted.value["logs"])
    if "result" in fitted.value:
        assert same_shape(value["result"], fitted.value["result"]) == []
    if fitted.note is None:
        assert fitted.value is value
    else:
        assert fitted.note.startswith(f"cut to fit {budget:,} tokens: ")
    return fitted


def records(count: int) -> list[dict[str, Any]]:
    return [
        {"id": i, "name": f"customer {i}", "tags": ["a", "b"], "balance": i * 1.25, "ok": True}
        for i in range(count)
    ]


# --- values within budget -------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        {"logs": []},
        {"logs": ["hello"], "result": None},
        {"logs": [], "result": {"items": records(20), "total": 20}},
        {"logs": ["a"] * 100, "result": "done"},
        {"logs": [], "result": "中文字符" * 200},
        {"logs": [], "result": [[[[[[[[[[1]]]]]]]]]]},
    ],
)
def test_a_value_within_budget_comes_back_unchanged(value: dict[str, Any]) -> None:
    fitted = fit_run_output(value)
    assert fitted.value is value
    assert fitted.note is None


def test_a_value_just_over_budget_is_cut_and_one_just_under_is_not() -> None:
    value = {"logs": [], "result": "word " * 4000}
    needed = max(estimate_tokens(json.dumps(value)), estimate_tokens(run_text(value)))
    assert fit_run_output(value, needed).value is value
    assert fit_run_output(value, needed - 1).note is not None


def test_a_budget_under_the_minimum_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 64"):
        fit_run_output({"logs": []}, MIN_BUDGET - 1)
    with pytest.raises(ValueError, match="at least 64"):
        fit_text("x", 10)


# --- results ----------------------------------------------------------------------------------


def test_a_big_array_keeps_its_first_items_whole_and_the_other_keys() -> None:
    items = records(9000)
    value = {"logs": [], "result": {"items": items, "total": 9000, "next": "cursor-2"}}
    fitted = check_fitted(value)
    result = fitted.value["result"]
    kept = len(result["items"])
    assert 100 < kept < 9000
    assert result["items"] == items[:kept]
    assert all(a is b for a, b in zip(result["items"], items, strict=False))
    assert result["total"] == 9000 and result["next"] == "cursor-2"
    assert f"result array $.items kept {kept:,} of 9,000 items" in (fitted.note or "")


def test_a_big_object_keeps_its_first_keys() -> None:
    mapping = {f"user-{i}": {"name": f"user {i}", "age": i % 90} for i in range(5000)}
    fitted = check_fitted({"logs": [], "result": mapping}, 2000)
    kept = list(fitted.value["result"])
    assert 10 < len(kept) < 5000
    assert kept == list(mapping)[: len(kept)]
    assert f"result object $ kept {len(kept):,} of 5,000 keys" in (fitted.note or "")


def test_a_long_string_result_is_shortened_with_a_marker_at_the_end() -> None:
    text = "All work and no play makes Jack a dull boy. " * 20_000
    fitted = check_fitted({"logs": [], "result": text})
    result = fitted.value["result"]
    match = MARKER.fullmatch(result)
    assert match and text.startswith(match[1]) and len(match[1]) > 10_000
    assert match[1].endswith(" ")  # cut after a space, not inside a word
    assert "1 result string shortened ($)" in (fitted.note or "")


def test_nested_strings_are_cut_where_they_are_and_named() -> None:
    value = {
        "logs": [],
        "result": {"data": [{"id": i, "text": "lorem ipsum " * 20_000} for i in range(3)]},
    }
    fitted = check_fitted(value)
    data = fitted.value["result"]["data"]
    assert [item["id"] for item in data] == [0, 1, 2][: len(data)]
    assert MARKER.fullmatch(data[0]["text"])
    assert "$.data[0].text" in (fitted.note or "")


def test_a_field_kept_whole_is_not_cut_for_the_next_one_which_gets_what_is_left() -> None:
    """The cutter's plan, in its own units (fitting moves the budget it is given)."""
    files = {f"file{i}.py": "x = 1\n" * 700 for i in range(10)}
    planner = Cutter()
    result = planner.fit({"logs": [], "result": {**files, "count": 10}}, 20_000)["result"]
    note = planner.note(20_000)
    names, kept = list(files), list(result)
    whole = [name for name in kept if result[name] == files.get(name)]
    assert len(whole) >= 2 and kept[: len(whole)] == names[: len(whole)]
    rest = kept[len(whole) :]  # then one cut with what is left, and no more big ones
    assert rest == [names[len(whole)]] and MARKER.fullmatch(result[rest[0]])
    assert f"$['{rest[0]}']" in note


def test_big_fields_of_a_record_share_the_budget_and_small_ones_stay_whole() -> None:
    value = {
        "logs": [],
        "result": {"title": "report", "body": "x " * 50_000, "rows": list(range(50_000)), "n": 7},
    }
    fitted = check_fitted(value)
    result = fitted.value["result"]
    assert list(result) == ["title", "body", "rows", "n"]
    assert result["title"] == "report" and result["n"] == 7
    body, rows = (
        estimate_tokens(json.dumps(result["body"])),
        estimate_tokens(json.dumps(result["rows"])),
    )
    assert body > 4000 and rows > 4000  # neither starves the other
    assert result["rows"] == list(range(len(result["rows"])))


def test_fields_too_big_to_keep_whole_share_the_budget() -> None:
    value = {"logs": [], "result": {f"field{i}": "long text " * 30_000 for i in range(20)}}
    fitted = check_fitted(value)
    assert list(fitted.value["result"]) == [f"field{i}" for i in range(8)]  # at least 1/8 each
    note = fitted.note or ""
    assert "result object $ kept 8 of 20 keys" in note
    strings = re.search(r"(\d+) result strings shortened \((.*)\)", note)
    assert strings, note
    spelled = re.findall(r"\$\.field\d+", strings[2])
    assert len(spelled) == 5
    assert f"and {int(strings[1]) - 5:,} more" in strings[2]


@pytest.mark.parametrize("depth", [256, 500])
def test_deep_nesting_is_cut_without_recursion(depth: int) -> None:
    leaf: Any = "deep " * 100_000
    for level in range(depth):
        leaf = {"k": leaf, "n": level} if level % 2 else [leaf, "side"]
    fitted = check_fitted({"logs": [], "result": leaf})
    note = fitted.note or ""
    assert re.search(r"\$\.k\[0\]\.k\[0\].{20,40}….{20,40}\.k\[0\]", note)  # long paths: both ends
    if depth == 256:  # deeper, the indentation (2 spaces a level, on every line) takes it all
        assert "1 result string shortened" in note


def test_a_huge_value_is_fitted_by_reading_about_what_is_kept() -> None:
    """Work is bound by the budget, not the value: the estimator reads a small fraction of a
    15 MB result (the rest is only serialized once, in C, to see it is too big)."""
    value = {"logs": [], "result": [{"key": "v" * 40, "n": i} for i in range(200_000)]}
    size = len(json.dumps(value))
    read = 0
    cost = bound.cost
    count = tokenizer.count

    def counting(text: str) -> float:
        nonlocal read
        read += len(text)
        return cost(text)

    def tokenizing(text: str, *args: Any, **kwargs: Any) -> int:
        nonlocal read
        read += len(text)
        return count(text, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bound, "cost", counting)
        patch.setattr(tokenizer, "count", tokenizing)
        bound.piece_cost.cache_clear()
        fitted = fit_run_output(value)
    bound.piece_cost.cache_clear()
    assert within(fitted.value, DEFAULT_RESULT_TOKENS)
    assert size > 10_000_000
    assert read < size / 20
    assert "result array $ kept" in (fitted.note or "")


def test_a_cut_over_budget_as_a_whole_is_cut_again_smaller() -> None:
    """Pieces are estimated apart; should their sum miss the whole, the value is cut again."""
    value = {"logs": [], "result": records(5000)}
    budgets: list[float] = []
    fit = Cutter.fit

    def generous(cutter: Cutter, run: dict[str, Any], budget: float) -> dict[str, Any]:
        budgets.append(budget)
        return fit(cutter, run, budget * 2 if len(budgets) == 1 else budget)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Cutter, "fit", generous)
        fitted = check_fitted(value)
    assert len(budgets) >= 2 and budgets[1] < budgets[0]
    assert "result array $ kept" in (fitted.note or "")


def test_when_cutting_never_fits_the_smallest_run_is_returned() -> None:
    value = {"logs": ["a"] * 10_000, "result": {"items": records(5000)}}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Cutter, "fit", lambda cutter, run, budget: run)
        fitted = check_fitted(value)
    assert fitted.value == {"logs": [], "result": {}}
    assert (
        fitted.note
        == f"cut to fit {DEFAULT_RESULT_TOKENS:,} tokens: the log lines and the result's content left out"
    )


def test_a_number_too_long_for_the_budget_leaves_the_result_out() -> None:
    value = {"logs": ["computed"], "result": 10**4000}
    fitted = check_fitted(value, 500)
    assert fitted.value == {"logs": ["computed"]}
    assert "the result left out" in (fitted.note or "")


# --- logs -------------------------------------------------------------------------------------


def test_many_log_lines_keep_the_first_and_the_last_few() -> None:
    lines = [f"processed row {i}: ok" for i in range(50_000)] + ["done: 50,000 rows"]
    fitted = check_fitted({"logs": lines, "result": 50_000})
    kept = fitted.value["logs"]
    assert fitted.value["result"] == 50_000
    head, tail = kept[:-5], kept[-5:]
    assert head == lines[: len(head)] and tail == lines[-5:]
    assert f"{len(kept):,} of 50,001 log lines kept (the first {len(head):,} and the last 5)" in (
        fitted.note or ""
    )


def test_an_over_long_line_is_shortened_and_the_lines_after_it_stay() -> None:
    lines = ["Result:", "x" * 3_000_000, "done in 3.2 s"]
    fitted = check_fitted({"logs": lines})
    kept = fitted.value["logs"]
    assert kept[0] == "Result:" and kept[2] == "done in 3.2 s"
    match = MARKER.fullmatch(kept[1])
    assert match and len(match[1]) > 10_000
    assert "1 log line shortened" in (fitted.note or "")


def test_big_logs_and_a_big_result_each_get_a_share() -> None:
    value = {"logs": [f"step {i}: fine" for i in range(40_000)], "result": records(20_000)}
    fitted = check_fitted(value)
    logs = estimate_tokens("\n".join(fitted.value["logs"]))
    result = estimate_tokens(json.dumps(fitted.value["result"], indent=2))
    assert logs > DEFAULT_RESULT_TOKENS / 4 and result > DEFAULT_RESULT_TOKENS / 4
    note = fitted.note or ""
    assert "log lines kept" in note and "result array $ kept" in note


def test_small_logs_stay_whole_when_the_result_is_big() -> None:
    lines = [f"fetched page {i}" for i in range(30)]
    fitted = check_fitted({"logs": lines, "result": records(20_000)})
    assert fitted.value["logs"] is lines
    assert "log" not in (fitted.note or "")


# --- plain text -------------------------------------------------------------------------------


def test_a_long_traceback_keeps_its_head_and_its_tail_at_line_boundaries() -> None:
    frames = "".join(f'  File "program.py", line {i}, in step\n    step()\n' for i in range(20_000))
    text = "Traceback (most recent call last):\n" + frames + "RecursionError: too deep"
    fitted, note = fit_text(text, 2000)
    assert estimate_tokens(fitted) <= 2000
    match = re.fullmatch(
        r"(.*\n)… \[cut: ([\d,]+) lines, [\d,]+ characters\] …\n(.*)", fitted, re.DOTALL
    )
    assert match
    head, cut, tail = match[1], int(match[2].replace(",", "")), match[3]
    assert text.startswith(head) and text.endswith(tail)
    assert text[len(text) - len(tail) - 1] == "\n"  # the tail starts a line
    assert tail.endswith("RecursionError: too deep")
    assert head.count("\n") + cut + tail.count("\n") + 1 == 40_002
    assert re.fullmatch(
        r"cut to fit 2,000 tokens: kept the first \d+ and the last \d+ of 40,002 lines", note or ""
    )


def test_a_single_long_line_is_cut_in_the_middle() -> None:
    text = "ab" * 100_000
    fitted, note = fit_text(text, 500)
    assert estimate_tokens(fitted) <= 500
    head, tail = fitted.split(" … [cut: ")
    assert text.startswith(head) and text.endswith(tail.split("] … ", 1)[1])
    assert "characters" in (note or "")


def test_a_short_text_comes_back_as_it_is() -> None:
    assert fit_text("Error: no such tool", 100) == ("Error: no such tool", None)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(max_size=120) | st.sampled_from(["word " * 300, "中文" * 200]), max_size=80),
    st.integers(MIN_BUDGET, 600),
)
def test_any_text_is_fitted_to_a_head_a_marker_and_a_tail(lines: list[str], budget: int) -> None:
    text = "\n".join(lines)
    fitted, note = fit_text(text, budget)
    assert estimate_tokens(fitted) <= budget
    if note is None:
        assert fitted == text
    else:
        match = re.fullmatch(r"(.*?)( ?… \[cut: [^]]*\] …[ \n])(.*)", fitted, re.DOTALL)
        assert match and text.startswith(match[1]) and text.endswith(match[3])
        assert len(match[1]) + len(match[3]) < len(text)


# --- the estimate -----------------------------------------------------------------------------


def test_the_estimate_is_bounded_by_the_length() -> None:
    assert estimate_tokens("") == 0
    for text in ["a", " " * 1000, "\n" * 100, "😀" * 10, "aAaAaA", "0a0a0a", ".a.a", "x1Y2"]:
        assert len(text) / 128 <= estimate_tokens(text) <= 4 * len(text)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_costs_between_a_128th_and_4_a_character(text: str) -> None:
    assert len(text) / 64 <= bound.cost(text) <= 4 * len(text)
    assert len(text) / 128 <= estimate_tokens(text) <= 4 * len(text)


def test_without_the_tokenizer_the_estimate_is_the_upper_bound() -> None:
    text = json.dumps(records(50))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokenizer, "_loaded", [None])
        assert estimate_tokens(text) == math.ceil(bound.cost(text))
        fitted = check_fitted({"logs": [], "result": records(3000)})
    assert "result array $ kept" in (fitted.note or "")
    assert estimate_tokens(text) < 0.7 * bound.cost(text)


@pytest.mark.parametrize(
    ("damage", "warning"),
    [
        (lambda raw: raw.replace(b" 0\n", b" 1\n", 1), "is not the official vocabulary"),
        (lambda raw: raw[:1000], "is unreadable"),
    ],
)
def test_a_damaged_vocabulary_is_refused_with_a_warning(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    damage: Callable[[bytes], bytes],
    warning: str,
) -> None:
    raw = gzip.decompress(tokenizer.VOCABULARY.read_bytes())
    damaged = damage(raw)
    path = tmp_path / "o200k_base.tiktoken.gz"
    path.write_bytes(
        gzip.compress(damaged) if warning != "is unreadable" else gzip.compress(raw)[:1000]
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokenizer, "VOCABULARY", path)
        assert tokenizer._load() is None
    assert warning in caplog.text


def test_a_long_piece_is_counted_in_chunks_and_never_under() -> None:
    """BPE is quadratic in one piece's length: a million letters are counted 8,192 at a
    time; cuts fall where the split pattern cuts when there is such a place near."""
    count_one = tokenizer.counter()
    assert count_one is not None
    for text in ["a" * 1_000_000, "word " * 200_000, "x.\n" * 100_000, "中文" * 100_000]:
        parts, blind = tokenizer.chunks(text)
        assert "".join(parts) == text and max(map(len, parts)) <= tokenizer.CHUNK
        if " " in text:
            assert blind == 0
        whole = count_one(text) if len(text) <= 300_000 else None
        counted = tokenizer.count(text, count_one)
        assert counted >= sum(map(count_one, parts))
        if whole is not None:
            assert whole <= counted <= whole * 1.01 + 1
    assert tokenizer.count("a" * 1_000_000, count_one, limit=100) < 10_000  # stops early


def o200k(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A counter of tiktoken's o200k_base tokens, its vocabulary built from the project's
    pinned npm `tiktoken` package (`npm ci` installs it; tests do not use the network) by
    `support/o200k.py`, which checks it against the official file's SHA-256."""
    if not (ROOT / "node_modules" / "tiktoken" / "encoders" / "o200k_base.json").is_file():
        pytest.fail("node_modules/tiktoken is missing: run `npm ci` (scripts/test does)")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", "")
        return o200k_counter(tmp_path_factory.mktemp("tiktoken"))


def samples() -> dict[str, list[str]]:
    """Texts of each kind a run prints or returns, made here or read from the repository."""
    rnd = random.Random(20_000)
    corpus = [
        json.loads(path.read_text(encoding="utf-8")) for path in sorted(CORPUS.rglob("*.json"))
    ]
    emoji = [
        chr(c)
        for c in [*range(0x1F600, 0x1F650), *range(0x1F300, 0x1F5FF), *range(0x1F900, 0x1F9FF)]
    ]
    joined = [
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",
        "\U0001f44d\U0001f3fd",
        "\U0001f1eb\U0001f1f7",
        "\u2764\ufe0f",
    ]
    code = sorted((ROOT / "codegen" / "codemode").glob("*.py"))
    return {
        "json": [json.dumps(value, ensure_ascii=False) for value in corpus]
        + [json.dumps(value, indent=2, ensure_ascii=False) for value in corpus]
        + [json.dumps(value) for value in corpus]
        + [json.dumps(records(300)), json.dumps(records(300), indent=2)],
        "english": [
            (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"),
            "The quick brown fox jumps over the lazy dog. " * 50,
            "It was the best of times, it was the worst of times, it was the age of wisdom, it "
            "was the age of foolishness, it was the epoch of belief, it was the epoch of "
            "incredulity, it was the season of Light, it was the season of Darkness. " * 20,
        ],
        "code": [path.read_text(encoding="utf-8") for path in code],
        "cjk": [
            "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心，并应以兄弟关系的精神相对待。"
            * 20,
            "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。"
            * 20,
            "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. 인간은 천부적으로 이성과 양심을 부여받았다. "
            * 20,
            "Python（派森）是一种功能强大而完善的通用型计算机程序设计语言，已经具有十多年的发展历史。"
            * 20,
        ],
        "emoji": ["".join(rnd.choice(emoji) for _ in range(n)) for n in (10, 100, 2000)]
        + ["".join(rnd.choice(joined) for _ in range(500))]
        + [" ".join(rnd.choice(["great", "ok", "lol"]) + rnd.choice(emoji) for _ in range(500))],
        "base64": [base64.b64encode(rnd.randbytes(n)).decode() for n in (30, 300, 3000, 30_000)]
        + [base64.urlsafe_b64encode(rnd.randbytes(3000)).decode(), rnd.randbytes(5000).hex()]
        + [json.dumps([str(uuid.UUID(int=rnd.getrandbits(128))) for _ in range(300)])],
        "digits": ["".join(rnd.choice("0123456789") for _ in range(n)) for n in (10, 1000, 100_000)]
        + [json.dumps([rnd.random() * 10 ** rnd.randint(-5, 9) for _ in range(2000)])]
        + [json.dumps([rnd.randint(-(10**12), 10**12) for _ in range(2000)])],
    }


@pytest.mark.slow
def test_the_bound_is_never_under_o200k_and_about_twice_it_on_english_and_json(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    real = o200k(tmp_path_factory)

    for kind, texts in samples().items():
        estimated = counted = 0.0
        for text in texts:
            pieces = [text] + [text[i : i + 500] for i in range(0, min(len(text), 20_000), 500)]
            for piece in pieces:
                assert bound.cost(piece) >= real(piece), (kind, piece[:80])
            estimated += bound.cost(text)
            counted += real(text)
        if kind in ("json", "english"):
            assert estimated <= 2.5 * counted, (kind, estimated / counted)


@pytest.mark.slow
def test_the_estimate_is_o200k_from_tiktoken_never_under_and_within_a_percent(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The shipped vocabulary against one built apart (from the npm package) and loaded by
    tiktoken itself: the same counts, and chunked counts never under."""
    real = o200k(tmp_path_factory)
    for kind, texts in samples().items():
        for text in texts:
            pieces = [text] + [text[i : i + 500] for i in range(0, min(len(text), 20_000), 500)]
            for piece in pieces:
                counted = real(piece)
                assert counted <= estimate_tokens(piece) <= counted * 1.01 + 1, (kind, piece[:80])


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "Z", " ", "  ", "\n", ".", ".\n", "12", "中", "😀", "'s", "\t"]),
            st.integers(1, 2000),
        ),
        min_size=20,
        max_size=400,
    )
)
def test_chunked_counts_are_never_under_the_whole(runs: list[tuple[str, int]]) -> None:
    text = "".join(piece * times for piece, times in runs)
    count_one = tokenizer.counter()
    assert count_one is not None
    whole = count_one(text)
    assert whole <= tokenizer.count(text, count_one) <= whole * 1.01 + 1


# --- any value --------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.text(max_size=600)
    | st.sampled_from(["word " * 400, "中文" * 300, "😀" * 200, "a\nb " * 300])
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=12) | st.dictionaries(st.text(max_size=8), children, max_size=8)
    ),
    max_leaves=60,
)
runs = st.fixed_dictionaries(
    {"logs": st.lists(st.text(max_size=300), max_size=40)}, optional={"result": json_values}
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(runs, st.integers(MIN_BUDGET, 1500))
def test_any_run_is_fitted_within_budget_with_its_types_kept(
    value: dict[str, Any], budget: int
) -> None:
    fitted = fit_run_output(value, budget)
    assert within(fitted.value, budget)
    assert json.loads(json.dumps(fitted.value)) == fitted.value
    if "result" in fitted.value:
        assert same_shape(value["result"], fitted.value["result"]) == []
    assert lines_from(value["logs"], fitted.value["logs"])
    if fitted.note is None:
        assert fitted.value is value
