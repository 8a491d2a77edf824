"""Session fixtures shared by several test modules, and how the two workers share the work."""

from __future__ import annotations

import pytest

from tests.support.demo_class import DemoRun, shared_demo_run

# Work units (an xdist_group, or one ungrouped test's module) that take longest, longest
# first. `make test` runs pytest-xdist with --dist loadgroup --no-loadscope-reorder: a worker
# that runs low takes the next unit in collection order, so starting the long units first
# lets both workers finish together (longest-processing-time-first). From
# `pytest --durations` of the whole suite; a name missing here only runs later.
SLOWEST_FIRST = (
    "test_hub_browser",  # a class on JupyterHub, then its live workshop, in Chromium (~260 s)
    "demo_cycle",  # the demo's whole cycle, then the report, feedback and browser tests (~190 s)
    "validate_class",
    "grade_cluster",  # make grade on a LocalCluster and on a TLS cluster from the command line
    "hostile",
    "ch4_cross_attention",  # test_autograde: every catalog entry through make grade
    "test_staff_views_inert",  # a graded class in formgrader, feedback and the report, in Chromium
    "test_exchange_untrusted",  # collect, grade and release feedback with hostile accounts
    "live",  # make live with real accounts: graded on submit, a note, killed and restarted
    "grade_parallel",
    "slurm",  # a private SLURM, a class graded on its jobs twice, a SIGTERM (~85 s)
    "stock_autograde_bad_shapes",
    "ch3_multihead",
    "test_learner_facing",
    "test_new_assignment",
    "second_course",  # a second course from nothing, through release, grade, report, export
    "grade_one_learner",
    "postgres",
    "test_release",
    "grading_startup",
    "test_validate",
    "test_source_notebooks",
    "test_report",
)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> DemoRun:
    return shared_demo_run(tmp_path_factory)


def work_unit(item: pytest.Item) -> str:
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    return item.module.__name__.rpartition(".")[2] if item.module else item.nodeid


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist turns the groups into work units
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            # A module without a group is one unit too: its module fixtures (a sandboxed
            # kernel, a hub, a scratch course) are set up once, not once per worker.
            item.add_marker(pytest.mark.xdist_group(work_unit(item)))
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(work_unit(item), len(rank)))  # stable: else as collected


@pytest.fixture(autouse=True)
def _language_of_the_working_folder():
    """A test that chose a language (a command's --root, a config) leaves none chosen."""
    yield
    from coursekit.core import messages

    messages.use(None)
