"""A class of real local accounts and `coursekit live` runs on it: what the live tests
(tests/test_live.py, tests/test_live_burst.py) and `make bench ARGS=--live` share.

A scratch course and exchange as tests/support/untrusted_class.py makes them
(accounts `tpx-…`, or the prefix a caller gives, removed at the end): each
learner submits with nbgrader's own exchange submit (the course's class, in a
fork that has become their account: the course's interpreter lives under
/root, which they cannot enter) while `coursekit live` runs as the
instructor, and fetches what it released with nbgrader's own fetch_feedback.
No wall-clock assert: every wait polls with a generous bound.
"""

from __future__ import annotations

import contextlib
import html
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coursekit.cluster.driver import LEDGER
from coursekit.core.environment import venv_environment
from coursekit.live import attempts
from coursekit.simulate import learner_actions, submissions
from coursekit.simulate.instructor import Instructor
from tests.support.course_sandbox import CourseSandbox
from tests.support.untrusted_class import (
    ASSIGNMENT,
    NOTEBOOK,
    Class,
    as_account,
    copy_course_packages,
    shared_folders,
)

WAIT = 600  # seconds: a bound on each wait, never a measurement
WRONG = "split_heads__reshape_without_transpose"  # a catalog mistake with a misconception
LIVE = [sys.executable, "-m", "coursekit", "live"]


class Live(Class):
    """The class, and the live service's runs on it."""

    def __init__(self, root: Path, exchange: Path, homes: Path, prefix: str = "tpx"):
        super().__init__(root, exchange, homes)
        self.prefix = prefix
        self.runs: list[Path] = []  # each run's output
        self.procs: list[subprocess.Popen] = []

    def start(self, jobs: int = 2) -> subprocess.Popen:
        log = self.root / f"live-run-{len(self.runs) + 1}.log"
        self.runs.append(log)
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [*LIVE, "--root", str(self.root), "-j", str(jobs), "--rescan", "1"],
                cwd=self.root,
                env=venv_environment(),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its cluster and kernels: one group to kill
            )
        self.procs.append(proc)
        return proc

    def output(self) -> str:
        return "".join(log.read_text(encoding="utf-8", errors="replace") for log in self.runs)

    def submit(self, role: str, nb) -> None:
        self.give(role, nb, f"course/{ASSIGNMENT}/{NOTEBOOK}")
        workspace = self.home(role) / "course"
        learner = self.accounts[role]
        as_account(
            learner,
            self.home(role),
            lambda: learner_actions.submit(self.course, workspace, learner, ASSIGNMENT),
        )

    def fetch_feedback(self, role: str) -> dict[str, str]:
        """Each fetched page's text (tags stripped), by the submission's time folder."""
        workspace = self.home(role) / "course"
        learner = self.accounts[role]
        as_account(
            learner,
            self.home(role),
            lambda: learner_actions.fetch_feedback(self.course, workspace, learner, ASSIGNMENT),
        )
        folder = workspace / ASSIGNMENT / "feedback"
        return {
            page.parent.name: text_of(page.read_text(encoding="utf-8"))
            for page in sorted(folder.glob(f"*/{NOTEBOOK[: -len('.ipynb')]}.html"))
        }

    def records(self, role: str) -> list[attempts.Attempt]:
        return attempts.of_learner(self.root, ASSIGNMENT, self.accounts[role])

    def entries(self, role: str) -> list[str]:
        """The learner's own inbound folders (not one a classmate planted in their name)."""
        uid = pwd.getpwnam(self.accounts[role]).pw_uid
        found = self.inbound.glob(f"{self.accounts[role]}+{ASSIGNMENT}+*")
        return sorted(p.name for p in found if p.lstat().st_uid == uid)

    def ledger(self) -> dict[str, tuple]:
        with self.course.gradebook() as gb:
            rows = gb.db.execute(LEDGER.select().where(LEDGER.c.assignment == ASSIGNMENT))
            return {row.student: (row.digest, row.graded_at) for row in rows}

    def kill_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@contextlib.contextmanager
def live_class(folder: Path, roles, prefix: str = "tpx"):
    """A Live class with an account per role in a shared exchange; every account, the
    exchange, the homes and every service run gone afterwards."""
    exchange, homes = shared_folders()
    c = Live(folder, exchange, homes, prefix)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("COURSE_EXCHANGE_ROOT", str(exchange))
        try:
            for role in roles:
                c.add_account(role)
            yield c
        finally:
            c.kill_all()
            c.remove_accounts()
            shutil.rmtree(exchange, ignore_errors=True)
            shutil.rmtree(homes, ignore_errors=True)


def released_course(c: Live, min_interval: int) -> None:
    """The assignment generated and released, with the attempt policy's interval;
    `c.reference` and `c.wrong` the notebooks learners hand in."""
    copy_course_packages(c.root)
    with (c.root / "nbgrader_config.py").open("a", encoding="utf-8") as fh:
        fh.write(f"\nc.LiveGrading.min_interval = {min_interval}\n")
    instructor = Instructor(c.root)
    instructor.generate_assignment(ASSIGNMENT)
    instructor.release_assignment(ASSIGNMENT)
    assert c.course.config.Exchange.root == str(c.exchange)
    release_nb = c.course.release_notebook(ASSIGNMENT)
    source_nb = c.course.source_notebook(ASSIGNMENT)
    c.reference = submissions.fill(release_nb, source_nb)
    c.wrong = submissions.fill(
        release_nb, source_nb, replace={"split_heads": catalog_source(WRONG)}
    )


def text_of(page: str) -> str:
    page = re.sub(r"<(script|style)\b.*?</\1>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def wait_for(what: str, done, proc: subprocess.Popen | None = None, c: Live | None = None):
    deadline = time.monotonic() + WAIT
    while not done():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(
                f"the service exited ({proc.returncode}) before {what}:\n"
                f"{c.output()[-4000:] if c else ''}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {WAIT} s:\n{c.output()[-4000:] if c else ''}")
        time.sleep(0.5)


def handled(c: Live, roles) -> bool:
    return all(len(c.records(r)) == len(c.entries(r)) > 0 for r in roles)


def stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=WAIT)


def graded_lines(c: Live, role: str) -> list[str]:
    """The service's "graded" lines for this learner, over every run."""
    learner = re.escape(c.accounts[role])
    return re.findall(rf"^{learner} {ASSIGNMENT}: 채점했습니다", c.output(), re.M)


def catalog_source(key: str) -> str:
    from coursekit.simulate.demo import catalogs

    (entry,) = [e for e in catalogs()[ASSIGNMENT].mistakes if f"{e.function}__{e.key}" == key]
    return entry.source


def stock_course(c: Live) -> CourseSandbox:
    """A course of its own beside `c`'s, with its references and checks, the assignment
    generated: where stock `nbgrader autograde` grades copies of `c`'s submissions."""
    folder = c.root.parent / f"{c.root.name}-stock"
    folder.mkdir()
    copy = CourseSandbox(folder)
    for name in ("solutions", "grader_tests"):
        shutil.copytree(c.root / name, copy.root / name)
    Instructor(copy.root).generate_assignment(ASSIGNMENT)
    return copy


def stock_autograde(c: Live, roles) -> dict:
    """Stock `nbgrader autograde` of the same submitted folders in a course of its own."""
    copy = stock_course(c)
    for role in roles:
        learner = c.accounts[role]
        shutil.copytree(
            c.root / "submitted" / learner / ASSIGNMENT,
            copy.root / "submitted" / learner / ASSIGNMENT,
        )
    copy.autograde(ASSIGNMENT)
    return copy.scores(ASSIGNMENT)
