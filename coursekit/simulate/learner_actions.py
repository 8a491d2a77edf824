"""What a learner does through the course's exchange, with nbgrader's own exchange API.

One OS user plays every learner of a simulated class: nbgrader's
`CourseDirectory.student_id` (the `--student` flag of `nbgrader submit`) names
the learner, and each learner works in a folder of their own. Fetch and submit
are the course's plain-file exchange classes (coursekit/exchange/), so
this account never copies what a link in a learner's folder points to.
"""

from __future__ import annotations

from pathlib import Path

from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeFactory
from traitlets.config import Config

from coursekit.core.course import Course
from coursekit.exchange import configure as configure_safe_exchange


def _config(course: Course, workspace: Path, student: str, assignment: str) -> Config:
    config = Config()
    config.CourseDirectory.course_id = course.course_id
    config.CourseDirectory.assignment_id = assignment
    config.CourseDirectory.student_id = student
    config.Exchange.root = str(course.exchange_root)
    # The submit cache would otherwise go to the real user's ~/.local/share.
    config.Exchange.cache = str(workspace.parent / ".nbgrader_cache")
    config.Exchange.assignment_dir = str(workspace)
    configure_safe_exchange(config)
    return config


def _run(kind, course: Course, workspace: Path, student: str, assignment: str) -> None:
    config = _config(course, workspace, student, assignment)
    app = getattr(ExchangeFactory(config=config), kind)(
        coursedir=CourseDirectory(config=config),
        authenticator=Authenticator(config=config),
        config=config,
    )
    app.start()


def fetch(course: Course, workspace: Path, student: str, assignment: str) -> Path:
    """`nbgrader fetch_assignment` into the learner's workspace; returns the fetched folder."""
    workspace.mkdir(parents=True, exist_ok=True)
    _run("FetchAssignment", course, workspace, student, assignment)
    return workspace / assignment


def submit(course: Course, workspace: Path, student: str, assignment: str) -> None:
    """`nbgrader submit --student <student>` of the learner's fetched folder."""
    _run("Submit", course, workspace, student, assignment)


def fetch_feedback(course: Course, workspace: Path, student: str, assignment: str) -> Path:
    """`nbgrader fetch_feedback`: the pages of every submission the learner's cache knows,
    into <workspace>/<assignment>/feedback/<submitted at>/; returns that feedback folder."""
    _run("FetchFeedback", course, workspace, student, assignment)
    return workspace / assignment / "feedback"
