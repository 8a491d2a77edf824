"""The course as an LTI 1.3 tool, against a real LTI 1.3 platform on loopback
(tests/support/lti_platform.py: lti1p3platform, its own keys, a course, members and line
items). One hub for the module, set up as `make hub --lti CONFIG --roster-from-lms` sets
it up: the roster read from the LMS (Names and Role Provisioning), the tool's key made
once, the hub logging in by LTI launches.

Over HTTP, without a browser: a launch is refused when its id_token is signed with
another key, when it is replayed with its own cookies, when it is for another deployment,
and when its member is on no roster row (a plain page, nothing created); a learner's
account cannot read the tool's key, and a token asked for with another key is refused by
the LMS.

In Chromium (screenshots in build/screenshots/lti/): the instructor launches from the
LMS's course page into formgrader and releases ch3; a learner launches into her Korean
JupyterLab, fetches and submits. The course sets `c.LiveGrading.lti_passback`: the live
service grades the submit, and root's LTI poster posts her counted attempt's score
(PendingManual: her written answer is not graded yet), trying again while the LMS
answers 503, as the LMS's gradebook is watched; the same score handed to the poster
again posts nothing, and her own hub token (and none) is refused with 403. The
instructor collects; `make grade`; `make export ARGS="--to lti"` with the LMS down is
retried and reports what it could not post, then posts the learner who did not submit
(Initialized/NotReady) and finds her score posted already; a second run posts nothing
new. (What the poster keeps waiting while the LMS stays down: tests/test_lti_passback.py.)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import jwt
import nbformat
import pytest
import requests

import solutions.ch3_multihead as reference
from coursekit.core.course import Course
from coursekit.hub import accounts, board_service, lti_poster, trial_class
from coursekit.hub import lti as hub_lti
from coursekit.hub.settings import HubSettings
from coursekit.lms import lti, passback
from coursekit.lms.export import lti_scores
from tests.support import hub_pages as ui
from tests.support.browser import CHROMIUM, FLAGS
from tests.support.hub_answers import answered_cells
from tests.support.hub_class import everyone, one_class_at_a_time, running_hub
from tests.support.lti_platform import (
    INSTRUCTOR,
    LEARNER,
    OTHER_DEPLOYMENT,
    FakeLms,
    Member,
    new_key,
)
from tests.support.ports import free_ports

REPO = Path(__file__).resolve().parent.parent
SHOTS = REPO / "build" / "screenshots" / "lti"
ASSIGNMENT, NOTEBOOK, MANUAL_CELL = "ch3_multihead", "multihead", "why_256_answer"
WRITTEN_ANSWER = "head 를 나눠도 W_Q, W_K, W_V, W_O 는 그대로라 파라미터 수가 같습니다."
PREFIX = "tpl-"
A = Member("u-7f3a", "김 민준", "minjun@example.ac.kr", [LEARNER], "2026101")
B = Member("u-81c2", "남궁 서연", "seoyeon@example.ac.kr", [LEARNER], "2026102")
PROFESSOR = Member("u-0001", "이 교수", "prof@example.ac.kr", [INSTRUCTOR])
LATE = Member("u-9999", "박 지호", "jiho@example.ac.kr", [LEARNER], "2026199")  # joins later
NOT_ON_ROSTER = "수강생 명단에 없어서"
PASSBACK = "\nc.LiveGrading.lti_passback = True\n"
POSTED_LINE = "{learner} {assignment}: 점수를 LMS 에 올렸습니다"
LIVE_BOUND = 180  # seconds from the submit to her score in the LMS (the live service's
# cluster may still be starting on a shared CI machine)
BAD_LAUNCH = "제대로 온 요청이 아닙니다"
OPEN_FROM_LMS = "LMS 의 강의 페이지에서 다시 여세요"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the hub creates Linux accounts: root"),
    # One hub class at a time (hub_class.one_class_at_a_time): on the worker of
    # tests/test_hub_browser.py, after it, rather than waiting for its lock on the other.
    pytest.mark.xdist_group("test_hub_browser"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
    pytest.mark.hub,
    pytest.mark.browser,
    pytest.mark.root,
]


@pytest.fixture(scope="module")
def lti_class():
    """The LMS with its course, and a hub class (prefix tpl-) behind LTI whose roster
    came from the LMS, graded on submit with each counted attempt posted to the LMS."""
    tool_port = free_ports(5)  # the hub, its API, the proxy's API, the board, the poster
    with FakeLms(free_ports(1), f"http://127.0.0.1:{tool_port}", [A, B, PROFESSOR]) as lms:
        root = tempfile.mkdtemp(prefix="coursekit-lti-test-", dir="/srv")
        config = lms.tool_config()
        probe = HubSettings(root=root, port=tool_port, prefix=PREFIX, lti=config)
        learners = [vars(one) for one in hub_lti.roster_from_lms(probe)]
        key = probe.lti_dir / lti.KEY_FILE
        made = key.read_bytes()
        settings = HubSettings(
            root=root, port=tool_port, prefix=PREFIX, learners=len(learners),
            roster=learners, lti=config,
        )  # fmt: skip
        log = Path(root) / "jupyterhub.log"
        with one_class_at_a_time():  # no other hub class of this machine changes the modes
            for user in everyone(settings):
                accounts.remove_account(user)
            try:
                with running_hub(settings, log, PASSBACK):
                    assert key.read_bytes() == made, "the tool's key is made once"
                    yield lms, settings
            finally:
                SHOTS.mkdir(parents=True, exist_ok=True)
                if log.exists():
                    shutil.copy(log, SHOTS.parent / "lti-jupyterhub.log")
                trial_class.down(settings)
                assert not Path(root).exists()


def account(member: Member) -> str:
    return f"{PREFIX}{member.sourcedid}"


def hub_log(settings: HubSettings) -> str:
    return (Path(settings.root) / "jupyterhub.log").read_text(errors="replace")


def hub_users(settings: HubSettings) -> set[str]:
    db = sqlite3.connect(f"file:{settings.root}/jupyterhub.sqlite?mode=ro", uri=True)
    try:
        return {name for (name,) in db.execute("SELECT name FROM users")}
    finally:
        db.close()


def begin(lms: FakeLms, member: Member, link: str = "lab", deployment: str | None = None):
    """The LMS's launch link followed to the platform's auto-submitting form (the tool's
    OIDC login set its state and nonce cookies on the way); (session, action, form)."""
    session = requests.Session()
    params = {"user": member.user_id, "link": link}
    if deployment:
        params["deployment"] = deployment
    page = session.get(f"{lms.url}/launch", params=params, timeout=30)
    assert page.status_code == 200, page.text[:500]
    action = re.search(r'action="([^"]+)"', page.text).group(1)
    form = dict(re.findall(r'name="(id_token|state)" value="([^"]+)"', page.text))
    return session, action, form


def finish(session: requests.Session, action: str, form: dict) -> requests.Response:
    return session.post(action, data=form, allow_redirects=False, timeout=60)


def test_the_roster_came_from_the_lms_and_the_tool_serves_its_key_set(lti_class):
    lms, settings = lti_class
    assert settings.learner_names == [account(A), account(B)]
    names = {(one["last_name"], one["first_name"], one["lms_user_id"]) for one in settings.roster}
    assert names == {("김", "민준", A.user_id), ("남궁", "서연", B.user_id)}
    # The NRPS token asked for the members' scope only.
    assert lms.token_scopes[0] == [lti.SCOPE_MEMBERSHIP]
    # The registration Canvas can read asks for the scopes the tool uses, no more.
    registration = requests.get(f"{settings.url}/hub/lti13/config", timeout=10).json()
    assert registration["scopes"] == list(lti.SCOPES)
    assert registration["public_jwk_url"] == f"{settings.url}/hub/lti13/jwks"
    served = requests.get(f"{settings.url}/hub/lti13/jwks", timeout=10).json()
    key = (settings.lti_dir / lti.KEY_FILE).read_text()
    assert served == lti.tool_jwks(key)
    assert all(set(one) >= {"kty", "n", "e", "kid"} and "d" not in one for one in served["keys"])
    assert (settings.lti_dir / lti.KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert settings.lti_dir.stat().st_mode & 0o777 == 0o700


def test_a_launch_logs_in_and_a_replay_of_it_is_refused(lti_class):
    lms, settings = lti_class
    session, action, form = begin(lms, B)
    cookies = session.cookies.copy()  # the state and nonce cookies of this launch
    answer = finish(session, action, form)
    assert answer.status_code == 302, answer.text[:500]
    assert answer.headers["location"] == "/hub/user-redirect/lab"
    assert account(B) in hub_users(settings)
    # The same id_token and state, posted again with the launch's own cookies.
    replay = requests.Session()
    replay.cookies.update(cookies)
    again = finish(replay, action, form)
    assert again.status_code == 403, again.text[:500]
    assert BAD_LAUNCH in again.text
    assert "nonce used before" in hub_log(settings)  # the hub's own check, not a cookie's


def test_the_hub_opened_without_the_lms_says_where_to_open_it(lti_class):
    _, settings = lti_class
    login = requests.get(f"{settings.url}/hub/login", timeout=30)
    assert login.status_code == 200 and "/hub/lti13/oauth_login" in login.text
    # Its button: the login initiation without the LMS's parameters.
    page = requests.get(f"{settings.url}/hub/lti13/oauth_login", timeout=30)
    assert page.status_code == 400 and OPEN_FROM_LMS in page.text, page.text[:500]


def test_a_forged_id_token_is_refused(lti_class):
    lms, _settings = lti_class
    session, action, form = begin(lms, A)
    claims = jwt.decode(form["id_token"], options={"verify_signature": False})
    header = jwt.get_unverified_header(form["id_token"])
    other_key, _ = new_key()
    forged = jwt.encode(claims, other_key, algorithm="RS256", headers={"kid": header["kid"]})
    answer = finish(session, action, {**form, "id_token": forged})
    assert answer.status_code in (400, 401), answer.text[:500]
    assert BAD_LAUNCH in answer.text and 'lang="ko"' in answer.text
    # Its claims changed under the platform's own signature: refused as well.
    claims["sub"] = PROFESSOR.user_id
    tampered = form["id_token"].split(".")
    body = jwt.utils.base64url_encode(json.dumps(claims).encode()).decode()
    session, action, form = begin(lms, A)
    answer = finish(session, action, {**form, "id_token": f"{tampered[0]}.{body}.{tampered[2]}"})
    assert answer.status_code in (400, 401), answer.text[:500]


def test_a_launch_for_another_deployment_is_refused(lti_class):
    lms, settings = lti_class
    session, action, form = begin(lms, A, deployment=OTHER_DEPLOYMENT)
    answer = finish(session, action, form)
    assert answer.status_code == 403, answer.text[:500]
    assert BAD_LAUNCH in answer.text
    assert f"deployment '{OTHER_DEPLOYMENT}' refused" in hub_log(settings)


def test_a_member_on_no_roster_row_is_refused_and_nothing_is_made(lti_class):
    lms, settings = lti_class
    lms.members.append(LATE)  # joined the LMS course after the roster was read
    try:
        session, action, form = begin(lms, LATE)
        answer = finish(session, action, form)
    finally:
        lms.members.remove(LATE)
    assert answer.status_code == 403, answer.text[:500]
    assert NOT_ON_ROSTER in answer.text
    assert not {account(LATE), LATE.email, LATE.user_id} & hub_users(settings)
    assert not accounts.exists(account(LATE))


def test_a_learner_cannot_post_a_grade(lti_class):
    lms, settings = lti_class
    key = settings.lti_dir / lti.KEY_FILE
    learner = account(A)
    read = subprocess.run(["runuser", "-u", learner, "--", "cat", str(key)], capture_output=True)
    assert read.returncode != 0 and not read.stdout
    # A token asked for with any other key (a learner's own) is refused by the LMS.
    config = lti.LtiConfig.from_dict(settings.lti)
    conn = lti.connector(config, new_key()[0])
    with pytest.raises(lti.LtiServiceException):
        conn.get_access_token([lti.SCOPE_SCORE])
    assert any(line.startswith("token:") for line in lms.refused)


def make(settings: HubSettings, user: str, target: str, args: str) -> subprocess.CompletedProcess:
    home = settings.home(user) if user != "root" else Path("/root")
    prefix = ["runuser", "-u", user, "--"] if user != "root" else []
    return subprocess.run(
        [*prefix, "env", f"HOME={home}", f"COURSE_EXCHANGE_ROOT={settings.exchange}",
         "make", "-s", "-C", str(REPO), target, f"ARGS={args}"],
        capture_output=True, text=True, cwd=home, timeout=600,
    )  # fmt: skip


def launch_in_browser(browser, lms: FakeLms, member: Member, link: str):
    page = ui.new_page(browser)
    page.goto(f"{lms.url}/course")
    selector = "a.launch" if link == "lab" else "a.launch-fg"
    page.locator(f"{selector}[data-user='{member.user_id}']").click()
    return page


def test_from_the_lms_to_jupyterlab_and_the_score_back(lti_class):
    from playwright.sync_api import sync_playwright

    lms, settings = lti_class
    instructor, learner = settings.instructor, account(A)
    shutil.rmtree(SHOTS, ignore_errors=True)
    shots = ui.Shots(SHOTS)
    base = settings.url
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            # The instructor's launch opens formgrader; ch3 is released there.
            teacher = launch_in_browser(browser, lms, PROFESSOR, "formgrader")
            teacher.wait_for_url(f"{base}/user/{instructor}/formgrader**", timeout=ui.LONG)
            ui.formgrader_button(teacher, ui.formgrader_row(teacher, ASSIGNMENT), "assign")
            ui.formgrader_button(teacher, ui.formgrader_row(teacher, ASSIGNMENT), "release")
            shots(teacher, "instructor-launched-into-formgrader")

            # Learner A's launch: her own JupyterLab, in Korean.
            a = launch_in_browser(browser, lms, A, "lab")
            a.wait_for_url(f"{base}/user/{learner}/lab**", timeout=ui.LONG)
            a.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for(timeout=ui.LONG)
            assert ui.menu_bar(a)[:2] == ["파일", "편집"], ui.menu_bar(a)
            shots(a, "learner-launched-into-jupyterlab")
            ui.open_assignment_list(a)
            released = a.locator("#released_assignments_list .list_item", has_text=ASSIGNMENT)
            released.locator("button", has_text="Fetch").click()
            a.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT).first.wait_for(
                timeout=ui.LONG
            )
            # Her answers, saved in the fetched notebook as her own account would.
            answer_notebook(settings, learner)
            lms.down = 2  # the LMS answers 503 twice: the poster tries again (1 s, 2 s)
            ui.submit(a, ASSIGNMENT)
            shots(a, "learner-submitted")

            # Graded on submit, and her counted attempt's score posted by root's poster.
            line = POSTED_LINE.format(learner=learner, assignment=ASSIGNMENT)
            mine = wait_for_live_score(lms, settings, A, line)
            assert "LTI: the LMS did not answer (HTTP 503); again in 1 s" in hub_log(settings)
            assert (mine["activityProgress"], mine["gradingProgress"]) == (
                "Submitted",
                "PendingManual",
            )
            assert len(lms.score_posts) == 1
            with Course(settings.course_root).gradebook() as gb:
                maximum = gb.find_assignment(ASSIGNMENT).max_score
                (live,) = lti_scores(gb, [(ASSIGNMENT, maximum)], [learner])
            assert mine["scoreGiven"] == pytest.approx(live.score) and live.score > 0
            poster = f"{lti_poster.url(settings)}/scores"
            # Full marks in her name, with her own hub token (her code reads it from its
            # environment), and with none: refused, nothing posted.
            forged = [passback.to_wire(replace(live, score=maximum))]
            for token in (hub_token(JUPYTERHUB_USER=learner), ""):
                headers = {"Authorization": f"token {token}"} if token else {}
                answer = requests.post(poster, json=forged, headers=headers, timeout=30)
                assert answer.status_code == 403, answer.text[:300]
            assert "LTI poster: refused (user " + learner in hub_log(settings)
            # The live service's own token: the same score again posts nothing.
            service = hub_token(JUPYTERHUB_SERVICE_NAME=board_service.SERVICE)
            headers = {"Authorization": f"token {service}"}
            again = requests.post(
                poster, json=[passback.to_wire(live)], headers=headers, timeout=120
            )
            assert again.status_code == 200, again.text[:300]
            assert again.json()["unchanged"] == [[ASSIGNMENT, learner]]
            assert len(lms.score_posts) == 1

            # A member the roster does not know: the plain Korean page.
            late = launch_in_browser_late(browser, lms)
            assert NOT_ON_ROSTER in late.inner_text("body")
            shots(late, "unknown-member-refused")

            teacher.goto(f"{base}/user/{instructor}/formgrader")
            ui.formgrader_button(teacher, ui.formgrader_row(teacher, ASSIGNMENT), "collect")
            graded = make(
                settings, instructor, "grade", f"--root {settings.course_root} {ASSIGNMENT}"
            )
            assert graded.returncode == 0 and "1/1" in graded.stdout, graded.stdout + graded.stderr

            export = f"--to lti --root {settings.course_root} --lti-dir {settings.lti_dir}"
            # The LMS down for the whole run: retried, then every score listed as not posted.
            lms.down = 1000
            down = make(settings, "root", "export", f"{export} --retry-delays 0.1,0.2")
            lms.down = 0
            # make's own status is 2 when the command's is 1.
            assert down.returncode != 0 and "Error 1" in down.stderr, down.stdout + down.stderr
            assert "did not answer (HTTP 503); again in 0.1 s" in down.stdout
            assert f"{ASSIGNMENT}: line item" in down.stdout and "not posted" in down.stdout
            assert len(lms.score_posts) == 1  # the live one only
            # Down for two requests: retried, and B's posted; A's is there already (the
            # live post's ledger).
            lms.down = 2
            up = make(settings, "root", "export", f"{export} --retry-delays 0.1,0.2,0.4")
            assert up.returncode == 0, up.stdout + up.stderr
            assert "again in" in up.stdout and "1 scores posted, 1 unchanged" in up.stdout, (
                up.stdout
            )
            posted = len(lms.score_posts)
            assert posted == 2

            with Course(settings.course_root).gradebook() as gb:
                score = gb.find_submission(ASSIGNMENT, learner).score
                maximum = gb.find_assignment(ASSIGNMENT).max_score
            assert score > 0
            (item,) = [i for i in lms.lineitems.values() if i["tag"] == ASSIGNMENT]
            assert item["scoreMaximum"] == maximum
            mine = lms.scores[item["id"]][A.user_id]
            assert mine["scoreGiven"] == pytest.approx(score)
            assert (mine["activityProgress"], mine["gradingProgress"]) == (
                "Submitted",
                "PendingManual",
            )
            hers = lms.scores[item["id"]][B.user_id]
            assert "scoreGiven" not in hers
            assert (hers["activityProgress"], hers["gradingProgress"]) == (
                "Initialized",
                "NotReady",
            )
            # The AGS token asked for line items and scores, nothing more.
            assert lms.token_scopes[-1] == sorted([lti.SCOPE_LINEITEM, lti.SCOPE_SCORE])
            # A second run: nothing new is posted, no second line item made.
            again = make(settings, "root", "export", export)
            assert again.returncode == 0 and "0 scores posted, 2 unchanged" in again.stdout, (
                again.stdout
            )
            assert len(lms.score_posts) == posted and len(lms.lineitems) == 1

            book = ui.new_page(browser)
            book.goto(f"{lms.url}/gradebook")
            assert book.locator(f"tr[data-user='{A.user_id}'] .score").inner_text() == str(
                mine["scoreGiven"]
            )
            shots(book, "lms-gradebook")
            # Nothing of root's is left in the instructor's course copy.
            leftovers = [p for p in settings.course_root.rglob("*") if p.stat().st_uid == 0]
            assert not leftovers, leftovers
        finally:
            browser.close()


def wait_for_live_score(lms: FakeLms, settings: HubSettings, member: Member, line: str) -> dict:
    """The member's score in the LMS's gradebook and the live service's line saying so,
    within LIVE_BOUND seconds of the submit."""
    deadline = time.monotonic() + LIVE_BOUND
    while time.monotonic() < deadline:
        found = [one[member.user_id] for one in lms.scores.values() if member.user_id in one]
        if found and line in hub_log(settings):
            return found[0]
        time.sleep(0.5)
    raise AssertionError(f"no live score in the LMS:\n{hub_log(settings)[-4000:]}")


def hub_token(**wanted: str) -> str:
    """The hub token in the environment of a process whose environment has `wanted`
    (a learner's server: JUPYTERHUB_USER; the live service: JUPYTERHUB_SERVICE_NAME)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            raw = (proc / "environ").read_bytes().decode(errors="replace")
        except OSError:
            continue
        env = dict(one.split("=", 1) for one in raw.split("\0") if "=" in one)
        if env.get("JUPYTERHUB_API_TOKEN") and all(env.get(k) == v for k, v in wanted.items()):
            return env["JUPYTERHUB_API_TOKEN"]
    raise AssertionError(f"no process with {wanted}")


def launch_in_browser_late(browser, lms: FakeLms):
    lms.members.append(LATE)
    try:
        page = launch_in_browser(browser, lms, LATE, "lab")
        page.locator("#refusal").wait_for()
        return page
    finally:
        lms.members.remove(LATE)


def answer_notebook(settings: HubSettings, learner: str) -> None:
    """The reference bodies typed into her fetched notebook (tests/support/hub_answers)."""
    (path,) = list(settings.home(learner).rglob(f"{ASSIGNMENT}/{NOTEBOOK}.ipynb"))
    typed = answered_cells(path, {name: getattr(reference, name) for name in reference.__all__})
    notebook = nbformat.read(path, as_version=4)
    from coursekit.core import cells

    for cell in notebook.cells:
        if cells.is_code_answer(cell):
            cell.source = typed[cells.defined_function(cell.source)]
        elif cell.metadata.get("nbgrader", {}).get("grade_id") == MANUAL_CELL:
            cell.source = WRITTEN_ANSWER  # for a TA to grade: PendingManual until then
    stat = path.stat()
    nbformat.write(notebook, path)
    os.chown(path, stat.st_uid, stat.st_gid)


def test_a_bad_member_stops_make_hub_roster_from_lms(tmp_path):
    """`make hub --lti CONFIG --roster-from-lms`: one bad member, every problem listed,
    nothing made (as a bad roster CSV)."""
    bad = Member("u-bad", "<script>", "x@example.ac.kr", [LEARNER], "../etc")
    tool_port = free_ports(4)
    with FakeLms(free_ports(1), f"http://127.0.0.1:{tool_port}", [A, bad, PROFESSOR]) as lms:
        config = tmp_path / "lti.json"
        config.write_text(json.dumps(lms.tool_config()))
        root = tmp_path / "hub"
        result = subprocess.run(
            [sys.executable, "-m", "coursekit.hub", "setup", "--root", str(root),
             "--port", str(tool_port), "--prefix", "tpb-", "--lti", str(config),
             "--roster-from-lms"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert "nothing was created" in result.stderr
    assert "id '../etc'" in result.stderr and "'<'" in result.stderr, result.stderr
    assert "LMS member u-bad" in result.stderr
    assert not accounts.exists(f"tpb-{A.sourcedid}")
    assert not (root / "hub.json").exists()
    # --lti without a roster: no launch could log in, so make hub says so and stops.
    bare = subprocess.run(
        [sys.executable, "-m", "coursekit.hub", "setup", "--root", str(root),
         "--port", str(tool_port), "--prefix", "tpb-", "--lti", str(config)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert bare.returncode == 2 and "--lti needs --roster FILE or --roster-from-lms" in bare.stderr
    assert not (root / "hub.json").exists()
