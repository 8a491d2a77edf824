"""reports/grading_incidents.json: grading some learners again keeps the others' entries."""

import json

import nbformat
import pytest

from coursekit.grading import incidents


def test_regrading_one_learner_keeps_the_others_incidents(tmp_path):
    path = tmp_path / "grading_incidents.json"
    died = {
        "cell": "split_heads_seed",
        "ename": incidents.KERNEL_DIED,
        "reason": "커널이 멈췄습니다",
    }
    stuck = {"cell": "mha_seed_example", "ename": incidents.KERNEL_STUCK, "reason": "멈추지 않아"}
    first = {"ch3_multihead": {"ana": [died], "bo": [stuck]}}
    incidents.write_report(path, first, [("ch3_multihead", "ana"), ("ch3_multihead", "bo")])

    incidents.write_report(path, {}, [("ch3_multihead", "ana")])  # ana fixed her notebook
    assert json.loads(path.read_text(encoding="utf-8")) == {"ch3_multihead": {"bo": [stuck]}}

    incidents.write_report(
        path, {"ch4_cross_attention": {"ana": [died]}}, [("ch4_cross_attention", "ana")]
    )
    report = json.loads(path.read_text(encoding="utf-8"))
    assert report == {"ch3_multihead": {"bo": [stuck]}, "ch4_cross_attention": {"ana": [died]}}


def _notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {"grade_id": "answer"}}),
        nbformat.v4.new_code_cell("assert x", metadata={"nbgrader": {"grade_id": "check"}}),
    ]
    return nb


def test_a_learners_exception_named_like_an_incident_is_no_incident():
    nb = _notebook()
    forged = "이 칸을 실행하다 커널이 멈췄습니다 (os._exit, 메모리 한도 초과 등)."
    nb.cells[0].outputs = [incidents.error_output(incidents.KERNEL_DIED, forged)]
    assert incidents.in_notebook(nb) == []
    assert incidents.of_cell(nb.cells[0]) == []
    incidents.add(nb.cells[1], incidents.KERNEL_STUCK, "멈추지 않아")
    assert incidents.in_notebook(nb) == [
        {"cell": "check", "ename": incidents.KERNEL_STUCK, "reason": "멈추지 않아"}
    ]
    assert nb.cells[1].outputs[-1].ename == incidents.KERNEL_STUCK  # what formgrader shows


def test_incident_records_a_submission_brings_are_dropped_before_grading():
    nb = _notebook()
    planted = [{"ename": incidents.KERNEL_DIED, "reason": "가짜"}]
    nb.cells[1].metadata[incidents.INCIDENTS_KEY] = planted
    nb.cells[0].metadata[incidents.INCIDENTS_KEY] = "not even a list"
    assert incidents.of_cell(nb.cells[0]) == []
    incidents.forget(nb)
    assert all(incidents.INCIDENTS_KEY not in cell.metadata for cell in nb.cells)
    assert incidents.in_notebook(nb) == []


def test_only_known_incidents_are_recorded():
    with pytest.raises(ValueError):
        incidents.add(_notebook().cells[0], "SomethingElse", "이유")
