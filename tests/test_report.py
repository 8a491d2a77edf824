"""The TA report (python -m coursekit.report) on the demo's graded class, and its parts."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from coursekit.demo import UNKNOWN_MISTAKES, simulated_class
from coursekit.release import venv_environment
from coursekit.report import data, probe
from tests.demo_class import GROUP, ROOT, DemoRun

ASSIGNMENTS = ["ch3_multihead", "ch4_cross_attention"]
MESSAGE = """AssertionError: [split_heads] 무작위 모양: 12개 사례 중 12개가 틀렸습니다.
  첫 번째로 틀린 사례: 무작위 모양 · seed 3200 — M (9, 24), h=6
  반환값: 값이 다릅니다
  짐작되는 실수 [reshape_without_transpose]: transpose 없이 reshape(h, n, d_head) 만 해서
    → transpose(1, 0, 2) 를 하세요
  (TA 재현: ch3_multihead seed 3200)"""


def test_a_failure_message_is_read_into_its_parts():
    failure = data.parse_failure("split_heads_random_shapes", 0, 2, MESSAGE)
    assert failure.function == "split_heads"
    assert (failure.seed, failure.case) == (3200, "무작위 모양 — M (9, 24), h=6")
    assert failure.key == "reshape_without_transpose"
    assert failure.summary.startswith("짐작되는 실수 [reshape_without_transpose]")


def test_the_probe_stops_learner_code_that_never_returns(monkeypatch):
    monkeypatch.setattr(probe, "TIMEOUT_SECONDS", 3)
    looping = "def softmax(x):\n    while True:\n        pass\n"
    learner = data.LearnerResult("looper", 0, 1, 0, answers=[looping])
    result = probe.run_probe("ch3_multihead", learner, ["softmax"])
    assert result == {"softmax": {"got": "error:timeout", "agrees": False}}


def test_the_probe_calls_learner_code_in_its_sandbox_and_compares_outside():
    wrong = (
        "def softmax(x):\n    import os\n    return np.exp(x) / np.exp(x).sum() + os.getuid() * 0\n"
    )
    right = (
        "def softmax(x):\n    e = np.exp(x - x.max(axis=-1, keepdims=True))\n"
        "    return e / e.sum(axis=-1, keepdims=True)\n"
    )
    setup = ["import numpy as np"]
    found = {}
    for name, answer in (("wrong", wrong), ("right", right)):
        learner = data.LearnerResult(name, 0, 1, 0, setup=setup, answers=[answer])
        found[name] = probe.run_probe("ch3_multihead", learner, ["softmax"])["softmax"]
    assert found["right"]["agrees"] and not found["wrong"]["agrees"]
    assert found["right"]["got"] != found["wrong"]["got"]


def test_report_help_is_korean():
    result = subprocess.run(
        [sys.executable, "-m", "coursekit.report", "--help"],
        cwd=ROOT, env=venv_environment(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "조교용 채점 보고서" in result.stdout and "--no-probe" in result.stdout


def students(assignment, predicate):
    return {x.student for x in simulated_class(assignment) if predicate(x)}


@pytest.mark.xdist_group(GROUP)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_html_page_has_diagnoses_counts_chart_and_unknown_cluster(demo_run: DemoRun, assignment):
    page = (demo_run.root / "reports" / f"{assignment}.html").read_text(encoding="utf-8")
    assert "<svg" in page, "no bar chart"
    assert "src=" not in page and "<link" not in page, "the page is not self-contained"
    assert "짐작되는 실수별 학습자 수" in page and "가장 어려운 칸" in page
    for learner in simulated_class(assignment):
        assert learner.student in page
    for learner in simulated_class(assignment):
        if "카탈로그 실수" in learner.plan:
            assert f"[{learner.plan.rsplit('/', 1)[1]}]" in page
    assert "seed " in page and "python -m grader_tests.reproduce" in page
    assert "조교 채점 대기" in page
    function, _ = UNKNOWN_MISTAKES[assignment]
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
    assert all(r["misconception"] == "not_implemented" or not r["seed"]
               for r in table if r["student"] in blank and r["status"] == "틀림")  # fmt: skip
    unknown = students(assignment, lambda x: "카탈로그에 없는" in x.plan)
    clusters = {r["cluster"] for r in table if r["student"] in unknown and r["cluster"]}
    assert len(clusters) == 1, table
    late = students(assignment, lambda x: x.late)
    assert {r["student"] for r in table if r["late"] == "1"} == late


@pytest.mark.xdist_group(GROUP)
def test_class_counts_name_how_many_learners_each_mistake_hit(demo_run: DemoRun):
    from coursekit.report import summary

    found = data.read_assignment(demo_run.root, "ch3_multihead")
    counts = summary.summarize(found)
    hits = {key: n for key, _, n in counts.misconceptions}
    assert hits["not_implemented"] == 1 and hits["reshape_without_transpose"] == 1
    cells = dict(counts.hardest_cells)
    assert cells["param_count_seed"] == 3  # blank + the two unknown-mistake learners
    assert counts.late == sorted(students("ch3_multihead", lambda x: x.late))
