"""Which attempt counts: make grade puts it in place (c.LiveGrading.counted, issue 31).

Real local accounts (`tpx-…`) submit with nbgrader's own exchange submit while
`coursekit live` runs: "comeback" submits wrong, then right, then wrong again
after the due date; "slipper" right, then wrong, both on time. "offline" submits
after the service stopped, is collected, and submits again uncollected. Then
make grade with "last" (the default), with --as-collected, with "best" (the
per-assignment override) and once more; each time the gradebook equals stock
`nbgrader autograde` of plain copies of exactly the counted attempts' files.

No wall-clock assert: every wait polls with a generous bound.
"""

from __future__ import annotations

import copy
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from traitlets.config import Config

from coursekit.core.course import Course
from coursekit.live import attempts
from coursekit.live.passback import Passback
from coursekit.live.policy import LiveGrading
from tests.support.live_class import (
    Live,
    handled,
    live_class,
    released_course,
    stock_course,
    stop,
    wait_for,
)
from tests.support.untrusted_class import ASSIGNMENT

pytestmark = [
    pytest.mark.xdist_group("live"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
    pytest.mark.root,
]

ROLES = ("comeback", "slipper", "offline")
PUT = "인정되는 제출물 (c.LiveGrading.counted): 실시간 채점을 받은 학습자 2명 중 {put}명의"


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    with live_class(tmp_path_factory.mktemp("counted_course"), ROLES) as c:
        yield run_class(c)


def run_class(c: Live) -> Live:
    released_course(c, min_interval=0)  # every attempt graded
    right, wrong = c.reference, c.wrong
    live = c.start()
    for first, second in ((wrong, right), (right, wrong)):  # comeback's, slipper's
        c.submit("comeback", first)
        c.submit("slipper", second)
        wait_for("records of both", lambda: handled(c, ("comeback", "slipper")), live, c)
    c.due = datetime.now(UTC)
    shown = c.due.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    c.course.run("db", "assignment", "add", ASSIGNMENT, f"--duedate={shown}")
    while datetime.now(UTC) < c.due + timedelta(seconds=1):  # past any coarse file clock
        time.sleep(0.1)
    c.submit("comeback", wrong)  # late
    wait_for("the late one's record", lambda: handled(c, ("comeback",)), live, c)
    assert stop(live) == 0

    c.submit("offline", right)
    c.course.run("collect", "--update", ASSIGNMENT)  # the newest of everyone, as stock does
    c.submit("offline", wrong)  # never collected

    c.entry = {role: c.entries(role) for role in ROLES}  # in the order received
    c.last = c.course.grade("-j", "2")
    c.last_scores = c.course.scores(ASSIGNMENT)
    c.late = late_seconds(c)
    c.as_collected = c.course.grade("-j", "2", "--as-collected")
    c.as_collected_scores = c.course.scores(ASSIGNMENT)
    with (c.root / "nbgrader_config.py").open("a", encoding="utf-8") as fh:
        fh.write(f'\nc.LiveGrading.per_assignment = {{"{ASSIGNMENT}": {{"counted": "best"}}}}\n')
    c.best = c.course.grade("-j", "2")
    c.best_scores = c.course.scores(ASSIGNMENT)
    c.ledger_after_best = c.ledger()
    c.again = c.course.grade("-j", "2")
    c.ledger_again = c.ledger()
    c.stock = stock_autograde(
        c,
        {
            "comeback-right": c.entry["comeback"][1],
            "slipper-right": c.entry["slipper"][0],
            "slipper-wrong": c.entry["slipper"][1],
            "offline-right": c.entry["offline"][0],
        },
    )
    return c


def late_seconds(c: Live) -> dict[str, float]:
    with c.course.gradebook() as gb:
        return {s.student.id: s.total_seconds_late for s in gb.assignment_submissions(ASSIGNMENT)}


def stock_autograde(c: Live, entries: dict[str, str]) -> dict:
    """Stock `nbgrader autograde` of each inbound entry's notebooks, copied plainly into a
    course of its own (one learner id per attempt)."""
    copy = stock_course(c)
    for key, entry in entries.items():
        target = copy.root / "submitted" / key / ASSIGNMENT
        target.mkdir(parents=True)
        for notebook in (c.inbound / entry).glob("*.ipynb"):
            shutil.copyfile(notebook, target / notebook.name)
    copy.autograde(ASSIGNMENT)
    return copy.scores(ASSIGNMENT)


def scores_of(c: Live, scores: dict, role: str) -> dict:
    return scores[c.accounts[role]]


# -- the class -----------------------------------------------------------------------


def test_the_attempts_were_received_around_the_due_date_as_planned(counted):
    for role, count in (("comeback", 3), ("slipper", 2)):
        records = counted.records(role)
        assert [r.entry for r in records] == counted.entry[role]
        assert [r.outcome for r in records] == [attempts.GRADED] * count
    received = [datetime.fromisoformat(r.submitted_at) for r in counted.records("comeback")]
    assert received[1] <= counted.due < received[2]
    assert not counted.records("offline") and len(counted.entry["offline"]) == 2


def test_last_grades_the_last_attempt_before_the_due_date(counted):
    assert PUT.format(put=1) in counted.last.stdout  # comeback's; slipper's was in place
    stock = counted.stock
    assert scores_of(counted, counted.last_scores, "comeback") == stock["comeback-right"]
    assert scores_of(counted, counted.last_scores, "slipper") == stock["slipper-wrong"]
    assert stock["comeback-right"] != stock["slipper-wrong"]  # the two attempts differ
    assert counted.late[counted.accounts["comeback"]] == 0  # the counted one was on time


def test_a_learner_who_never_used_live_is_graded_as_collected(counted):
    for scores in (counted.last_scores, counted.best_scores):
        assert scores_of(counted, scores, "offline") == counted.stock["offline-right"]
    assert counted.late[counted.accounts["offline"]] > 0  # collected after the due date


def test_as_collected_puts_nothing_in_place(counted):
    assert "c.LiveGrading.counted" not in counted.as_collected.stdout
    assert counted.as_collected_scores == counted.last_scores


def test_best_grades_the_attempt_with_the_most_points(counted):
    assert PUT.format(put=1) in counted.best.stdout  # slipper's first
    assert scores_of(counted, counted.best_scores, "slipper") == counted.stock["slipper-right"]
    assert scores_of(counted, counted.best_scores, "comeback") == counted.stock["comeback-right"]


def test_a_counted_attempt_already_in_place_writes_nothing(counted):
    assert PUT.format(put=0) in counted.again.stdout
    assert counted.ledger_again == counted.ledger_after_best


def test_the_lti_passback_sends_the_counted_attempt_only(counted):
    """c.LiveGrading.lti_passback: of the graded attempts, the one make grade counts is the
    one whose score goes to the LMS (coursekit/live/passback.py), by the same inbound
    entries, records and due date."""
    best = Course(counted.root).config  # the per-assignment "best" the class ended with
    last = copy.deepcopy(best)
    last.LiveGrading.per_assignment = {}
    sent = {}
    for rule, config in (("last", last), ("best", best)):
        passback = Passback(counted.root, config, gradebook=None, echo=lambda _line: None,
                            environ={})  # fmt: skip
        sent[rule] = {
            role: [r.entry for r in counted.records(role) if passback.counted(r)]
            for role in ("comeback", "slipper")
        }
        passback.close()
    comeback, slipper = counted.entry["comeback"], counted.entry["slipper"]
    # comeback: wrong, right, then wrong after the due date; slipper: right, then wrong.
    assert sent["last"] == {"comeback": [comeback[1]], "slipper": [slipper[1]]}
    assert sent["best"] == {"comeback": [comeback[1]], "slipper": [slipper[0]]}


# -- the rule alone --------------------------------------------------------------------


def submission(name: str, minute: int) -> dict:
    return {"filename": name, "timestamp": datetime(2026, 12, 3, 9, minute)}


def graded(name: str, minute: int, points: float) -> attempts.Attempt:
    when = datetime(2026, 12, 3, 9, minute, tzinfo=UTC).isoformat()
    record = attempts.Attempt("x", ASSIGNMENT, name, when)
    record.cells = {"cell": {"points": points, "max": 2.0}}
    return record


def test_the_counted_rule_last_best_ties_and_the_due_date():
    config = Config()
    config.LiveGrading.per_assignment = {"other": {"counted": "best"}}
    policy = LiveGrading(config=config)
    received = [submission("a", 0), submission("b", 10), submission("c", 20)]
    records = [graded("a", 0, 2.0), graded("b", 10, 1.0), graded("c", 20, 2.0)]
    due = datetime(2026, 12, 3, 9, 15)

    def chosen(assignment, duedate, subs=received, recs=records):
        found = policy.counted_submission(assignment, subs, recs, duedate)
        return found and found["filename"]

    assert chosen(ASSIGNMENT, None) == "c" and chosen(ASSIGNMENT, due) == "b"
    assert chosen(ASSIGNMENT, datetime(2026, 12, 3, 8, 0)) == "c"  # none before: the last
    assert chosen("other", None) == "c"  # a tie: the later
    assert chosen("other", due) == "a"  # the best on time
    assert chosen("other", datetime(2026, 12, 3, 8, 0)) == "c"  # none on time: of all
    assert chosen("other", None, recs=[]) == "c"  # nothing graded: the last
    assert chosen("other", None, subs=received[:2]) == "a"  # c's entry is gone
    assert chosen(ASSIGNMENT, None, subs=[]) is None


def test_the_counted_default_is_last_and_a_course_without_records_has_none(tmp_path):
    assert LiveGrading().counted == "last"
    assert not attempts.any_record(tmp_path)
    path = attempts.write(tmp_path, graded("x+a+1", 0, 1.0))
    assert attempts.any_record(tmp_path) and Path(path).is_file()
