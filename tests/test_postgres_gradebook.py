"""A class graded in parallel by `make grade` into a real PostgreSQL gradebook.

The fixture starts a throwaway PostgreSQL server on 127.0.0.1 (installing
Debian's package when missing, see tests/support/postgres_server.py) and points the
course at it with COURSE_GRADEBOOK_URL, as a deployment with several graders
would. Every grade of every learner is then checked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from catalog import catalogs
from coursekit.core.environment import venv_environment
from coursekit.simulate import submissions
from tests.support import postgres_server
from tests.support.course_sandbox import CourseSandbox

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "ch3_multihead"

pytestmark = [
    pytest.mark.xdist_group("postgres"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
    pytest.mark.postgres,
]


def submit_class(course: CourseSandbox):
    release, source = course.release_notebook(ASSIGNMENT), course.source_notebook(ASSIGNMENT)
    mistake = catalogs()[ASSIGNMENT].mistakes[1]
    course.submit("reference", ASSIGNMENT, submissions.fill(release, source))
    course.submit("blank-release", ASSIGNMENT, submissions.fill(release, source, blank=True))
    nb = submissions.fill(release, source, replace={mistake.function: mistake.source})
    course.submit(mistake.student_id, ASSIGNMENT, nb)
    return mistake


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("postgres")
    with pytest.MonkeyPatch.context() as patch, postgres_server.server() as url:
        patch.setenv("COURSE_GRADEBOOK_URL", url)  # read by nbgrader_config.py in every command
        (workdir / "course").mkdir()
        course = CourseSandbox(workdir / "course")  # its gradebook URL comes from the config
        course.generate(ASSIGNMENT)
        mistake = submit_class(course)
        run = course.grade("-j", "2", check=False)
        yield course, run, mistake, course.scores(ASSIGNMENT), course.max_scores(ASSIGNMENT)


def test_the_gradebook_is_postgresql_and_no_sqlite_file_appears(graded):
    course, run, *_ = graded
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert course.db_url.startswith("postgresql+psycopg2://")
    assert not (course.root / "gradebook.db").exists()


def test_the_ta_report_reads_the_postgresql_gradebook(graded):
    course, _, mistake, *_ = graded
    report = subprocess.run(
        [sys.executable, "-m", "coursekit.staff.report", ASSIGNMENT, "--root", str(course.root)],
        cwd=ROOT,
        env=venv_environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert report.returncode == 0, report.stdout[-3000:] + report.stderr[-3000:]
    table = (course.root / "reports" / f"{ASSIGNMENT}.csv").read_text(encoding="utf-8")
    for learner in ("reference", "blank-release", mistake.student_id):
        assert learner in table
    assert not (course.root / "gradebook.db").exists()


def test_every_grade_is_in_postgresql(graded):
    _, _, mistake, scores, max_scores = graded
    assert set(scores) == {"reference", "blank-release", mistake.student_id}
    autograded = {cell for cell, score in scores["reference"].items() if score is not None}
    assert {c: scores["reference"][c] for c in autograded} == {c: max_scores[c] for c in autograded}
    assert {c: scores["blank-release"][c] for c in autograded} == dict.fromkeys(autograded, 0.0)
    lost = {c for c in autograded if scores[mistake.student_id][c] < max_scores[c]}
    assert lost == set(mistake.fails)
