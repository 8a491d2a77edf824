"""The one owner of nbgrader's SQLAlchemy warning (SAWarning).

nbgrader's `add_submission` links each new row to its parents before the
session holds it, and SQLAlchemy 2 warns ("Object of type <Submitted...>
not in session, add operation along ... will not proceed") that the link
alone will not add it; nbgrader adds the rows itself and they are written
(tests/test_grade_parallel.py: the gradebook equals stock's). Printed three
times per learner, those lines would bury what a command says.
"""

from __future__ import annotations

import contextlib
import warnings

from sqlalchemy.exc import SAWarning

ADD_SUBMISSION_WARNING = r"Object of type <Submitted\w+> not in session, add operation along"


def ignore_add_submission_warning() -> None:
    """For the rest of this process, leave out that warning only (a grading worker)."""
    warnings.filterwarnings("ignore", message=ADD_SUBMISSION_WARNING, category=SAWarning)


def ignore_sawarnings() -> None:
    """For the rest of this process, leave out every SAWarning (nbgrader's API driven in
    process, as the simulated instructor does)."""
    warnings.filterwarnings("ignore", category=SAWarning)


@contextlib.contextmanager
def sawarnings_ignored():
    """Within the block, leave out every SAWarning (a submission written through nbgrader's
    `update_or_create_submission`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        yield
