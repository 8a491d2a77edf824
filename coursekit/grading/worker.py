"""Grade one collected submission with stock `nbgrader autograde`, in this process.

A worker process is forked once and grades many submissions, so the 2.4 s
start of an nbgrader process is paid once per worker, not per notebook
(nbgrader #174). Each call builds a fresh AutogradeApp from the course's
nbgrader_config.py, exactly as `nbgrader autograde ASSIGNMENT --student S
--force` would, so the gradebook gets what stock autograde writes; two of its
preprocessors are swapped for ones that write and check the same with less
repeated work (`fast`: metadata checks remembered, one commit per notebook).

Several workers write one gradebook. Stock nbgrader opens short sessions;
SQLite waits for a lock up to its busy timeout, and a submission whose
gradebook write still fails (a lock conflict nbgrader reports as an error)
is simply graded again: autograde with --force is idempotent.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field

from coursekit.grading import budget, fast

ATTEMPTS = 3


@dataclass
class Outcome:
    assignment: str
    student: str
    ok: bool
    seconds: float
    attempts: int
    errors: list[str] = field(default_factory=list)


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage()[-2000:])


def init_worker(root: str, extra_args: list[str], budget_file: str | None = None) -> None:
    os.chdir(root)
    global _EXTRA_ARGS, _BUDGET_FILE
    _EXTRA_ARGS = list(extra_args)
    _BUDGET_FILE = budget_file
    if budget_file:
        budget.install()


_EXTRA_ARGS: list[str] = []
_BUDGET_FILE: str | None = None


def autograde_once(assignment: str, student: str) -> tuple[bool, list[str]]:
    """Run stock autograde for one learner: did it succeed, and what it logged as errors."""
    from nbgrader.apps import AutogradeApp

    app = AutogradeApp()
    collect = _Collect()
    try:
        with budget.BUDGET.phase("app"):
            app.initialize(
                [assignment, f"--student={student}", "--force", "--log-level=ERROR", *_EXTRA_ARGS]
            )
            fast.use_in(app.config)
            app.log.addHandler(collect)
            app.start()
    except SystemExit as stop:  # nbgrader exits 1 when a submission failed
        if stop.code not in (0, None):
            return False, collect.messages or [f"nbgrader exited with {stop.code}"]
    except Exception as error:  # anything else is the grader breaking, not the learner
        return False, [*collect.messages, f"{type(error).__name__}: {error}"]
    finally:
        app.log.removeHandler(collect)
        app.clear_instance()
    return True, collect.messages


def grade(task: tuple[str, str]) -> Outcome:
    assignment, student = task
    started = time.perf_counter()
    budget.BUDGET.reset()
    try:
        with budget.BUDGET.phase("worker"):
            return _grade(assignment, student, started)
    finally:
        if _BUDGET_FILE:
            budget.append(_BUDGET_FILE, assignment, student, budget.BUDGET.record())


def _grade(assignment: str, student: str, started: float) -> Outcome:
    errors: list[str] = []
    for attempt in range(1, ATTEMPTS + 1):
        ok, errors = autograde_once(assignment, student)
        if ok:
            return Outcome(assignment, student, True, time.perf_counter() - started, attempt)
        time.sleep(0.5 * attempt)
    return Outcome(assignment, student, False, time.perf_counter() - started, ATTEMPTS, errors)
