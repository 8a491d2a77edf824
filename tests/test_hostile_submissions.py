"""Hostile and tampering submissions: graded, losing exactly their affected cells, with a reason.

One `make grade` run (python -m coursekit.grading) grades the reference and
every scenario of tests/hostile/ together in a scratch copy of the course,
with short caps so the stuck kernels cost seconds.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from coursekit import submissions
from tests.course_sandbox import CourseSandbox
from tests.hostile import ASSIGNMENT, scenarios

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = scenarios()
HANGUL = re.compile(r"[가-힣]")

pytestmark = pytest.mark.xdist_group("hostile")


@dataclass
class Graded:
    sandbox: CourseSandbox
    run: subprocess.CompletedProcess
    scores: dict[str, dict[str, float | None]]
    max_scores: dict[str, float]
    incidents: dict[str, list[dict]]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Graded:
    sandbox = CourseSandbox(tmp_path_factory.mktemp("hostile"))
    sandbox.generate(ASSIGNMENT)
    release, source = sandbox.release_notebook(ASSIGNMENT), sandbox.source_notebook(ASSIGNMENT)
    sandbox.submit("reference", ASSIGNMENT, submissions.fill(release, source))
    for name, scenario in SCENARIOS.items():
        function = getattr(scenario, "FUNCTION", None)
        replace = {function: scenario.SOURCE} if function else {}
        nb = submissions.fill(release, source, replace=replace)
        folder = sandbox.root / "submitted" / name / ASSIGNMENT
        folder.mkdir(parents=True)
        if hasattr(scenario, "tamper"):
            scenario.tamper(nb, folder)
        path = folder / sandbox.notebook_name(ASSIGNMENT)
        nbformat.write(nb, path)
        if hasattr(scenario, "corrupt"):
            scenario.corrupt(path)
    caps = ["--cell-timeout", "5", "--notebook-timeout", "90", "--memory-mb", "1536"]
    run = subprocess.run(
        [sys.executable, "-m", "coursekit.grading", "--root", str(sandbox.root), "-j", "2", *caps],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = sandbox.root / "reports" / "grading_incidents.json"
    found = json.loads(report.read_text(encoding="utf-8")).get(ASSIGNMENT, {})
    return Graded(sandbox, run, sandbox.scores(ASSIGNMENT), sandbox.max_scores(ASSIGNMENT), found)


def test_the_run_succeeds_and_reports_progress_and_a_summary(graded):
    assert graded.run.returncode == 0, graded.run.stdout[-3000:] + graded.run.stderr[-3000:]
    assert f"[{len(SCENARIOS) + 1}/{len(SCENARIOS) + 1}]" in graded.run.stdout
    assert "채점 끝" in graded.run.stdout


def test_the_rest_of_the_class_is_graded_as_if_they_were_not_there(graded):
    reference = graded.scores["reference"]
    lost = {c: s for c, s in reference.items() if s is not None and s < graded.max_scores[c]}
    assert lost == {}, graded.sandbox.autograded_errors("reference", ASSIGNMENT)
    assert "reference" not in graded.incidents


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_loses_exactly_its_affected_cells(graded, name):
    scenario = SCENARIOS[name]
    scores = graded.scores[name]
    autograded = {c for c, s in graded.scores["reference"].items() if s is not None}
    zero = {c for c in autograded if scores[c] == 0}
    full = {c for c in autograded if scores[c] == graded.max_scores[c]}
    assert zero == set(scenario.ZERO), {c: scores[c] for c in zero ^ set(scenario.ZERO)}
    assert full == autograded - set(scenario.ZERO)


@pytest.mark.parametrize(
    "name", sorted(n for n, s in SCENARIOS.items() if getattr(s, "INCIDENT", None))
)
def test_scenario_reason_is_recorded_in_korean(graded, name):
    found = graded.incidents.get(name, [])
    enames = {incident["ename"] for incident in found}
    assert SCENARIOS[name].INCIDENT in enames, found
    assert all(HANGUL.search(incident["reason"]) for incident in found)
