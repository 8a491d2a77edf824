"""The exchange against learners' accounts that attack it (coursekit/exchange/, issue 18).

A class on one machine as on the hub: a world-writable exchange (1777), one
Linux account per learner (made here with useradd, `tpx-…`, removed at the
end), the honest learners handing in what stock `nbgrader submit` writes, as
themselves, the attackers writing into the inbound folder as themselves.
Then, as the instructor: stock `nbgrader collect`, `make grade`,
`nbgrader generate_feedback`, `nbgrader release_feedback` from the course root.

One test per attack; the honest learners are checked against stock
nbgrader's own ExchangeCollect run on their submissions alone.
"""

from __future__ import annotations

import datetime
import html
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeFactory
from nbgrader.exchange.default import ExchangeCollect
from nbgrader.utils import parse_utc
from traitlets.config import Config

from coursekit.core.course import contract_functions
from coursekit.exchange import record
from coursekit.exchange.collect import SafeExchangeCollect
from coursekit.simulate import learner_actions, submissions
from coursekit.simulate.demo import simulated_class
from coursekit.simulate.instructor import Instructor
from tests.support.course_sandbox import ROOT
from tests.support.untrusted_class import (
    ASSIGNMENT,
    NOTEBOOK,
    Class,
    as_account,
    copy_course_packages,
    reference_lines,
    run_as,
    shared_folders,
)

pytestmark = [pytest.mark.class_graded, pytest.mark.cluster, pytest.mark.root]

ROLES = (
    "honest",  # the reference, as stock nbgrader submit hands it in
    "wrong",  # a catalog mistake, as stock nbgrader submit hands it in; the planter's victim
    "late",  # the reference after the due date, then a forged early timestamp.txt and name
    "linker",  # links to solutions/, grader_tests/, the gradebook, an instructor's file
    "planter",  # a reference notebook planted in wrong's name
    "dangler",  # the reference and a dangling link
    "fifo",  # the reference and a FIFO as submission_secret.txt (no real secret)
    "zero",  # the reference and a link to /dev/zero
    "sparse",  # the reference and a sparse 2 GiB file
    "crowd",  # the reference among 300 files, odd names and deep folders
    "shapes",  # inbound entries that are a FIFO, a link and a file, a name with no time
)
INSTRUCTOR_SECRET = "강사 메모: 다음 주 시험 문제는 split_heads 변형입니다"


def reference_importing_notebook(release_nb, source_nb):
    """Every function taken from solutions/ in the kernel's folder: 20/20 if it is there."""
    replace = {
        fn: f"from solutions.{ASSIGNMENT} import {fn}" for fn in contract_functions(ASSIGNMENT)
    }
    return submissions.fill(release_nb, source_nb, replace=replace)


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    exchange, homes = shared_folders()
    c = Class(tmp_path_factory.mktemp("untrusted_course"), exchange, homes)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("COURSE_EXCHANGE_ROOT", str(exchange))
        try:
            for role in ROLES:
                c.add_account(role)
            yield run_class(c)
        finally:
            c.remove_accounts()
            shutil.rmtree(exchange, ignore_errors=True)
            shutil.rmtree(homes, ignore_errors=True)


def run_class(c: Class) -> Class:
    copy_course_packages(c.root)
    (c.root / "instructor_notes.txt").write_text(INSTRUCTOR_SECRET + "\n", encoding="utf-8")
    (c.root / "instructor_notes.txt").chmod(0o600)
    instructor = Instructor(c.root)
    instructor.generate_assignment(ASSIGNMENT)
    instructor.release_assignment(ASSIGNMENT)

    release_nb = c.course.release_notebook(ASSIGNMENT)
    source_nb = c.course.source_notebook(ASSIGNMENT)
    reference = submissions.fill(release_nb, source_nb)
    mistake = next(x for x in simulated_class(ASSIGNMENT) if x.replace)
    wrong = submissions.fill(release_nb, source_nb, replace=mistake.replace)
    c.notebooks = {"reference": reference, "wrong": wrong}

    c.stock_submit("honest", reference)
    c.stock_submit("wrong", wrong)
    # Stock nbgrader's own collect of the honest learners alone, for comparison.
    c.stock_root = c.root / "stock_collect"
    stock_collect(c, "honest")
    stock_collect(c, "wrong")
    c.attack("linker", reference_importing_notebook(release_nb, source_nb))
    # Later in the name and in timestamp.txt than wrong's own submission.
    c.attack("planter", reference, name=c.accounts["wrong"], when="2030-01-01 00:00:00.000000")
    attackers = ("dangler", "fifo", "zero", "sparse", "crowd", "shapes")
    folders = {role: c.attack(role, reference) for role in attackers}

    time.sleep(1.1)
    c.duedate = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    with c.course.gradebook() as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=c.duedate)
    time.sleep(1.1)
    folder = c.stock_submit("late", reference)
    # The learner knows their folder's name (stock keeps it in their submit cache).
    c.forged = "2000-01-01 00:00:00.000000 UTC"
    forge = (
        "import os, sys\n"
        "folder, stamp = sys.argv[1:3]\n"
        "open(folder + '/timestamp.txt', 'w').write(stamp)\n"
        "inbound, old = os.path.split(folder)\n"
        "name, assignment, _, rest = old.split('+')\n"
        "os.rename(folder, os.path.join(inbound, f'{name}+{assignment}+{stamp}+{rest}'))\n"
    )
    run_as(c.accounts["late"], ["/usr/bin/python3", "-c", forge, folder, c.forged], c.home("late"))
    stock_collect(c, "late")
    # After the due date a classmate who learned crowd's folder name writes into it
    # (stock submit leaves it world-writable): neither the file nor the time is crowd's.
    write = "import sys; open(sys.argv[1] + '/tpx-note.txt', 'w').write('planted\\n')"
    run_as(
        c.accounts["planter"],
        ["/usr/bin/python3", "-c", write, folders["crowd"]],
        c.home("planter"),
    )

    started = time.perf_counter()
    c.collect = c.nbgrader("collect", ASSIGNMENT)
    c.collect_seconds = time.perf_counter() - started
    # The wrong notebook placed where stock collect puts it, graded alongside.
    c.direct = f"tpx-{c.suffix}-direct"
    c.course.submit(c.direct, ASSIGNMENT, wrong)
    c.grade = c.course.grade("-j", "2", check=False)
    c.feedback = c.nbgrader("generate_feedback", ASSIGNMENT, "--force")
    # A page that is a link (to the reference) in a learner's feedback folder.
    linked_page = c.root / "feedback" / c.accounts["linker"] / ASSIGNMENT / "solution.html"
    if linked_page.parent.is_dir():
        linked_page.symlink_to(c.root / "solutions" / f"{ASSIGNMENT}.py")
    c.release = c.nbgrader("release_feedback", ASSIGNMENT)
    return c


def stock_collect(c: Class, role: str) -> None:
    """nbgrader's own ExchangeCollect of one learner, into a folder of its own."""
    collect_one(ExchangeCollect, c, c.stock_root, c.course.db_url, c.accounts[role])


def collect_one(kind, c: Class, root: Path, db_url: str, student: str) -> None:
    """An nbgrader collect class (`kind`) run for one learner of `c` into `root`."""
    config = Config()
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.course_id = c.course.course_id
    config.CourseDirectory.db_url = db_url
    config.CourseDirectory.assignment_id = ASSIGNMENT
    config.CourseDirectory.student_id = student
    config.Exchange.root = str(c.exchange)
    kind(
        coursedir=CourseDirectory(config=config),
        authenticator=Authenticator(config=config),
        config=config,
    ).start()


def submitted(c: Class, role: str) -> Path:
    return c.root / "submitted" / c.accounts[role] / ASSIGNMENT


def tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def total(c: Class, student: str) -> float:
    return sum(v or 0 for v in c.course.scores(ASSIGNMENT)[student].values())


def full_marks(c: Class, role: str) -> bool:
    """The same marks as the honest learner's reference (every auto-graded cell's points)."""
    scores = c.course.scores(ASSIGNMENT)
    mine, honest = scores[c.accounts[role]], scores[c.accounts["honest"]]
    assert mine == honest, {k: (v, honest[k]) for k, v in mine.items() if v != honest[k]}
    return True


def incidents(c: Class, role: str) -> list[dict]:
    return incidents_in(c.root, c.accounts[role])


def incidents_in(root: Path, student: str) -> list[dict]:
    report = record.read(str(root / "reports" / "exchange_incidents.json"))
    return report.get(ASSIGNMENT, {}).get(student, [])


# -- the commands themselves -------------------------------------------------


def test_stock_commands_exit_zero_with_every_attack_in_the_exchange(klass):
    for what in ("collect", "grade", "feedback", "release"):
        result = getattr(klass, what)
        assert result.returncode == 0, f"{what}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


def test_every_learner_who_handed_in_a_notebook_is_collected(klass):
    collected = {p.parent.name for p in (klass.root / "submitted").glob(f"*/{ASSIGNMENT}")}
    expected = {klass.accounts[r] for r in ROLES if r != "planter"} | {klass.direct}
    assert collected == expected
    assert not (klass.root / "submitted" / klass.accounts["planter"]).exists()


# -- links --------------------------------------------------------------------


def test_links_to_the_reference_are_not_followed_and_earn_nothing(klass):
    folder = submitted(klass, "linker")
    assert sorted(tree(folder)) == sorted([NOTEBOOK, "submission_secret.txt", "timestamp.txt"])
    assert not any(p.is_symlink() for p in folder.rglob("*"))
    assert total(klass, klass.accounts["linker"]) == 0
    reasons = {i["path"]: i["reason"] for i in incidents(klass, "linker")}
    assert set(reasons) == {"solutions", "grader_tests", "gradebook.db", "notes.txt"}
    assert all("링크" in r for r in reasons.values())


def test_the_linkers_feedback_shows_no_reference_check_or_instructor_file(klass):
    page = klass.root / "feedback" / klass.accounts["linker"] / ASSIGNMENT / "multihead.html"
    text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))
    assert INSTRUCTOR_SECRET not in text
    leaked = [line for line in reference_lines(klass) if line in text]
    assert not leaked, leaked[:5]
    every_file = b"".join(tree(submitted(klass, "linker")).values())
    assert INSTRUCTOR_SECRET.encode() not in every_file


def test_a_dangling_link_costs_only_itself(klass):
    assert full_marks(klass, "dangler")
    assert [i["path"] for i in incidents(klass, "dangler")] == ["data.npy"]


def test_a_link_to_dev_zero_is_not_read(klass):
    assert "weights.bin" not in tree(submitted(klass, "zero"))
    assert [i["path"] for i in incidents(klass, "zero")] == ["weights.bin"]
    assert full_marks(klass, "zero")


# -- special and large files ----------------------------------------------------


def test_a_fifo_is_left_out_and_its_page_alone_is_not_released(klass):
    files = tree(submitted(klass, "fifo"))
    assert "submission_secret.txt" not in files and NOTEBOOK in files
    assert [i["path"] for i in incidents(klass, "fifo")] == ["submission_secret.txt"]
    assert full_marks(klass, "fifo")
    assert "submission_secret.txt" in " ".join(release_failures(klass))


def release_failures(c: Class) -> list[str]:
    log = c.release.stdout + c.release.stderr
    return [line for line in log.splitlines() if "피드백을 내보내지 못했습니다" in line]


def test_release_feedback_releases_every_page_it_can_and_follows_no_link(klass):
    pages = list((klass.root / "feedback").glob(f"*/{ASSIGNMENT}/*.html"))
    released = list((klass.exchange / klass.course.course_id / "feedback").glob("*.html"))
    # Not released: fifo's page (no secret), the notebook placed straight into
    # submitted/ (no secret, no timestamp.txt), and the page that is a link.
    failures = release_failures(klass)
    assert len(released) == len(pages) - 3, failures
    assert len(failures) == 3, failures
    for who in (klass.accounts["fifo"], klass.direct, "solution.html"):
        assert any(who in line for line in failures), (who, failures)
    reference = (klass.root / "solutions" / f"{ASSIGNMENT}.py").read_text(encoding="utf-8")
    assert not any(p.read_text(encoding="utf-8") == reference for p in released)
    assert all(p.is_file() and not p.is_symlink() for p in released)


def test_a_sparse_2_gib_file_is_left_out_by_its_size(klass):
    assert "big.bin" not in tree(submitted(klass, "sparse"))
    (item,) = incidents(klass, "sparse")
    assert item["path"] == "big.bin" and "너무 큽니다" in item["reason"]
    assert full_marks(klass, "sparse")


def test_a_crowded_folder_hands_in_its_notebook_within_the_budget(klass):
    files = tree(submitted(klass, "crowd"))
    assert NOTEBOOK in files and "timestamp.txt" in files
    assert len(files) <= 50 + 1  # max_files, and the exchange's own timestamp.txt
    reasons = " ".join(i["reason"] for i in incidents(klass, "crowd"))
    assert "파일이 너무 많습니다" in reasons and "이름에 쓸 수 없는 문자" in reasons
    assert "폴더가 너무 깊습니다" in reasons
    (planted,) = [i for i in incidents(klass, "crowd") if i["path"] == "tpx-note.txt"]
    assert klass.accounts["planter"] in planted["reason"]
    assert full_marks(klass, "crowd")


def test_inbound_entries_that_are_no_folder_are_refused_and_the_real_one_collected(klass):
    reasons = [i["reason"] for i in incidents(klass, "shapes") if not i["path"]]
    assert len(reasons) == 3 and all("폴더가 아니라서" in r for r in reasons)
    assert full_marks(klass, "shapes")


# -- who and when -----------------------------------------------------------------


def test_a_submission_planted_in_a_classmates_name_is_refused(klass):
    victim = klass.accounts["wrong"]
    assert (
        tree(submitted(klass, "wrong"))[NOTEBOOK]
        == (
            klass.root / "stock_collect" / "submitted" / victim / ASSIGNMENT / NOTEBOOK
        ).read_bytes()
    )
    assert klass.course.scores(ASSIGNMENT)[victim] == klass.course.scores(ASSIGNMENT)[klass.direct]
    refused = [i for i in incidents(klass, "wrong") if klass.accounts["planter"] in i["reason"]]
    assert len(refused) == 1 and "다른 학습자" in refused[0]["reason"]


def test_a_late_submission_is_late_whatever_its_timestamp_says(klass):
    student = klass.accounts["late"]
    stock = klass.root / "stock_collect" / "submitted" / student / ASSIGNMENT / "timestamp.txt"
    assert stock.read_text().strip() == klass.forged  # stock believes the learner
    with klass.course.gradebook() as gb:
        submission = gb.find_submission(ASSIGNMENT, student)
        assert submission.timestamp > klass.duedate
        assert submission.total_seconds_late > 0
        for role in ("honest", "wrong", "crowd"):
            assert gb.find_submission(ASSIGNMENT, klass.accounts[role]).total_seconds_late == 0


# -- honest learners ------------------------------------------------------------------


@pytest.mark.parametrize("role", ["honest", "wrong"])
def test_honest_learners_are_collected_as_stock_nbgrader_collects_them(klass, role):
    ours = tree(submitted(klass, role))
    stock = tree(klass.root / "stock_collect" / "submitted" / klass.accounts[role] / ASSIGNMENT)
    assert ours.keys() == stock.keys()
    assert {k: v for k, v in ours.items() if k != "timestamp.txt"} == {
        k: v for k, v in stock.items() if k != "timestamp.txt"
    }
    # Our time is when the exchange got the folder: at or after stock's (the learner's clock).
    ours_when, stock_when = (parse_utc(t["timestamp.txt"].decode()) for t in (ours, stock))
    assert stock_when <= ours_when <= klass.duedate
    assert not [i for i in incidents(klass, role) if i["path"]], "a file was left out"


def test_honest_learners_are_graded_as_stock_grades_them(klass):
    scores, points = klass.course.scores(ASSIGNMENT), klass.course.max_scores(ASSIGNMENT)
    honest = scores[klass.accounts["honest"]]
    auto = {cell: points[cell] for cell, score in honest.items() if score is not None}
    assert auto and {cell: honest[cell] for cell in auto} == auto, "the reference lost points"
    assert scores[klass.accounts["wrong"]] == scores[klass.direct]
    assert total(klass, klass.direct) < sum(auto.values())


def test_the_course_config_uses_the_safe_exchange():
    from coursekit.core.course import Course
    from coursekit.exchange.collect import SafeExchangeCollect
    from coursekit.exchange.transfer import (
        SafeExchangeFetchAssignment,
        SafeExchangeReleaseAssignment,
        SafeExchangeReleaseFeedback,
        SafeExchangeSubmit,
    )

    factory = ExchangeFactory(config=Course(ROOT).config)
    assert factory.collect is SafeExchangeCollect
    assert factory.submit is SafeExchangeSubmit
    assert factory.fetch_assignment is SafeExchangeFetchAssignment
    assert factory.release_assignment is SafeExchangeReleaseAssignment
    assert factory.release_feedback is SafeExchangeReleaseFeedback


# -- the course side of fetch and submit (the demo's one account) ------------------


def test_submit_on_the_course_side_copies_no_link_and_reads_no_fifo(klass, tmp_path):
    workspace = tmp_path / "learner"
    folder = learner_actions.fetch(klass.course, workspace, "tpx-course-side", ASSIGNMENT)
    (folder / "reference.py").symlink_to(klass.root / "solutions" / f"{ASSIGNMENT}.py")
    os.mkfifo(folder / "pipe")
    learner_actions.submit(klass.course, workspace, "tpx-course-side", ASSIGNMENT)
    (sent,) = klass.inbound.glob(f"tpx-course-side+{ASSIGNMENT}+*")
    assert sorted(p.name for p in sent.iterdir()) == [
        NOTEBOOK,
        "submission_secret.txt",
        "timestamp.txt",
    ]


def test_fetch_writes_through_no_link_in_the_learners_folder(klass, tmp_path):

    workspace = tmp_path / "learner"
    folder = workspace / ASSIGNMENT
    folder.mkdir(parents=True)
    target = tmp_path / "outside" / "planted.ipynb"
    target.parent.mkdir()
    (folder / NOTEBOOK).symlink_to(target)  # dangling: stock fetch would create target
    conf = Config()  # the course's fetch class; replace missing files, as the lab's button does
    conf.CourseDirectory.course_id = klass.course.course_id
    conf.CourseDirectory.assignment_id = ASSIGNMENT
    conf.Exchange.root = str(klass.exchange)
    conf.Exchange.assignment_dir = str(workspace)
    conf.ExchangeFetchAssignment.replace_missing_files = True
    conf.ExchangeFactory.fetch_assignment = klass.course.config.ExchangeFactory.fetch_assignment
    ExchangeFactory(config=conf).FetchAssignment(
        coursedir=CourseDirectory(config=conf),
        authenticator=Authenticator(config=conf),
        config=conf,
    ).start()
    assert not target.exists()
    assert (folder / NOTEBOOK).is_symlink()


# -- a classmate who learned a submission folder's name ----------------------------

# Run by the classmate's account: each attempt on its own, by plain os calls.
CLASSMATE_SCRIPT = r"""
import json, os, sys
folder = sys.argv[1]

def attempt(action):
    try:
        action()
    except OSError as error:
        return error.__class__.__name__
    return "done"

notebook = os.path.join(folder, "multihead.ipynb")
print(json.dumps({
    "add a file": attempt(lambda: open(os.path.join(folder, "planted.txt"), "x").close()),
    "overwrite the notebook": attempt(lambda: open(notebook, "r+b").write(b"{}")),
    "rename a file": attempt(
        lambda: os.rename(os.path.join(folder, "submission_secret.txt"), folder + "/secret")
    ),
    "delete a file": attempt(lambda: os.unlink(os.path.join(folder, "timestamp.txt"))),
    "rename the folder": attempt(lambda: os.rename(folder, folder + "0")),
}))
"""


def test_a_classmate_who_knows_a_submissions_name_can_change_nothing_in_it(klass, tmp_path):
    owner, classmate = klass.add_account("owner"), klass.add_account("classmate")
    assert klass.inbound.stat().st_mode & 0o7777 == 0o3733  # stock's 2733, and sticky
    # What stock `nbgrader submit` leaves (the folder 0777), then the course's submit.
    stock = Path(klass.stock_submit("owner", klass.notebooks["wrong"]))
    stock_attempts = json.loads(
        run_as(classmate, ["/usr/bin/python3", "-c", CLASSMATE_SCRIPT, str(stock)], tmp_path).stdout
    )
    klass.give("owner", klass.notebooks["reference"], f"course/{ASSIGNMENT}/{NOTEBOOK}")
    workspace = klass.home("owner") / "course"
    as_account(
        owner,
        klass.home("owner"),
        lambda: learner_actions.submit(klass.course, workspace, owner, ASSIGNMENT),
    )
    (ours,) = [p for p in klass.inbound.glob(f"{owner}+{ASSIGNMENT}+*") if p != stock]
    assert ours.stat().st_mode & 0o022 in (0, 0o020)  # others never write; the group: staff
    attempts = json.loads(
        run_as(classmate, ["/usr/bin/python3", "-c", CLASSMATE_SCRIPT, str(ours)], tmp_path).stdout
    )
    # In stock's folder the classmate changes its files; only the sticky bit keeps it in place.
    assert stock_attempts == {
        "add a file": "done",
        "overwrite the notebook": "PermissionError",
        "rename a file": "done",
        "delete a file": "done",
        "rename the folder": "PermissionError",
    }
    assert set(attempts.values()) == {"PermissionError"}, attempts
    assert sorted(p.name for p in ours.iterdir()) == [
        NOTEBOOK,
        "submission_secret.txt",
        "timestamp.txt",
    ]
    # Collect (as root here, the instructor's account on the hub) takes it whole.
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    collect_one(SafeExchangeCollect, klass, tmp_path / "collected", db_url, owner)
    collected = tmp_path / "collected" / "submitted" / owner / ASSIGNMENT
    handed_in = (workspace / ASSIGNMENT / NOTEBOOK).read_bytes()
    assert (collected / NOTEBOOK).read_bytes() == handed_in
    assert not [i for i in incidents_in(tmp_path / "collected", owner) if i["path"]]
