"""Session fixtures shared by several test modules."""

from __future__ import annotations

import pytest

from tests.demo_class import DemoRun, shared_demo_run


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> DemoRun:
    return shared_demo_run(tmp_path_factory)
