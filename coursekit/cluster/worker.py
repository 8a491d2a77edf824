"""Grade one collected submission with stock `nbgrader autograde`, in this process.

A Dask worker process grades many submissions, so the 2.4 s start of an
nbgrader process is paid once per worker, not per notebook (nbgrader #174).
Each call builds a fresh AutogradeApp from the course's nbgrader_config.py,
exactly as `nbgrader autograde ASSIGNMENT --student S
--force` would, so the gradebook gets what stock autograde writes; three of its
preprocessors are swapped for ones that write and check the same with less
repeated work (`once_per_notebook`: metadata checks remembered, a notebook's cells read
from the gradebook once, one commit per notebook), and its gradebooks share
one SQLAlchemy engine per URL (`share_engines`). The worker writes only its
scratch course (coursekit.cluster.task); the driver alone writes the class's.
"""

from __future__ import annotations

import logging
import os
import time

from coursekit.autograde import once_per_notebook
from coursekit.cluster.submission import Result


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
    share_engines()
    quiet_known_warnings()


def quiet_known_warnings() -> None:
    """Leave out the warning stock autograde prints three times per learner.

    nbgrader's `add_submission` links each new row to its parents before the
    session holds it, and SQLAlchemy 2 warns ("Object of type <Submitted...>
    not in session, add operation along ... will not proceed") that the link
    alone will not add it; nbgrader adds the rows itself and they are written
    (tests/test_grade_parallel.py: the gradebook equals stock's). In `make
    grade` those lines would bury the progress lines; no other warning is hidden.
    """
    import warnings

    from sqlalchemy.exc import SAWarning

    warnings.filterwarnings(
        "ignore",
        message=r"Object of type <Submitted\w+> not in session, add operation along",
        category=SAWarning,
    )


def share_engines() -> None:
    """One SQLAlchemy engine per gradebook URL in this worker, not one per `Gradebook(...)`.

    nbgrader opens a `Gradebook` about ten times per notebook (autograde's
    init_assignment alone five times, then OverwriteCells, the execute step,
    SaveAutoGrades, AssignLatePenalties) and each one calls `create_engine`:
    a new engine has an empty compiled-SQL cache, so every query of every
    gradebook is compiled again (bench/budget.py). Sharing the engine
    keeps that cache; nothing else changes: each Gradebook still has its own
    session, and its `close()` still disposes of the engine's connections (an
    engine stays usable after `dispose`, it opens new ones). Call it in a
    worker after the fork: an engine's connections must not cross a fork.
    """
    import nbgrader.api
    from sqlalchemy import create_engine

    if getattr(nbgrader.api.create_engine, "_shared", False):
        return
    engines: dict = {}

    def shared_engine(url, **kwargs):
        key = (str(url), tuple(sorted(kwargs.items())))
        if key not in engines:
            engines[key] = create_engine(url, **kwargs)
        return engines[key]

    shared_engine._shared = True
    nbgrader.api.create_engine = shared_engine


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
        once_per_notebook.use_in(app.config)
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
