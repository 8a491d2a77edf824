"""`make grade` writes the gradebook that stock `nbgrader autograde` writes.

One small class with submission timestamps (the reference of both
assignments; the untouched release and one catalog mistake of the first) is graded twice in two
scratch copies of the course: by stock `nbgrader autograde`, one assignment
after the other, and by `python -m coursekit.grading` with two workers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coursekit import submissions
from coursekit.grading import gradebook
from tests.catalog_support import catalogs
from tests.course_sandbox import CourseSandbox

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.xdist_group("grade_parallel")


def build_class(path: Path) -> CourseSandbox:
    sandbox = CourseSandbox(path)
    for number, assignment in enumerate(sandbox.assignments()):
        sandbox.generate(assignment)
        release, source = sandbox.release_notebook(assignment), sandbox.source_notebook(assignment)
        learners = {"reference": submissions.fill(release, source)}
        if number == 0:  # the first assignment also has a blank and a mistaken learner
            learners["blank-release"] = submissions.fill(release, source, blank=True)
            mistake = catalogs()[assignment].mistakes[0]
            learners[mistake.student_id] = submissions.fill(
                release, source, replace={mistake.function: mistake.source}
            )
        for minute, (student, nb) in enumerate(learners.items()):
            folder = sandbox.submit(student, assignment, nb)
            stamp = f"2026-11-2{number} 09:{minute:02d}:00.000000 UTC"
            (folder / "timestamp.txt").write_text(stamp)
    return sandbox


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    stock = build_class(tmp_path_factory.mktemp("stock"))
    for assignment in stock.assignments():
        stock.autograde(assignment)
    parallel = build_class(tmp_path_factory.mktemp("parallel"))
    run = subprocess.run(
        [sys.executable, "-m", "coursekit.grading", "--root", str(parallel.root), "-j", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return stock, parallel, run


def test_make_grade_succeeds(both):
    _, _, run = both
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def test_gradebook_equals_stock_autograde(both):
    stock, parallel, _ = both
    expected = gradebook.dump(stock.db_url, stock.course_id)
    got = gradebook.dump(parallel.db_url, parallel.course_id)
    assert len(expected) == 4
    assert got == expected


def test_graded_notebooks_have_the_same_outputs(both):
    stock, parallel, _ = both
    for assignment in stock.assignments():
        for student in stock.scores(assignment):
            assert parallel.autograded_errors(student, assignment) == stock.autograded_errors(
                student, assignment
            )


def test_help_describes_the_command():
    run = subprocess.run(
        [sys.executable, "-m", "coursekit.grading", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0
    assert "--jobs" in run.stdout and "gradebook" in run.stdout
