"""A course root on disk, driven through stock nbgrader commands and its gradebook.

The course's settings (course id, gradebook URL, exchange, folders) have one
owner: the root's nbgrader_config.py, read here once through nbgrader's own
CourseDirectory, exactly as every stock nbgrader command reads it. What
coursekit needs beyond nbgrader's settings (the course's time zone and language,
the names of its reference, checks and catalog packages) is `CourseKit`, set
there too as `c.CourseKit.*`: the library names no course.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from traitlets import Unicode, validate
from traitlets.config import Config, Configurable

from coursekit.core import messages
from coursekit.core.environment import nbgrader
from coursekit.core.root import CONFIG_FILE, NoCourseError, find_root, load_config


def add_root_argument(parser: argparse.ArgumentParser, flag: str = "--root", **kwargs) -> None:
    """`--root DIR` as every command takes it: parsed by find_root, so one rule finds it."""

    def root(value: str) -> Path:
        try:
            found = find_root(value)
        except NoCourseError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        # The command speaks its course's language from here on, whatever folder it runs in.
        messages.use_course(found)
        return found

    kwargs.setdefault("help", f"course root (default: the nearest folder holding {CONFIG_FILE})")
    # A string default goes through `type` at parse time: the search runs only then.
    parser.add_argument(flag, type=root, default="", **kwargs)


class CourseKit(Configurable):
    """What coursekit needs of a course besides nbgrader's own settings."""

    timezone = Unicode(
        "UTC", help="The course's time zone (IANA name): the hub's clocks and timestamps."
    ).tag(config=True)
    language = Unicode(
        messages.DEFAULT,
        help="The language coursekit speaks to the course's learners, TAs and instructors "
        f"({', '.join(messages.LANGUAGES)}); the course's own texts stay as it wrote them.",
    ).tag(config=True)
    solutions_package = Unicode(
        "solutions", help="The package of reference solutions, one module per assignment."
    ).tag(config=True)
    checks_package = Unicode(
        "grader_tests", help="The package of declared hidden checks, one module per assignment."
    ).tag(config=True)
    catalog_package = Unicode(
        "catalog", help="The package of learner-style mistakes and variants (demo, tests)."
    ).tag(config=True)

    @classmethod
    def of(cls, root: str | Path | None = None) -> CourseKit:
        """The settings of the course at `root` (else the one find_root finds); defaults when
        there is no course config at all (a worker's scratch folder has one)."""
        try:
            config = find_root(root) / CONFIG_FILE
            mtime_ns = config.stat().st_mtime_ns
        except (NoCourseError, FileNotFoundError):
            return cls()
        return _kit_of(str(config.parent), mtime_ns)

    @validate("language")
    def _known_language(self, proposal):
        return messages.checked_setting(proposal["value"])

    # The folder its packages are imported from (set by `of` and `Course.kit`): an installed
    # `coursekit` command starts with its own bin/ on sys.path, not the course's folder.
    course_root: Path | None = None

    @property
    def secret_packages(self) -> tuple[str, str]:
        """The instructor's packages graders import and learners never see."""
        return (self.solutions_package, self.checks_package)

    def solutions(self, assignment: str):
        return self._import(f"{self.solutions_package}.{assignment}")

    def checks(self, assignment: str):
        return self._import(f"{self.checks_package}.{assignment}")

    def catalog(self):
        return self._import(self.catalog_package)

    def _import(self, name: str):
        """A module of the course's own packages: its folder first, as use_course_packages does."""
        folder = str(self.course_root) if self.course_root else None
        if folder and folder not in sys.path:
            sys.path.insert(0, folder)
        return importlib.import_module(name)


@functools.lru_cache(maxsize=16)
def _kit_of(root: str, mtime_ns: int) -> CourseKit:
    """Read once per version of the file (checks_of runs for every hidden check)."""
    kit = CourseKit(config=load_config(Path(root)))
    kit.course_root = Path(root)
    return kit


def contract_functions(assignment: str, kit: CourseKit | None = None) -> list[str]:
    """The functions learners write in an assignment, in notebook order (solutions' __all__)."""
    return list((kit or CourseKit.of()).solutions(assignment).__all__)


class Course:
    def __init__(self, root: Path):
        self.root = Path(root)

    @functools.cached_property
    def config(self) -> Config:
        return load_config(self.root)

    @functools.cached_property
    def coursedir(self) -> CourseDirectory:
        return CourseDirectory(config=self.config)

    @functools.cached_property
    def kit(self) -> CourseKit:
        kit = CourseKit(config=self.config)
        kit.course_root = self.root
        return kit

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


@dataclass(frozen=True)
class GradebookPlace:
    """Where a course's grades go: its root folder (submitted/, autograded/, reports/),
    its gradebook's URL and its course id, as stock nbgrader reads them. Made by
    `gradebook_place`; what grading passes around instead of the three loose values."""

    root: Path
    db_url: str
    course_id: str


def gradebook_place(root: str | Path) -> GradebookPlace:
    """The gradebook place of the course at `root` (its nbgrader_config.py, through
    nbgrader's CourseDirectory)."""
    course = Course(Path(root))
    return GradebookPlace(Path(root), course.db_url, course.course_id)
