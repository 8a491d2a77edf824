"""The learner's result panel: its server side (coursekit.learner.panel_server) and the
JupyterLab extension (labextension/), in the learner's own JupyterLab.

A real `jupyter lab` from .venv serves a copy of one demo learner's folder, with the
class's nbgrader config as `make hub` writes it: does the panel list that learner's
graded attempts with the summaries their pages carry, submit through nbgrader's own
assignment list, refuse what it should, and speak the course's language? And in
Chromium: does the button submit, and the panel show the result once the instructor's
stock commands have graded and released it, as text?
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

from catalog import catalogs
from coursekit.core.course import Course, contract_functions
from coursekit.core.environment import nbgrader
from coursekit.hub.files import CLASS_NBGRADER_CONFIG
from coursekit.simulate import submissions
from tests.support.browser import chromium
from tests.support.demo_class import GROUP, DemoRun
from tests.support.lab_server import running_lab

ASSIGNMENT = "ch3_multihead"
STUDENT = "learner-03"
NOTEBOOK = f"{ASSIGNMENT}/multihead.ipynb"
MISTAKE = "reshape_without_transpose"
WORDS = ["나는", "학교에", "버스로", "갔다"]
# A learner's error message that is HTML: the panel must show it as text.
HOSTILE_MERGE = (
    "def merge_heads(heads_out):\n"
    "    raise ValueError('<img src=x onerror=\"window.pwned = 1\"><b>bold</b>')\n"
)
SCREENSHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots" / "learner_panel"

pytestmark = [pytest.mark.xdist_group(GROUP), pytest.mark.class_graded, pytest.mark.browser]


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
    with running_lab(home / STUDENT, home / "runtime", home / "lab.log") as (base, token):
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


def test_a_held_ask_answers_once_the_newest_attempt_is_answered_or_its_wait_is_over(
    learner_server,
):
    _course, _home, base, token = learner_server
    listed = call(base, token, f"attempts?path={NOTEBOOK}")["attempts"]
    answered = [a for a in listed if a["state"] != "waiting"]
    assert answered and listed[-1]["state"] != "waiting", listed  # before the next test's submit
    # the newest is answered already: the ask comes back with it (the wait is a bound)
    reply = call(base, token, f"attempts?path={NOTEBOOK}&answered={len(listed)}&wait=60")
    assert reply["attempts"] == listed
    # one attempt more than there is: held for its wait, then answered with what there is
    reply = call(base, token, f"attempts?path={NOTEBOOK}&answered={len(listed) + 1}&wait=0.3")
    assert reply["attempts"] == listed
    assert status(base, token, f"attempts?path={NOTEBOOK}&answered=x") == 400


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
    assert status(base, None, "words") == 403
    assert status(base, None, f"attempts?path={NOTEBOOK}") == 403
    assert status(base, None, "submit", {"path": NOTEBOOK}) == 403


def test_before_any_release_the_panel_does_not_ask_for_feedback(tmp_path):
    from traitlets.config import Config

    from coursekit.learner import panel_server

    config = Config()
    config.Exchange.root = str(tmp_path)
    assert not panel_server.feedback_released(config, "course")
    (tmp_path / "course" / "feedback").mkdir(parents=True)
    assert panel_server.feedback_released(config, "course")


def test_what_a_held_ask_waits_for():
    from coursekit.learner.panel_server import answered

    graded, waiting = {"state": "graded"}, {"state": "waiting"}
    assert answered({"attempts": [graded, graded]}, 2)
    assert not answered({"attempts": [graded, waiting]}, 2)  # the newest is being graded
    assert not answered({"attempts": [graded]}, 2)  # the submit is not listed yet
    assert answered({"attempts": [graded, {"state": "held_back"}]}, 2)
    assert answered({"attempts": []}, 0)
    assert answered({"error": "not an assignment"}, 3)  # nothing to wait for


def test_the_course_can_turn_the_panel_off_and_speak_english(learner_server):
    course, home, base, token = learner_server
    try:
        write_config(home, course, 'c.CourseKit.language = "en"\n')
        words = call(base, token, f"attempts?path={NOTEBOOK}")["words"]
        assert (words["submit"], words["title"]) == ("Submit and get graded", "Grading results")
        assert call(base, token, "words")["words"] == words
        write_config(home, course, "c.LearnerPanel.enabled = False\n")
        assert status(base, token, "words") == 404  # the extension then shows no button
        assert status(base, token, f"attempts?path={NOTEBOOK}") == 404
        assert status(base, token, "submit", {"path": NOTEBOOK}) == 404
    finally:
        write_config(home, course)


def grade_and_release(demo_root: Path, home: Path, tmp_path: Path) -> None:
    """The instructor's stock commands on a copy of the demo course, whose exchange is the
    learner's: collect, autograde, generate_feedback and release_feedback for this learner."""
    root = tmp_path / "instructor"
    shutil.copytree(demo_root, root, ignore=shutil.ignore_patterns("demo", "exchange"))
    env_root = {"COURSE_EXCHANGE_ROOT": str(home / "exchange")}
    for step in ("collect", "autograde", "generate_feedback", "release_feedback"):
        options = {"collect": ["--update"], "release_feedback": []}.get(step, ["--force"])
        result = nbgrader(
            root, step, ASSIGNMENT, "--student", STUDENT, *options, check=False, env=env_root
        )
        assert result.returncode == 0, f"{step}:\n{result.stderr[-3000:]}"


def test_the_button_submits_and_the_panel_shows_the_graded_attempt(
    learner_server, demo_run, tmp_path
):
    _course, home, base, token = learner_server
    release = nbformat.read(home / STUDENT / NOTEBOOK, as_version=4)
    source = submissions.read(demo_run.root / "source" / ASSIGNMENT / "multihead.ipynb")
    entry = next(e for e in catalogs()[ASSIGNMENT].mistakes if e.key == MISTAKE)
    typed = submissions.fill(
        release, source, replace={"split_heads": entry.source, "merge_heads": HOSTILE_MERGE}
    )
    nbformat.write(typed, home / STUDENT / NOTEBOOK)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with chromium(tmp_path / "chromium-profile", width=1400) as browser:
        page = browser.new_page()
        page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
        button = page.get_by_role("button", name="제출하고 채점 받기")
        button.wait_for(timeout=60_000)
        button.click()
        panel = page.locator("#coursekit-result-panel")
        panel.get_by_text("제출했습니다: 채점 중...").first.wait_for(timeout=60_000)
        page.screenshot(path=str(SCREENSHOTS / "01-submitted.png"))

        grade_and_release(demo_run.root, home, tmp_path)
        mistake = panel.locator(".ck-mistake", has_text=f"[{MISTAKE}]")
        mistake.wait_for(timeout=60_000)
        page.screenshot(path=str(SCREENSHOTS / "02-graded.png"))
        split = panel.locator(".ck-function.ck-failed", has_text="split_heads")
        points = split.locator(".ck-points").inner_text()
        assert re.fullmatch(r"0 / [1-9]\d*", points), split.inner_text()  # none of its points
        # The page's example as the feedback page draws it (src/pictures.ts, from its data):
        # both heads, expected beside received, the words as labels, moved cells marked.
        drawn = split.locator(".ck-picture")
        drawn.locator(".ck-pair").first.scroll_into_view_if_needed()
        drawn.locator(".ck-pair").first.screenshot(path=str(SCREENSHOTS / "03-picture.png"))
        assert "낱말과 head 가 뒤섞였습니다" in drawn.locator(".ck-caption").inner_text()
        tables = drawn.locator("table.ck-heat")
        assert tables.count() == 4
        for i in range(4):
            assert tables.nth(i).locator("th[scope=row]").all_inner_texts() == WORDS
        assert drawn.locator("td.ck-off").count() == 4 * 12  # all but head 0's first word
        # The learner's HTML in an error message is text in the panel, and ran nothing.
        merge = panel.locator(".ck-function.ck-failed", has_text="merge_heads").inner_text()
        assert "<img src=x" in merge and "<b>bold</b>" in merge, merge
        assert panel.locator("img, b:not(.ck-total b)").count() == 0
        assert page.evaluate("window.pwned") is None
        assert panel.locator(".ck-attempt").count() >= 2  # this one and the demo's
