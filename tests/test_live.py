"""`make live` against a class of real local accounts (coursekit/live/, issue 31).

A scratch course and exchange as tests/test_exchange_untrusted.py makes them
(accounts `tpx-…`, removed at the end; tests/support/live_class.py): each learner
submits with nbgrader's own exchange submit while `coursekit live` runs as
the instructor, and fetches what it released with nbgrader's own
fetch_feedback. Then the service is SIGKILLed while it
grades a class that submitted while it was down, and started again.

No wall-clock assert: every wait polls with a generous bound.
"""

from __future__ import annotations

import json
import os
import re
import signal
from datetime import UTC
from pathlib import Path

import nbformat
import pytest

from coursekit.cluster.submission import read_submission
from coursekit.learner.feedback import read_attempt
from coursekit.live import attempts
from coursekit.simulate import submissions
from coursekit.simulate.instructor import Instructor
from tests.support.live_class import (
    WAIT,
    WRONG,
    Live,
    catalog_source,
    graded_lines,
    handled,
    live_class,
    released_course,
    stock_autograde,
    stop,
    wait_for,
)
from tests.support.untrusted_class import ASSIGNMENT, NOTEBOOK, reference_lines

pytestmark = [
    pytest.mark.xdist_group("live"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
    pytest.mark.root,
]

KILL_KERNEL = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
FLOOD = 4  # submits in a row by one learner
DOWN_CLASS = ("b1", "b2", "b3", "b4")  # submit while the service is down
STUCK = 4  # split_heads failed in a row on make live before the learner passes


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    roles = ("wrong", "killer", "honest", "planter", "flooder", "stuck", *DOWN_CLASS)
    with live_class(tmp_path_factory.mktemp("live_course"), roles) as c:
        yield run_workshop(c)


def run_workshop(c: Live) -> Live:
    # long enough that the resubmit below is inside it on any machine
    released_course(c, min_interval=3600)
    release_nb = c.course.release_notebook(ASSIGNMENT)
    source_nb = c.course.source_notebook(ASSIGNMENT)
    killer = submissions.fill(
        release_nb, source_nb, replace={"split_heads": KILL_KERNEL + catalog_source(WRONG)}
    )

    # -- the service running: submits graded, a resubmit held back, pages fetched
    first = c.start()
    c.submit("wrong", c.wrong)
    c.submit("killer", killer)
    c.submit("honest", c.reference)
    # the wrong notebook in honest's name, by another account
    c.planted = Path(c.attack("planter", c.wrong, name=c.accounts["honest"])).name
    wait_for(
        "record of each first submit", lambda: handled(c, ("wrong", "killer", "honest")), first, c
    )
    c.submit("wrong", c.reference)  # at once: inside the interval
    for _ in range(FLOOD):
        c.submit("flooder", c.reference)
    wait_for(
        "records of the resubmit and the flood", lambda: handled(c, ("wrong", "flooder")), first, c
    )
    c.pages = {role: c.fetch_feedback(role) for role in ("wrong", "killer", "honest")}
    c.first_exit = stop(first)

    # -- a class submits while the service is down; it is killed while grading them
    for i, role in enumerate(DOWN_CLASS):
        c.submit(role, c.wrong if i % 2 else c.reference)
    c.submit(DOWN_CLASS[0], c.wrong)  # later than its first: held back, whatever comes first
    second = c.start()
    collected = [c.root / "submitted" / c.accounts[r] / ASSIGNMENT for r in DOWN_CLASS]
    wait_for("a collected submission", lambda: any(p.is_dir() for p in collected), second, c)
    os.killpg(second.pid, signal.SIGKILL)
    second.wait()
    c.recorded_at_kill = {r for r in DOWN_CLASS if c.records(r)}
    c.ledger_at_kill = c.ledger()
    third = c.start()
    wait_for("records of the class after the restart", lambda: handled(c, DOWN_CLASS), third, c)
    # Ctrl-C in the terminal: SIGINT to the whole group, the cluster's processes too
    os.killpg(third.pid, signal.SIGINT)
    c.third_exit = third.wait(timeout=WAIT)
    stuck_on_split_heads(c)
    c.stock = stock_autograde(c, ("wrong", "killer", "honest", "flooder", "stuck", *DOWN_CLASS))
    return c


def stuck_on_split_heads(c: Live) -> None:
    """A learner fails split_heads STUCK times, then passes, with no interval to wait
    (c.LiveGrading.hint_after stays its default 2); make grade's batch feedback is made
    between, when the gradebook holds their fourth failing attempt."""
    with (c.root / "nbgrader_config.py").open("a", encoding="utf-8") as fh:
        fh.write("\nc.LiveGrading.min_interval = 0\n")
    for _ in range(STUCK):
        c.submit("stuck", c.wrong)
    fourth = c.start()
    wait_for("records of the stuck learner's attempts", lambda: handled(c, ("stuck",)), fourth, c)
    learner = c.accounts["stuck"]
    # make grade's feedback step, for the learner whose page is read
    Instructor(c.root).generate_feedback(ASSIGNMENT, learner)
    batch = c.root / "feedback" / learner / ASSIGNMENT / NOTEBOOK.replace(".ipynb", ".html")
    c.batch_page = batch.read_text(encoding="utf-8")
    c.submit("stuck", c.reference)
    wait_for("the passing attempt's record", lambda: handled(c, ("stuck",)), fourth, c)
    c.pages["stuck"] = c.fetch_feedback("stuck")
    c.fourth_exit = stop(fourth)


# -- graded on submit ---------------------------------------------------------------


def test_each_submit_is_graded_and_recorded_with_its_points(live):
    points = live.course.max_scores(ASSIGNMENT)
    for role in ("wrong", "killer", "honest"):
        record = live.records(role)[0]
        assert record.outcome == attempts.GRADED, record
        assert record.entry == live.entries(role)[0]
        assert set(record.cells) <= set(points) and record.cells
        assert all(cell["max"] == points[name] for name, cell in record.cells.items())
    honest = live.records("honest")[0]
    assert all(cell["points"] == cell["max"] for cell in honest.cells.values())
    assert not honest.failed
    wrong = live.records("wrong")[0]
    assert any(r["function"] == "split_heads" for r in wrong.failed.values()), wrong.failed
    assert wrong.failed == live.course.autograded_verdicts(live.accounts["wrong"], ASSIGNMENT)


def test_the_fetched_page_shows_the_misconception_and_its_seed(live):
    wrong = live.records("wrong")[0]
    graded = [text for text in live.pages["wrong"].values() if "split_heads" in text]
    assert len(graded) == 1, list(live.pages["wrong"])
    split_heads = [r for r in wrong.failed.values() if r["function"] == "split_heads"]
    assert split_heads
    for verdict in split_heads:
        assert verdict["misconception"], verdict
        assert verdict["misconception"]["title"] in graded[0]
        assert str(verdict["case"]["seed"]) in graded[0]


def test_no_fetched_page_holds_a_hidden_test_or_the_reference(live):
    """Lines of the reference, the hidden checks and the hidden test cells: none on a page,
    but for those the learner's own notebook holds (it shows their code)."""
    hidden = [
        line.strip()
        for cell in live.course.source_notebook(ASSIGNMENT).cells
        if "### BEGIN HIDDEN TESTS" in cell.source
        for line in cell.source.split("### BEGIN HIDDEN TESTS", 1)[1].splitlines()
        if len(line.strip()) > 20 and "END HIDDEN TESTS" not in line
    ]
    assert hidden
    for role, pages in live.pages.items():
        learner = live.accounts[role]
        nb = nbformat.read(live.root / "submitted" / learner / ASSIGNMENT / NOTEBOOK, 4)
        own = "\n".join(cell.source for cell in nb.cells)
        secret = [line for line in reference_lines(live) + hidden if line not in own]
        for text in pages.values():
            leaked = [line for line in secret if line in text]
            assert not leaked, (role, leaked[:5])


def test_a_resubmit_inside_the_interval_is_kept_and_gets_the_note(live):
    first, second = live.records("wrong")
    assert second.outcome == attempts.TOO_SOON and not second.cells
    assert second.next_at is not None and second.next_at > first.submitted_at
    assert len(live.entries("wrong")) == 2  # nbgrader keeps every submission
    notes = {time: text for time, text in live.pages["wrong"].items() if "split_heads" not in text}
    assert len(notes) == 1, (second.errors, list(live.pages["wrong"]))
    ((folder, note),) = notes.items()
    assert "채점하지 않았습니다" in note and "3600초" in note
    # The learner's panel reads the same note as data: held back, graded again from when.
    fetched = live.home("wrong") / "course" / ASSIGNMENT / "feedback" / folder
    data = read_attempt((fetched / NOTEBOOK.replace(".ipynb", ".html")).read_text("utf-8"))
    assert data is not None and data["held_back"] == attempts.TOO_SOON, data
    assert data["next_graded_at"] and data["next_graded_at"] in note


def test_a_notebook_that_kills_its_kernel_costs_only_itself(live):
    (record,) = live.records("killer")
    assert record.outcome == attempts.GRADED and not record.errors
    assert sum(c["points"] for c in record.cells.values()) < sum(
        c["max"] for c in record.cells.values()
    )
    assert len(live.pages["killer"]) == 1
    honest = live.records("honest")[0]
    assert all(cell["points"] == cell["max"] for cell in honest.cells.values())


def test_a_submission_in_a_classmates_name_is_refused_and_costs_only_itself(live):
    assert live.planted not in {a.entry for a in attempts.every(live.root)}
    (record,) = live.records("honest")
    assert record.entry != live.planted
    assert all(cell["points"] == cell["max"] for cell in record.cells.values())
    report = json.loads((live.root / "reports" / "exchange_incidents.json").read_text("utf-8"))
    refused = report[ASSIGNMENT][live.accounts["honest"]]
    assert any(live.accounts["planter"] in item["reason"] for item in refused), refused


def test_a_flood_of_submits_is_graded_once_and_the_rest_get_notes(live):
    records = live.records("flooder")
    assert len(records) == len(live.entries("flooder")) == FLOOD
    assert [r.outcome for r in records] == [attempts.GRADED] + [attempts.TOO_SOON] * (FLOOD - 1)
    assert all(cell["points"] == cell["max"] for cell in records[0].cells.values())


def test_sigterm_or_ctrl_c_stops_the_service_cleanly(live):
    assert live.first_exit == 0 and live.third_exit == 0 and live.fourth_exit == 0
    assert live.output().count("실시간 채점을 멈췄습니다.") == 3
    assert "KeyboardInterrupt" not in live.output()  # the workers left the stop to the service


# -- hints when stuck ------------------------------------------------------------------


def test_a_learner_stuck_on_split_heads_reads_its_hints_in_order_and_none_after_passing(live):
    from grader_tests.ch3_multihead import CHECKS

    first, second, third = CHECKS.hints_for("split_heads")
    records = live.records("stuck")
    assert [r.outcome for r in records] == [attempts.GRADED] * (STUCK + 1)
    assert [r.hints.get("split_heads", 0) for r in records] == [0, 1, 1, 2, 0]
    pages = list(live.pages["stuck"].values())  # in the order the exchange received them
    assert len(pages) == STUCK + 1
    shown = [[hint in page for hint in (first, second, third)] for page in pages]
    assert shown == [
        [False, False, False],
        [True, False, False],  # hint 1 on the second page
        [True, False, False],
        [True, True, False],  # hint 2 on the fourth, after hint 1
        [False, False, False],  # passed: none
    ]
    assert "힌트 1" in pages[1] and "힌트 2" in pages[3] and "힌트 1" not in pages[4]
    assert pages[3].index(first) < pages[3].index(second)
    # the panel reads them from the page's data, in the same order
    folder = live.home("stuck") / "course" / ASSIGNMENT / "feedback"
    fourth = sorted(folder.glob(f"*/{NOTEBOOK.replace('.ipynb', '.html')}"))[3]
    data = read_attempt(fourth.read_text(encoding="utf-8"))
    (row,) = [f for f in data["functions"] if f["name"] == "split_heads"]
    assert row["hints"] == [first, second]


def test_make_grades_batch_feedback_carries_no_hint(live):
    data = read_attempt(live.batch_page)
    (row,) = [f for f in data["functions"] if f["name"] == "split_heads"]
    assert row["message"] is not None  # the fourth attempt's: split_heads failing
    assert all(f["hints"] == [] for f in data["functions"])
    assert "힌트 1" not in live.batch_page


def test_the_ta_board_shows_the_hint_level_a_stuck_learner_has_seen(live):
    from coursekit.live import board
    from coursekit.staff.report.overview import cell_functions

    stuck = live.records("stuck")[:STUCK]  # before they passed
    functions = {ASSIGNMENT: cell_functions(live.root, ASSIGNMENT)}
    (only,) = board.board(stuck, functions, STUCK)
    shown = {s.function: s for s in only.stuck}["split_heads"]
    assert (shown.learner, shown.attempts, shown.hint) == (live.accounts["stuck"], STUCK, 2)


# -- nothing lost, nothing twice ------------------------------------------------------


def test_killed_while_grading_and_restarted_every_submission_is_graded_once(live):
    assert live.recorded_at_kill != set(DOWN_CLASS), "the kill came after the class was done"
    for role in ("wrong", "killer", "honest", "flooder", *DOWN_CLASS):
        graded = graded_lines(live, role)
        assert len(graded) == 1, (role, graded)
        assert len(live.records(role)) == len(live.entries(role))
    ledger = live.ledger()
    for role in DOWN_CLASS:
        learner = live.accounts[role]
        assert ledger[learner][0] == read_submission(live.root, ASSIGNMENT, learner).digest
        if role in live.recorded_at_kill:  # its row is not written again
            assert ledger[learner] == live.ledger_at_kill[learner]


def test_a_learners_submissions_are_handled_in_the_order_the_exchange_received_them(live):
    first, second = live.records(DOWN_CLASS[0])
    assert first.submitted_at < second.submitted_at
    assert (first.outcome, second.outcome) == (attempts.GRADED, attempts.TOO_SOON)
    assert all(cell["points"] == cell["max"] for cell in first.cells.values())  # the reference


def test_the_gradebook_equals_stock_autograde_of_the_same_attempts(live):
    assert live.course.scores(ASSIGNMENT) == live.stock


# -- the policy and the record, alone --------------------------------------------------


def attempt_at(when: str, outcome: str = attempts.GRADED) -> attempts.Attempt:
    return attempts.Attempt("x", ASSIGNMENT, f"x+{ASSIGNMENT}+{when}", when, outcome=outcome)


def test_the_ta_board_shows_the_class_from_the_services_records(live):
    from coursekit.live.board_server import BoardData

    (shown,) = json.loads(BoardData(live.root).body())["assignments"]
    wrong, honest = live.accounts["wrong"], live.accounts["honest"]
    counts = {c["function"]: c for c in shown["functions"]}
    assert wrong in counts["split_heads"]["failing"]
    assert honest in counts["split_heads"]["passing"]
    seen = {(m["function"], m["key"]): m["learners"] for m in shown["misconceptions"]}
    assert wrong in seen["split_heads", WRONG.split("__")[1]]
    last = {row["learner"]: row for row in shown["last"]}
    assert last[wrong]["outcome"] == attempts.TOO_SOON  # the resubmit inside the interval
    # still its last graded attempt's (multi_head_attention calls split_heads: it fails too)
    assert "split_heads" in last[wrong]["failing"]
    assert last[wrong]["failing"] == [f for f, c in counts.items() if wrong in c["failing"]]
    assert last[honest]["points"] == last[honest]["max"] and last[honest]["failing"] == []
    # each run printed its board's address once, each with a token of its own
    tokens = re.findall(r"http://127\.0\.0\.1:\d+/\?token=(\S+)", live.output())
    assert len(tokens) == len(live.runs) == len(set(tokens))


def test_the_policy_holds_back_a_submit_inside_the_interval_or_past_the_most():
    from datetime import datetime, timedelta

    from traitlets.config import Config

    from coursekit.live.policy import LiveGrading

    config = Config()
    config.LiveGrading.min_interval = 60
    config.LiveGrading.max_attempts = 2
    config.LiveGrading.per_assignment = {"other": {"min_interval": 0, "max_attempts": 5}}
    policy = LiveGrading(config=config)
    start = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
    first = [attempt_at(start.isoformat())]
    assert policy.decide(ASSIGNMENT, [], start).outcome == attempts.GRADED
    soon = policy.decide(ASSIGNMENT, first, start + timedelta(seconds=59))
    assert soon.outcome == attempts.TOO_SOON and soon.next_at == start + timedelta(seconds=60)
    assert policy.decide(ASSIGNMENT, first, start + timedelta(seconds=60)).outcome == "graded"
    # a held-back attempt does not count, nor move the interval
    held = [*first, attempt_at((start + timedelta(seconds=30)).isoformat(), attempts.TOO_SOON)]
    assert policy.decide(ASSIGNMENT, held, start + timedelta(seconds=61)).outcome == "graded"
    two = [*first, attempt_at((start + timedelta(seconds=90)).isoformat())]
    assert policy.decide(ASSIGNMENT, two, start + timedelta(hours=1)).outcome == attempts.TOO_MANY
    assert policy.decide("other", two, start + timedelta(seconds=91)).outcome == "graded"


def test_a_record_is_written_whole_and_read_back(tmp_path):
    record = attempt_at("2026-12-03T09:00:00+00:00")
    record.cells = {"split_heads_seed": {"points": 0.0, "max": 1.0}}
    path = attempts.write(tmp_path, record)
    assert path.parent == tmp_path / attempts.FOLDER / ASSIGNMENT / "x"
    assert attempts.read(path) == record
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    assert attempts.of_learner(tmp_path, ASSIGNMENT, "x") == [record] == attempts.every(tmp_path)


def test_a_version_1_record_without_stages_is_still_read(tmp_path):
    record = attempt_at("2026-12-03T09:00:00+00:00")
    old = {k: v for k, v in vars(record).items() if k != "stages"} | {"version": 1}
    path = attempts.path_of(tmp_path, ASSIGNMENT, "x", record.entry)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(old), encoding="utf-8")
    (read,) = attempts.of_learner(tmp_path, ASSIGNMENT, "x")
    assert read.version == 1 and read.stages == {} and read.entry == record.entry


def test_tasks_out_on_a_cluster_with_no_worker_stop_the_service_after_the_grace():
    from coursekit.cluster.dask_cluster import ClusterError
    from coursekit.cluster.session import GradingSession

    class Cluster:
        def __init__(self):
            self.workers = {}

        def nthreads(self):
            return self.workers

    session = GradingSession.__new__(GradingSession)  # the service's check alone, no course
    session.client = Cluster()
    session.no_worker_grace, session.alone_since = 0.0, None
    session.check_workers(0)  # nothing out: nothing to wait for
    session.client.workers = {"tcp://worker": 1}
    session.check_workers(1)
    session.client.workers = {}
    with pytest.raises(ClusterError, match="1"):
        session.check_workers(1)


def test_the_note_page_is_escaped_text_in_the_courses_language():
    from coursekit.core import messages
    from coursekit.live.feedback import note_page

    with messages.speaking("en"):
        page = note_page('<script>alert("x")</script> & more')
    assert '<html lang="en">' in page and "<title>Submission kept, not graded</title>" in page
    assert "<script>" not in page and "&lt;script&gt;" in page and "&amp; more" in page
    assert "href" not in page and "src=" not in page
    with messages.speaking("ko"):
        assert '<html lang="ko">' in note_page("x")


def test_the_note_page_carries_its_reason_as_data_for_the_panel():
    from coursekit.core import messages
    from coursekit.live.feedback import TOO_MANY_NOTE, TOO_SOON_NOTE, held_back, note_page

    when = {"submitted": "2026-12-07 09:00:01 KST", "next_at": "2026-12-07 10:00:01 KST",
            "interval": 3600, "most": 30}  # fmt: skip
    with messages.speaking("ko"):
        soon_text = messages._(TOO_SOON_NOTE).format(**when)
        soon = note_page(soon_text, held_back(attempts.TOO_SOON, when))
        many = note_page(
            messages._(TOO_MANY_NOTE).format(**when),
            held_back(attempts.TOO_MANY, dict(when, next_at="")),
        )
    data = read_attempt(soon)
    assert data == {"schema": 1, "held_back": "too_soon", "next_graded_at": when["next_at"]}
    assert when["next_at"] in soon_text  # the time the note's own words give
    assert read_attempt(many) == {"schema": 1, "held_back": "too_many", "next_graded_at": None}
    assert "<script" not in soon and "href" not in soon and "src=" not in soon
    # A reason that is not JSON-safe markup stays an escaped attribute, read back whole.
    odd = note_page("x", held_back(attempts.TOO_SOON, dict(when, next_at='"><b>1</b>')))
    assert "<b>" not in odd and read_attempt(odd)["next_graded_at"] == '"><b>1</b>'
    assert read_attempt(note_page("x")) is None  # no data given: none on the page


def test_the_panel_shows_a_fetched_note_as_held_back(tmp_path):
    from coursekit.learner import panel_server
    from coursekit.live.feedback import held_back, note_page

    when = {"next_at": "2026-12-07 10:00:01 KST"}
    pages = {
        "graded": '<div hidden id="coursekit-attempt" data-attempt=\'{"schema": 1}\'></div>',
        "held": note_page("x", held_back(attempts.TOO_SOON, when)),
    }
    submissions = []
    for name, page in pages.items():
        path = tmp_path / "a" / "feedback" / name / "nb.html"
        path.parent.mkdir(parents=True)
        path.write_text(page, encoding="utf-8")
        notebooks = [{"local_feedback_path": str(path)}]
        submissions.append({"timestamp": name, "notebooks": notebooks})

    class Manager:  # nbgrader's assignment list, as far as the panel calls it
        def list_submitted_assignments(self, course_id):
            return {"success": True, "value": [{"assignment_id": "a", "submissions": submissions}]}

    found = panel_server.attempts(Manager(), str(tmp_path), "c", "a")
    assert [item["state"] for item in found] == ["graded", "held_back"]
    assert found[1]["summary"]["next_graded_at"] == when["next_at"]
    assert found[1]["page"] == "a/feedback/held/nb.html"
