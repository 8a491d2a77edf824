"""The TA live board (coursekit/live/board.py, board_server.py) on hand-written attempt records.

The data: pass and fail per function on each learner's last graded attempt, stuck
after `stuck_after` failures in a row (and not before), a fix that moves a learner
from stuck to passing, the misconceptions seen, unknown mistakes grouped by their
probe output, held-back submits shown as such. The server: 403 without the token's
cookie, the CSP on every response, a learner's name as text. Then headless Chromium
opens the board, the test writes a new record, and the same page (no reload) shows it.
Screenshots in build/screenshots/live_board/.
"""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from http.cookiejar import CookieJar
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from coursekit.checks.core import NOT_IMPLEMENTED
from coursekit.checks.verdict import MISMATCH, RAISED, Verdict
from coursekit.hub.board_service import SERVICE
from coursekit.live import attempts, board, board_server
from coursekit.live.attempts import GRADED, TOO_MANY, TOO_SOON, Attempt
from tests.support.browser import CHROMIUM, FLAGS, MISSING

pytestmark = [pytest.mark.xdist_group("live_board"), pytest.mark.browser]

REPO = Path(__file__).resolve().parent.parent
SHOTS = REPO / "build" / "screenshots" / "live_board"
ASSIGNMENT = "ch3_multihead"
# grade id -> function, as the source notebook says (two functions, two cells each)
CELLS = {
    "split_heads_seed": "split_heads",
    "split_heads_random_shapes": "split_heads",
    "softmax_seed_values": "softmax",
    "softmax_random_shapes": "softmax",
}
FUNCTIONS = {ASSIGNMENT: CELLS}
START = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
COURSE_ZONE = "Asia/Seoul"  # the served course's; the browser runs in another (BROWSER_ZONE)
BROWSER_ZONE = "America/Los_Angeles"
HOSTILE = '<img src=x onerror="document.title=1">'


def verdict(function: str, *, key=None, digest="d1", seed=7, error=None) -> dict:
    """A failed hidden check's record as the grader stores it (coursekit.checks.verdict)."""
    misconception = {"key": key, "title": f"title of {key}", "advice": "…"} if key else None
    probe = {"digest": digest, "agrees": False, "summary": f"output {digest}"}
    if error:
        probe = {"digest": f"error:{error}", "agrees": False, "summary": "", "error": error}
    return Verdict(
        function,
        "random shapes",
        RAISED if error else MISMATCH,
        total=3,
        failed=1,
        case={"label": "random shapes", "seed": seed, "arguments": []},
        error={"type": error, "message": ""} if error else None,
        misconception=misconception,
        assignment=ASSIGNMENT,
        grade_id=f"{function}_random_shapes",
        probe=probe,
    ).to_record()


def attempt(learner: str, minute: int, *, fails=(), outcome=GRADED, **verdict_of) -> Attempt:
    """A record at START + `minute`: `fails` are the functions that lose their random cell
    (with `verdict_of[function]`'s verdict keywords)."""
    submitted = START + timedelta(minutes=minute)
    record = Attempt(learner, ASSIGNMENT, f"{learner}+{ASSIGNMENT}+{minute}", submitted.isoformat())
    record.graded_at, record.outcome = submitted.isoformat(), outcome
    if outcome in (TOO_SOON, TOO_MANY):
        if outcome == TOO_SOON:
            record.next_at = (submitted + timedelta(minutes=1)).isoformat()
        return record
    for cell, function in CELLS.items():
        lost = function in fails and cell.endswith("random_shapes")
        record.cells[cell] = {"points": 0.0 if lost else 1.0, "max": 1.0}
        if lost:
            record.failed[cell] = verdict(function, **verdict_of.get(function, {}))
    return record


def the_board(records, stuck_after=3) -> board.AssignmentBoard:
    (only,) = board.board(records, FUNCTIONS, stuck_after)
    return only


def counts(b: board.AssignmentBoard) -> dict[str, tuple[list, list]]:
    return {c.function: (c.passing, c.failing) for c in b.functions}


# -- the data ----------------------------------------------------------------


def test_pass_and_fail_per_function_count_the_last_graded_attempt():
    records = [
        attempt("ann", 0, fails=["split_heads"]),
        attempt("ann", 2),  # fixed
        attempt("bob", 0),
        attempt("bob", 2, fails=["softmax"]),  # broke softmax since
        attempt("cy", 1, fails=["split_heads", "softmax"]),
    ]
    b = the_board(records)
    assert b.learners == 3
    assert counts(b) == {
        "split_heads": (["ann", "bob"], ["cy"]),
        "softmax": (["ann"], ["bob", "cy"]),
    }
    last = {row.learner: row for row in b.last}
    assert (last["bob"].points, last["bob"].max, last["bob"].failing) == (3.0, 4.0, ["softmax"])
    assert last["cy"].failing == ["split_heads", "softmax"]
    assert last["cy"].seeds == {"split_heads": 7, "softmax": 7}


def test_stuck_after_three_failures_in_a_row_and_not_after_two():
    two = [attempt("ann", m, fails=["split_heads"]) for m in (0, 2)]
    assert the_board(two).stuck == []
    three = [*two, attempt("ann", 4, fails=["split_heads", "softmax"])]
    (stuck,) = the_board(three).stuck
    assert (stuck.learner, stuck.function, stuck.attempts) == ("ann", "split_heads", 3)
    assert the_board(three, stuck_after=4).stuck == []
    broken = [two[0], attempt("ann", 1), *two[1:], three[-1]]  # a pass breaks the run
    assert the_board(broken).stuck == []


def test_a_function_left_as_released_is_not_one_a_learner_is_stuck_on():
    stub = {"softmax": {"error": "NotImplementedError"}}
    untouched = [attempt("ann", m, fails=["split_heads", "softmax"], **stub) for m in (0, 2, 4)]
    assert [s.function for s in the_board(untouched).stuck] == ["split_heads"]
    assert counts(the_board(untouched))["softmax"] == ([], ["ann"])  # it still fails
    # begun and failing since: its run starts at the first real failure
    begun = [*untouched, *(attempt("ann", m, fails=["softmax"]) for m in (6, 8))]
    assert the_board(begun).stuck == []
    (stuck,) = the_board([*begun, attempt("ann", 10, fails=["softmax"])]).stuck
    assert (stuck.function, stuck.attempts) == ("softmax", 3)


def test_a_fix_moves_a_stuck_learner_to_passing():
    stuck = [attempt("ann", m, fails=["split_heads"]) for m in (0, 2, 4)]
    assert [s.learner for s in the_board(stuck).stuck] == ["ann"]
    fixed = the_board([*stuck, attempt("ann", 6)])
    assert fixed.stuck == []
    assert counts(fixed)["split_heads"] == (["ann"], [])


def test_misconceptions_and_unknown_mistakes_with_their_learners():
    known = {"split_heads": {"key": "reshape_without_transpose"}}
    stub = {"key": NOT_IMPLEMENTED.key}
    records = [
        attempt("ann", 0, fails=["split_heads"], **known),
        attempt("bob", 0, fails=["split_heads"], **known),
        attempt("cy", 0, fails=["softmax"], softmax={"digest": "same"}),
        attempt("dee", 0, fails=["softmax"], softmax={"digest": "same"}),
        attempt("eve", 0, fails=["softmax"], softmax={"digest": "other"}),
        attempt("fay", 0, fails=["softmax"], softmax={"error": "NotImplementedError"}),
        # a stub left as released, as the grader records it: named not_implemented
        attempt("gus", 0, fails=["softmax"], softmax={"error": "NotImplementedError", **stub}),
    ]
    b = the_board(records)
    (seen,) = b.misconceptions
    assert (seen.function, seen.key, seen.learners) == (
        "split_heads",
        "reshape_without_transpose",
        ["ann", "bob"],
    )
    assert seen.title == "title of reshape_without_transpose"
    unknown = [(u.function, u.key, u.learners) for u in b.unknown]
    # the catalogued mistake is no unknown one, and a stub left as released is no mistake
    assert unknown == [("softmax", "same", ["cy", "dee"]), ("softmax", "other", ["eve"])]


def test_held_back_submits_are_shown_as_such_and_change_no_count():
    records = [
        attempt("ann", 0, fails=["softmax"]),
        attempt("ann", 0, outcome=TOO_SOON),
        attempt("bob", 0, outcome=TOO_MANY),
    ]
    b = the_board(records)
    assert counts(b)["softmax"] == ([], ["ann"])  # bob has no graded attempt: counted nowhere
    last = {row.learner: row for row in b.last}
    assert last["ann"].outcome == TOO_SOON and last["ann"].points is None
    assert last["ann"].next_at == (START + timedelta(minutes=1)).isoformat()
    assert last["ann"].failing == ["softmax"]  # still the last graded attempt's
    assert last["bob"].outcome == TOO_MANY and last["bob"].failing is None  # never graded
    assert last["ann"].outcome_label != last["ann"].outcome  # words, not the record's code


# -- the server --------------------------------------------------------------


@pytest.fixture
def served(tmp_path):
    """A course root of its config (stuck_after) and ch3's source notebook (which cell tests
    which function), and the board on loopback."""
    (tmp_path / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.LiveBoard.stuck_after = 2\nc.CourseKit.timezone = {COURSE_ZONE!r}\n",
        encoding="utf-8",
    )
    shutil.copytree(REPO / "source" / ASSIGNMENT, tmp_path / "source" / ASSIGNMENT)
    thread = board_server.start(tmp_path)
    yield tmp_path, thread
    thread.stop()
    thread.join(10)


def opener():
    jar = CookieJar()
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar)), jar


def status_of(open_, url, headers=None):
    try:
        with open_(urllib.request.Request(url, headers=headers or {}), timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_without_the_token_every_request_is_403_with_the_policy(served):
    _root, thread = served
    base = f"http://127.0.0.1:{thread.port}/"
    assert thread.url.startswith(base + "?token=")
    plain = urllib.request.build_opener().open
    for path in ("", "board.json", "static/board.js", "?token=wrong", "nothing"):
        code, headers, _body = status_of(plain, base + path)
        assert code in (403, 404), path
        assert code == 403 or path == "nothing"
        assert headers["Content-Security-Policy"] == board_server.CSP, path


def test_the_token_gives_a_strict_cookie_and_the_pages(served):
    root, thread = served
    open_, jar = opener()
    code, headers, page = status_of(open_.open, thread.url)
    assert code == 200, page
    (cookie,) = list(jar)
    assert cookie.name == board_server.COOKIE
    assert cookie.has_nonstandard_attr("HttpOnly")
    assert cookie.get_nonstandard_attr("SameSite") == "Strict"
    assert b"<script" not in page and b'http-equiv="refresh" content="0; url=/"' in page
    base = f"http://127.0.0.1:{thread.port}/"
    code, headers, page = status_of(open_.open, base)  # where the token page moves on to
    assert code == 200 and b"static/board.js" in page
    assert headers["Content-Security-Policy"] == board_server.CSP
    for path in ("board.json", "static/board.js", "static/board.css"):
        code, headers, _body = status_of(open_.open, base + path)
        assert code == 200, path
        assert headers["Content-Security-Policy"] == board_server.CSP
    code, headers, body = status_of(open_.open, base + "board.json")
    assert json.loads(body) == {"assignments": [], "stuck_after": 2}  # the course's config
    etag = headers["Etag"]
    code, _h, _b = status_of(open_.open, base + "board.json", {"If-None-Match": etag})
    assert code == 304
    attempts.write(root, attempt(HOSTILE, 0, fails=["softmax"]))
    code, headers, body = status_of(open_.open, base + "board.json", {"If-None-Match": etag})
    assert code == 200 and headers["Etag"] != etag
    (shown,) = json.loads(body)["assignments"]
    assert shown["last"][0]["learner"] == HOSTILE  # data; the script writes it as text


def test_the_script_writes_text_only():
    script = (REPO / "coursekit" / "live" / "static" / "board.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script


# -- in a real browser -------------------------------------------------------


def wait_for_text(page, text: str, seconds: float = 10.0) -> None:
    """The board shows `text` within `seconds` (the issue's bound), polled by the page."""
    page.wait_for_function(
        "text => document.getElementById('board').textContent.includes(text)",
        arg=text,
        timeout=seconds * 1000,
    )


def test_the_board_in_chromium_updates_without_a_reload(served):
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), MISSING
    root, thread = served
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    for minute in (0, 2):
        attempts.write(root, attempt("ann", minute, fails=["split_heads"]))
    attempts.write(root, attempt(HOSTILE, 0, fails=["softmax"], softmax={"digest": "x"}))
    attempts.write(root, attempt("bob", 0, outcome=TOO_SOON))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            page = browser.new_page(
                viewport={"width": 1200, "height": 1000}, timezone_id=BROWSER_ZONE
            )
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(thread.url)
            page.wait_for_url(f"http://127.0.0.1:{thread.port}/")  # the token left the address
            wait_for_text(page, HOSTILE)
            assert page.locator("#board img").count() == 0  # the name is text, not an element
            assert page.title() != "1"
            # stuck_after = 2 in this course's config
            assert "ann" in page.locator(".stuck").inner_text()
            page.screenshot(path=str(SHOTS / "01-board.png"), full_page=True)
            page.evaluate("window.sameDocument = true")
            updates = page.evaluate("window.coursekitBoard.updates")
            attempts.write(root, attempt("ann", 4))  # ann fixes split_heads
            attempts.write(root, attempt("dan", 5, fails=["softmax"]))
            wait_for_text(page, "dan")
            assert page.evaluate("window.sameDocument") is True  # no reload, no navigation
            assert page.evaluate("window.coursekitBoard.updates") > updates
            assert "ann" not in page.locator(".stuck").inner_text()  # no longer stuck
            # dan's submit, 10:05 UTC, as the course's clock reads it, not the browser's
            dan = page.locator("tr", has_text="dan").last.inner_text()
            course_time = (START + timedelta(minutes=5)).astimezone(ZoneInfo(COURSE_ZONE))
            browser_time = (START + timedelta(minutes=5)).astimezone(ZoneInfo(BROWSER_ZONE))
            assert course_time.strftime("%H:%M:%S") in dan, dan
            assert browser_time.strftime("%H:%M:%S") not in dan, dan
            page.screenshot(path=str(SHOTS / "02-after-a-new-record.png"), full_page=True)
            assert errors == []  # the CSP refused nothing the page needs
        finally:
            browser.close()


# -- on the hub (the config; tests/test_hub_browser.py runs it on a real hub) ----


def test_the_hub_runs_the_board_as_the_instructor_for_the_instructor_and_tas_only(
    tmp_path, monkeypatch
):
    from jupyterhub.scopes import _check_scopes_exist
    from traitlets.config.loader import PyFileConfigLoader

    from coursekit.hub import board_service
    from coursekit.hub.settings import HubSettings

    def hub_config(**settings):
        hub = HubSettings(root=str(tmp_path), repo=str(REPO), learners=2, tas=2, **settings)
        hub.save()
        monkeypatch.setenv("COURSEKIT_HUB_ROOT", str(tmp_path))
        config_file = REPO / "coursekit" / "hub" / "jupyterhub_config.py"
        return hub, PyFileConfigLoader(config_file.name, str(config_file.parent)).load_config()

    _hub, without = hub_config(live=False)  # make hub --no-live: no service, no role
    assert "services" not in without.JupyterHub and "load_roles" not in without.JupyterHub
    hub, c = hub_config()  # make hub: the service by default

    (service,) = c.JupyterHub.services
    assert service["name"] == board_service.SERVICE
    assert service["user"] == hub.instructor and service["cwd"] == str(hub.course_root)
    assert service["command"][-1] == "live"  # coursekit live: the service and its board
    assert service["url"].startswith("http://127.0.0.1:")
    assert c.JupyterHub.load_groups == {"tas": {"users": ["tp-ta01", "tp-ta02"]}}
    assert set(hub.ta_names) <= c.Authenticator.allowed_users

    (role,) = c.JupyterHub.load_roles
    assert role["scopes"] == ["access:services!service=live-board"]
    _check_scopes_exist(role["scopes"])
    assert role["users"] == [hub.instructor] and role["groups"] == ["tas"]
    granted = {u for r in c.JupyterHub.load_roles for u in r.get("users", [])}
    assert not granted & set(hub.learner_names)  # learners: no scope, 403 on the board
    # the service itself holds no role, so no scope (docs/security.md says why)
    assert not any(r.get("services") for r in c.JupyterHub.load_roles)


def test_on_the_hub_the_board_asks_the_hub_and_a_stranger_is_sent_to_log_in(tmp_path, monkeypatch):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    prefix = f"/services/{SERVICE}/"
    for name, value in {
        "JUPYTERHUB_SERVICE_PREFIX": prefix,
        "JUPYTERHUB_SERVICE_NAME": "live-board",
        "JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:0",
        "JUPYTERHUB_API_TOKEN": "not-a-real-token",
        "JUPYTERHUB_API_URL": "http://127.0.0.1:9/hub/api",  # nothing listens: no hub
        "JUPYTERHUB_CLIENT_ID": "service-live-board",
        "JUPYTERHUB_OAUTH_CALLBACK_URL": prefix + "oauth_callback",
        "JUPYTERHUB_HOST": "",
        "JUPYTERHUB_BASE_URL": "/",
    }.items():
        monkeypatch.setenv(name, value)
    from jupyterhub.services.auth import HubOAuth

    # Who the hub says a visitor is, by the visitor's token (no hub runs here): the hub's
    # own scope check (HubAuthenticated.check_hub_user) then decides.
    visitors = {
        "ta": {"name": "tp-ta01", "kind": "user", "scopes": [f"access:services!service={SERVICE}"]},
        "learner": {"name": "tp-learner01", "kind": "user", "scopes": ["self"]},
    }
    monkeypatch.setattr(
        HubOAuth, "get_user", lambda self, handler: visitors.get(handler.get_cookie("who", ""))
    )
    thread = board_server.start(tmp_path)
    try:
        assert thread.url == "" and thread.service_name == "live-board"
        plain = urllib.request.build_opener(NoRedirect).open
        base = f"http://127.0.0.1:{thread.port}{prefix}"
        code, headers, _body = status_of(plain, base)
        assert code == 302 and "/hub/api/oauth2/authorize" in headers["Location"]
        assert headers["Content-Security-Policy"] == board_server.CSP
        for path in ("board.json", "static/board.js"):
            code, headers, _body = status_of(plain, base + path)
            assert code == 403, path
            assert headers["Content-Security-Policy"] == board_server.CSP
        for path in ("", "board.json", "static/board.js"):
            code, headers, _body = status_of(plain, base + path, {"Cookie": "who=learner"})
            assert code == 403, path  # a learner signed in to the hub: no scope, no board
            assert headers["Content-Security-Policy"] == board_server.CSP
            code, headers, _body = status_of(plain, base + path, {"Cookie": "who=ta"})
            assert code == 200, path
            assert headers["Content-Security-Policy"] == board_server.CSP
    finally:
        thread.stop()
        thread.join(10)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_make_live_prints_the_boards_address_once_and_no_board_skips_it(served, capsys):
    from coursekit.live import cli as live_main

    root, _thread = served
    thread = live_main.start_board(live_main.parse_args(["--root", str(root)]))
    try:
        out = capsys.readouterr().out
        assert out.count(thread.url) == 1 and thread.token in thread.url
        assert thread.url.startswith("http://127.0.0.1:")
        code, _headers, _body = status_of(opener()[0].open, thread.url)
        assert code == 200
    finally:
        thread.stop()
        thread.join(10)
    assert live_main.start_board(live_main.parse_args(["--root", str(root), "--no-board"])) is None
    assert capsys.readouterr().out == ""
