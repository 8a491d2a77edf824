"""What the TA report knows: the gradebook's scores and the autograded notebooks' verdicts.

A failed hidden check leaves a verdict record in its cell's metadata
(coursekit.checks.verdict, stored by the grader): the function, the first failing
case with its seed, the misconception that fits, and what the function gave on
its probe cases. The report reads those records; their text is only
shown, never parsed, and no learner code runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from coursekit.checks.verdict import Verdict, describe_case_record
from coursekit.core import cells, incidents
from coursekit.core.course import Course
from coursekit.core.messages import _
from coursekit.exchange import record
from coursekit.exchange.collect import SafeExchangeCollect


@dataclass
class Failure:
    """One autograded cell where a learner lost points, and what its check found."""

    cell: str
    score: float
    max_score: float
    message: str
    function: str | None = None
    seed: int | None = None
    case: str = ""
    key: str | None = None
    key_title: str = ""
    probe: dict | None = None  # coursekit.checks.probe's record, for the clusters

    @property
    def summary(self) -> str:
        """The diagnosis in one line: the misconception, else the message's first line."""
        if self.key:
            return _("likely mistake [{key}]: {title}").format(key=self.key, title=self.key_title)
        lines = [line.strip() for line in self.message.splitlines() if line.strip()]
        return lines[0] if lines else _("lost points with no output")


def failure_of(
    cell: str, score: float, max_score: float, message: str, record: dict | None
) -> Failure:
    """A lost cell: from its verdict record when a hidden check left one, else its output."""
    failure = Failure(cell, score, max_score, message.strip())
    if record is None:  # a visible test's assert, or an incident (the message says which)
        return failure
    verdict = Verdict.from_record(record)
    failure.function, failure.seed = verdict.function, verdict.seed
    if verdict.case is not None:
        failure.case = describe_case_record(verdict.case)
    if verdict.misconception is not None:
        failure.key, failure.key_title = verdict.key, verdict.misconception["title"]
    if isinstance(verdict.probe, dict):
        failure.probe = verdict.probe
    return failure


@dataclass
class LearnerResult:
    student: str
    score: float
    max_score: float
    seconds_late: float
    failures: list[Failure] = field(default_factory=list)
    manual_cells: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)  # answer-cell sources, read, never run
    name: str = ""  # "Last, First" from the gradebook (the roster), as formgrader shows it
    exchange: list[record.Note] = field(default_factory=list)  # left out or renamed

    @property
    def late(self) -> bool:
        return self.seconds_late > 0

    @property
    def label(self) -> str:
        """The learner as the report shows them: the id, and the name when the gradebook has one."""
        return f"{self.student} ({self.name})" if self.name else self.student


@dataclass
class AssignmentData:
    assignment: str
    cells: dict[str, float]  # autograded grade_id -> points, notebook order
    manual: dict[str, float]  # manually graded grade_id -> points
    learners: list[LearnerResult]


def read_assignment(root: Path, assignment: str) -> AssignmentData:
    course = Course(root)
    notebook = Path(course.notebook_name(assignment)).stem
    exchange = exchange_notes(course, assignment)
    with course.gradebook() as gb:
        nb = gb.find_notebook(notebook, assignment)
        autograded_points = {c.name: c.max_score for c in nb.grade_cells if c.cell_type == "code"}
        manual = {c.name: c.max_score for c in nb.grade_cells if c.cell_type != "code"}
        learners = []
        for submission in sorted(gb.assignment_submissions(assignment), key=lambda s: s.student.id):
            student = submission.student.id
            graded = gb.find_submission_notebook(notebook, assignment, student)
            result = LearnerResult(
                student, submission.score, submission.max_score, submission.total_seconds_late
            )
            result.name = full_name(submission.student)
            result.exchange = exchange.get(student, [])
            # One read of the learner's autograded notebook serves every question below.
            autograded = course.autograded_notebook(student, assignment)
            errors, verdicts = cells.error_texts(autograded), cells.verdict_records(autograded)
            # A guard's reason comes from the grader's record, never from an error's name.
            guarded = {i.cell: i for i in incidents.in_notebook(autograded)}
            for grade in graded.grades:
                if grade.needs_manual_grade:
                    result.manual_cells.append(grade.name)
                elif grade.name in autograded_points and (grade.score or 0) < grade.max_score:
                    message = errors.get(grade.name, "")
                    if grade.name in guarded:
                        message = guarded[grade.name].line()
                    score = grade.score or 0
                    record = verdicts.get(grade.name)
                    result.failures.append(
                        failure_of(grade.name, score, grade.max_score, message, record)
                    )
            result.answers = answer_code(autograded)
            learners.append(result)
    return AssignmentData(assignment, autograded_points, manual, learners)


def exchange_notes(course: Course, assignment: str) -> dict[str, list[record.Note]]:
    """What the exchange's collect (and autograde's bound) recorded per learner, from where
    the course's config says it records it."""
    where = SafeExchangeCollect(config=course.config).record_path
    return record.notes(str(course.root / where), assignment)


def full_name(student) -> str:
    """ "Last, First" of a gradebook student, "" when the gradebook has no name."""
    parts = [student.last_name or "", student.first_name or ""]
    return ", ".join(part for part in parts if part)


def answer_code(nb) -> list[str]:
    """The answer cells of a learner's autograded notebook, as code (shown, never run)."""
    return [cell.source for cell in nb.cells if cells.is_code_answer(cell)]
