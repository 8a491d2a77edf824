"""A throwaway copy of the course in which stock nbgrader commands run.

The copy holds the course's own nbgrader_config.py and source/, so every
command behaves as in the repo, but its gradebook, submitted/ and autograded/
folders live in a temporary directory.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from coursekit.release import nbgrader

ROOT = Path(__file__).resolve().parent.parent


class CourseSandbox:
    def __init__(self, path: Path):
        self.root = path
        shutil.copy(ROOT / "nbgrader_config.py", path / "nbgrader_config.py")
        shutil.copytree(ROOT / "source", path / "source")

    def run(self, *args: str, check: bool = True):
        result = nbgrader(self.root, *args, check=False)
        if check and result.returncode != 0:
            raise AssertionError(f"nbgrader {' '.join(args)} failed:\n{result.stderr[-4000:]}")
        return result

    def generate(self, assignment: str) -> Path:
        self.run("generate_assignment", assignment, "--force")
        return self.root / "release" / assignment

    def release_notebook(self, assignment: str) -> nbformat.NotebookNode:
        (path,) = (self.root / "release" / assignment).glob("*.ipynb")
        return nbformat.read(path, as_version=4)

    def source_notebook(self, assignment: str) -> nbformat.NotebookNode:
        (path,) = (self.root / "source" / assignment).glob("*.ipynb")
        return nbformat.read(path, as_version=4)

    def notebook_name(self, assignment: str) -> str:
        (path,) = (self.root / "source" / assignment).glob("*.ipynb")
        return path.name

    def submit(self, student: str, assignment: str, nb) -> Path:
        folder = self.root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / self.notebook_name(assignment))
        return folder

    def autograde(self, assignment: str):
        return self.run("autograde", assignment, "--force")

    def scores(self, assignment: str) -> dict[str, dict[str, float | None]]:
        """learner -> grade_id -> auto score (None where a TA must grade)."""
        notebook = Path(self.notebook_name(assignment)).stem
        with Gradebook(f"sqlite:///{self.root / 'gradebook.db'}", "transformer-peft") as gb:
            result = {}
            for submission in gb.assignment_submissions(assignment):
                nb = gb.find_submission_notebook(notebook, assignment, submission.student.id)
                result[submission.student.id] = {g.name: g.auto_score for g in nb.grades}
            return result

    def max_scores(self, assignment: str) -> dict[str, float]:
        with Gradebook(f"sqlite:///{self.root / 'gradebook.db'}", "transformer-peft") as gb:
            nb = gb.find_notebook(Path(self.notebook_name(assignment)).stem, assignment)
            return {cell.name: cell.max_score for cell in nb.grade_cells}

    def autograded_errors(self, student: str, assignment: str) -> dict[str, str]:
        """grade_id -> the error text each failing cell shows in the autograded notebook."""
        path = self.root / "autograded" / student / assignment / self.notebook_name(assignment)
        nb = nbformat.read(path, as_version=4)
        errors = {}
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    errors[meta.get("grade_id", "")] = f"{output.ename}: {output.evalue}"
                elif output.output_type == "stream" and output.name == "stderr":
                    errors[meta.get("grade_id", "")] = output.text
        return errors
