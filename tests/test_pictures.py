"""A failed function is drawn as the course page draws it (coursekit.checks.picture,
coursekit.learner.pictures, feedback_picture.html.j2).

In process: every catalog mistake of a function with a seeded example gets a
picture whose caption names its difference, and hostile results get none but a
reason. Through the grader once: one learner of ch3_multihead whose split_heads
forgets the transpose, whose merge_heads stacks rows and whose softmax, attention
and multi-head attention return nan, complex numbers and a million-cell table is
autograded by stock nbgrader, and its feedback page is opened in Chromium. The
causal mask that lets a word see the future is drawn from its check's verdict in
process, through the same template.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest

from catalog import catalogs
from coursekit.checks import picture
from coursekit.checks.core import quiet_numpy, same
from coursekit.checks.declared import checks_of
from coursekit.checks.verdict import CheckFailedError, Verdict
from coursekit.core import templating
from coursekit.core.messages import speaking
from coursekit.learner import feedback, pictures
from coursekit.simulate import submissions
from tests.support.browser import chromium
from tests.support.catalog_support import all_entries
from tests.support.course_sandbox import CourseSandbox
from tests.support.notebook_namespace import notebook_namespace

ASSIGNMENT = "ch3_multihead"
SCREENSHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots" / "pictures"
WORDS = ["나는", "학교에", "버스로", "갔다"]
NUMBER = re.compile(r"-?\d+\.\d\d")

# Hostile answers: what each returns on the seeded example cannot be drawn.
HOSTILE = {
    "softmax": "def softmax(x):\n    return np.full(np.shape(x), np.nan)\n",
    "scaled_dot_product_attention": (
        "def scaled_dot_product_attention(Q, K, V):\n"
        "    w = np.ones(Q.shape[:-1] + K.shape[-2:-1]) * (1 + 1j)\n"
        "    return w @ V, w\n"
    ),
    # A million cells on the seed's shape only: the random cases stay small.
    "multi_head_attention": (
        "def multi_head_attention(X, W_Q, W_K, W_V, W_O, h):\n"
        "    if X.shape == (4, 8):\n"
        "        return np.zeros((1000, 1000), dtype=np.float32), np.zeros((2, 4, 4))\n"
        "    return np.zeros((2, 2)), np.zeros((2, 2))\n"
    ),
}


# The visible cells that run each function itself on the page's example.
SEED_CELLS = {
    "ch3_multihead": {
        "softmax": {"softmax_seed_values"},
        "split_heads": {"split_heads_seed"},
        "scaled_dot_product_attention": {"attention_seed_weights"},
        "merge_heads": {"merge_heads_seed"},
        "multi_head_attention": {"mha_seed_example"},
    },
    "ch4_cross_attention": {
        "split_heads": {"split_heads_any_n"},
        "merge_heads": {"merge_heads_any_n"},
        "scaled_dot_product_attention": {"attention_seed_example", "attention_masked_seed"},
        "causal_mask": {"causal_mask_small"},
        "padding_mask": {"padding_mask_example"},
        "masked_self_attention": {"masked_self_attention_seed"},
        "multi_head_cross_attention": {"cross_attention_seed"},
    },
}


def seed_cell_failed(entry) -> bool:
    """Does the entry fail a visible cell that runs its own function on the page's example?"""
    return bool(SEED_CELLS[entry.assignment][entry.function] & entry.fails)


def verdicts_of(entry) -> list[Verdict]:
    """The verdicts of the entry's own function's hidden checks, run in process."""
    checks = checks_of(entry.assignment)
    namespace = notebook_namespace(entry.assignment, entry)
    found = []
    for check in checks:
        if check.function != entry.function:
            continue
        try:
            checks.run(check.grade_id, namespace[entry.function])
        except CheckFailedError as failed:
            found.append(failed.verdict)
    return found


SEEDED = [e for e in all_entries("mistake") if e.function in checks_of(e.assignment).seed_examples]


@pytest.mark.parametrize("entry", SEEDED, ids=lambda e: f"{e.assignment}:{e.function}:{e.key}")
def test_every_catalog_mistake_on_the_seed_is_drawn_with_its_difference_named(entry):
    verdicts = verdicts_of(entry)
    drawn = [v.picture for v in verdicts if v.picture is not None]
    if not seed_cell_failed(entry):
        # Right on the page's example (only hidden cases fail): nothing to draw, text only.
        assert drawn == [], drawn
        return
    assert verdicts, "no hidden check failed"
    checks = checks_of(entry.assignment)
    examples = checks.seed_examples[entry.function]
    examples = (examples,) if isinstance(examples, picture.SeedExample) else examples
    namespace = notebook_namespace(entry.assignment, entry)
    fn, reference = namespace[entry.function], checks.reference_for(entry.function)
    differs = []
    for example in examples:
        args, kwargs = example.case.args, example.case.kwargs
        try:
            with quiet_numpy():
                got = fn(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        except Exception:
            continue  # raised: the message says so in words
        differs.append(not same(got, reference(*args, **kwargs)))
    if not any(differs):
        assert drawn == [], "nothing returned on the page's example differs from it"
        return
    assert drawn, "a mistake that changes the page's example is not drawn"
    record = drawn[0]
    assert pictures.read(record) is not None, record
    if record["kind"] == picture.OMITTED:
        # The page's own example gives nan: nothing to draw, and the reason says so.
        assert "nan" in record["reason"], record
        return
    assert record["caption_key"] in picture.CAPTION_KEYS
    assert record["caption_key"] != picture.GENERIC, record["caption"]
    assert record["caption"] and "\n" not in record["caption"]
    assert re.search("[가-힣]", record["caption"]), "the caption is not in the course's language"


def test_the_captions_the_issue_names():
    by_key = {}
    for entry in SEEDED:
        for verdict in verdicts_of(entry):
            if verdict.picture:
                by_key[f"{entry.function}:{entry.key}"] = verdict.picture["caption"]
                break
    assert by_key["masked_self_attention:causal_mask_forgotten"] == "미래 낱말을 보고 있습니다."
    assert by_key["causal_mask:causal_upper_triangle"] == "미래 낱말을 보고 있습니다."
    assert by_key["softmax:softmax_whole_array"] == "행의 합이 1 이 아닙니다."
    assert by_key["merge_heads:merge_stacked_rows"].startswith("merge_heads(heads_out) 의 모양이")


def test_heads_swapped_is_named():
    example = checks_of(ASSIGNMENT).seed_examples["split_heads"]
    expected = np.arange(32.0).reshape(2, 4, 4)
    record = picture.picture_of(example, expected[::-1].copy(), expected)
    assert record["caption"] == "head 0 과 head 1 이 뒤바뀌었습니다."
    assert [p["title"] for p in record["panels"]] == [
        "split_heads(Q, 2) · head 0",
        "split_heads(Q, 2) · head 1",
    ]
    assert record["panels"][0]["rows"] == WORDS and all(map(all, record["panels"][0]["outside"]))


@pytest.mark.parametrize(
    "value, reason",
    [
        (np.full((2, 4, 4), 1e300), "값이 너무 커서"),
        (np.full((2, 4, 4), np.inf), "nan 이나 inf"),
        (np.full((2, 4, 4), np.nan), "nan 이나 inf"),
        (np.ones((2, 4, 4), dtype=complex), "실수가 아닙니다"),
        (np.empty((2, 4, 4), dtype=object), "실수가 아닙니다"),
        (np.zeros((1000, 1000), dtype=bool), "1000000 개라"),
        (np.zeros((1,) * 40), "축이 40 개라"),
        ([[0.5] * 4] * 4, "NumPy 배열이 아니라 list"),
    ],
    ids=["huge", "inf", "nan", "complex", "object", "million", "axes", "list"],
)
def test_a_hostile_result_gets_no_picture_but_a_reason(value, reason):
    example = checks_of(ASSIGNMENT).seed_examples["split_heads"]
    expected = np.zeros((2, 4, 4))
    record = picture.picture_of(example, value, expected)
    assert record["kind"] == picture.OMITTED and "panels" not in record
    assert reason in record["reason"], record["reason"]
    html = summary_page([row_with("split_heads", record)])
    assert 'class="ck-heat"' not in html and 'class="ck-flow"' not in html
    assert "그림 없음: " in html and len(html) < 20_000


def test_a_forged_or_oversized_record_is_not_drawn():
    assert pictures.read({"kind": "tables", "panels": [{"rows": ["<b>"] * 400}]}) is None
    assert pictures.read({"kind": "script"}) is None
    record = {
        "kind": "tables",
        "caption": "<script>alert(1)</script>",
        "caption_key": "x",
        "panels": [
            {
                "title": "<img src=x>",
                "rows": ["<i>a</i>"],
                "columns": ["b"],
                "expected": [[0.5]],
                "got": [[0.25]],
                "outside": [[1]],
                "bool": False,
            }
        ],
    }
    html = summary_page([row_with("split_heads", record)])
    assert "<script>" not in html and "<img" not in html and "<i>a</i>" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x&gt;" in html


def row_with(name: str, record: dict) -> feedback.FunctionRow:
    return feedback.FunctionRow(
        name, 0, 3, anchor=name, message=f"[{name}] …", picture=pictures.read(record)
    )


def summary_page(rows: list[feedback.FunctionRow]) -> str:
    """The feedback summary of these rows, as a page with the summary's CSS."""
    with speaking("ko"):
        body = templating.render_one_line(
            "feedback_summary.html.j2",
            summary_id=feedback.SUMMARY_ID,
            total="",
            functions=rows,
            answers=[],
            late_penalty="",
            attempt_id=feedback.ATTEMPT_ID,
            attempt="{}",
        )
    css = feedback.CSS + pictures.CSS
    return f'<html lang="ko"><meta charset="utf-8"><style>{css}</style><body>{body}</body></html>'


# ---------------------------------------------------------------- in a browser


@pytest.fixture(scope="module")
def graded_page(tmp_path_factory) -> Path:
    """One learner's ch3 feedback page, autograded and generated by stock nbgrader."""
    sandbox = CourseSandbox(tmp_path_factory.mktemp("pictures"))
    sandbox.generate(ASSIGNMENT)
    release, source = sandbox.release_notebook(ASSIGNMENT), sandbox.source_notebook(ASSIGNMENT)
    mistakes = {e.key: e for e in catalogs()[ASSIGNMENT].mistakes}
    replace = {
        "split_heads": mistakes["reshape_without_transpose"].source,
        "merge_heads": mistakes["merge_stacked_rows"].source,
        **HOSTILE,
    }
    sandbox.submit("learner", ASSIGNMENT, submissions.fill(release, source, replace=replace))
    sandbox.autograde(ASSIGNMENT)
    sandbox.run("generate_feedback", ASSIGNMENT)
    (page,) = (sandbox.root / "feedback" / "learner" / ASSIGNMENT).glob("*.html")
    return page


def function_row(page, name: str):
    return page.locator("div.course-summary tr", has=page.locator(f"a:text-is('{name}')"))


@pytest.mark.class_graded
@pytest.mark.browser
def test_the_feedback_page_draws_the_heads_the_flow_and_no_hostile_picture(graded_page, tmp_path):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    html = graded_page.read_text(encoding="utf-8")
    assert len(html) < 4_000_000, "the page is not bounded"
    with chromium(tmp_path / "profile", width=1400) as browser:
        page = browser.new_page()
        page.goto(graded_page.as_uri())
        page.screenshot(path=str(SCREENSHOTS / "01-feedback-page.png"), full_page=True)

        split = function_row(page, "split_heads").locator(".ck-picture")
        split.screenshot(path=str(SCREENSHOTS / "02-split-heads.png"))
        caption = "행마다 값은 맞는데 자리가 틀렸습니다: 낱말과 head 가 뒤섞였습니다."
        assert split.locator(".ck-caption").inner_text() == caption
        tables = split.locator("table.ck-heat")
        assert tables.count() == 4  # two heads, expected beside received
        titles = [tables.nth(i).locator("caption").inner_text() for i in range(4)]
        assert titles == [
            f"split_heads(Q, 2) · head {head} — {side}"
            for head in (0, 1)
            for side in ("기대", "받음")
        ]
        for i in range(4):
            table = tables.nth(i)
            assert table.locator("th[scope=row]").all_inner_texts() == WORDS
            cells = table.locator("td").all_inner_texts()
            assert len(cells) == 16 and all(NUMBER.fullmatch(c) for c in cells), cells
        # Head 0's first word is right (its first four cells); everything else moved.
        received = tables.nth(1).locator("td")
        marked = [received.nth(i).get_attribute("class") for i in range(16)]
        assert ["ck-off" in c for c in marked] == [False] * 4 + [True] * 12, marked
        border = received.nth(4).evaluate("c => getComputedStyle(c).borderTopStyle")
        assert border == "dashed", "a differing cell is marked by colour alone"
        alt = split.locator(".ck-alt").first.inner_text()
        assert alt.startswith("split_heads(Q, 2) · head 0: 다른 칸 12 개: 학교에·0"), alt

        merge = function_row(page, "merge_heads").locator(".ck-picture")
        merge.screenshot(path=str(SCREENSHOTS / "03-merge-heads-flow.png"))
        steps = merge.locator(".ck-step").all_inner_texts()
        assert [s.split("\n")[:2] for s in steps] == [
            ["Q", "(4, 8)"],
            ["split_heads", "(2, 4, 4)"],
            ["merge_heads", "(4, 8)"],
        ]
        assert "여기서 흐름을 벗어났습니다: (8, 4)" in steps[2]
        assert merge.locator(".ck-left").count() == 1 and "ck-left" not in str(steps[:2])

        reasons = {
            "softmax": "nan 이나 inf",
            "scaled_dot_product_attention": "실수가 아닙니다",
            "multi_head_attention": "값이 1000000 개라",
        }
        for name, reason in reasons.items():
            row = function_row(page, name)
            assert row.locator("table.ck-heat, .ck-flow").count() == 0, name
            assert reason in row.locator(".ck-no-picture").inner_text(), name
        # Without colour: the values are printed and the differing cells stay marked.
        page.add_style_tag(content="html { filter: grayscale(1); }")
        split.screenshot(path=str(SCREENSHOTS / "05-split-heads-grey.png"))
        attempt = feedback.read_attempt(html)
        rows = {row["name"]: row for row in attempt["functions"]}
        assert rows["split_heads"]["picture"]["caption_key"] == "rows_misplaced"
        assert rows["softmax"]["picture"]["kind"] == picture.OMITTED


@pytest.mark.browser
def test_a_causal_mask_that_sees_the_future_is_captioned_so(tmp_path):
    entry = next(
        e for e in catalogs()["ch4_cross_attention"].mistakes if e.key == "causal_mask_forgotten"
    )
    (verdict, *_) = verdicts_of(entry)
    path = tmp_path / "page.html"
    path.write_text(summary_page([row_with(entry.function, verdict.picture)]), encoding="utf-8")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with chromium(tmp_path / "profile", width=1400) as browser:
        page = browser.new_page()
        page.goto(path.as_uri())
        drawn = page.locator(".ck-picture")
        drawn.screenshot(path=str(SCREENSHOTS / "04-causal-mask-forgotten.png"))
        assert drawn.locator(".ck-caption").inner_text() == "미래 낱말을 보고 있습니다."
        weights = drawn.locator("table.ck-heat", has_text="weights · head 0 — 받음")
        assert weights.locator("th[scope=row]").all_inner_texts() == ["<시작>", "저는", "학생"]
        cells = weights.locator("td")
        future = [cells.nth(i).get_attribute("class") for i in (1, 2, 5)]
        assert all("ck-off" in c for c in future), future
        assert "ck-off" not in cells.nth(6).get_attribute("class")  # 학생 sees every word
