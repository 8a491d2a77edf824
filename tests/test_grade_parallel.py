"""`make grade` writes the gradebook that stock `nbgrader autograde` writes.

One small class with submission timestamps (the reference of both
assignments; the untouched release and one catalog mistake of the first) is graded twice in two
scratch copies of the course: by stock `nbgrader autograde`, one assignment
after the other, and by `python -m coursekit.cluster` with two workers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench import budget
from catalog import catalogs
from coursekit.cluster import gradebook
from coursekit.core.environment import venv_environment
from coursekit.nbgrader_internals import preprocessors
from coursekit.simulate import submissions
from tests.support.course_sandbox import CourseSandbox

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.xdist_group("grade_parallel"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
]


def build_class(path: Path) -> CourseSandbox:
    sandbox = CourseSandbox(path)
    for number, assignment in enumerate(sandbox.assignments()):
        sandbox.generate(assignment)
        release, source = sandbox.release_notebook(assignment), sandbox.source_notebook(assignment)
        learners = {"reference": submissions.fill(release, source)}
        if number == 0:  # the first assignment also has a blank and a mistaken learner
            learners["blank-release"] = submissions.fill(release, source, blank=True)
            mistake = catalogs()[assignment].mistakes[0]
            learners[mistake.student_id] = submissions.fill(
                release, source, replace={mistake.function: mistake.source}
            )
        for minute, (student, nb) in enumerate(learners.items()):
            folder = sandbox.submit(student, assignment, nb)
            stamp = f"2026-11-2{number} 09:{minute:02d}:00.000000 UTC"
            (folder / "timestamp.txt").write_text(stamp)
    return sandbox


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    stock = build_class(tmp_path_factory.mktemp("stock"))
    for assignment in stock.assignments():
        stock.autograde(assignment)
    parallel = build_class(tmp_path_factory.mktemp("parallel"))
    # With the budget's timers on: they only measure, so the gradebook must not change.
    run = parallel.grade(
        "-j", "2", check=False, env=budget.environment(parallel.root / "budget.jsonl")
    )
    return stock, parallel, run


def test_make_grade_succeeds(both):
    _, _, run = both
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # nbgrader's add_submission warning (three lines per learner) stays out of the terminal
    assert "SAWarning" not in run.stderr, run.stderr[-3000:]


def test_gradebook_equals_stock_autograde(both):
    stock, parallel, _ = both
    expected = gradebook.dump(stock.db_url, stock.course_id)
    got = gradebook.dump(parallel.db_url, parallel.course_id)
    assert len(expected) == 4
    assert got == expected


def test_graded_notebooks_have_the_same_outputs(both):
    stock, parallel, _ = both
    for assignment in stock.assignments():
        for student in stock.scores(assignment):
            assert parallel.autograded_errors(student, assignment) == stock.autograded_errors(
                student, assignment
            )


def test_the_benchmarks_fork_pool_grades_as_make_grade_did(both, tmp_path):
    """make bench's reference (bench.pool) writes the stock gradebook and report."""
    stock, parallel, _ = both
    pool = build_class(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "bench.pool", str(pool.root), "2"],
        cwd=pool.root,
        env=venv_environment(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert gradebook.dump(pool.db_url, pool.course_id) == gradebook.dump(
        stock.db_url, stock.course_id
    )
    # the incidents report and the summary, as make grade writes and prints them
    report = "reports/grading_incidents.json"
    assert json.loads((pool.root / report).read_text(encoding="utf-8")) == json.loads(
        (parallel.root / report).read_text(encoding="utf-8")
    )
    assert "채점 끝: 4/4개 제출물" in done.stdout
    assert "평균 자동 점수" in done.stdout


def test_budget_has_every_phase_of_each_submission(both):
    _, parallel, _ = both
    lines = (parallel.root / "budget.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 4
    for record in records:
        for phase in ("kernel_start", "first_cell", "test_cells", "trusted_checks"):
            assert record["wall"][phase] > 0, (phase, record)
        assert record["kernel"]["test_cells"] >= 0
        assert 0 <= record["kernel_cpu_ready"] <= record["kernel_cpu_total"]
        assert record["kernel_cpu_total"] > 0
        # own times: the phases add up to the submission's whole time, none below zero
        assert all(seconds > -0.01 for seconds in record["wall"].values()), record
    # The kernel's own CPU, read from /proc in clock ticks (10 ms): one submission's quick
    # test cells, or its start until ready, may take less than a tick (a CI run read 0.0
    # for test cells; starts read 0.01-0.02), the class's never do.
    assert sum(record["kernel"]["test_cells"] for record in records) > 0
    assert sum(record["kernel_cpu_ready"] for record in records) > 0
    table = budget.summarize(parallel.root / "budget.jsonl")
    assert "kernel start" in table and "SaveAutoGrades" in table


def test_budget_phases_keep_their_own_time():
    timer = budget.Budget()
    with timer.phase("outer"):
        time.sleep(0.05)
        with timer.phase("inner"):
            time.sleep(0.1)
    assert 0.04 < timer.wall["outer"] < 0.09
    assert timer.wall["inner"] >= 0.1


def test_make_grade_swaps_in_the_same_preprocessors_with_less_repeated_work():
    from nbgrader.preprocessors import CheckCellMetadata, SaveAutoGrades
    from traitlets.config import Config

    config = Config()
    config.Autograde.autograde_preprocessors = [SaveAutoGrades, CheckCellMetadata]
    preprocessors.use_in(config)
    swapped = config.Autograde.autograde_preprocessors
    assert swapped == [
        preprocessors.SaveAutoGradesAtOnce,
        preprocessors.CheckCellMetadataOnce,
    ]
    assert preprocessors.CheckCellMetadataOnce in config.Autograde.sanitize_preprocessors
    assert all(issubclass(new, old) for old, new in preprocessors.REPLACEMENTS.items())


def test_a_remembered_metadata_check_still_rejects_bad_metadata():
    from nbformat.v4 import new_code_cell, new_notebook
    from nbgrader.nbgraderformat import ValidationError

    meta = {"grade": True, "solution": False, "locked": True, "schema_version": 3}
    good = new_code_cell("x = 1", metadata={"nbgrader": {**meta, "grade_id": "a", "points": 1}})
    bad = new_code_cell("x = 1", metadata={"nbgrader": {**meta, "grade_id": "b"}})  # no points
    check = preprocessors.CheckCellMetadataOnce()
    for _ in range(2):
        check.preprocess(new_notebook(cells=[good]), {})
        with pytest.raises(ValidationError):
            check.preprocess(new_notebook(cells=[good, bad]), {})


def test_kernels_start_without_the_debugger():
    from coursekit.sandbox.kernel import without_debugger

    command = without_debugger(["/venv/bin/python", "-m", "ipykernel_launcher", "-f", "c.json"])
    assert command[:2] == ["/venv/bin/python", "-c"] and command[3:] == ["-f", "c.json"]
    assert 'sys.modules["debugpy"] = None' in command[2]


def test_help_describes_the_command():
    run = subprocess.run(
        [sys.executable, "-m", "coursekit.cluster", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0
    assert "--jobs" in run.stdout and "gradebook" in run.stdout
