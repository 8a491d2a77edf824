"""Progressive hints when stuck (coursekit/live/hints.py), on hand-written attempt records.

The rule: a function's hidden checks failed on `hint_after` graded attempts in a row
give its first hint, as many more the next; passing resets it; held-back attempts
and stubs count as nothing. Then where the hints go: the feedback summary and its
attempt data (only inside the live service's `showing_hints`: a batch shows none),
the TA board's stuck table, the TA report's counts. And the course's own hints:
written beside the checks, two or three per function, Korean in the pages' voice,
never the answer's code. The make-live scenario is tests/test_live.py's.
"""

from __future__ import annotations

import html
import json
import re
import sys
from datetime import UTC, datetime, timedelta

import pytest
from traitlets import TraitError
from traitlets.config import Config

from coursekit.checks.declared import HiddenCheck, HiddenChecks
from coursekit.checks.verdict import MISMATCH, RAISED, Verdict
from coursekit.core import templating
from coursekit.learner.feedback import FunctionRow, read_attempt, showing_hints, with_hints
from coursekit.live import attempts, board, hints
from coursekit.live.attempts import GRADED, TOO_SOON, Attempt
from coursekit.live.policy import LiveGrading
from coursekit.live.service import LiveService
from coursekit.staff.report import render
from coursekit.staff.report.summary import Summary
from grader_tests import ch3_multihead, ch4_cross_attention
from solutions import ch3_multihead as ref3
from solutions import ch4_cross_attention as ref4
from tests.support.hangul import HANGUL

ASSIGNMENT = "ch3_multihead"
START = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
HINTS = {"split_heads": ("one", "two", "three"), "softmax": ("only",)}
CELLS = {"split_heads_random_shapes": "split_heads", "softmax_random_shapes": "softmax"}


def verdict(function: str, error: str | None = None) -> dict:
    return Verdict(
        function,
        "random shapes",
        RAISED if error else MISMATCH,
        total=3,
        failed=1,
        error={"type": error, "message": ""} if error else None,
        assignment=ASSIGNMENT,
        grade_id=f"{function}_random_shapes",
    ).to_record()


def attempt(minute: int, *fails: str, outcome=GRADED, stub=(), learner="ann") -> Attempt:
    """A record at START + `minute` whose hidden checks of `fails` failed (`stub`: still
    raising the released stub's NotImplementedError)."""
    when = (START + timedelta(minutes=minute)).isoformat()
    record = Attempt(learner, ASSIGNMENT, f"{learner}+{ASSIGNMENT}+{minute}", when, when, outcome)
    if outcome != GRADED:
        return record
    for cell, function in CELLS.items():
        lost = function in fails or function in stub
        record.cells[cell] = {"points": 0.0 if lost else 1.0, "max": 1.0}
        if lost:
            record.failed[cell] = verdict(
                function, "NotImplementedError" if function in stub else None
            )
    return record


def shown_in_turn(records: list[Attempt], after: int = 2) -> list[dict[str, int]]:
    """The levels each graded attempt shows, as the live service computes them in turn."""
    return [
        hints.levels(records[: i + 1], after, HINTS)
        for i, a in enumerate(records)
        if a.outcome == GRADED
    ]


# -- the rule ----------------------------------------------------------------------------


def test_one_hint_per_hint_after_failures_in_a_row_up_to_the_last():
    assert [hints.level(k, 2, 3) for k in range(9)] == [0, 0, 1, 1, 2, 2, 3, 3, 3]
    assert [hints.level(k, 1, 2) for k in range(4)] == [0, 1, 2, 2]
    assert [hints.level(k, 3, 3) for k in range(7)] == [0, 0, 0, 1, 1, 1, 2]
    assert hints.level(5, 2, 0) == 0  # a function without hints shows none
    with pytest.raises(ValueError):
        hints.level(1, 0, 3)


def test_failing_split_heads_shows_hint_1_on_the_second_attempt_2_on_the_fourth_none_after():
    records = [attempt(m, "split_heads") for m in range(4)] + [attempt(4)]
    assert shown_in_turn(records) == [
        {},
        {"split_heads": 1},
        {"split_heads": 1},
        {"split_heads": 2},
        {},
    ]
    again = [*records, attempt(5, "split_heads"), attempt(6, "split_heads")]
    assert shown_in_turn(again)[-2:] == [{}, {"split_heads": 1}]  # passing started it over


def test_held_back_attempts_neither_count_nor_break_a_run_and_stubs_are_no_failure():
    records = [
        attempt(0, "split_heads"),
        attempt(1, outcome=TOO_SOON),
        attempt(2, "split_heads"),
    ]
    assert hints.levels(records, 2, HINTS) == {"split_heads": 1}
    assert hints.levels(records[:2], 2, HINTS) == {}  # a held-back attempt shows no hint
    stubs = [attempt(m, stub=("softmax",)) for m in range(3)]
    assert hints.levels(stubs, 1, HINTS) == {}  # not started yet: not stuck on it


def test_each_function_counts_its_own_run_and_stops_at_its_last_hint():
    records = [attempt(0, "softmax"), attempt(1, "softmax", "split_heads"), attempt(2, "softmax")]
    assert hints.levels(records, 1, HINTS) == {"softmax": 1}  # softmax has one hint
    assert hints.levels(records[:2], 1, HINTS) == {"softmax": 1, "split_heads": 1}
    assert hints.given(HINTS, {"split_heads": 2}) == {"split_heads": ["one", "two"]}
    assert hints.levels(records, 1, {}) == {}  # a course with no hints shows none


def test_hint_after_is_a_live_grading_setting_of_at_least_one():
    assert LiveGrading().hint_after == 2
    config = Config()
    config.LiveGrading.hint_after = 3
    assert LiveGrading(config=config).hint_after == 3
    config.LiveGrading.hint_after = 0
    with pytest.raises(TraitError):
        LiveGrading(config=config)


# -- where the hints show ----------------------------------------------------------------


def summary_page(rows: list[FunctionRow]) -> str:
    return templating.render_one_line(
        "feedback_summary.html.j2",
        summary_id="course-summary",
        total="",
        functions=rows,
        answers=[],
        late_penalty="",
        attempt_id="coursekit-attempt",
        attempt='{"schema": 1}',
    )


def rows() -> list[FunctionRow]:
    return [FunctionRow("softmax", 2, 2), FunctionRow("split_heads", 0, 2, "c", "틀렸습니다")]


def test_the_page_shows_the_hints_given_only_inside_the_live_services_showing_hints():
    hostile = "<b>굵게</b> 힌트"
    with showing_hints({"split_heads": ["첫 힌트", hostile], "softmax": ["안 보임"]}):
        shown = with_hints(rows())
    softmax, split_heads = shown
    assert softmax.hints == () and softmax.data()["hints"] == []  # it passed: no hint
    assert split_heads.data()["hints"] == ["첫 힌트", hostile]
    page = summary_page(shown)
    assert "힌트 1" in page and "힌트 2" in page and "첫 힌트" in page
    assert "<b>굵게</b>" not in page and "&lt;b&gt;굵게" in page  # text, never markup
    batch = with_hints(rows())  # make grade: no attempt, no hints
    assert [r.data()["hints"] for r in batch] == [[], []]
    assert "힌트" not in summary_page(batch)


def test_the_panel_reads_the_hints_from_the_pages_attempt_data():
    with showing_hints({"split_heads": ["첫 힌트"]}):
        (row,) = with_hints([FunctionRow("split_heads", 0, 1, "c", "틀렸습니다")])
    data = json.dumps({"schema": 1, "functions": [row.data()]}, ensure_ascii=False)
    page = f'<div hidden id="coursekit-attempt" data-attempt="{html.escape(data)}"></div>'
    assert read_attempt(page)["functions"][0]["hints"] == ["첫 힌트"]


def test_the_board_shows_which_hint_each_stuck_learner_has_seen():
    records = [attempt(m, "split_heads") for m in range(3)]
    for i, record in enumerate(records):
        record.hints = hints.levels(records[: i + 1], 1, HINTS)
    ((only,),) = [b.stuck for b in board.board(records, {ASSIGNMENT: CELLS}, 3)]
    assert (only.learner, only.function, only.attempts, only.hint) == ("ann", "split_heads", 3, 3)
    shown = board.as_json(board.board(records, {ASSIGNMENT: CELLS}, 3))
    assert shown[0]["stuck"][0]["hint"] == 3


def test_the_report_counts_learners_by_the_last_hint_they_saw():
    ann = [attempt(m, "split_heads") for m in range(4)] + [attempt(4)]
    bob = [attempt(m, "split_heads", learner="bob") for m in range(2)]
    cy = [attempt(0, "split_heads", learner="cy")]
    records = ann + bob + cy
    for own in (ann, bob, cy):
        for i, record in enumerate(own):
            record.hints = hints.levels(own[: i + 1], 2, HINTS)
    assert hints.seen(records) == {"ann": {"split_heads": 2}, "bob": {"split_heads": 1}}
    assert hints.counts(records) == [("split_heads", 1, 1), ("split_heads", 2, 1)]
    summary = Summary([], {}, [], 0, [], hints.counts(records))
    lines = render.hint_lines(summary)
    assert len(lines) == 3 and "split_heads" in lines[1] and "힌트 2 까지" in lines[2]
    assert render.hint_lines(Summary([], {}, [], 0, [])) == []  # no hints given: no section


# -- the course's own hints --------------------------------------------------------------

CODE_CALL = re.compile(r"\b[A-Za-z_][A-Za-z0-9_.]*\(")  # transpose(, np.sqrt(, x.reshape(
VOICE = ("전문가", "회의록", "팀장", "번역가", "원문", "규칙표", "가중치표", "가림판", "씨앗 예제")


def reference_lines(module) -> list[str]:
    import inspect

    lines = [line.strip() for line in inspect.getsource(module).splitlines()]
    return [line for line in lines if len(line) > 12 and not line.startswith(("#", '"'))]


@pytest.mark.parametrize(
    ("checks", "reference"), [(ch3_multihead.CHECKS, ref3), (ch4_cross_attention.CHECKS, ref4)]
)
def test_every_function_has_two_or_three_korean_hints_without_the_answers_code(checks, reference):
    code = reference_lines(reference)
    for function in checks.functions():
        written = checks.hints_for(function)
        assert 2 <= len(written) <= 3, function
        assert len(set(written)) == len(written), function
        for hint in written:
            assert len(HANGUL.findall(hint)) >= 10, (function, hint)  # Korean sentences
            assert not CODE_CALL.search(hint), (function, hint)
            assert "@" not in hint and ".T" not in hint, (function, hint)
            assert not [line for line in code if line in hint], (function, hint)
    text = " ".join(h for f in checks.functions() for h in checks.hints_for(f))
    assert any(word in text for word in VOICE)


def test_hints_are_declared_only_for_checked_functions_and_as_text():
    cases = ch3_multihead.CHECKS["split_heads_random_shapes"].cases
    check = HiddenCheck("split_heads_x", "split_heads", "x", cases)
    made = HiddenChecks("x", reference=ref3, notebook_globals=(), checks=[check])
    assert made.hints_for("split_heads") == ()  # a course without hints has none
    english = HiddenChecks(
        "x", reference=ref3, notebook_globals=(), checks=[check], hints={"split_heads": ["Cut"]}
    )
    assert english.hints_for("split_heads") == ("Cut",)  # the course's own words, as written
    for wrong in ({"softmax": ["x"]}, {"split_heads": "one string"}, {"split_heads": [""]}):
        with pytest.raises(ValueError):
            HiddenChecks("x", reference=ref3, notebook_globals=(), checks=[check], hints=wrong)


# -- the live service's part, on a course of its own ---------------------------------------

COURSE_CHECKS = """
from coursekit.checks.declared import HiddenCheck, HiddenChecks
from grader_tests.ch3_multihead import SPLIT_HEADS_RANDOM_CASES
from solutions import ch3_multihead as ref

CHECKS = HiddenChecks(
    "{assignment}",
    reference=ref,
    notebook_globals=(),
    checks=[HiddenCheck("split_heads_random_shapes", "split_heads", "x", SPLIT_HEADS_RANDOM_CASES)],
    {hints}
)
"""


def test_the_live_service_gives_a_courses_own_hints_and_none_where_it_wrote_none(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(sys, "path", [*sys.path])  # the course's folder goes first: undone after

    package = tmp_path / "hints_course_checks"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    english = 'hints={"split_heads": ["Cut each row first.", "Then move the head axis."]},'
    for assignment, declared in (("hinted", english), ("plain", "")):
        module = COURSE_CHECKS.format(assignment=assignment, hints=declared)
        (package / f"{assignment}.py").write_text(module, encoding="utf-8")
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseKit.checks_package = 'hints_course_checks'\n", encoding="utf-8"
    )
    service = LiveService.__new__(LiveService)  # its hint part alone: no cluster, no exchange
    service.root, service.policy, service._hints = tmp_path, LiveGrading(), {}
    shown = {}
    for assignment in ("hinted", "plain", "no_checks_module"):
        for minute in range(2):
            record = attempt(minute, "split_heads")
            record.assignment, record.entry = assignment, f"ann+{assignment}+{minute}"
            shown[assignment, minute] = (service.hints_now(record), record.hints)
            attempts.write(tmp_path, record)
    assert shown["hinted", 0] == ({}, {})
    assert shown["hinted", 1] == ({"split_heads": ["Cut each row first."]}, {"split_heads": 1})
    assert shown["plain", 1] == shown["no_checks_module", 1] == ({}, {})
    for name in [m for m in sys.modules if m.startswith("hints_course_checks")]:
        sys.modules.pop(name)  # the course's checks package: this test's alone
