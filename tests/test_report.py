"""The TA report (python -m coursekit.staff.report) on the demo's graded class, and its parts."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from coursekit.core import cells as course_cells
from coursekit.core.course import Course, contract_functions
from coursekit.core.environment import venv_environment
from coursekit.simulate.demo import simulated_class, unknown_mistakes
from coursekit.simulate.harness import CourseHarness
from coursekit.staff.report import clusters as grouping
from coursekit.staff.report import data, overview, render, summary
from tests.support.demo_class import GROUP, ROOT, DemoRun

ASSIGNMENTS = Course(ROOT).assignments()


def released_answers(assignment: str) -> dict[str, str]:
    """function -> its answer cell as learners get it (the stub)."""
    nb = Course(ROOT).release_notebook(assignment)
    answers = [c.source for c in nb.cells if course_cells.is_code_answer(c)]
    return {course_cells.defined_function(a): a for a in answers}


def small_class() -> data.AssignmentData:
    """Four learners of ch3 on a made-up 20-point notebook: cells a (5), b (5), manual m (10)."""
    stubs = released_answers("ch3_multihead")
    written = {f: stubs[f].replace("raise NotImplementedError()", "return None") for f in stubs}
    fail = data.Failure
    learners = [
        data.LearnerResult("blank", 0, 20, 0, [fail("a", 0, 5, ""), fail("b", 0, 5, "")],
                           answers=list(stubs.values())),
        data.LearnerResult("half", 1.9, 20, 0, [fail("a", 0, 5, "")],
                           answers=[*(written[f] for f in written if f != "mha_param_count"),
                                    stubs["mha_param_count"]]),
        data.LearnerResult("low", 2, 20, 0, [fail("b", 2, 5, "")], answers=list(written.values())),
        data.LearnerResult("top", 20, 20, 0, [], answers=list(written.values())),
    ]  # fmt: skip
    return data.AssignmentData("ch3_multihead", {"a": 5, "b": 5}, {"m": 10}, learners)


def test_histogram_puts_each_learner_in_its_score_range():
    bins = overview.histogram(small_class())
    assert [(b.low, b.high) for b in bins] == [(2 * i, 2 * i + 2) for i in range(10)]
    assert bins[0].students == ["blank", "half"] and bins[1].students == ["low"]
    assert bins[-1].students == ["top"] and bins[-1].label == "18–20점"
    assert sum(len(b.students) for b in bins) == 4


def test_pass_rates_count_learners_with_full_points_per_cell_in_notebook_order():
    rates = overview.pass_rates(small_class(), {"b": "softmax", "a": "split_heads"})
    assert [(r.cell, r.function, r.points, r.passed, r.learners) for r in rates] == [
        ("b", "softmax", 5, 2, 4),
        ("a", "split_heads", 5, 2, 4),
    ]


def test_a_learner_who_left_every_stub_is_unimplemented_once():
    left = overview.unimplemented(small_class())
    assert left.nothing == ["blank"]
    assert left.partly == {"half": ["mha_param_count"]}
    assert left.of("blank") == contract_functions("ch3_multihead")


def test_clusters_come_from_the_probe_records_and_keep_stubs_and_errors_out():
    wrong = {"digest": "abc", "agrees": False, "summary": "(2,) float64 [1, 2]"}
    other = {"digest": "def", "agrees": False, "summary": "(2,) float64 [3, 4]"}
    raised = {"digest": "error:ValueError", "agrees": False, "error": "ValueError: 모양"}
    right = {"digest": "ref", "agrees": True, "summary": ""}
    found = small_class()
    for learner in found.learners:
        learner.failures = [
            data.Failure("a", 0, 1, "", function="split_heads", probe=wrong),
            data.Failure("b", 0, 1, "", function="split_heads", probe=other),  # first one counts
            data.Failure("c", 0, 1, "", function="softmax", probe=raised),
            data.Failure("d", 0, 1, "", function="mha_param_count", probe=wrong),
            data.Failure("e", 0, 1, "", function="merge_heads", probe=right),
            data.Failure("f", 0, 1, "", function="multi_head_attention"),  # a record without one
            data.Failure("g", 0, 1, "AssertionError"),  # a visible test: no record
        ]
    found.learners[0].failures[0].key = "reshape_without_transpose"  # blank: in no group
    found.learners[2].failures[0].key = "reshape_without_transpose"
    clusters = grouping.clusters(found)
    assert [(c.function, c.fingerprint, c.students) for c in clusters] == [
        ("split_heads", "abc", ["half", "low", "top"]),
        ("mha_param_count", "abc", ["low", "top"]),  # half left it as released
        ("softmax", "error:ValueError", ["half", "low", "top"]),
    ]
    assert clusters[0].keys == ["reshape_without_transpose"] and not clusters[1].known
    assert clusters[0].summary == "(2,) float64 [1, 2]" and clusters[0].error == ""
    assert clusters[2].is_error and clusters[2].error == "ValueError: 모양"
    assert "def split_heads(" in clusters[0].example
    labels = [label for label, _ in render.numbered(clusters)]
    assert labels == ["C1", "C2", "E1"]


def test_report_help_is_korean():
    result = subprocess.run(
        [sys.executable, "-m", "coursekit.staff.report", "--help"],
        cwd=ROOT, env=venv_environment(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "조교용 채점 보고서" in result.stdout
    assert "--no-probe" not in result.stdout  # the flag that did nothing is gone


def students(assignment, predicate):
    return {x.student for x in simulated_class(assignment) if predicate(x)}


@pytest.mark.xdist_group(GROUP)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_html_page_has_diagnoses_counts_chart_and_unknown_cluster(demo_run: DemoRun, assignment):
    page = (demo_run.root / "reports" / f"{assignment}.html").read_text(encoding="utf-8")
    assert "<svg" in page, "no bar chart"
    assert "src=" not in page and "<link" not in page, "the page is not self-contained"
    assert "짐작되는 실수별 학습자 수" in page and "점수 분포" in page and "칸별 통과율" in page
    for learner in simulated_class(assignment):
        assert learner.student in page
    for learner in simulated_class(assignment):
        if "카탈로그 실수" in learner.plan:
            assert f"[{learner.plan.rsplit('/', 1)[1]}]" in page
    assert "seed " in page and "python -m coursekit.checks.reproduce" in page
    assert "조교 채점 대기" in page
    function, _ = unknown_mistakes(Course(ROOT).kit)[assignment]
    unknown = sorted(students(assignment, lambda x: "카탈로그에 없는" in x.plan))
    assert f"· {function} · 2명 — 카탈로그에 없는 실수" in page
    assert ", ".join(unknown) in page


@pytest.mark.xdist_group(GROUP)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_csv_lists_each_failing_cell_and_each_waiting_manual_cell(demo_run: DemoRun, assignment):
    with (demo_run.root / "reports" / f"{assignment}.csv").open(encoding="utf-8") as rows:
        table = list(csv.DictReader(rows))
    reference = students(assignment, lambda x: x.plan == "정답 (reference)")
    assert {r["status"] for r in table if r["student"] in reference} == {"조교 채점 대기"}
    blank = students(assignment, lambda x: x.blank)
    statuses = {r["status"] for r in table if r["student"] in blank}
    assert statuses == {"미구현"}, statuses  # its untouched written answer scores 0 itself
    assert not any(r["cluster"] for r in table if r["student"] in blank)
    unknown = students(assignment, lambda x: "카탈로그에 없는" in x.plan)
    clusters = {r["cluster"] for r in table if r["student"] in unknown and r["cluster"]}
    assert len(clusters) == 1, table
    late = students(assignment, lambda x: x.late)
    assert {r["student"] for r in table if r["late"] == "1"} == late


@pytest.mark.xdist_group(GROUP)
def test_class_counts_name_how_many_learners_each_mistake_hit(demo_run: DemoRun):
    found = data.read_assignment(demo_run.root, "ch3_multihead")
    counts = summary.summarize(found)
    hits = {key: n for key, _, n in counts.misconceptions}
    assert hits["not_implemented"] == 1 and hits["reshape_without_transpose"] == 1
    cells = dict(counts.hardest_cells)
    assert cells["param_count_seed"] == 3  # blank + the two unknown-mistake learners
    assert counts.late == sorted(students("ch3_multihead", lambda x: x.late))


@pytest.mark.xdist_group(GROUP)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_overview_counts_match_the_gradebook(demo_run: DemoRun, assignment):
    found = data.read_assignment(demo_run.root, assignment)
    view = overview.overview(demo_run.root, found)
    bins = view.histogram
    assert sum(len(b.students) for b in bins) == len(found.learners) == 9
    for learner in found.learners:
        (home,) = [b for b in bins if learner.student in b.students]
        assert home.low <= learner.score and (learner.score < home.high or home.last)
    blank = students(assignment, lambda x: x.blank)
    assert set(bins[0].students) >= blank
    scores = CourseHarness(demo_run.root).scores(assignment)
    maximum = CourseHarness(demo_run.root).max_scores(assignment)
    assert [r.cell for r in view.cells] == list(found.cells)  # every autograded cell, once
    for rate in view.cells:
        full = [s for s in scores if (scores[s][rate.cell] or 0) >= maximum[rate.cell]]
        assert (rate.passed, rate.learners, rate.points) == (len(full), 9, maximum[rate.cell])
        assert rate.function in contract_functions(assignment)
    assert view.unimplemented.nothing == sorted(blank) and not view.unimplemented.partly


@pytest.mark.xdist_group(GROUP)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_learner_who_implemented_nothing_is_one_line_and_in_no_cluster(
    demo_run: DemoRun, assignment
):
    (blank,) = students(assignment, lambda x: x.blank)
    found = data.read_assignment(demo_run.root, assignment)
    table = demo_run.output.split(f"■ {assignment}")[1].split("■ ")[0]
    mentions = [line for line in table.splitlines() if blank in line]
    assert len(mentions) == 2, mentions  # the class's 미구현 line and the learner's own row
    assert mentions[0].startswith("  미구현 (아무 함수도 구현하지 않음): 1명 ")
    assert mentions[1].split()[:3] == [blank, f"0/{overview.full_score(found):g}", "미구현:"]
    lines = table.splitlines()
    row = next(i for i, line in enumerate(lines) if line.strip().startswith(blank))
    assert not lines[row + 1].startswith("      ✗"), "failing cells listed for a blank learner"
    page = (demo_run.root / "reports" / f"{assignment}.html").read_text(encoding="utf-8")
    clusters = page.split("<h2>같은 틀린 출력으로 묶인 학습자</h2>")[1].split("<h2>")[0]
    assert blank not in clusters and "NotImplementedError" not in clusters
    assert "error:" not in clusters
    assert f"1명: {blank}</p>" in page


# Run the report with an audit hook that notes every process it starts (a sandbox,
# a kernel) and every code it executes that defines one of the assignment's
# functions (a learner's answer cell) other than a module file of the course or
# its environment. (Importing the sandbox is no evidence: nbgrader_config.py names
# SandboxedExecute, so loading the course's configuration imports it.)
WATCHED = """
import json, os, runpy, sys, types
out, functions, argv = sys.argv[1], set(sys.argv[2].split(",")), sys.argv[3:]
files = (os.getcwd() + os.sep, sys.prefix + os.sep, sys.base_prefix + os.sep)
seen = {"processes": [], "executed": []}
SPAWNS = ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.fork", "os.system", "os.spawn")
def defines(code):
    stack = [code]
    while stack:
        for const in stack.pop().co_consts:
            if isinstance(const, types.CodeType):
                if const.co_name in functions:
                    return True
                stack.append(const)
    return False
def hook(event, args):
    if event in SPAWNS:
        seen["processes"].append([event, repr(args)[:300]])
    elif event == "exec" and isinstance(args[0], types.CodeType) and defines(args[0]):
        name = args[0].co_filename
        if not (name.startswith(files) and os.path.isfile(name)):
            seen["executed"].append(name)
sys.addaudithook(hook)
sys.argv = ["coursekit.staff.report", *argv]
try:
    runpy.run_module("coursekit.staff.report", run_name="__main__")
except SystemExit as done:
    seen["exit"] = done.code
with open(out, "w") as file:
    json.dump(seen, file)
"""


@pytest.mark.xdist_group(GROUP)
def test_the_report_runs_no_learner_code_and_gives_the_demo_its_clusters(demo_run, tmp_path):
    functions = sorted({f for a in ASSIGNMENTS for f in contract_functions(a)})
    out = tmp_path / "reports"
    result = subprocess.run(
        [sys.executable, "-c", WATCHED, str(tmp_path / "seen.json"), ",".join(functions),
         "--root", str(demo_run.root), "--out", str(out)],
        cwd=ROOT, env=venv_environment(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    seen = json.loads((tmp_path / "seen.json").read_text(encoding="utf-8"))
    assert seen["exit"] == 0, seen
    assert seen["processes"] == [], "the report started a process"
    assert seen["executed"] == [], "the report executed a learner's answer"
    # The same report as an unwatched run on the same gradebook (not the demo's own
    # report file: the formgrader test of this group may have scored a manual cell since).
    plain = tmp_path / "plain"
    subprocess.run(
        [sys.executable, "-m", "coursekit.staff.report", "--root", str(demo_run.root),
         "--out", str(plain)],
        cwd=ROOT, env=venv_environment(), capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    for assignment in ASSIGNMENTS:
        again = (out / f"{assignment}.csv").read_text(encoding="utf-8")
        assert again == (plain / f"{assignment}.csv").read_text(encoding="utf-8")
        assert "reshape_without_transpose" in again  # a catalogued diagnosis, from the records
        page = (out / f"{assignment}.html").read_text(encoding="utf-8")
        assert "첫 probe 사례의 출력: <code>" in page  # the cluster of the unknown mistake


def test_exchange_notes_are_printable_and_a_bad_entry_is_skipped(tmp_path):
    """The record's names are the learners': control characters come out escaped."""
    from coursekit.exchange import record

    path = tmp_path / "exchange_incidents.json"
    entry = {"submission": "s", "path": "a\x1b[31m.html", "reason": "renamed"}
    path.write_text(
        json.dumps(
            {
                "ch3": {"ann": [entry, "not an entry", {"path": 3}], "bob": "nope", "cy": []},
                "ch4": "nope",
            }
        ),
        encoding="utf-8",
    )
    found = record.notes(str(path), "ch3")
    assert found == {"ann": [record.Note("s", "a\\x1b[31m.html", "renamed")]}
    assert record.notes(str(path), "ch4") == {} == record.notes(str(tmp_path / "none"), "ch3")
    line = render.exchange_lines(data.LearnerResult("ann", 0, 0, 0, exchange=found["ann"]))
    assert line == ["교환: a\\x1b[31m.html — renamed"]
