"""Session fixtures shared by several test modules, how the workers share the work, and
what a CI run may not skip.

The markers are declared in pyproject.toml ([tool.pytest.ini_options]) and set by each
module's `pytestmark`; docs/development.md says what each one means.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from coursekit.core.environment import use_environment_bin
from tests.support import session_cache
from tests.support.demo_class import DemoRun, shared_demo_run

# Each work unit's wall time (seconds) in a recorded run of the whole suite: an xdist_group,
# or one ungrouped test's module. `make test` runs pytest-xdist with --dist loadgroup
# --no-loadscope-reorder: a worker that runs low takes the next unit in collection order,
# so the units are put in order of this file, longest first (longest-processing-time-first),
# and the workers finish together. `make durations` (pytest --record-durations) writes it.
DURATIONS = Path(__file__).with_name("durations.json")
# A skip of a test with one of these markers means the machine lacks what it checks; CI
# has all of them (root, cgroups, bubblewrap, chromium, PostgreSQL, SLURM), so there a
# skip is a failure: a security test that quietly did not run proves nothing.
NEEDED_IN_CI = ("root", "sandbox", "browser", "hub", "postgres", "slurm", "cluster")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-durations",
        action="store_true",
        help=f"write each work unit's wall time in this run into {DURATIONS.name}"
        " (units not run keep theirs); make durations runs the whole suite so",
    )


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory) -> None:
    """Where tests/support keeps what the session makes once (session_cache.made_once)."""
    session_cache.SHARED = session_cache.shared_base(tmp_path_factory) / "session-cache"
    session_cache.SHARED.mkdir(exist_ok=True)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> DemoRun:
    return shared_demo_run(tmp_path_factory)


def work_unit(item: pytest.Item) -> str:
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    return item.module.__name__.rpartition(".")[2] if item.module else item.nodeid


def recorded_durations() -> dict[str, float]:
    try:
        return json.loads(DURATIONS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist turns the groups into work units, and
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:  # before -m selects
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            # A module without a group is one unit too: its module fixtures (a sandboxed
            # kernel, a hub, a scratch course) are set up once, not once per worker.
            item.add_marker(pytest.mark.xdist_group(work_unit(item)))
        if "demo_run" in item.fixturenames:
            item.add_marker(pytest.mark.class_graded)  # it reads the demo's graded class
        # The controller sees reports, not items: the unit travels with each report.
        item.user_properties.append(("work_unit", work_unit(item)))
    seconds = recorded_durations()
    # A unit not recorded yet (a new module) goes first: were it long, it would otherwise
    # end the run alone; were it short, it costs little there. Stable: else as collected.
    items.sort(key=lambda item: -seconds.get(work_unit(item), float("inf")))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if report.skipped and os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        needed = [m for m in NEEDED_IN_CI if item.get_closest_marker(m)]
        if needed and not hasattr(report, "wasxfail"):
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
            report.outcome = "failed"
            report.longrepr = (
                f"skipped under CI, which has what a {'/'.join(needed)} test needs: {reason}"
            )
    return report


class DurationRecorder:
    """Sums each unit's setup, call and teardown times as the reports come in."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        unit = dict(report.user_properties).get("work_unit")
        if unit is not None:
            self.seconds[unit] = self.seconds.get(unit, 0.0) + report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.seconds:
            return
        merged = {**recorded_durations(), **{u: round(s, 1) for u, s in self.seconds.items()}}
        ordered = dict(sorted(merged.items(), key=lambda kv: (-kv[1], kv[0])))
        DURATIONS.write_text(json.dumps(ordered, indent=1) + "\n", encoding="utf-8")


def pytest_configure(config: pytest.Config) -> None:
    # What the suite runs by name (nbgrader's alembic, kernels' python) comes from .venv,
    # as under make, when pytest is started by hand too.
    use_environment_bin()
    # On the controller (or a run without xdist), which gets every worker's reports.
    if config.getoption("--record-durations") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(DurationRecorder(), "duration-recorder")


@pytest.fixture(autouse=True)
def _language_of_the_working_folder():
    """A test that chose a language (a command's --root, a config) leaves none chosen."""
    yield
    from coursekit.core import messages

    messages.use(None)
