"""A course root on disk, driven through stock nbgrader commands and its gradebook.

The course's settings (course id, gradebook URL, exchange, folders) have one
owner: the root's nbgrader_config.py, read here once through nbgrader's own
CourseDirectory, exactly as every stock nbgrader command reads it.
"""

from __future__ import annotations

import functools
import importlib
import subprocess
import sys
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from coursekit import cells
from coursekit.release import nbgrader, venv_environment


def contract_functions(assignment: str) -> list[str]:
    """The functions learners write in an assignment, in notebook order (solutions' __all__)."""
    return list(importlib.import_module(f"solutions.{assignment}").__all__)


def load_config(root: Path) -> Config:
    """The course root's nbgrader_config.py, as nbgrader loads it."""
    return PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()


class Course:
    def __init__(self, root: Path):
        self.root = Path(root)

    @functools.cached_property
    def config(self) -> Config:
        return load_config(self.root)

    @functools.cached_property
    def coursedir(self) -> CourseDirectory:
        return CourseDirectory(config=self.config)

    @property
    def course_id(self) -> str:
        return self.coursedir.course_id

    @property
    def db_url(self) -> str:
        """The gradebook URL nbgrader uses (COURSE_GRADEBOOK_URL can name PostgreSQL)."""
        return self.coursedir.db_url

    @property
    def exchange_root(self) -> Path:
        return Path(self.config.Exchange.root)

    def gradebook(self) -> Gradebook:
        return Gradebook(self.db_url, self.course_id)

    def assignments(self) -> list[str]:
        return sorted(p.name for p in (self.root / "source").iterdir() if p.is_dir())

    def run(self, *args: str, check: bool = True):
        result = nbgrader(self.root, *args, check=False)
        if check and result.returncode != 0:
            raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{result.stderr[-4000:]}")
        return result

    def generate(self, assignment: str) -> Path:
        self.run("generate_assignment", assignment, "--force")
        return self.root / "release" / assignment

    def notebook_name(self, assignment: str) -> str:
        (path,) = (self.root / "source" / assignment).glob("*.ipynb")
        return path.name

    def release_notebook(self, assignment: str) -> nbformat.NotebookNode:
        path = self.root / "release" / assignment / self.notebook_name(assignment)
        return nbformat.read(path, as_version=4)

    def source_notebook(self, assignment: str) -> nbformat.NotebookNode:
        path = self.root / "source" / assignment / self.notebook_name(assignment)
        return nbformat.read(path, as_version=4)

    def submit(self, student: str, assignment: str, nb) -> Path:
        """Place a notebook where `nbgrader collect` would put it."""
        folder = self.root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / self.notebook_name(assignment))
        return folder

    def autograde(self, assignment: str):
        return self.run("autograde", assignment, "--force")

    def grade(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """`make grade` (python -m coursekit.grading) on this root, e.g. grade("-j", "2")."""
        result = subprocess.run(
            [sys.executable, "-m", "coursekit.grading", "--root", str(self.root), *args],
            cwd=self.root,
            env=venv_environment(),
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

    def autograded_notebook(self, student: str, assignment: str) -> nbformat.NotebookNode:
        path = self.root / "autograded" / student / assignment / self.notebook_name(assignment)
        return nbformat.read(path, as_version=4)

    def autograded_verdicts(self, student: str, assignment: str) -> dict[str, dict]:
        """grade_id -> the verdict record of each failed hidden check (coursekit.checks.verdict)."""
        return cells.verdict_records(self.autograded_notebook(student, assignment))

    def autograded_errors(self, student: str, assignment: str) -> dict[str, str]:
        """grade_id -> the error text each failing cell shows in the autograded notebook."""
        return cells.error_texts(self.autograded_notebook(student, assignment))
