"""`make live` under a class's burst (issue 31 item 5): real accounts, all at once.

A learner's slow attempt (a cell that sleeps) is taken first; then a class of
BURST learners (real local accounts, tests/support/live_class.py) submits at once while
the service runs, and is answered while the slow one runs. The service is
SIGKILLed in the middle of the burst; each learner resubmits while it is down
(the attempt policy's interval 0, so every submit is graded), and it is started
again. Every submission is graded once, each learner's in the order the
exchange received them, each page fetched; the gradebook equals stock
autograde of the last attempts. No wall-clock assert: the stages of each
record are checked for presence and order only.
"""

from __future__ import annotations

import os
import signal
from datetime import datetime

import pytest

from coursekit.cluster.submission import read_submission
from coursekit.live import attempts
from coursekit.simulate import submissions
from tests.support.live_class import (
    graded_lines,
    handled,
    live_class,
    released_course,
    stock_autograde,
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

BURST = 12
ROLES = tuple(f"l{i:02d}" for i in range(BURST))
SUBMITS = 2  # each learner's: a first attempt, then a resubmit
SLOW = "import time\ntime.sleep(12)\n"  # within the course's time limit (30 s a cell)


@pytest.fixture(scope="module")
def burst(tmp_path_factory):
    with live_class(tmp_path_factory.mktemp("live_burst"), (*ROLES, "slow")) as c:
        yield run_burst(c)


def run_burst(c):
    released_course(c, min_interval=0)
    first = c.start()
    wait_for("the service's start", lambda: "실시간 채점" in c.output(), first, c)
    # a slow attempt first: the burst after it is answered while it runs
    release_nb = c.course.release_notebook(ASSIGNMENT)
    source_nb = c.course.source_notebook(ASSIGNMENT)
    reference = submissions.fill(release_nb, source_nb)
    slow = [cell for cell in reference.cells if "def split_heads" in cell.source]
    slow[0].source = SLOW + slow[0].source
    c.submit("slow", reference)
    collected = c.root / "submitted" / c.accounts["slow"] / ASSIGNMENT
    wait_for("the slow attempt collected", collected.is_dir, first, c)
    # the reference and the wrong notebook in turn; the resubmit is the other one
    for i, role in enumerate(ROLES):
        c.submit(role, c.wrong if i % 2 else c.reference)
    count = lambda: len(attempts.every(c.root))  # noqa: E731
    wait_for("a few records of the burst", lambda: count() >= 3, first, c)
    os.killpg(first.pid, signal.SIGKILL)  # in the middle of the burst: it is not all in
    first.wait()
    c.records_at_kill = {a.entry for a in attempts.every(c.root)}
    c.ledger_at_kill = c.ledger()
    for i, role in enumerate(ROLES):  # the resubmits, while the service is down
        c.submit(role, c.reference if i % 2 else c.wrong)
    second = c.start()
    wait_for("a record of every submission", lambda: handled(c, (*ROLES, "slow")), second, c)
    c.exit = stop(second)
    c.total = BURST * SUBMITS
    c.pages = {role: c.fetch_feedback(role) for role in ROLES}
    c.stock = stock_autograde(c, (*ROLES, "slow"))
    return c


def test_the_kill_came_in_the_middle_of_the_burst(burst):
    assert 0 < len(burst.records_at_kill) < burst.total
    assert burst.exit == 0


def test_every_submission_is_graded_once(burst):
    for role in ROLES:
        records = burst.records(role)
        assert [r.entry for r in records] == burst.entries(role)
        assert len(records) == SUBMITS
        assert all(r.outcome == attempts.GRADED and not r.errors for r in records), records
        assert len(graded_lines(burst, role)) == SUBMITS, graded_lines(burst, role)


def test_a_slow_attempt_holds_up_no_classmate_who_submitted_after_it(burst):
    (slow,) = burst.records("slow")
    assert slow.outcome == attempts.GRADED and not slow.errors
    assert all(cell["points"] == cell["max"] for cell in slow.cells.values())
    # a record is written last, once the attempt is answered: some came before the slow one's
    answered = [datetime.fromisoformat(r.graded_at) for role in ROLES for r in burst.records(role)]
    assert min(answered) < datetime.fromisoformat(slow.graded_at), slow


def test_a_record_written_before_the_kill_is_not_graded_again(burst):
    ledger = burst.ledger()
    for role in ROLES:
        learner = burst.accounts[role]
        assert ledger[learner][0] == read_submission(burst.root, ASSIGNMENT, learner).digest
        if set(burst.entries(role)) <= burst.records_at_kill:  # both handled before it
            assert ledger[learner] == burst.ledger_at_kill[learner]


def test_each_learners_attempts_are_handled_one_after_the_other_in_order(burst):
    for role in ROLES:
        first, second = burst.records(role)
        assert first.submitted_at < second.submitted_at
        # the resubmit was collected only once the first attempt was answered
        assert at(first, "released") <= at(second, "collected"), (first.stages, second.stages)
        assert datetime.fromisoformat(first.graded_at) <= datetime.fromisoformat(second.graded_at)


def test_each_record_says_where_its_time_went_in_stage_order(burst):
    for record in attempts.every(burst.root):
        names = list(record.stages)
        assert names == [s for s in attempts.STAGES if s in record.stages], names
        # a submission the driver had written before the kill is answered without a task
        assert {"noticed", "collected", "graded", "feedback_made", "released"} <= set(names)
        times = [at(record, s) for s in names]
        assert times == sorted(times), record.stages
        assert all(t.utcoffset() is not None and not t.utcoffset() for t in times)
        assert record.version == attempts.VERSION


def at(record: attempts.Attempt, stage: str) -> datetime:
    return datetime.fromisoformat(record.stages[stage])


def test_every_learner_fetches_a_page_for_each_attempt(burst):
    for role, pages in burst.pages.items():
        assert len(pages) == SUBMITS, (role, list(pages))
        assert all("split_heads" in text for text in pages.values()), role


def test_the_gradebook_equals_stock_autograde_of_the_last_attempts(burst):
    assert burst.course.scores(ASSIGNMENT) == burst.stock
