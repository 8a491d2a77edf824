"""`make demo`'s whole cycle, run once in a scratch course (tests/support/demo_class.py)."""

from __future__ import annotations

import json
import shutil

import pytest

from coursekit.core.course import Course
from coursekit.simulate import submissions
from coursekit.simulate.demo import simulated_class
from coursekit.simulate.harness import CourseHarness
from tests.support import same_results
from tests.support.demo_class import GROUP, ROOT, DemoRun

pytestmark = [pytest.mark.xdist_group(GROUP), pytest.mark.class_graded]
ASSIGNMENTS = Course(ROOT).assignments()
SECRETS = ("HIDDEN TESTS", "hidden_checks", "grader_tests", "BEGIN SOLUTION", "solutions.")


def grade_key(rows):
    return {(r["assignment"], r["student_id"]): (r["raw_score"], r["score"]) for r in rows}


def test_grades_csv_has_every_learner_of_both_assignments(demo_run: DemoRun):
    graded = grade_key(demo_run.first_grades)
    for assignment in ASSIGNMENTS:
        learners = simulated_class(assignment)
        assert len(learners) >= 8
        assert {s for a, s in graded if a == assignment} == {x.student for x in learners}
        scores = {x.plan: float(graded[assignment, x.student][0]) for x in learners}
        assert scores["빈 제출 (release 그대로)"] == 0
        assert scores["정답 (reference)"] == scores["정답, 마감 뒤 제출"] > 0
        assert sorted(scores.values())[1] < scores["정답 (reference)"], "mistakes lost no points"


def test_running_the_demo_again_gives_the_same_grades(demo_run: DemoRun):
    assert grade_key(demo_run.rerun_grades) == grade_key(demo_run.first_grades)


def test_only_the_late_learner_submitted_after_the_due_date(demo_run: DemoRun):
    for assignment in ASSIGNMENTS:
        late = {x.student for x in simulated_class(assignment) if x.late}
        rows = [r for r in demo_run.first_grades if r["assignment"] == assignment]
        after = {r["student_id"] for r in rows if r["timestamp"] > r["duedate"]}
        assert after == late, rows


def test_every_learner_gets_feedback_with_their_diagnosis(demo_run: DemoRun):
    for assignment in ASSIGNMENTS:
        for learner in simulated_class(assignment):
            (page,) = (demo_run.root / "feedback" / learner.student / assignment).glob("*.html")
            html = page.read_text(encoding="utf-8")
            if learner.replace and "카탈로그 실수" in learner.plan:
                key = learner.plan.rsplit("/", 1)[1]
                assert f"[{key}]" in html, f"{learner.student}: no [{key}] in feedback"
        course = Course(demo_run.root)
        released = course.exchange_root / course.course_id / "feedback"
        assert len(list(released.rglob("*.html"))) >= 2 * len(simulated_class(assignment))


def solution_lines(notebook_text: str) -> list[str]:
    """The lines between the solution markers of every cell of a source notebook."""
    lines, inside = [], False
    for cell in json.loads(notebook_text)["cells"]:
        for line in "".join(cell["source"]).splitlines():
            if line.strip() in submissions.SOLUTION_MARKERS:
                inside = line.strip() == submissions.SOLUTION_MARKERS[0]
            elif inside:
                lines.append(line.strip())
    return lines


def learner_facing_files(root):
    course = Course(root)
    exchange = course.exchange_root / course.course_id
    yield from (root / "feedback").rglob("*.html")
    yield from (exchange / "feedback").rglob("*.html")
    yield from (exchange / "outbound").rglob("*.ipynb")
    yield from (root / "demo" / "learners").rglob("*.ipynb")


def hidden_solution_lines(root, assignment: str) -> set[str]:
    """Solution-region lines of the source notebook that its release does not show."""
    (source,) = (root / "source" / assignment).glob("*.ipynb")
    release = root / "release" / assignment / source.name
    released = "\n".join(c.source for c in submissions.read(release).cells)
    lines = solution_lines(source.read_text(encoding="utf-8"))
    return {line for line in lines if len(line) > 15 and line not in released}


def test_no_learner_facing_file_holds_a_hidden_test_or_the_reference(demo_run: DemoRun):
    root = demo_run.root
    blank = {x.student for a in ASSIGNMENTS for x in simulated_class(a) if x.blank}
    files = list(learner_facing_files(root))
    assert len(files) > 30
    for assignment in ASSIGNMENTS:
        reference_lines = hidden_solution_lines(root, assignment)
        assert reference_lines
        for path in files:
            text = path.read_text(encoding="utf-8")
            for secret in SECRETS:
                assert secret not in text, f"{path} shows {secret!r}"
            # Only a learner's own filled-in work may hold answer code.
            public = "outbound" in path.parts or any(b in path.parts for b in blank)
            if public and assignment in path.parts:
                leaked = [line for line in reference_lines if line in text]
                assert not leaked, f"{path} holds reference code: {leaked[:3]}"


def test_the_demo_shows_progress_and_prints_the_ta_report(demo_run: DemoRun):
    output = demo_run.output
    assert "채점 중 [9/9]" in output
    for assignment in ASSIGNMENTS:
        assert f"■ {assignment}" in output
    assert "짐작되는 실수" in output
    print(f"demo cycle: {demo_run.seconds:.0f} s")


def test_the_demo_class_graded_by_the_other_cell_runner_shows_the_same(demo_run, tmp_path):
    """The demo's class graded again with the other cell runner: the same grades and outputs."""
    other = CourseHarness(tmp_path / "demo")
    shutil.copytree(demo_run.root, other.root, symlinks=True, ignore=shutil.ignore_patterns("demo"))
    with (other.root / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write(same_results.OTHER_RUNNER_CONFIG)
    other.grade("--regrade", "--quiet")
    compared = same_results.assert_same_results(CourseHarness(demo_run.root), other)
    assert compared == sum(len(simulated_class(a)) for a in ASSIGNMENTS)
