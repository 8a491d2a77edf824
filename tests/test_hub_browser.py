"""A class on the hub, through the pages: `python -m coursekit.hub` (what `make hub` runs)
sets up an instructor and two learners of a roster (Korean names, emails, LMS ids) with
real Linux accounts; headless Chromium (Debian's, driven by Playwright) logs each in and
plays the course's cycle, the learners in a Korean JupyterLab:

instructor generates and releases ch3 in formgrader → learner A fetches, types the
reference answers into the editor, runs all, validates, submits → learner B types one
catalogued mistake, Validate shows its Korean message, submits anyway → instructor
collects, autogrades A with formgrader's button and the class with `make grade`, reads
B's Korean diagnosis, grades B's written answer, generates and releases feedback →
learner B fetches the feedback and reads the diagnosis, without hidden test source →
formgrader lists the learners by their roster names, and `make export` writes B's
Canvas row with B's name, LMS id and points. On the way, the staff wall on the hub's
real URLs: B hands in a page with script beside the notebook; formgrader's submission
page and that file carry coursekit.staff.server's policies (which the environment, not
the instructor's config, enables), MathJax typesets the course's formulas, and no
script of B's reaches a loopback listener; a learner's server carries the policies too.

One screenshot per step in build/screenshots/hub/ (paths printed). The accounts, the
hub's processes and every permission the hub changed are undone at the end.
"""

from __future__ import annotations

import csv
import importlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

import solutions.ch3_multihead as reference
from catalog import ch3_multihead as mistakes
from coursekit.core.course import Course
from coursekit.hub import accounts, board_service, trial_class
from coursekit.hub.settings import HubSettings
from coursekit.live import attempts
from coursekit.lms import roster
from coursekit.simulate.harness import CourseHarness
from coursekit.staff.server import INERT
from tests.support import hub_pages as ui
from tests.support.browser import CHROMIUM, FLAGS, MISSING, show_line
from tests.support.file_attacks import Listener, attack, beside, open_files
from tests.support.hub_answers import answered_cells
from tests.support.hub_class import (
    LEARNER_LOCALE,
    LIVE_ASSIGNMENT,
    LIVE_NOTEBOOK,
    PANEL,
    everyone,
    one_class_at_a_time,
    press_submit,
    running_hub,
)
from tests.support.ports import free_ports

REPO = Path(__file__).resolve().parent.parent
SHOTS = REPO / "build" / "screenshots" / "hub"
ASSIGNMENT, NOTEBOOK, MANUAL_CELL = "ch3_multihead", "multihead", "why_256_answer"
MISTAKE = "reshape_without_transpose"
PLACEHOLDER = "여기에 답을 쓰세요"
INSTRUCTOR_ONLY = {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"}
ANSWER_A = "head 를 나눠도 W_Q, W_K, W_V, W_O 는 8×8 그대로라 4·64 = 256 입니다."
ROSTER = """\
id,이름,email,lms_id
2026001,김민준,minjun@example.ac.kr,10501
2026002,남궁 서연,seoyeon@example.ac.kr,10502
"""
NAME_A, NAME_B = "김, 민준", "남궁, 서연"  # as formgrader shows them: "Last, First"
# The interval is long enough that the second press, made once the first result is in the
# panel, lands inside it on a loaded machine.
LIVE_INTERVAL = 20
LIVE_POLICY = f"""
# tests/test_hub_browser.py: the workshop's policy, shortened for the test.
c.LiveGrading.per_assignment = {{{LIVE_ASSIGNMENT!r}: {{"min_interval": {LIVE_INTERVAL}}}}}
c.LiveBoard.stuck_after = 2
"""
BOARD = f"/services/{board_service.SERVICE}/"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the hub creates Linux accounts: root"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
    pytest.mark.hub,
    pytest.mark.browser,
    pytest.mark.root,
]


@pytest.fixture(scope="module")
def hub():
    """A hub class (prefix tpt-, so it never meets a `make hub` class) on loopback, with
    one TA and, as `make hub` runs it, the live grading service and its TA board."""
    root = tempfile.mkdtemp(prefix="coursekit-hub-test-", dir="/srv")
    learners = [vars(learner) for learner in roster.parse(ROSTER, "tpt-")]
    settings = HubSettings(
        root=root, port=free_ports(4), prefix="tpt-", learners=2, tas=1, roster=learners
    )
    with one_class_at_a_time():
        # A run killed before its teardown leaves the class's accounts behind, and in their
        # homes what they fetched and submitted: this run starts from none.
        for user in everyone(settings):
            accounts.remove_account(user)
        try:
            # The instructor's policy for the live part: a short interval, stuck after two.
            with running_hub(settings, Path(root) / "jupyterhub.log", LIVE_POLICY) as passwords:
                yield settings, passwords
        finally:
            if (Path(root) / "jupyterhub.log").exists():  # kept for a look, failed or not
                shutil.copy(Path(root) / "jupyterhub.log", SHOTS.parent / "hub-jupyterhub.log")
            trial_class.down(settings)
        # Nothing of the class is left: accounts, their processes, the hub's folder.
        for user in everyone(settings):
            assert not accounts.exists(user), user
        assert not Path(root).exists()


def run_as(user: str, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["runuser", "-u", user, "--", *command], capture_output=True, text=True, cwd="/tmp"
    )


def test_learners_run_the_course_environment_but_read_no_reference(hub):
    settings, _ = hub
    learner, classmate = settings.learner_names
    python = str(Path(settings.venv) / "bin" / "python")
    # What a learner's server and Validate need runs under the learner's uid.
    imported = run_as(learner, python, "-c", "import coursekit.learner.validation, nbgrader, numpy")
    assert imported.returncode == 0, imported.stderr
    # References, hidden tests, the catalog, git history, the instructor's course and a
    # classmate's home stay closed.
    for path in (
        REPO / "solutions" / "ch3_multihead.py",
        REPO / "grader_tests" / "ch3_multihead.py",
        REPO / "catalog" / "ch3_multihead.py",
        REPO / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb",
        REPO / ".git" / "HEAD",
        settings.course_root / "nbgrader_config.py",
        settings.home(classmate) / ".bashrc",
    ):
        assert run_as(learner, "cat", str(path)).returncode != 0, path
    leaked = run_as(learner, python, "-c", "import solutions.ch3_multihead")
    assert leaked.returncode != 0
    # The instructor grades: the references and hidden tests import.
    grader = run_as(
        settings.instructor, python, "-c", "import grader_tests.ch3_multihead, solutions"
    )
    assert grader.returncode == 0, grader.stderr
    assert settings.exchange.stat().st_mode & 0o7777 == 0o1777


def test_a_class_on_the_hub_through_the_pages(hub):
    from playwright.sync_api import sync_playwright

    settings, passwords = hub
    assert CHROMIUM.exists(), MISSING
    shutil.rmtree(SHOTS, ignore_errors=True)
    shots = ui.Shots(SHOTS)
    instructor, (learner_a, learner_b) = settings.instructor, settings.learner_names
    base = settings.url
    formgrader = f"{base}/user/{instructor}/formgrader"
    release_nb = REPO / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    correct = {name: getattr(reference, name) for name in reference.__all__}
    one_mistake = {**correct, "split_heads": getattr(mistakes, f"split_heads__{MISTAKE}")}

    python = str(Path(settings.venv) / "bin" / "python")
    listener = Listener()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            # The instructor releases ch3 in formgrader.
            teacher = ui.log_in(browser, base, instructor, passwords[instructor])
            assert "File" in ui.menu_bar(teacher)  # the instructor keeps English
            assert "Formgrader" in ui.nbgrader_menu_items(teacher)
            assert not INSTRUCTOR_ONLY & ui.disabled_lab_extensions(teacher)
            teacher.goto(formgrader)
            ui.formgrader_button(teacher, ui.formgrader_row(teacher, ASSIGNMENT), "assign")
            ui.formgrader_button(teacher, ui.formgrader_row(teacher, ASSIGNMENT), "release")
            status = ui.formgrader_row(teacher, ASSIGNMENT).locator("td.status")
            assert status.inner_text().strip() == "released"
            shots(teacher, "instructor-released-ch3")

            # Learner A: no formgrader, fetch, the reference typed in, run all, Validate, submit.
            a = ui.log_in(browser, base, learner_a, passwords[learner_a], LEARNER_LOCALE)
            # A learner's JupyterLab is in Korean: the language pack's menu labels.
            bar = ui.menu_bar(a)
            assert bar[:5] == ["파일", "편집", "보기", "실행", "커널"], bar
            assert ui.labels(a)("Kernel", "menu") == "커널" and "File" not in bar, bar
            ui.menu_items(a, "File", lambda: shots(a, "learner-a-korean-file-menu"))
            menu = ui.nbgrader_menu_items(a, lambda: shots(a, "learner-a-nbgrader-menu"))
            assert "Assignment List" in menu and "Formgrader" not in menu, menu
            assert ui.disabled_lab_extensions(a) >= INSTRUCTOR_ONLY
            assert a.goto(f"{base}/user/{learner_a}/formgrader").status == 404
            a.goto(f"{base}/user/{learner_a}/lab")
            a.locator("#jp-main-dock-panel").wait_for()
            ui.fetch_and_open(a, ASSIGNMENT, NOTEBOOK)
            shots(a, "learner-a-fetched")
            # The learner's own server (same environment) serves /files/ inert too; the
            # rest of the cycle shows it keeps working.
            own = f"{base}/user/{learner_a}"
            files = a.request.get(
                f"{own}/files/{ASSIGNMENT}/{NOTEBOOK}.ipynb", headers={"Referer": f"{own}/lab"}
            )
            assert files.status == 200 and files.headers["content-security-policy"] == INERT
            for name, text in answered_cells(release_nb, correct).items():
                ui.replace_cell_text(a, f"def {name}(", text)
            ui.write_markdown_answer(
                a,
                PLACEHOLDER,
                ANSWER_A,
            )
            shots(a, "learner-a-typed")
            ui.restart_and_run_all(a)
            assert a.locator(".jp-OutputArea-output[data-mime-type*='error']").count() == 0
            shots(a, "learner-a-ran-all")
            report = ui.validate(a)
            shots(a, "learner-a-validate")
            assert "Success" in report and "틀림" not in report, report
            ui.close_dialog(a)
            ui.save(a)
            ui.submit(a, ASSIGNMENT)
            shots(a, "learner-a-submitted")

            # Learner B: one catalogued mistake; Validate says so in Korean; submits anyway.
            b = ui.log_in(browser, base, learner_b, passwords[learner_b], LEARNER_LOCALE)
            ui.fetch_and_open(b, ASSIGNMENT, NOTEBOOK)
            # B's account also puts a page with script beside the notebook, handed in with it.
            notes = settings.home(learner_b) / ASSIGNMENT / "notes.html"
            page_text = attack(listener.port, "hub-file")
            wrote = run_as(
                learner_b, python, "-c", f"open({str(notes)!r}, 'w').write({page_text!r})"
            )
            assert wrote.returncode == 0, wrote.stderr
            for name, text in answered_cells(release_nb, one_mistake).items():
                ui.replace_cell_text(b, f"def {name}(", text)
            ui.write_markdown_answer(b, PLACEHOLDER, "head 마다 W 를 따로 두니까 256 입니다.")
            ui.restart_and_run_all(b)
            report = ui.validate(b)
            shots(b, "learner-b-validate")
            assert "split_heads" in report and "틀림" in report, report
            assert "transpose 를 빠뜨리지 않았나요?" in report, report
            assert "softmax" in report and "통과" in report, report
            ui.close_dialog(b)
            ui.save(b)
            ui.submit(b, ASSIGNMENT)
            submitted_at = b.locator("#submitted_assignments_list .list_item").last.inner_text()
            shots(b, "learner-b-submitted")
            assert "KST" in submitted_at, submitted_at  # Asia/Seoul, not UTC

            # The instructor collects, autogrades A with formgrader's button, the class with
            # `make grade` (as the instructor), and reads B's Korean diagnosis.
            teacher.goto(formgrader)
            ui.formgrader_button(teacher, ui.formgrader_row(teacher, ASSIGNMENT), "collect")
            log = ui.autograde_in_formgrader(teacher, formgrader, ASSIGNMENT, learner_a)
            assert f"autograded/{learner_a}/{ASSIGNMENT}" in log, log
            shots(teacher, "instructor-autograded-a")
            assert "KST" in teacher.inner_text("#main-table")  # formgrader in Asia/Seoul too
            make_grade(settings)
            ui.open_submission(teacher, formgrader, ASSIGNMENT, NOTEBOOK, NAME_B)
            show_line(teacher.get_by_text(f"짐작되는 실수 [{MISTAKE}]").first)
            shots(teacher, "instructor-reads-b-diagnosis")
            staff_wall_on_the_hub(teacher, settings, learner_b)
            ui.give_manual_points(teacher, MANUAL_CELL, "1")
            shots(teacher, "instructor-graded-b-answer")
            teacher.goto(formgrader)
            row = ui.formgrader_row(teacher, ASSIGNMENT)
            ui.formgrader_button(teacher, row, "generate-feedback")
            ui.formgrader_button(
                teacher, ui.formgrader_row(teacher, ASSIGNMENT), "release-feedback"
            )
            shots(teacher, "instructor-released-feedback")

            # Learner B fetches the feedback and reads the diagnosis, no hidden test source.
            ui.fetch_feedback(b, ASSIGNMENT)
            shots(b, "learner-b-feedback-fetched")
            feedback = ui.open_feedback(b)
            feedback.get_by_text(f"짐작되는 실수 [{MISTAKE}]").first.wait_for()
            shots(b, "learner-b-reads-feedback")
            page_text = feedback.locator("body").inner_text()
            page_html = feedback.locator("html").inner_html()
            assert f"짐작되는 실수 [{MISTAKE}]" in page_text
            for secret in ("BEGIN HIDDEN TESTS", "hidden_checks", "grader_tests", "solutions"):
                assert secret not in page_html, secret

            # formgrader lists the learners by the roster's names, not "None, None".
            teacher.goto(f"{formgrader}/manage_students")
            for learner, name in ((learner_a, NAME_A), (learner_b, NAME_B)):
                row = teacher.locator("#main-table tr", has_text=learner)
                assert row.locator("td").first.inner_text().strip() == name
            assert "None, None" not in teacher.inner_text("#main-table")
            shots(teacher, "instructor-students-by-name")
        finally:
            browser.close()
            listener.close()
    assert listener.hits == [], listener.hits  # no script of B's ran for the instructor
    assert list(settings.home(instructor).rglob("pwned_*")) == []

    # The gradebook: A lost nothing; B lost exactly the cells the catalog declares.
    (entry,) = [e for e in mistakes.catalog.mistakes if e.key == MISTAKE]
    scores = CourseHarness(settings.course_root).scores(ASSIGNMENT)
    full = CourseHarness(settings.course_root).max_scores(ASSIGNMENT)
    lost_a = {cell for cell, score in scores[learner_a].items() if score != full[cell]}
    lost_b = {cell for cell, score in scores[learner_b].items() if score != full[cell]}
    assert lost_a <= {MANUAL_CELL}, lost_a
    assert lost_b - {MANUAL_CELL} == entry.fails, lost_b
    with Course(settings.course_root).gradebook() as gb:
        assert gb.find_grade(MANUAL_CELL, NOTEBOOK, ASSIGNMENT, learner_b).manual_score == 1
        total_b = gb.find_submission(ASSIGNMENT, learner_b).score

    # `make export ARGS="--to canvas"` in the instructor's course copy: B's row has B's
    # name, LMS id, email and points (manual grade included).
    canvas = export_canvas(settings)
    header, possible, *rows = canvas
    column = header.index(ASSIGNMENT)
    (row_b,) = [row for row in rows if row[2] == "10502"]
    assert row_b[:4] == [NAME_B, "", "10502", "seoyeon@example.ac.kr"]
    assert float(row_b[column]) == pytest.approx(total_b)
    assert float(possible[column]) == sum(full.values())


def staff_wall_on_the_hub(teacher, settings: HubSettings, learner: str) -> None:
    """On the instructor's formgrader through the hub (/user/<instructor>/formgrader/...),
    at `learner`'s submission page: its policy, MathJax, and the files beside the notebook
    (under the names they have in autograded/) sent as downloads with the inert policy."""
    submission = teacher.url.split("?")[0].rstrip("/") + "/"
    response = teacher.reload()
    csp = response.headers["content-security-policy"]
    scripts = csp.split("script-src ")[1].split(";")[0]
    prefix = f"/user/{settings.instructor}/"
    assert f"{prefix}formgrader/static/ " in scripts, csp
    assert f"{prefix}static/jupyter_server_mathjax/ " in scripts, csp
    assert "'unsafe-inline'" not in scripts and "'unsafe-eval'" not in scripts, csp
    # The course's two display formulas, typeset by the server's own MathJax.
    teacher.wait_for_function(
        "() => document.querySelectorAll('div.MathJax_Display, mjx-container').length >= 2",
        timeout=60_000,
    )
    names = beside(settings.course_root / "autograded" / learner / ASSIGNMENT)
    assert names, "B's file beside the notebook did not reach autograded/"
    for name in names:
        sent = teacher.request.get(submission + name)
        assert sent.headers["content-security-policy"] == INERT, name
        assert sent.headers["content-disposition"] == "attachment", name
    shown = open_files(teacher.context, [submission + name for name in names])
    assert None not in shown.values(), shown  # each one a download, none a page
    teacher.goto(submission)
    teacher.wait_for_load_state("networkidle")


def export_canvas(settings: HubSettings) -> list[list[str]]:
    """`make export ARGS="--to canvas"`, run by the instructor's account in the course copy."""
    home = settings.home(settings.instructor)
    out = settings.course_root / "exports" / "canvas_grades.csv"
    result = subprocess.run(
        ["runuser", "-u", settings.instructor, "--", "env", f"HOME={home}",
         f"COURSE_EXCHANGE_ROOT={settings.exchange}", "make", "-s", "-C", str(REPO), "export",
         f"ARGS=--to canvas --root {settings.course_root} --out {out}"],
        capture_output=True, text=True, cwd=home, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    with open(out, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def stuck_shows(board, learner: str, shown: bool) -> None:
    """Wait until the board's stuck list of the live assignment names `learner` (or not),
    as its polls redraw it."""
    board.wait_for_function(
        "([selector, name, shown]) => "
        "document.querySelector(selector).textContent.includes(name) === shown",
        arg=[f"section[data-assignment='{LIVE_ASSIGNMENT}'] .stuck", learner, shown],
        timeout=15_000,
    )


def make_grade(settings: HubSettings, assignment: str = ASSIGNMENT, graded: str = "2/2") -> str:
    """`make grade` for the class, run by the instructor's account in the course copy."""
    home = settings.home(settings.instructor)
    result = subprocess.run(
        ["runuser", "-u", settings.instructor, "--", "env", f"HOME={home}",
         f"COURSE_EXCHANGE_ROOT={settings.exchange}", "make", "-C", str(REPO), "grade",
         f"ARGS=--root {settings.course_root} {assignment}"],
        capture_output=True, text=True, cwd=home, timeout=600,
    )  # fmt: skip
    print(result.stdout[-3000:])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert graded in result.stdout, result.stdout[-3000:]
    return result.stdout


# -- the live workshop: graded on submit, the TA board -------------------------------------


def refresh_submissions(page, assignment: str, count: int) -> None:
    """The Assignments tab, refreshed (its own button) until it lists `count` submissions:
    it does not know of what the panel's button submitted until then."""
    ui.open_assignment_list(page)
    page.locator("#refresh_assignments_list").click()
    ui.submissions(page, assignment).nth(count - 1).wait_for(timeout=60_000)
    assert ui.submissions(page, assignment).count() == count


def panel_function(page, name: str):
    """The panel's row of one function of the newest attempt."""
    named = page.locator(".ck-name", has_text=re.compile(f"^{re.escape(name)}$"))
    return page.locator(f"{PANEL} .ck-last .ck-function").filter(has=named)


def shown_time(iso: str) -> str:
    """A time as the live service's note writes it (Asia/Seoul, the class's zone)."""
    when = datetime.fromisoformat(iso).astimezone(ZoneInfo("Asia/Seoul"))
    return when.strftime("%Y-%m-%d %H:%M:%S")


def test_the_live_workshop_on_the_hub(hub):
    """The hub's live service (`make hub`'s default) in a workshop, through the pages:

    the instructor releases ch4 → the TA opens the board's bookmark (the hub's login,
    no server of the TA's own) → learner A submits a catalogued split_heads mistake with
    the notebook's 제출하고 채점 받기 button and reads, within PANEL_BOUND, split_heads
    0 / N and the misconception in the 채점 결과 panel; presses again inside the interval
    and reads in the panel when the next graded attempt can be → stock Fetch Feedback
    still brings the first one's Korean diagnosis and the second one's note (kept,
    graded again from …) → the board shows A failing split_heads with the
    misconception, without a reload → while A waits out the interval, learner B's login
    gets 403 on the board and B submits with the button → A submits the same mistake
    after the interval: the board shows A stuck → A types the fix: full automatic marks
    in the panel with every attempt listed, and on the page, and the board shows A
    passing, not stuck; B's panel still lists B's own attempt only → `make grade` grades
    the counted attempts (A's last, B's): A's gradebook has every point of the
    auto-graded cells."""
    from playwright.sync_api import sync_playwright

    settings, passwords = hub
    base, instructor = settings.url, settings.instructor
    (ta,), (learner_a, learner_b) = settings.ta_names, settings.learner_names
    release_nb = REPO / "release" / LIVE_ASSIGNMENT / f"{LIVE_NOTEBOOK}.ipynb"
    live_reference = importlib.import_module(f"solutions.{LIVE_ASSIGNMENT}")
    live_mistakes = importlib.import_module(f"catalog.{LIVE_ASSIGNMENT}")
    correct = {name: getattr(live_reference, name) for name in live_reference.__all__}
    wrong_split = getattr(live_mistakes, f"split_heads__{MISTAKE}")
    typed_wrong = answered_cells(release_nb, {**correct, "split_heads": wrong_split})
    typed_fix = answered_cells(release_nb, correct)["split_heads"]
    shots = ui.Shots(SHOTS.parent / "hub-live")
    shutil.rmtree(shots.folder, ignore_errors=True)
    shots.folder.mkdir(parents=True)
    panel_shots = ui.Shots(SHOTS.parent / "hub-panel")
    shutil.rmtree(panel_shots.folder, ignore_errors=True)
    panel_shots.folder.mkdir(parents=True)

    def records() -> list[attempts.Attempt]:
        return attempts.of_learner(settings.course_root, LIVE_ASSIGNMENT, learner_a)

    def wait_for_records(count: int, timeout: float = 120) -> list[attempts.Attempt]:
        """The service's records of A's attempts (it writes each one last, when handled)."""
        deadline = time.monotonic() + timeout
        while len(found := records()) < count:
            assert time.monotonic() < deadline, f"{len(found)} of {count} attempts handled"
            time.sleep(0.5)
        return found

    def after_interval(attempt: attempts.Attempt) -> None:
        """Wait until a submit is graded again (the exchange's time of the last graded)."""
        start = datetime.fromisoformat(attempt.submitted_at).timestamp()
        time.sleep(max(0.0, start + LIVE_INTERVAL + 1 - time.time()))

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            teacher = ui.log_in(browser, base, instructor, passwords[instructor])
            teacher.goto(f"{base}/user/{instructor}/formgrader")
            for step in ("assign", "release"):
                ui.formgrader_button(teacher, ui.formgrader_row(teacher, LIVE_ASSIGNMENT), step)

            # The TA opens the board: the hub's login, then the board; it polls from now on.
            board = ui.log_in_to_service(browser, base, BOARD, ta, passwords[ta])
            errors = []
            board.on("console", lambda m: m.type == "error" and errors.append(m.text))
            board.evaluate("window.notReloaded = true")
            shots(board, "ta-board-opened")

            # Learner A: a split_heads mistake, submitted with the panel's button, then
            # again inside the interval.
            # A's saved workspace would reopen ch3's notebook: A starts from a clean one.
            a = ui.log_in(
                browser, base, learner_a, passwords[learner_a], LEARNER_LOCALE, clean=True
            )
            ui.fetch_and_open(a, LIVE_ASSIGNMENT, LIVE_NOTEBOOK)
            assert a.locator(".jp-NotebookPanel").count() == 1  # ch4's, and no other
            for name, text in typed_wrong.items():
                ui.replace_cell_text(a, f"def {name}(", text)
            press_submit(a, 0)  # the button saves the notebook itself
            split = panel_function(a, "split_heads")
            assert "ck-failed" in split.get_attribute("class"), split.inner_text()
            assert re.fullmatch(r"0 / [1-9]\d*", split.locator(".ck-points").inner_text())
            mistake = split.locator(".ck-mistake").inner_text()
            assert f"[{MISTAKE}]" in mistake, split.inner_text()
            panel_shots(a, "learner-a-panel-diagnosis")
            (first,) = wait_for_records(1)
            assert first.outcome == attempts.GRADED, first
            press_submit(a, 1)  # inside the interval: kept, not graded
            first, held = wait_for_records(2)
            assert held.outcome == attempts.TOO_SOON and held.next_at, held
            last = a.locator(f"{PANEL} .ck-last")
            assert last.locator(".ck-held").inner_text() == "보관했지만 채점하지 않음"
            assert shown_time(held.next_at) in last.inner_text(), last.inner_text()
            assert "부터 다시 제출하세요" in last.inner_text(), last.inner_text()
            assert a.locator(f"{PANEL} .ck-attempt").count() == 2
            panel_shots(a, "learner-a-panel-held-back")
            # Stock Fetch Feedback still brings both pages, as without the panel.
            refresh_submissions(a, LIVE_ASSIGNMENT, 2)
            ui.fetch_feedback(a, LIVE_ASSIGNMENT)
            shots(a, "learner-a-two-submits-fetched")
            # The rows are oldest first: the graded submit's page, then the held one's note.
            page = ui.open_feedback(a, 0, LIVE_ASSIGNMENT)
            show_line(page.get_by_text(f"짐작되는 실수 [{MISTAKE}]").first)
            shots(a, "learner-a-reads-live-diagnosis")
            html = page.locator("html").inner_html()
            for secret in ("BEGIN HIDDEN TESTS", "hidden_checks", "grader_tests", "solutions"):
                assert secret not in html, secret
            note = ui.open_feedback(a, 1, LIVE_ASSIGNMENT).locator("body").inner_text()
            shots(a, "learner-a-reads-the-note")
            assert f"채점은 {LIVE_INTERVAL}초에 한 번까지입니다" in note, note
            assert "부터 다시 제출하면 채점합니다" in note, note

            # The board shows A failing split_heads, the misconception, the held submit.
            section = board.locator(f"section[data-assignment='{LIVE_ASSIGNMENT}']")
            misconceptions = section.locator("table", has_text=f"[{MISTAKE}]")
            misconceptions.wait_for(timeout=15_000)
            split_row = section.locator("tr", has_text="split_heads").first
            assert learner_a in split_row.inner_text(), split_row.inner_text()
            shots(board, "ta-board-a-failing", full_page=True)

            # While A waits out the interval: a learner's login gets 403 on the board and
            # sees none of it.
            b = ui.log_in(browser, base, learner_b, passwords[learner_b], LEARNER_LOCALE)
            response = b.goto(f"{base}{BOARD}")
            assert response.status == 403, response.status
            assert learner_a not in b.locator("body").inner_text()
            shots(b, "learner-b-board-403")

            # B submits ch4 as released with the button: B's panel lists B's one attempt
            # (and, read again once A has four, none of A's).
            ui.open_clean_lab(b, base, learner_b)
            ui.fetch_and_open(b, LIVE_ASSIGNMENT, LIVE_NOTEBOOK)
            assert b.locator(".jp-NotebookPanel").count() == 1
            press_submit(b, 0)
            b_panel = b.locator(PANEL)
            assert b.locator(f"{PANEL} .ck-attempt").count() == 1
            assert b.locator(f"{PANEL} .ck-last .ck-function").count() > 0
            panel_shots(b, "learner-b-panel-own-attempt")

            # After the interval, the same mistake again: graded, and A is stuck.
            after_interval(first)
            ui.show_tab(a, f"{LIVE_NOTEBOOK}.ipynb")
            press_submit(a, 2)
            wait_for_records(3)
            stuck = section.locator(".stuck")
            stuck_shows(board, learner_a, True)
            assert "split_heads" in stuck.inner_text()
            # Failed twice in a row (c.LiveGrading.hint_after, 2): A's panel shows the
            # first hint, and the board says which hint A has seen.
            checks = importlib.import_module(f"grader_tests.{LIVE_ASSIGNMENT}").CHECKS
            first_hint = checks.hints_for("split_heads")[0]
            hints = a.locator(f"{PANEL} .ck-last .ck-hint").all_inner_texts()
            assert len(hints) == 1 and hints[0].startswith("힌트 1") and first_hint in hints[0]
            a_split = stuck.locator("tr", has_text=learner_a).filter(has_text="split_heads")
            seen_hint = a_split.locator("td.hint").inner_text()
            assert seen_hint.strip() == "힌트 1 까지", seen_hint
            panel_shots(a, "learner-a-panel-first-hint")
            shots(board, "ta-board-a-stuck", full_page=True)

            # A types the fix and submits after the interval: full marks on the page.
            graded_again = records()[-1]
            ui.show_tab(a, f"{LIVE_NOTEBOOK}.ipynb")
            ui.replace_cell_text(a, "def split_heads(", typed_fix)
            after_interval(graded_again)
            press_submit(a, 3)
            fixed = wait_for_records(4)[-1]
            assert fixed.outcome == attempts.GRADED and not fixed.failed, fixed
            points = sum(cell["points"] for cell in fixed.cells.values())
            most = sum(cell["max"] for cell in fixed.cells.values())
            assert points == most > 0, fixed.cells
            # The panel: every function's points in full, and every attempt listed.
            rows = a.locator(f"{PANEL} .ck-last .ck-function")
            assert rows.count() == len(live_reference.__all__) > 0
            assert a.locator(f"{PANEL} .ck-last .ck-function.ck-failed").count() == 0
            for text in rows.locator(".ck-points").all_inner_texts():
                got, most_points = text.split(" / ")
                assert got == most_points != "0", text
            listed = a.locator(f"{PANEL} .ck-attempt")
            assert listed.count() == 4
            assert a.locator(f"{PANEL} .ck-attempt.ck-held_back").count() == 1
            a_times = listed.locator(".ck-time").all_inner_texts()
            panel_shots(a, "learner-a-panel-full-marks")
            stuck_shows(board, learner_a, False)
            assert learner_a not in split_row.locator("td.fail").inner_text()
            assert board.evaluate("window.notReloaded === true")  # updated in place
            assert board.evaluate("window.coursekitBoard.updates") >= 4
            assert errors == [], errors  # the CSP refused nothing; no poll was refused
            shots(board, "ta-board-a-passing", full_page=True)
            refresh_submissions(a, LIVE_ASSIGNMENT, 4)
            ui.fetch_feedback(a, LIVE_ASSIGNMENT)
            texts = [
                ui.open_feedback(a, nth, LIVE_ASSIGNMENT).locator("body").inner_text()
                for nth in range(4)
            ]
            diagnosed = ("짐작되는 실수", "채점하지 않았습니다")
            clean = [t for t in texts if not any(word in t for word in diagnosed)]
            assert len(clean) == 1, texts  # the fixed attempt's page: nothing to diagnose
            shots(a, "learner-a-reads-full-marks")

            # B's panel, read again: still B's one attempt, none of A's four.
            b_text = b_panel.inner_text()
            assert b.locator(f"{PANEL} .ck-attempt").count() == 1
            assert not [t for t in a_times if t in b_text], (a_times, b_text)
        finally:
            browser.close()

    # make grade grades the counted attempts (A's last, B's one): A's auto-graded cells in full.
    make_grade(settings, LIVE_ASSIGNMENT, graded="2/2")
    scores = CourseHarness(settings.course_root).scores(LIVE_ASSIGNMENT)[learner_a]
    full = CourseHarness(settings.course_root).max_scores(LIVE_ASSIGNMENT)
    auto = set(fixed.cells)
    assert {cell: scores[cell] for cell in auto} == {cell: full[cell] for cell in auto}
