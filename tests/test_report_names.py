"""The TA report names a learner the roster named (gradebook first/last name), in the
terminal table and on the page, as formgrader does ("Last, First"); without a name,
the id alone, as before."""

from __future__ import annotations

from types import SimpleNamespace

from coursekit.learner.diagnosis import display_width
from coursekit.staff.report import overview, render, summary
from coursekit.staff.report.data import AssignmentData, LearnerResult, full_name
from tests.support.course_sandbox import ROOT


def test_full_name_from_the_gradebook():
    assert full_name(SimpleNamespace(last_name="남궁", first_name="서연")) == "남궁, 서연"
    assert full_name(SimpleNamespace(last_name=None, first_name=None)) == ""


def test_the_report_shows_the_names():
    learners = [
        LearnerResult("tp-2026002", 3.0, 22.0, 0.0, name="남궁, 서연"),
        LearnerResult("tp-learner09", 5.0, 22.0, 0.0),
    ]
    found = AssignmentData("ch3_multihead", {}, {}, learners)
    view = overview.overview(ROOT, found)
    table = render.terminal(found, summary.summarize(found), [], view)
    rows = [line for line in table.splitlines() if "tp-" in line]
    assert rows[0].startswith("  tp-2026002 (남궁, 서연)"), rows
    assert rows[1].startswith("  tp-learner09 "), rows
    # The score column lines up although the name is in wide (Hangul) characters.
    score_at = [display_width(row[: row.index("/")]) for row in rows]
    assert score_at[0] == score_at[1], rows
    page = "".join(render.learner_rows(found, [], view))
    assert "<td>tp-2026002 (남궁, 서연)" in page and "<td>tp-learner09" in page
