"""Only the driver writes: each `submission.Result` into the gradebook and autograded/.

One transaction per result writes what stock `nbgrader autograde` writes for
that learner (the submission and its timestamp, per cell `auto_score`,
`needs_manual_grade` and `auto_comment`, per notebook the late penalty) and a
row of its own table `coursekit_graded`: (assignment, learner) -> the digest
of the submitted files and of the grading bundle it was graded with. A result
whose digests are already there is not written again, so a task that Dask
ran twice, or a `make grade` run again after a crash, writes nothing twice.
nbgrader's own tables, commands and formgrader never read that table.
"""

from __future__ import annotations

import shutil
import time
from datetime import UTC, datetime, timedelta

from nbgrader.api import Gradebook, SubmittedAssignment
from sqlalchemy import Column, DateTime, MetaData, String, Table, and_, delete, select

from coursekit.cluster import gradebook
from coursekit.cluster.bundle import safe_relative
from coursekit.cluster.submission import Result
from coursekit.core import incidents
from coursekit.core.course import GradebookPlace
from coursekit.nbgrader_internals import engines, quiet
from coursekit.nbgrader_internals.rows import assignment_layout, insert_new_submission

LEDGER = Table(
    "coursekit_graded",
    MetaData(),
    Column("assignment", String(128), primary_key=True),
    Column("student", String(128), primary_key=True),
    Column("digest", String(64), nullable=False),  # of the submitted files
    # of the grading bundle and options (`bundle_digest`); the column keeps its first name,
    # as gradebooks already hold it (renaming it would take a migration)
    Column("course", String(64), nullable=False),
    Column("graded_at", DateTime, nullable=False),
)


class Driver:
    """The one writer of a `make grade` run, with its own cost per result measured."""

    def __init__(self, place: GradebookPlace):
        self.place = place
        self.cpu = self.wall = 0.0  # spent writing results and bookkeeping
        self.written = 0
        self._gradebook: Gradebook | None = None
        self._layouts: dict[str, tuple[str, dict]] = {}  # assignment -> its rows' ids
        LEDGER.create(self.gradebook().db.get_bind(), checkfirst=True)

    def gradebook(self) -> Gradebook:
        """The run's one gradebook: opened once, not once per result (a new `Gradebook`
        inspects the schema and checks the course; its queries are compiled again)."""
        if self._gradebook is None:
            self._gradebook = Gradebook(self.place.db_url, self.place.course_id)
        return self._gradebook

    def close(self) -> None:
        if self._gradebook is not None:
            self._gradebook.close()
            self._gradebook = None

    def graded(self) -> dict[tuple[str, str], tuple[str, str]]:
        """(assignment, learner) -> (submission digest, bundle digest) already written."""
        with Gradebook(self.place.db_url, self.place.course_id) as gb:
            rows = gb.db.execute(
                select(LEDGER.c.assignment, LEDGER.c.student, LEDGER.c.digest, LEDGER.c.course)
            )
            return {(a, s): (d, c) for a, s, d, c in rows}

    def _written_as(self, session, assignment: str, student: str) -> tuple[str, str] | None:
        where = and_(LEDGER.c.assignment == assignment, LEDGER.c.student == student)
        row = session.execute(select(LEDGER.c.digest, LEDGER.c.course).where(where)).first()
        return tuple(row) if row else None

    def extensions(self) -> dict[tuple[str, str], timedelta]:
        """(assignment, learner) -> the extension of the due date the instructor granted."""
        with Gradebook(self.place.db_url, self.place.course_id) as gb:
            return {
                (s.assignment.name, s.student.id): s.extension
                for s in gb.db.query(SubmittedAssignment).filter(
                    SubmittedAssignment.extension.isnot(None)
                )
            }

    def apply(self, result: Result, bundle_digest: str) -> bool:
        """Write one graded submission; False when it was already written (nothing done).

        `bundle_digest`: the digest of the grading bundle and the grading options."""
        started, cpu = time.perf_counter(), time.process_time()
        try:
            return self._apply(result, bundle_digest)
        finally:
            self.wall += time.perf_counter() - started
            self.cpu += time.process_time() - cpu

    def _apply(self, result: Result, bundle_digest: str) -> bool:
        key = (result.assignment, result.student)
        gb = self.gradebook()
        if self._written_as(gb.db, *key) == (result.digest, bundle_digest):
            gb.db.rollback()  # the read's transaction, so no lock is held between results
            return False
        self._write_autograded(result)
        with engines.commit_at_end(gb) as session, quiet.sawarnings_ignored():
            self._write_rows(gb, session, result, bundle_digest)
        self.written += 1
        return True

    def _write_rows(self, gb, session, result: Result, bundle_digest: str) -> None:
        key = (result.assignment, result.student)
        gb.update_or_create_student(result.student)
        layout = self._layout(gb, result.assignment)
        if insert_new_submission(
            session, layout, result.student, result.timestamp, result.notebooks
        ):
            self._record(session, result.assignment, result.student, result.digest, bundle_digest)
            session.commit_now()
            return
        if result.timestamp is not None:
            gb.update_or_create_submission(*key, timestamp=result.timestamp)
        else:
            gb.update_or_create_submission(*key)
        for name, rows in result.notebooks.items():
            notebook = gb.find_submission_notebook(name, *key)
            notebook.late_submission_penalty = rows.late_submission_penalty
            for grade in notebook.grades:
                if grade.name in rows.grades:
                    auto_score, needs_manual = rows.grades[grade.name]
                    grade.auto_score = auto_score
                    # SaveAutoGrades: a cell a TA already graded by hand needs review
                    # again (the scratch gradebook had no manual scores to see).
                    grade.needs_manual_grade = needs_manual or (
                        rows.submitted and grade.manual_score is not None
                    )
            for comment in notebook.comments:
                if comment.name in rows.comments:
                    comment.auto_comment = rows.comments[comment.name]
        self._record(session, result.assignment, result.student, result.digest, bundle_digest)
        session.commit_now()

    def _layout(self, gb, assignment: str) -> tuple[str, dict]:
        """The assignment's ids (assignment_layout), read once per run."""
        if assignment not in self._layouts:
            self._layouts[assignment] = assignment_layout(gb, assignment)
        return self._layouts[assignment]

    def _record(self, session, assignment, student, digest, bundle_digest) -> None:
        where = and_(LEDGER.c.assignment == assignment, LEDGER.c.student == student)
        session.execute(delete(LEDGER).where(where))
        now = datetime.now(UTC).replace(tzinfo=None)
        session.execute(
            LEDGER.insert().values(
                assignment=assignment,
                student=student,
                digest=digest,
                course=bundle_digest,
                graded_at=now,
            )
        )

    def _write_autograded(self, result: Result) -> None:
        folder = self.place.root / "autograded" / result.student / result.assignment
        shutil.rmtree(folder, ignore_errors=True)  # as autograde --force
        folder.mkdir(parents=True, exist_ok=True)
        for relative, content in result.autograded.items():
            path = folder / safe_relative(relative)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)

    def record_lost(
        self, assignment: str, student: str, digest: str, bundle_digest: str, tries: int
    ) -> incidents.Incident:
        """A submission whose workers kept dying: 0 on every cell, and in its notebook's test
        cells the GradingWorkerLost incident (what the TA report reads) that it returns."""
        started, cpu = time.perf_counter(), time.process_time()
        lost = incidents.worker_lost(tries)
        gradebook.grade_unreadable(self.place, assignment, student)
        gradebook.write_unreadable_notebooks(self.place.root, assignment, student, lost)
        with Gradebook(self.place.db_url, self.place.course_id) as gb:
            self._record(gb.db, assignment, student, digest, bundle_digest)
            gb.db.commit()
        self.wall += time.perf_counter() - started
        self.cpu += time.process_time() - cpu
        self.written += 1
        return lost
