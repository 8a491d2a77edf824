"""Grade one collected submission with stock `nbgrader autograde`, in this process.

A Dask worker process grades many submissions, so the 2.4 s start of an
nbgrader process is paid once per worker, not per notebook (nbgrader #174).
Each call builds a fresh AutogradeApp from the course's nbgrader_config.py,
exactly as `nbgrader autograde ASSIGNMENT --student S
--force` would, so the gradebook gets what stock autograde writes; three of its
preprocessors are swapped for ones that write and check the same with less
repeated work (coursekit.nbgrader_internals.preprocessors: metadata checks
remembered, a notebook's cells read from the gradebook once, one commit per
notebook), and its gradebooks share one SQLAlchemy engine per URL
(coursekit.nbgrader_internals.engines). The worker writes only its
scratch course (coursekit.cluster.task); the driver alone writes the class's.
"""

from __future__ import annotations

import logging
import os
import time

from coursekit.cluster.submission import Result
from coursekit.nbgrader_internals import engines, preprocessors, quiet


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage()[-2000:])


def prepare(root: str) -> None:
    """Make this process ready to grade the course at `root` (autograde reads the folder
    it runs in): idempotent, so each task may call it."""
    os.chdir(root)
    engines.share_engines()
    # nbgrader's add_submission warns three times per learner; in `make grade` those lines
    # would bury the progress lines; no other warning is hidden
    quiet.ignore_add_submission_warning()


# Imported by every worker before it grades its first notebook (worker_start): jupyter_client's
# kernelspec lookup imports these two when it starts the first kernel.
FIRST_NOTEBOOK_MODULES = ("ipykernel.kernelspec", "IPython.paths")


def autograde_once(assignment: str, student: str, extra_args: list[str]) -> tuple[bool, list[str]]:
    """Run stock autograde for one learner: did it succeed, and what it logged as errors."""
    from nbgrader.apps import AutogradeApp

    app = AutogradeApp()
    collect = _Collect()
    try:
        app.initialize(
            [assignment, f"--student={student}", "--force", "--log-level=ERROR", *extra_args]
        )
        preprocessors.use_in(app.config)
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


def grade(assignment: str, student: str, extra_args: list[str]) -> Result:
    """Grade one learner's submission in the course of the current folder (`prepare`): what
    autograde did, not yet its rows and files (the caller reads them: task.read_outcome).

    Once: the worker grades into a scratch gradebook of its own, so no other writer can
    make a write fail, and autograde failing twice on the same files fails the same way.
    """
    started = time.perf_counter()
    ok, errors = autograde_once(assignment, student, extra_args)
    return Result(assignment, student, ok, time.perf_counter() - started, 1, [] if ok else errors)
