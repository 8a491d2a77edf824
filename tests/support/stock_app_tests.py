"""A pytest plugin for nbgrader's own app tests as tests/test_stock_exchange_apps.py runs
them (`-p tests.support.stock_app_tests`).

Each of their new gradebooks has nbgrader's default URL, so nbgrader learns its schema
version from an `alembic heads` process of its own: 1.3 CPU-s, about twenty times a run,
for one and the same answer. Here it is read in-process instead
(`new_gradebook.answer_schema_version_in_process`); tests/test_nbgrader_contract.py shows
that both give the same version. Nothing the exchange does changes.
"""

from __future__ import annotations

from coursekit.nbgrader_internals import new_gradebook


def pytest_configure(config) -> None:
    new_gradebook.answer_schema_version_in_process()
