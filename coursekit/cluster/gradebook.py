"""What `make grade` does with the course's stock gradebook outside the workers."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory

from coursekit.autograde import shapes
from coursekit.core import cells, incidents
from coursekit.core.course import GradebookPlace, gradebook_place
from coursekit.nbgrader_internals import quiet

SQLITE_BUSY_TIMEOUT = 120  # seconds a worker waits for another one's write


def grading_place(root: Path) -> GradebookPlace:
    """The course's gradebook place as stock nbgrader reads it, its SQLite gradebook
    waited for (`with_busy_timeout`)."""
    place = gradebook_place(root)
    return replace(place, db_url=with_busy_timeout(place.db_url))


def with_busy_timeout(db_url: str) -> str:
    """SQLite: let a writer wait for the lock instead of failing after 5 s."""
    if db_url.startswith("sqlite:") and "?" not in db_url:
        return f"{db_url}?timeout={SQLITE_BUSY_TIMEOUT}"
    return db_url


def prepare(place: GradebookPlace, tasks) -> None:
    """Create the learners first, in one writer, so workers never race to insert one."""
    with Gradebook(place.db_url, place.course_id) as gb:
        for student in sorted({student for _, student in tasks}):
            gb.update_or_create_student(student)


def invalid_submissions(root: Path, tasks) -> dict[tuple[str, str], incidents.Incident]:
    """(assignment, learner) -> why, for submissions with an unreadable notebook."""
    invalid = {}
    for assignment, student in tasks:
        for path in sorted((root / "submitted" / student / assignment).glob("*.ipynb")):
            # as autograde's sanitize step reads it: within bounds, repaired (autograde.shapes)
            reason = shapes.unreadable(path)
            if reason is not None:
                invalid[(assignment, student)] = incidents.unreadable_notebook(path.name, reason)
    return invalid


def grade_unreadable(place: GradebookPlace, assignment: str, student: str):
    """Record the submission and give every cell 0.

    This is what stock autograde does for a notebook that is missing from a submission.
    """
    root = place.root
    folder = root / "submitted" / student / assignment
    timestamp = CourseDirectory(root=str(root)).get_existing_timestamp(str(folder))
    shutil.rmtree(root / "autograded" / student / assignment, ignore_errors=True)
    with Gradebook(place.db_url, place.course_id) as gb, quiet.sawarnings_ignored():
        gb.update_or_create_student(student)
        if timestamp:
            gb.update_or_create_submission(assignment, student, timestamp=timestamp)
        else:
            gb.update_or_create_submission(assignment, student)
        for notebook in gb.find_assignment(assignment).notebooks:
            submitted = gb.find_submission_notebook(notebook.name, assignment, student)
            for grade in submitted.grades:
                grade.auto_score = 0
                grade.needs_manual_grade = False
        gb.db.commit()


def write_unreadable_notebooks(
    root: Path, assignment: str, student: str, incident: incidents.Incident
) -> None:
    """An autograded notebook that shows why in every test cell (formgrader, TA report).

    It is the release notebook with the submission's incident (an unreadable
    notebook, or workers that kept dying) recorded in each test cell and shown
    as its error output; the gradebook keeps the zeros written by `grade_unreadable`.
    """
    folder = root / "autograded" / student / assignment
    for path in sorted((root / "release" / assignment).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cells.is_test(cell):
                cell.outputs = []
                incidents.put(cell, incident)
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / path.name)


def score_unreadable(place: GradebookPlace, tasks):
    """Submissions with a notebook that cannot be read, scored 0 before any grading (as stock
    autograde scores a missing one): the tasks left to grade, the unreadable ones with their
    incidents, and the incidents report begun with them."""
    invalid = invalid_submissions(place.root, tasks)
    report: dict[str, dict[str, list[incidents.Incident]]] = {}
    for (assignment, student), incident in invalid.items():
        grade_unreadable(place, assignment, student)
        write_unreadable_notebooks(place.root, assignment, student, incident)
        report.setdefault(assignment, {})[student] = [incident]
    return [t for t in tasks if t not in invalid], invalid, report


def totals(place: GradebookPlace, tasks, invalid) -> dict[str, list[float]]:
    """assignment -> the auto score total of each graded learner."""
    result: dict[str, list[float]] = {}
    with Gradebook(place.db_url, place.course_id) as gb:
        for assignment, student in [*tasks, *invalid]:
            try:
                submission = gb.find_submission(assignment, student)
            except Exception:  # not graded: reported as a failure elsewhere
                continue
            score = sum(grade.auto_score or 0 for nb in submission.notebooks for grade in nb.grades)
            result.setdefault(assignment, []).append(score)
    return result


def dump(db_url: str, course_id: str) -> dict[tuple[str, str], dict]:
    """(assignment, learner) -> timestamp, late penalty per notebook and, per cell, what
    autograde decided."""
    result = {}
    with Gradebook(db_url, course_id) as gb:
        for assignment in gb.assignments:
            for submission in gb.assignment_submissions(assignment.name):
                cells = {}
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        cells[(notebook.name, grade.name)] = (
                            grade.auto_score,
                            grade.manual_score,
                            grade.needs_manual_grade,
                        )
                    for comment in notebook.comments:
                        cells[(notebook.name, comment.name, "comment")] = comment.auto_comment
                result[(assignment.name, submission.student.id)] = {
                    "timestamp": submission.timestamp,
                    "penalties": {n.name: n.late_submission_penalty for n in submission.notebooks},
                    "cells": cells,
                }
    return result
