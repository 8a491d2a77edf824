"""The instructor's nbgrader commands, through nbgrader's own Python API (NbGraderAPI).

The same converters and exchange classes as `nbgrader release_assignment`,
`collect`, `autograde` … (formgrader calls them this way too), with the course
root's nbgrader_config.py, but without starting an interpreter per command.
"""

from __future__ import annotations

from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.apps.api import NbGraderAPI
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins.export import CsvExportPlugin

from coursekit.core.course import load_config
from coursekit.core.environment import use_environment_bin
from coursekit.nbgrader_internals import quiet


def course_config(root: Path):
    config = load_config(root)
    config.ExchangeReleaseAssignment.force = True  # re-releasing replaces the old release
    # One account hands in for every simulated learner: no owner to check.
    config.ExchangeCollect.check_owner = False
    return config


class Instructor:
    def __init__(self, root: Path):
        use_environment_bin()  # kernels and alembic are run by name
        self.config = course_config(root)
        coursedir = CourseDirectory(config=self.config)
        authenticator = Authenticator(config=self.config)
        self.api = NbGraderAPI(coursedir, authenticator, config=self.config)
        quiet.ignore_sawarnings()  # nbgrader's autograde adds rows SQLAlchemy 2 warns about

    def _check(self, what: str, result: dict) -> dict:
        if not result or not result.get("success"):
            detail = (result or {}).get("error") or (result or {}).get("log", "")
            raise RuntimeError(f"nbgrader {what} failed:\n{detail[-4000:]}")
        return result

    def generate_assignment(self, assignment: str) -> None:
        self._check("generate_assignment", self.api.generate_assignment(assignment, force=True))

    def release_assignment(self, assignment: str) -> None:
        self._check("release_assignment", self.api.release_assignment(assignment))

    def collect(self, assignment: str) -> None:
        self._check("collect", self.api.collect(assignment, update=True))

    def autograde(self, assignment: str, student: str) -> None:
        self._check(f"autograde {student}", self.api.autograde(assignment, student, force=True))

    def generate_feedback(self, assignment: str, student: str | None = None) -> None:
        """Feedback pages of every learner, or of `student` alone."""
        made = self.api.generate_feedback(assignment, student_id=student, force=True)
        self._check("generate_feedback", made)

    def release_feedback(self, assignment: str) -> None:
        self._check("release_feedback", self.api.release_feedback(assignment))

    def export(self, path: Path) -> None:
        """`nbgrader export --to <path>`: every submission's grade as CSV."""
        coursedir = self.api.coursedir
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            CsvExportPlugin(to=str(path), config=self.config).export(gb)
