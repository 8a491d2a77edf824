"""A new SQLite gradebook stamped with nbgrader's schema version in-process, named in its URL.

nbgrader's `Gradebook` learns the version of a database it creates by running
`alembic heads` as a process of its own (`nbgrader.api.get_alembic_version`):
1.6 CPU-s, paid by the first stock command of every new course, and by every
test course. The course's URL (`gradebook_url`, the WAL URL of
`core.gradebook_wal.sqlite_url` and `&plugin=coursekit.stamp`) names this
SQLAlchemy engine plugin too: the first connection
to a database without tables writes what nbgrader would write there,
`alembic_version` with the head of nbgrader's own migrations, read in-process
from the installed nbgrader's alembic folder (0.08 CPU-s). nbgrader then finds
a database, creates its tables itself and starts no process. A database with any
table is left alone, so `nbgrader db upgrade` and an older gradebook see no change.

Found by its entry point (`sqlalchemy.plugins` in pyproject.toml), and registered
again when this module is imported (the course's config imports `gradebook_url`), so
a stale `coursekit.egg-info` on the path cannot hide it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sqlite3

from sqlalchemy.dialects import plugins

from coursekit.core.gradebook_wal import SqliteConnectPlugin, sqlite_url

NAME = "coursekit.stamp"  # the plugin's name in a URL: ?plugin=coursekit.stamp


def gradebook_url(path: str | os.PathLike) -> str:
    """The course's SQLite gradebook at `path`: in WAL mode, its writers patient
    (`sqlite_url`), and stamped in-process when new."""
    return f"{sqlite_url(path)}&plugin={NAME}"


@functools.cache
def schema_version() -> str:
    """The head of the installed nbgrader's migrations: what `alembic heads` prints."""
    from alembic.script import ScriptDirectory

    # Found, not imported: importing nbgrader's package costs 1 CPU-s (its __init__ pulls in
    # its apps, exchange and server extensions), and opening a gradebook does not need it.
    (package,) = importlib.util.find_spec("nbgrader").submodule_search_locations
    return ScriptDirectory(os.path.join(package, "alembic")).get_current_head()


def answer_schema_version_in_process() -> None:
    """In this process, nbgrader's own `get_alembic_version` answered by `schema_version`:
    for a process whose gradebooks have nbgrader's default URL, without the plugin
    (nbgrader's app tests, tests/test_stock_exchange_apps.py)."""
    import nbgrader.api

    nbgrader.api.get_alembic_version = schema_version


def stamp_if_new(dbapi_connection: sqlite3.Connection, connection_record) -> None:
    """`alembic_version` in a database with no table yet, as nbgrader's Gradebook writes it."""
    has_tables = dbapi_connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
    if has_tables:
        return
    version = schema_version()
    # Two processes may open the new database at once: the write lock is taken before
    # either looks again, and the second finds the first one's row.
    isolation, dbapi_connection.isolation_level = dbapi_connection.isolation_level, None
    try:
        dbapi_connection.execute("BEGIN IMMEDIATE")
        dbapi_connection.execute(
            "CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR(32) NOT NULL)"
        )
        dbapi_connection.execute(
            "INSERT INTO alembic_version (version_num)"
            " SELECT ? WHERE NOT EXISTS (SELECT 1 FROM alembic_version)",
            (version,),
        )
        dbapi_connection.execute("COMMIT")
    finally:
        dbapi_connection.isolation_level = isolation


class StampPlugin(SqliteConnectPlugin):
    """`?plugin=coursekit.stamp`: a new SQLite gradebook stamped on its first connection."""

    on_connect = staticmethod(stamp_if_new)


plugins.register(NAME, __name__, "StampPlugin")
