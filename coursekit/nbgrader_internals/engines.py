"""nbgrader's gradebook engines and sessions, used as nbgrader does not.

`share_engines` replaces `nbgrader.api.create_engine` in a grading worker;
`CommitAtEnd` (and `commit_at_end`, which puts one in a `Gradebook`'s `db`)
turns nbgrader's many commits into one.
"""

from __future__ import annotations

import contextlib


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


class CommitAtEnd:
    """A gradebook session whose commits are flushes, until `commit_now`."""

    def __init__(self, session):
        self._session = session

    def __getattr__(self, name):
        return getattr(self._session, name)

    def commit(self) -> None:
        self._session.flush()

    def commit_now(self) -> None:
        self._session.commit()


@contextlib.contextmanager
def commit_at_end(gb):
    """`gb.db` a `CommitAtEnd` within the block (nbgrader's methods commit into it; the
    caller's `commit_now` writes); rolled back when the block fails, restored after."""
    plain, session = gb.db, CommitAtEnd(gb.db)
    gb.db = session
    try:
        yield session
    except BaseException:
        plain.rollback()
        raise
    finally:
        gb.db = plain
