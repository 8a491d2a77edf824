"""Grading one learner, and regrading a late resubmission, leaves the others' grades alone.

A class of three (the reference, a catalog mistake, the untouched release) is
graded by `make grade`; a TA then scores a written answer and comments on it.
One learner resubmits after the due date and is regraded alone, first with
`make grade --student` (`python -m coursekit.cluster`), then another with
stock `nbgrader autograde ASSIGNMENT --student`. Each time the regraded
learner's grades and lateness change, and everything of the others — every
grade row, comment, submission timestamp and autograded notebook — stays as
it was.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import nbformat
import pytest

from catalog import catalogs
from coursekit.simulate import submissions
from tests.support.course_sandbox import CourseSandbox

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "ch3_multihead"
DUE = datetime.datetime(2026, 11, 20, 9, 0)  # UTC, as nbgrader stores it
ON_TIME = "2026-11-20 08:00:00.000000 UTC"
LATE = "2026-11-21 10:00:00.000000 UTC"
MANUAL_CELL = "why_256_answer"

pytestmark = [
    pytest.mark.xdist_group("grade_one_learner"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
]


def snapshot(course: CourseSandbox, student: str) -> dict:
    """Everything the gradebook and autograded/ hold for one learner's submission."""
    with course.gradebook() as gb:
        submission = gb.find_submission(ASSIGNMENT, student)
        state = {
            "timestamp": submission.timestamp,
            "late": submission.total_seconds_late,
            "grades": {},
            "comments": {},
        }
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                state["grades"][grade.name] = (
                    grade.auto_score,
                    grade.manual_score,
                    grade.extra_credit,
                    grade.needs_manual_grade,
                )
            for comment in notebook.comments:
                state["comments"][comment.name] = (comment.auto_comment, comment.manual_comment)
    folder = course.root / "autograded" / student / ASSIGNMENT
    state["autograded"] = {
        p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())
    }
    return state


def resubmit(course: CourseSandbox, student: str, nb, stamp: str) -> None:
    folder = course.submit(student, ASSIGNMENT, nb)
    (folder / "timestamp.txt").write_text(stamp)


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    course = CourseSandbox(tmp_path_factory.mktemp("one_learner"))
    course.generate(ASSIGNMENT)
    with course.gradebook() as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=DUE)
    release, source = course.release_notebook(ASSIGNMENT), course.source_notebook(ASSIGNMENT)
    mistake = next(e for e in catalogs()[ASSIGNMENT].mistakes if e.function == "split_heads")
    notebooks = {
        "reference": submissions.fill(release, source),
        "mistaken": submissions.fill(release, source, replace={mistake.function: mistake.source}),
        "blank": submissions.fill(release, source, blank=True),
    }
    for student, nb in notebooks.items():
        resubmit(course, student, nb, ON_TIME)
    grade(course)
    with course.gradebook() as gb:  # a TA grades one written answer
        answer = gb.find_grade(MANUAL_CELL, "multihead", ASSIGNMENT, "reference")
        answer.manual_score = 1.5
        comment = gb.find_comment(MANUAL_CELL, "multihead", ASSIGNMENT, "reference")
        comment.manual_comment = "256 의 근거가 좋습니다."
        gb.db.commit()
    course.reference_nb = notebooks["reference"]
    return course


def grade(course: CourseSandbox, *args: str) -> None:
    course.grade("-q", *args)


def test_make_grade_student_regrades_only_that_late_learner(graded_class):
    course = graded_class
    before = {s: snapshot(course, s) for s in ("reference", "mistaken", "blank")}
    assert before["mistaken"]["late"] == 0
    fixed = nbformat.from_dict(course.reference_nb)
    resubmit(course, "mistaken", fixed, LATE)

    grade(course, ASSIGNMENT, "--student", "mistaken")

    after = {s: snapshot(course, s) for s in ("reference", "mistaken", "blank")}
    for student in ("reference", "blank"):
        assert after[student] == before[student], f"{student}'s grades changed"
    assert after["reference"]["grades"][MANUAL_CELL][1] == 1.5, "the TA's score was lost"
    regraded = after["mistaken"]
    assert regraded["late"] > 0, "the late resubmission is not flagged"
    assert regraded["grades"] != before["mistaken"]["grades"]
    auto = {name: g[0] for name, g in regraded["grades"].items() if name != MANUAL_CELL}
    assert auto == {
        name: g[0] for name, g in after["reference"]["grades"].items() if name != MANUAL_CELL
    }, "the resubmitted reference did not earn the reference's marks"


def test_stock_autograde_student_regrades_only_that_learner(graded_class):
    course = graded_class
    others = ("reference", "mistaken")
    before = {s: snapshot(course, s) for s in others}
    blank_before = snapshot(course, "blank")
    resubmit(course, "blank", nbformat.from_dict(course.reference_nb), LATE)

    course.run("autograde", ASSIGNMENT, "--student", "blank", "--force")

    for student in others:
        assert snapshot(course, student) == before[student], f"{student}'s grades changed"
    regraded = snapshot(course, "blank")
    assert regraded["late"] > 0
    assert sum(g[0] or 0 for g in regraded["grades"].values()) > sum(
        g[0] or 0 for g in blank_before["grades"].values()
    )
