"""What the tests and the benchmark do to a course that nobody does in a real one.

coursekit.core.course.Course is the course (its configuration, gradebook,
notebooks); CourseHarness adds the shortcuts a test takes: put a notebook
where `nbgrader collect` would, run `make grade` as a subprocess, read the
scores back as a dict.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat

from coursekit.core import cells
from coursekit.core.course import Course
from coursekit.core.environment import venv_environment


class CourseHarness(Course):
    def submit(self, student: str, assignment: str, nb) -> Path:
        """Place a notebook where `nbgrader collect` would put it."""
        folder = self.root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / self.notebook_name(assignment))
        return folder

    def autograde(self, assignment: str):
        return self.run("autograde", assignment, "--force")

    def grade(
        self, *args: str, check: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        """`make grade` (`coursekit grade`) on this root, e.g. grade("-j", "2"); `env` is
        added to the environment it runs in."""
        result = subprocess.run(
            [sys.executable, "-m", "coursekit", "grade", "--root", str(self.root), *args],
            cwd=self.root,
            env={**venv_environment(), **(env or {})},
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if check and result.returncode != 0:
            raise RuntimeError(
                f"make grade {' '.join(args)} failed:\n{result.stdout[-4000:]}"
                f"{result.stderr[-4000:]}"
            )
        return result

    def scores(self, assignment: str) -> dict[str, dict[str, float | None]]:
        """learner -> grade_id -> auto score (None where a TA must grade)."""
        notebook = Path(self.notebook_name(assignment)).stem
        with self.gradebook() as gb:
            result = {}
            for submission in gb.assignment_submissions(assignment):
                nb = gb.find_submission_notebook(notebook, assignment, submission.student.id)
                result[submission.student.id] = {g.name: g.auto_score for g in nb.grades}
            return result

    def max_scores(self, assignment: str) -> dict[str, float]:
        """grade_id -> points, in notebook order."""
        with self.gradebook() as gb:
            nb = gb.find_notebook(Path(self.notebook_name(assignment)).stem, assignment)
            return {cell.name: cell.max_score for cell in nb.grade_cells}

    def autograded_verdicts(self, student: str, assignment: str) -> dict[str, dict]:
        """grade_id -> the verdict record of each failed hidden check (coursekit.checks.verdict)."""
        return cells.verdict_records(self.autograded_notebook(student, assignment))

    def autograded_errors(self, student: str, assignment: str) -> dict[str, str]:
        """grade_id -> the error text each failing cell shows in the autograded notebook."""
        return cells.error_texts(self.autograded_notebook(student, assignment))
