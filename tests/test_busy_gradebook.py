"""A busy SQLite gradebook delays a write, never drops it (coursekit/core/gradebook_wal.py).

A copy of the course with its own nbgrader_config.py, so its gradebook URL is
the one the course names. A slow reader (a staff page's read transaction)
holds the gradebook while a TA saves scores through nbgrader's Gradebook API as
formgrader's grade handler does (`find_grade_by_id`, `manual_score`, commit)
and `make grade` writes a learner's results: every save lands, none raises
SQLAlchemy's OperationalError, and none waits for the reader. A slow writer
makes the saves wait, and they land when it is done. In SQLite's default
journal mode with nbgrader's default engine (5 s), both fail.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from coursekit.core.environment import venv_environment
from coursekit.simulate import submissions
from coursekit.simulate.harness import CourseHarness

pytestmark = [pytest.mark.cluster]  # make grade on a LocalCluster beside a slow reader

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "ch3_multihead"
TAS_LEARNERS = ("ta-graded-1", "ta-graded-2")  # submissions a TA scores by hand
GRADED = "graded-now"  # the learner `make grade` grades meanwhile
HOLD = 8  # seconds the slow writer holds the gradebook (longer than nbgrader's 5 s)
READER_BOUND = 300  # seconds at most the slow reader holds it (a bound, never waited for)

# A staff page's read transaction: it holds the gradebook until `stop` exists.
READER = """
import os, sqlite3, sys, time
db, stop, bound = sys.argv[1], sys.argv[2], float(sys.argv[3])
connection = sqlite3.connect(db, isolation_level=None)
connection.execute("BEGIN")
rows = connection.execute("SELECT count(*) FROM grade").fetchone()[0]
print("holding", time.time(), rows, flush=True)
deadline = time.monotonic() + bound
while not os.path.exists(stop) and time.monotonic() < deadline:
    time.sleep(0.05)
released = time.time()
connection.execute("COMMIT")
print("released", released, flush=True)
"""


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> CourseHarness:
    root = tmp_path_factory.mktemp("busy") / "course"
    root.mkdir()
    (root / "nbgrader_config.py").write_bytes((ROOT / "nbgrader_config.py").read_bytes())
    shutil.copytree(ROOT / "source", root / "source")
    course = CourseHarness(root)
    course.generate(ASSIGNMENT)  # stock generate_assignment makes the gradebook
    with course.gradebook() as gb:
        for learner in TAS_LEARNERS:
            gb.update_or_create_student(learner)
            gb.add_submission(ASSIGNMENT, learner)  # what autograde leaves for the TA
    release, source = course.release_notebook(ASSIGNMENT), course.source_notebook(ASSIGNMENT)
    course.submit(GRADED, ASSIGNMENT, submissions.fill(release, source))
    return course


def ta_grades(course: CourseHarness) -> list[str]:
    """The ids of the grades a TA scores (every grade of the TA's learners' notebooks)."""
    with course.gradebook() as gb:
        return [
            grade.id
            for learner in TAS_LEARNERS
            for notebook in gb.find_submission(ASSIGNMENT, learner).notebooks
            for grade in notebook.grades
        ]


class TA:
    """Saves scores as formgrader's GradeHandler.put does, one Gradebook for all."""

    def __init__(self, course: CourseHarness):
        self.gradebook = Gradebook(course.db_url, course.course_id)
        self.saves: list[tuple[str, float, float, float, str | None]] = []

    def save(self, grade_id: str, score: float) -> None:
        started = time.time()
        error = None
        try:
            grade = self.gradebook.find_grade_by_id(grade_id)
            grade.manual_score = score
            grade.needs_manual_grade = False
            self.gradebook.db.commit()
        except Exception as exc:  # recorded: the test names every save that failed
            self.gradebook.db.rollback()
            error = f"{type(exc).__name__}: {exc}"
        self.saves.append((grade_id, score, started, time.time(), error))

    def close(self) -> None:
        self.gradebook.close()


def manual_scores(course: CourseHarness) -> dict[str, float | None]:
    with course.gradebook() as gb:
        return {
            grade.id: grade.manual_score
            for learner in TAS_LEARNERS
            for notebook in gb.find_submission(ASSIGNMENT, learner).notebooks
            for grade in notebook.grades
        }


def database(course: CourseHarness) -> Path:
    return course.root / "gradebook.db"


def test_the_course_gradebook_is_in_wal_mode_from_its_first_stock_command(course):
    assert course.db_url.endswith("?timeout=120&plugin=coursekit.wal&plugin=coursekit.stamp")
    with sqlite3.connect(database(course)) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_slow_reader_delays_no_save_of_a_ta_nor_of_make_grade(course, tmp_path):
    grades = ta_grades(course)
    assert grades
    stop = tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(database(course)), str(stop), str(READER_BOUND)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    ta = TA(course)
    try:
        holding = reader.stdout.readline().split()
        assert holding[0] == "holding", holding
        grader = subprocess.Popen(
            [sys.executable, "-m", "coursekit", "grade", "--root", str(course.root),
             "-j", "1", "-q", ASSIGNMENT],
            cwd=course.root, env=venv_environment(), text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        output = []
        drain = threading.Thread(target=lambda: output.extend(grader.stdout), daemon=True)
        drain.start()
        rounds = 0
        while grader.poll() is None or rounds < 2:  # saves all along make grade's run
            for number, grade_id in enumerate(grades):
                ta.save(grade_id, float(rounds + number % 3))
            rounds += 1
            if any(error for *_, error in ta.saves):
                break  # failed already: no need to wait for make grade's run
            time.sleep(0.5)
        drain.join(timeout=60)
    finally:
        stop.touch()
        released = reader.communicate(timeout=READER_BOUND + 60)[0].split()
        ta.close()
    assert released[0] == "released", released
    released_at = float(released[1])
    assert grader.returncode == 0, "".join(output)[-4000:]

    failed = [(grade_id, error) for grade_id, _, _, _, error in ta.saves if error]
    assert not failed, failed[:3]
    waited = [(grade_id, end) for grade_id, _, _, end, _ in ta.saves if end >= released_at]
    assert not waited, f"{len(waited)} saves waited for the reader's read transaction"
    last = {grade_id: score for grade_id, score, *_ in ta.saves}
    assert manual_scores(course) == last
    scores = course.scores(ASSIGNMENT)[GRADED]
    assert any(score for score in scores.values()), "make grade wrote no score"


def test_a_slow_writer_delays_a_ta_save_and_the_save_lands(course):
    grades = ta_grades(course)[:3]
    held = threading.Event()

    def write_slowly():
        connection = sqlite3.connect(database(course), isolation_level=None)
        connection.execute("BEGIN IMMEDIATE")  # another writer's long transaction
        connection.execute("UPDATE grade SET extra_credit = 0 WHERE id = ?", (grades[0],))
        held.set()
        time.sleep(HOLD)
        connection.execute("COMMIT")
        connection.close()

    # Scores none of them holds now: an unchanged score writes nothing (the ORM flushes no
    # UPDATE), and so would not wait for the writer. The test above saves whole numbers.
    before = manual_scores(course)
    scores = [10.5 + number for number in range(len(grades))]
    assert all(before[grade_id] != score for grade_id, score in zip(grades, scores, strict=True))
    writer = threading.Thread(target=write_slowly)
    writer.start()
    assert held.wait(timeout=60)
    ta = TA(course)
    try:
        for grade_id, score in zip(grades, scores, strict=True):
            ta.save(grade_id, score)
    finally:
        writer.join()
        ta.close()
    failed = [(grade_id, error) for grade_id, _, _, _, error in ta.saves if error]
    assert not failed, failed
    _, _, started, ended, _ = ta.saves[0]
    assert ended - started > HOLD / 2, "the first save did not wait for the writer"
    saved = manual_scores(course)
    assert [saved[grade_id] for grade_id in grades] == scores
