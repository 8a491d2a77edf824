"""A busy SQLite gradebook delays a write, never drops it: WAL, named in the gradebook's URL.

In SQLite's default journal mode a reader blocks a writer: while a staff page
holds a read transaction, a TA's save through nbgrader's Gradebook waits, and
fails with "database is locked" after nbgrader's engine's 5 s. In WAL mode a
reader never blocks a writer (nor a writer a reader); writers still take turns,
and the URL's `timeout` says how long one waits for another.

The course names both where it names its gradebook, `c.CourseDirectory.db_url`
in nbgrader_config.py, with `sqlite_url(path)` (extended by
`nbgrader_internals.new_gradebook.gradebook_url`, the course's URL):

    sqlite:////course/gradebook.db?timeout=120&plugin=coursekit.wal

`timeout` is SQLite's busy timeout (pysqlite's own argument, in seconds);
`plugin=coursekit.wal` is this SQLAlchemy engine plugin, which puts every new
connection of that engine in WAL mode. So every process given the course's
URL gets both through nbgrader's own `create_engine(db_url)`: formgrader,
stock commands, `make grade`'s driver, the live service, the TA report. The
plugin is found by its entry point (`sqlalchemy.plugins` in coursekit's
pyproject.toml), and registered again when this module is imported (the
config imports it), so a stale `coursekit.egg-info` on the path cannot hide
it. A URL without it (a grading worker's scratch gradebook, which is copied
and removed per notebook) keeps SQLite's default. PostgreSQL needs neither.

WAL is a property of the database file, kept across connections: once set,
a connection that was given a plain URL uses it too. It needs the gradebook's
folder on a local disk (one machine's processes share its `-shm` index) that
its readers may write to: for several grading machines the gradebook is
PostgreSQL (docs/grading.md). `nbgrader db upgrade` reads the file's path
from a plain URL only: run it with `--db=sqlite:///gradebook.db`.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.dialects import plugins
from sqlalchemy.engine import CreateEnginePlugin

NAME = "coursekit.wal"  # the plugin's name in a URL: ?plugin=coursekit.wal
BUSY_TIMEOUT = 120  # seconds a writer waits for another one (nbgrader's engine: 5)


def sqlite_url(path: str | Path) -> str:
    """The URL of an SQLite gradebook at `path` in WAL mode, its writers patient."""
    return f"sqlite:///{path}?timeout={BUSY_TIMEOUT}&plugin={NAME}"


def set_wal(dbapi_connection, connection_record) -> None:
    """The connection's database in WAL mode (a no-op when it is already)."""
    # Switching needs the file to itself: another connection holding it for longer than
    # the busy timeout leaves this one in the old mode, and the next one switches.
    with contextlib.suppress(sqlite3.OperationalError):
        dbapi_connection.execute("PRAGMA journal_mode=WAL").close()


class SqliteConnectPlugin(CreateEnginePlugin):
    """An engine plugin named in a gradebook's URL that runs `on_connect(dbapi_connection,
    connection_record)` on each new connection of an SQLite engine (other engines: nothing)."""

    on_connect = None  # a subclass's function, as staticmethod(...)

    def update_url(self, url):
        return url  # it takes no argument of its own from the URL

    def engine_created(self, engine) -> None:
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", self.on_connect)


class WalPlugin(SqliteConnectPlugin):
    """`?plugin=coursekit.wal`: an SQLite engine's connections in WAL mode."""

    on_connect = staticmethod(set_wal)


plugins.register(NAME, __name__, "WalPlugin")
