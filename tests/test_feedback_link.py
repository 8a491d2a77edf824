"""The Assignments tab's "(view feedback)" path names the feedback page
(coursekit.learner.feedback_link).

nbgrader's labextension passes a submission's `local_feedback_path` to
JupyterLab's `filebrowser:go-to-path`. The assignment-list server handler gets
that path from `ExchangeFactory(config).List(...)` with
`ExchangeList.cached = True`; these tests list a learner's submissions the same
way, after the learner fetched the demo class's feedback.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeFactory
from nbgrader.exchange.default import ExchangeFetchFeedback, ExchangeList
from traitlets.config import Config

from coursekit.core.course import Course
from coursekit.learner.feedback_link import FeedbackLinkList, configure
from tests.support.demo_class import GROUP, ROOT, DemoRun

ASSIGNMENT = "ch3_multihead"
STUDENT = "learner-03"


def learner_config(course: Course, home: Path) -> Config:
    """The learner's nbgrader config, as in coursekit.simulate.learner_actions, in a copy of
    their folders."""
    config = Config()
    config.CourseDirectory.course_id = course.course_id
    config.CourseDirectory.student_id = STUDENT
    config.Exchange.root = str(home / "exchange")
    config.Exchange.cache = str(home / ".nbgrader_cache")
    config.Exchange.assignment_dir = str(home / STUDENT)
    return config


@pytest.fixture(scope="module")
def learner_home(demo_run: DemoRun, tmp_path_factory) -> tuple[Course, Path]:
    """A copy of one demo learner's folder, submit cache and the exchange; feedback fetched."""
    course, home = Course(demo_run.root), tmp_path_factory.mktemp("learner_home")
    learners = demo_run.root / "demo" / "learners"
    shutil.copytree(course.exchange_root, home / "exchange")
    shutil.copytree(learners / ".nbgrader_cache", home / ".nbgrader_cache")
    shutil.copytree(learners / STUDENT, home / STUDENT)
    config = learner_config(course, home)
    config.CourseDirectory.assignment_id = ASSIGNMENT
    ExchangeFetchFeedback(
        coursedir=CourseDirectory(config=config),
        authenticator=Authenticator(config=config),
        config=config,
    ).start()
    return course, home


def submissions(course: Course, home: Path, list_class=None) -> list[dict]:
    """The Assignments tab's submitted list, as nbgrader's server handler builds it."""
    config = learner_config(course, home)
    config.ExchangeList.cached = True
    if list_class is not None:
        config.ExchangeFactory.list = list_class
    lister = ExchangeFactory(config=config).List(
        coursedir=CourseDirectory(config=config),
        authenticator=Authenticator(config=config),
        config=config,
    )
    (assignment,) = [a for a in lister.start() if a["assignment_id"] == ASSIGNMENT]
    return assignment["submissions"]


@pytest.mark.xdist_group(GROUP)
def test_view_feedback_names_the_page_instead_of_its_folder(learner_home):
    course, home = learner_home
    stock = {s["timestamp"]: s for s in submissions(course, home)}
    ours = {s["timestamp"]: s for s in submissions(course, home, FeedbackLinkList)}
    assert stock.keys() == ours.keys()
    # The demo submits ch3 twice; "(view feedback)" shows where the feedback was fetched.
    linked = [t for t, s in stock.items() if s["has_local_feedback"] and not s["feedback_updated"]]
    assert linked, "no submission shows (view feedback)"
    for timestamp, submission in stock.items():
        mine = ours[timestamp]
        if timestamp not in linked:
            assert mine == submission
            continue
        folder = Path(submission["local_feedback_path"])
        assert folder.is_dir() and folder.parent.name == "feedback"
        page = Path(mine["local_feedback_path"])
        assert page.is_file() and page.parent == folder and page.name == "multihead.html"
        assert "course-summary" in page.read_text(encoding="utf-8"), "not the course's page"
        assert {k: v for k, v in mine.items() if k != "local_feedback_path"} == {
            k: v for k, v in submission.items() if k != "local_feedback_path"
        }


def test_configure_sets_nbgraders_list_plugin():
    config = Config()
    configure(config)
    assert ExchangeFactory(config=config).list is FeedbackLinkList
    assert issubclass(FeedbackLinkList, ExchangeList)


def test_the_course_config_uses_it():
    assert ExchangeFactory(config=Course(ROOT).config).list is FeedbackLinkList
