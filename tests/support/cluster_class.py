"""The small class tests/test_grade_cluster.py and tests/test_grade_slurm.py grade, and
what a run left in its ledger.

The class is built once a session and copied into each folder that asks for it, and
graded once a session with stock `nbgrader autograde`: the gradebook both modules'
make grade runs are compared with, read only.
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

from catalog import catalogs
from coursekit.cluster.driver import LEDGER
from coursekit.simulate import submissions
from coursekit.simulate.harness import CourseHarness
from tests.support import session_cache
from tests.support.course_sandbox import CourseSandbox

# Submissions from 09:03 on are late; the last learner has an extension of ten minutes.
# With the "zero" penalty a late notebook loses all its points, so a grader that missed
# the due date or the extension writes another gradebook.
DUE = "2026-11-20 09:02:30 UTC"
EXTENSION = timedelta(minutes=10)


def build_class(path: Path) -> CourseSandbox:
    """The class, ungraded, in `path` (an empty or missing folder)."""
    built = session_cache.made_once("cluster-class", build_class_in)
    if built is None:
        return build_class_in(path)
    shutil.copytree(built, path, symlinks=True, dirs_exist_ok=True)
    return CourseSandbox.existing(path)


def stock_graded_class(path: Path) -> CourseHarness:
    """The class graded by stock `nbgrader autograde`: the session's one copy, read only
    (made in `path` when no session shares one)."""

    def grade(folder: Path) -> None:
        course = build_class(folder)
        course.autograde(course.assignments()[0])

    graded = session_cache.made_once("cluster-class-stock", grade)
    if graded is None:
        grade(path)
        graded = path
    return CourseHarness(graded)


def build_class_in(path: Path) -> CourseSandbox:
    sandbox = CourseSandbox(path)
    assignment = sandbox.assignments()[0]
    sandbox.generate(assignment)
    sandbox.run("db", "assignment", "add", assignment, f"--duedate={DUE}")
    with (sandbox.root / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    release, source = sandbox.release_notebook(assignment), sandbox.source_notebook(assignment)
    learners = {
        "reference": submissions.fill(release, source),
        "blank-release": submissions.fill(release, source, blank=True),
    }
    for mistake in catalogs()[assignment].mistakes[:3]:
        learners[mistake.student_id] = submissions.fill(
            release, source, replace={mistake.function: mistake.source}
        )
    for minute, (student, nb) in enumerate(learners.items()):
        folder = sandbox.submit(student, assignment, nb)
        (folder / "timestamp.txt").write_text(f"2026-11-20 09:{minute:02d}:00.000000 UTC")
    with sandbox.gradebook() as gb:
        gb.update_or_create_student(student)
        gb.update_or_create_submission(assignment, student, extension=EXTENSION)
    return sandbox


def ledger(course: CourseSandbox) -> list[tuple]:
    with course.gradebook() as gb:
        return sorted(tuple(row) for row in gb.db.execute(LEDGER.select()))
