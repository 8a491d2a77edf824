"""A course root on disk, driven through stock nbgrader commands and its gradebook."""

from __future__ import annotations

import importlib
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from coursekit.release import nbgrader

COURSE_ID = "transformer-peft"


def contract_functions(assignment: str) -> list[str]:
    """The functions learners write in an assignment, in notebook order (solutions' __all__)."""
    return list(importlib.import_module(f"solutions.{assignment}").__all__)


class Course:
    def __init__(self, root: Path):
        self.root = Path(root)

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.root / 'gradebook.db'}"

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

    def scores(self, assignment: str) -> dict[str, dict[str, float | None]]:
        """learner -> grade_id -> auto score (None where a TA must grade)."""
        notebook = Path(self.notebook_name(assignment)).stem
        with Gradebook(self.db_url, COURSE_ID) as gb:
            result = {}
            for submission in gb.assignment_submissions(assignment):
                nb = gb.find_submission_notebook(notebook, assignment, submission.student.id)
                result[submission.student.id] = {g.name: g.auto_score for g in nb.grades}
            return result

    def max_scores(self, assignment: str) -> dict[str, float]:
        """grade_id -> points, in notebook order."""
        with Gradebook(self.db_url, COURSE_ID) as gb:
            nb = gb.find_notebook(Path(self.notebook_name(assignment)).stem, assignment)
            return {cell.name: cell.max_score for cell in nb.grade_cells}

    def autograded_errors(self, student: str, assignment: str) -> dict[str, str]:
        """grade_id -> the error text each failing cell shows in the autograded notebook."""
        path = self.root / "autograded" / student / assignment / self.notebook_name(assignment)
        errors = {}
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    errors[grade_id] = f"{output.ename}: {output.evalue}"
                elif output.output_type == "stream" and output.name == "stderr":
                    errors[grade_id] = output.text
        return errors
