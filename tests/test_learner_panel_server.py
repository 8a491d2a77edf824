"""The result panel's server side (coursekit.learner.panel_server) in a learner's own server.

A real `jupyter server` from .venv serves a copy of one demo learner's folder, with
the class's nbgrader config as `make hub` writes it: does the panel list that
learner's graded attempts with the summaries their pages carry, submit through
nbgrader's own assignment list, refuse what it should, and speak the course's
language?
"""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from coursekit.core.course import Course, contract_functions
from coursekit.hub.files import CLASS_NBGRADER_CONFIG
from tests.demo_class import GROUP, DemoRun
from tests.lab_server import running_lab

ASSIGNMENT = "ch3_multihead"
STUDENT = "learner-03"
NOTEBOOK = f"{ASSIGNMENT}/multihead.ipynb"

pytestmark = pytest.mark.xdist_group(GROUP)


def write_config(home: Path, course: Course, extra: str = "") -> None:
    """The class's config (coursekit.hub.files) for this learner's copy of the folders."""
    text = CLASS_NBGRADER_CONFIG.format(
        course_id=course.course_id,
        exchange=str(home / "exchange"),
        timezone="Asia/Seoul",
        timeout=30,
    )
    text += (
        f"c.CourseDirectory.student_id = {STUDENT!r}\n"
        f"c.Exchange.cache = {str(home / '.nbgrader_cache')!r}\n"
        f"c.Exchange.assignment_dir = {str(home / STUDENT)!r}\n" + extra
    )
    (home / STUDENT / "nbgrader_config.py").write_text(text)


@pytest.fixture(scope="module")
def learner_server(demo_run: DemoRun, tmp_path_factory):
    """A Jupyter server as the learner runs it, on a copy of their folder and the exchange."""
    course, home = Course(demo_run.root), tmp_path_factory.mktemp("panel_home")
    learners = demo_run.root / "demo" / "learners"
    shutil.copytree(course.exchange_root, home / "exchange")
    shutil.copytree(learners / ".nbgrader_cache", home / ".nbgrader_cache")
    shutil.copytree(learners / STUDENT, home / STUDENT)
    write_config(home, course)
    with running_lab(home / STUDENT, home / "runtime", home / "server.log", app="server") as (
        base,
        token,
    ):
        yield course, home, base, token


def call(base: str, token: str | None, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"{base}/coursekit/panel/{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {token}"} if token else {},
        method="GET" if body is None else "POST",
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def status(base: str, token: str | None, path: str, body: dict | None = None) -> int:
    try:
        call(base, token, path, body)
    except urllib.error.HTTPError as error:
        return error.code
    return 200


def test_the_learners_graded_attempts_come_with_their_summaries(learner_server):
    course, home, base, token = learner_server
    reply = call(base, token, f"attempts?path={NOTEBOOK}")
    assert (reply["course_id"], reply["assignment_id"]) == (course.course_id, ASSIGNMENT)
    assert reply["words"]["submit"] == "제출하고 채점 받기"
    graded = [a for a in reply["attempts"] if a["state"] == "graded"]
    assert graded, reply["attempts"]
    summary = graded[-1]["summary"]
    assert [row["name"] for row in summary["functions"]] == contract_functions(ASSIGNMENT)
    assert summary["total"]["max"] > 0
    page = home / STUDENT / graded[-1]["page"]
    assert page.is_file() and page.suffix == ".html", page
    assert all(not Path(a["page"]).is_absolute() for a in graded)


def test_submit_hands_in_through_nbgraders_assignment_list(learner_server):
    _course, home, base, token = learner_server
    before = call(base, token, f"attempts?path={NOTEBOOK}")["attempts"]
    reply = call(base, token, "submit", {"path": NOTEBOOK})
    assert "error" not in reply, reply
    assert len(reply["attempts"]) == len(before) + 1
    assert reply["attempts"][-1]["state"] == "waiting"
    inbound = sorted((home / "exchange").glob(f"*/inbound/{STUDENT}+{ASSIGNMENT}+*"))
    assert len(inbound) == len(before) + 1, inbound


def test_a_notebook_outside_the_fetched_assignments_is_not_submitted(learner_server):
    _course, home, base, token = learner_server
    inbound = set((home / "exchange").glob("*/inbound/*"))
    for path in ("elsewhere.ipynb", f"../{STUDENT}/{NOTEBOOK}", "../exchange/x.ipynb"):
        reply = call(base, token, "submit", {"path": path})
        assert reply["error"] == "가져온 과제에 속한 노트북이 아닙니다.", reply
        assert "attempts" not in reply
    assert set((home / "exchange").glob("*/inbound/*")) == inbound


def test_without_the_token_nothing_is_answered(learner_server):
    _course, _home, base, _token = learner_server
    assert status(base, None, f"attempts?path={NOTEBOOK}") == 403
    assert status(base, None, "submit", {"path": NOTEBOOK}) == 403


def test_the_course_can_turn_the_panel_off_and_speak_english(learner_server):
    course, home, base, token = learner_server
    try:
        write_config(home, course, 'c.CourseKit.language = "en"\n')
        words = call(base, token, f"attempts?path={NOTEBOOK}")["words"]
        assert (words["submit"], words["title"]) == ("Submit and get graded", "Grading results")
        write_config(home, course, "c.LearnerPanel.enabled = False\n")
        assert status(base, token, f"attempts?path={NOTEBOOK}") == 404
        assert status(base, token, "submit", {"path": NOTEBOOK}) == 404
    finally:
        write_config(home, course)
