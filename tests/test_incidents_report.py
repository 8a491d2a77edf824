"""Incidents: one record type and registry, reports/grading_incidents.json, and the notebook
metadata every reader (make grade, the TA report, Validate) takes them from."""

import json

import nbformat
import pytest

from coursekit.cluster.driver import Driver
from coursekit.core import incidents
from coursekit.core.course import gradebook_place
from coursekit.core.incidents import Incident
from coursekit.staff.report import data
from tests.support.course_sandbox import CourseSandbox


def test_regrading_one_learner_keeps_the_others_incidents(tmp_path):
    path = tmp_path / "grading_incidents.json"
    died = Incident(incidents.KERNEL_DIED, "split_heads_seed", "커널이 멈췄습니다")
    stuck = Incident(incidents.KERNEL_STUCK, "mha_seed_example", "멈추지 않아")
    first = {"ch3_multihead": {"ana": [died], "bo": [stuck]}}
    incidents.write_report(path, first, [("ch3_multihead", "ana"), ("ch3_multihead", "bo")])

    incidents.write_report(path, {}, [("ch3_multihead", "ana")])  # ana fixed her notebook
    stuck_record = {"cell": "mha_seed_example", "ename": "KernelStuck", "reason": "멈추지 않아"}
    assert json.loads(path.read_text(encoding="utf-8")) == {"ch3_multihead": {"bo": [stuck_record]}}

    incidents.write_report(
        path, {"ch4_cross_attention": {"ana": [died]}}, [("ch4_cross_attention", "ana")]
    )
    report = json.loads(path.read_text(encoding="utf-8"))
    assert report == {
        "ch3_multihead": {"bo": [stuck_record]},
        "ch4_cross_attention": {"ana": [died.to_record()]},
    }


def test_the_on_disk_forms_keep_their_shape_and_read_back_as_the_same_incident():
    in_cell = Incident(incidents.OUTPUT_LIMIT, "check", "출력이 너무 깁니다")
    assert in_cell.to_metadata() == {"ename": "OutputLimitExceeded", "reason": "출력이 너무 깁니다"}
    assert in_cell.to_record() == {"cell": "check", **in_cell.to_metadata()}
    whole = incidents.unreadable_notebook("multihead.ipynb", "JSON 이 아닙니다")
    assert whole.cell is None and whole.to_record()["cell"] == "*"
    assert set(whole.to_record()) == {"cell", "ename", "reason"}
    for incident in (in_cell, whole, incidents.worker_lost(3), incidents.files_left_out(7, 50)):
        assert Incident.from_record(incident.to_record()) == incident
        assert Incident.from_record(incident.to_metadata(), incident.cell) == incident


def test_every_kind_is_registered_once_and_nothing_else_is_an_incident():
    assert len(incidents.KINDS) == len(incidents.ENAMES) == 14
    assert {incidents.WORKER_LOST, incidents.FILES_LEFT_OUT} <= incidents.ENAMES
    with pytest.raises(ValueError):
        Incident("SomethingElse", None, "이유")
    assert Incident.from_record({"ename": "SomethingElse", "reason": "이유"}) is None
    assert Incident.from_record(["KernelDied", "이유"]) is None
    odd = {"ename": "KernelDied", "reason": 3, "evidence": {"tries": 2, "code": object()}}
    assert Incident.from_record(odd, "c") == Incident("KernelDied", "c", "3", {"tries": 2})


def test_make_grades_own_texts_are_made_from_their_evidence():
    lost = incidents.worker_lost(4)
    assert (lost.name, lost.evidence) == (incidents.WORKER_LOST, {"tries": 4})
    assert "작업자 프로세스가 4번" in lost.text and "조교" in lost.text
    left = incidents.files_left_out(12, 50)
    assert left.evidence == {"left_out": 12, "max_files": 50}
    assert "파일 12개" in left.text and "50개까지만" in left.text


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
    assert incidents.in_notebook(nb) == [Incident(incidents.KERNEL_STUCK, "check", "멈추지 않아")]
    assert nb.cells[1].outputs[-1].ename == incidents.KERNEL_STUCK  # what formgrader shows
    assert nb.cells[1].metadata[incidents.INCIDENTS_KEY] == [
        {"ename": "KernelStuck", "reason": "멈추지 않아"}
    ]


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


def test_workers_that_kept_dying_are_grading_worker_lost_in_the_notebook_and_ta_report(tmp_path):
    """driver.record_lost -> the autograded notebook -> the TA report's data: one name, one text
    (it was InvalidNotebook in the notebook while the incidents report said GradingWorkerLost)."""
    course = CourseSandbox(tmp_path)
    assignment = course.assignments()[0]
    course.generate(assignment)
    course.submit("killer", assignment, course.release_notebook(assignment))
    driver = Driver(gradebook_place(course.root))
    try:
        lost = driver.record_lost(assignment, "killer", "digest", "bundle digest", 3)
    finally:
        driver.close()
    assert lost == incidents.worker_lost(3)

    found = incidents.in_notebook(course.autograded_notebook("killer", assignment))
    assert found and {(i.name, i.text) for i in found} == {(lost.name, lost.text)}
    (learner,) = data.read_assignment(course.root, assignment).learners
    assert learner.score == 0 and learner.failures
    assert {f.message for f in learner.failures} == {f"GradingWorkerLost: {lost.text}"}
