"""What the TA report knows: the gradebook's scores and the autograded notebooks' messages."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from coursekit import cells
from coursekit.course import Course

# The hidden checks' message format (grader_tests/core.py failure_message).
HEADLINE = re.compile(r"\[(\w+)\] (.+?): (\d+)개 사례 중 (\d+)개가 틀렸습니다\.")
CASE = re.compile(r"첫 번째로 틀린 사례: (.+?) · seed (\d+) — (.+)$", re.MULTILINE)
CASE_NO_SEED = re.compile(r"첫 번째로 틀린 사례: (.+?) — (.+)$", re.MULTILINE)
MISCONCEPTION = re.compile(r"짐작되는 실수 \[(\w+)\]: (.+)$", re.MULTILINE)


@dataclass
class Failure:
    """One autograded cell where a learner lost points, with what its message says."""

    cell: str
    score: float
    max_score: float
    message: str
    function: str | None = None
    seed: int | None = None
    case: str = ""
    key: str | None = None
    key_title: str = ""

    @property
    def summary(self) -> str:
        """The Korean diagnosis in one line: the misconception, else the message's first line."""
        if self.key:
            return f"짐작되는 실수 [{self.key}]: {self.key_title}"
        lines = [line.strip() for line in self.message.splitlines() if line.strip()]
        return lines[0] if lines else "출력 없이 점수를 잃었습니다"


def parse_failure(cell: str, score: float, max_score: float, message: str) -> Failure:
    failure = Failure(cell, score, max_score, message.strip())
    if headline := HEADLINE.search(message):
        failure.function = headline.group(1)
    if case := CASE.search(message):
        failure.seed, failure.case = int(case.group(2)), f"{case.group(1)} — {case.group(3)}"
    elif case := CASE_NO_SEED.search(message):
        failure.case = f"{case.group(1)} — {case.group(2)}"
    if named := MISCONCEPTION.search(message):
        failure.key, failure.key_title = named.group(1), named.group(2).strip()
    return failure


@dataclass
class LearnerResult:
    student: str
    score: float
    max_score: float
    seconds_late: float
    failures: list[Failure] = field(default_factory=list)
    manual_cells: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)  # answer-cell sources, for the probe
    setup: list[str] = field(default_factory=list)  # read-only setup cells of the notebook
    probe: dict[str, str] = field(default_factory=dict)  # function -> output fingerprint

    @property
    def late(self) -> bool:
        return self.seconds_late > 0


@dataclass
class AssignmentData:
    assignment: str
    cells: dict[str, float]  # autograded grade_id -> points, notebook order
    manual: dict[str, float]  # manually graded grade_id -> points
    learners: list[LearnerResult]


def read_assignment(root: Path, assignment: str) -> AssignmentData:
    course = Course(root)
    notebook = Path(course.notebook_name(assignment)).stem
    with course.gradebook() as gb:
        nb = gb.find_notebook(notebook, assignment)
        cells = {c.name: c.max_score for c in nb.grade_cells if c.cell_type == "code"}
        manual = {c.name: c.max_score for c in nb.grade_cells if c.cell_type != "code"}
        learners = []
        for submission in sorted(gb.assignment_submissions(assignment), key=lambda s: s.student.id):
            student = submission.student.id
            graded = gb.find_submission_notebook(notebook, assignment, student)
            result = LearnerResult(
                student, submission.score, submission.max_score, submission.total_seconds_late
            )
            errors = course.autograded_errors(student, assignment)
            for grade in graded.grades:
                if grade.needs_manual_grade:
                    result.manual_cells.append(grade.name)
                elif grade.name in cells and (grade.score or 0) < grade.max_score:
                    message = errors.get(grade.name, "")
                    score = grade.score or 0
                    result.failures.append(
                        parse_failure(grade.name, score, grade.max_score, message)
                    )
            result.setup, result.answers = notebook_code(course, student, assignment)
            learners.append(result)
    return AssignmentData(assignment, cells, manual, learners)


def notebook_code(course: Course, student: str, assignment: str) -> tuple[list[str], list[str]]:
    """(setup cells, answer cells) of the learner's autograded notebook, as code."""
    path = course.root / "autograded" / student / assignment / course.notebook_name(assignment)
    setup, answers = [], []
    for cell in nbformat.read(path, as_version=4).cells:
        if cells.is_code_answer(cell):
            answers.append(cell.source)
        elif cells.is_setup(cell) and not cells.is_skipped(cell):
            setup.append(cell.source)
    return setup, answers
