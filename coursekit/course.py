"""A course root on disk, driven through stock nbgrader commands and its gradebook.

The course's settings (course id, gradebook URL, exchange, folders) have one
owner: the root's nbgrader_config.py, read here once through nbgrader's own
CourseDirectory, exactly as every stock nbgrader command reads it.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from coursekit.release import nbgrader


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

    def autograded_notebook(self, student: str, assignment: str) -> nbformat.NotebookNode:
        path = self.root / "autograded" / student / assignment / self.notebook_name(assignment)
        return nbformat.read(path, as_version=4)
