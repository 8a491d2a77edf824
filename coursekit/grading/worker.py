"""Grade one collected submission with stock `nbgrader autograde`, in this process.

A worker process is forked once and grades many submissions, so the 2.4 s
start of an nbgrader process is paid once per worker, not per notebook
(nbgrader #174). Each call builds a fresh AutogradeApp from the course's
nbgrader_config.py, exactly as `nbgrader autograde ASSIGNMENT --student S
--force` would, so the gradebook gets what stock autograde writes; three of its
preprocessors are swapped for ones that write and check the same with less
repeated work (`once_per_notebook`: metadata checks remembered, a notebook's cells read
from the gradebook once, one commit per notebook), and its gradebooks share
one SQLAlchemy engine per URL (`share_engines`).

Several workers write one gradebook. Stock nbgrader opens short sessions;
SQLite waits for a lock up to its busy timeout, and a submission whose
gradebook write still fails (a lock conflict nbgrader reports as an error)
is simply graded again: autograde with --force is idempotent.
"""

from __future__ import annotations

import ast
import importlib
import logging
import os
import sys
import time

from coursekit.grading import budget, once_per_notebook
from coursekit.grading.task import Result

ATTEMPTS = 3


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
    share_engines()
    quiet_known_warnings()
    if budget_file:
        budget.install()


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
    gradebook is compiled again (`make grade --budget`). Sharing the engine
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


# Imported by every worker while it grades its first notebook: jupyter_client's
# kernelspec lookup imports these two when it starts the first kernel.
FIRST_NOTEBOOK_MODULES = ("ipykernel.kernelspec", "IPython.paths")


def preload(db_url: str, course_id: str, assignments) -> list[str]:
    """Import in the parent, before the workers fork, what each of them would import.

    Each worker otherwise imports, while grading its first notebook, the
    modules that the instructor's locked cells import on the grader's side
    (the setup cells and the test cells `trusted` runs: numpy, pandas, the
    hidden checks; pandas alone is ~1.3 s of CPU) and FIRST_NOTEBOOK_MODULES.
    Forked workers inherit what the parent imported, so that CPU is spent
    once instead of once per worker. The module names come from the sources
    the gradebook holds for those cells — the instructor's, never a learner's —
    and a module that fails to import is left for the worker to fail on, as
    before. Returns the modules imported.
    """
    from nbgrader.api import Gradebook, MissingEntry

    names = dict.fromkeys(FIRST_NOTEBOOK_MODULES)
    with Gradebook(db_url, course_id) as gb:
        for assignment in sorted(set(assignments)):
            try:
                notebooks = gb.find_assignment(assignment).notebooks
            except MissingEntry:
                continue
            for notebook in notebooks:
                for cell in notebook.source_cells:
                    if cell.cell_type == "code" and cell.locked:
                        names.update(dict.fromkeys(_imported_modules(cell.source)))
    loaded = []
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # the worker meets the same failure where it always did
            continue
        loaded.append(name)
    return loaded


def _imported_modules(source: str) -> list[str]:
    """Absolute module names a cell's import statements name (magics left out)."""
    code = "\n".join(
        line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
    )
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
            # `from package import module`: the submodule too, when there is one
            found += [f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*"]
    return found


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


def grade(task: tuple[str, str]) -> Result:
    """Grade one learner's submission; the result has what autograde did, not yet its rows
    and files (the caller reads them: task.read_outcome)."""
    assignment, student = task
    started = time.perf_counter()
    budget.BUDGET.reset()
    try:
        with budget.BUDGET.phase("worker"):
            return _grade(assignment, student, started)
    finally:
        if _BUDGET_FILE:
            budget.append(_BUDGET_FILE, assignment, student, budget.BUDGET.record())


def _grade(assignment: str, student: str, started: float) -> Result:
    errors: list[str] = []
    for attempt in range(1, ATTEMPTS + 1):
        ok, errors = autograde_once(assignment, student)
        if ok:
            return Result(assignment, student, True, time.perf_counter() - started, attempt)
        time.sleep(0.5 * attempt)
    return Result(assignment, student, False, time.perf_counter() - started, ATTEMPTS, errors)
