"""A failed hidden check's record: rendered into the message, stored, and read back.

The message a learner reads is rendered from the record; the TA report reads
the record (JSON in the autograded notebook), never the message. The
autograde path (record stored by the grader next to the same message) is
checked for every catalog mistake in tests/test_autograde.py.
"""

from __future__ import annotations

import copy
import functools
import json

import numpy as np
import pytest

from catalog import all_entries
from coursekit.checks.core import compare
from coursekit.checks.declared import checks_of
from coursekit.checks.verdict import CheckFailedError, Verdict
from coursekit.staff.report import data
from tests.support.notebook_namespace import notebook_namespace

MISTAKES = all_entries("mistake")


@functools.cache  # both tests below read each entry's failures: its checks run once
def failed_checks(entry):
    """(grade_id, CheckFailedError) for each hidden check this entry fails, run in-process."""
    checks = checks_of(entry.assignment)
    namespace = notebook_namespace(entry.assignment, entry)
    failed = []
    for check in checks:
        try:
            checks.run(check.grade_id, namespace[check.function])
        except CheckFailedError as failure:
            failed.append((check.grade_id, failure))
    return failed


@pytest.mark.parametrize("entry", MISTAKES, ids=lambda e: f"{e.assignment}:{e.function}:{e.key}")
def test_the_record_round_trips_and_the_report_reads_the_diagnosis_from_it(entry):
    hidden = {c.grade_id for c in checks_of(entry.assignment)}
    failed = failed_checks(entry)
    assert {g for g, _ in failed} == entry.fails & hidden
    summaries = []
    for grade_id, failure in failed:
        record = json.loads(json.dumps(failure.verdict.to_record()))
        again = Verdict.from_record(record)
        assert again == failure.verdict
        assert again.render() == str(failure)
        assert (again.assignment, again.grade_id) == (entry.assignment, grade_id)
        read = data.failure_of(grade_id, 0, 2, f"AssertionError: {failure}", record)
        assert (read.function, read.seed) == (again.function, again.seed)
        assert read.case.startswith(again.case["label"])
        if again.function == entry.function:
            summaries.append(read.summary)
    if entry.fails & hidden:
        assert f"짐작되는 실수 [{entry.key}]" in "\n".join(summaries)


def test_a_cell_without_a_record_is_read_from_its_output_only():
    read = data.failure_of("split_heads_seed", 0, 1, "AssertionError: 모양이 다릅니다", None)
    assert (read.function, read.seed, read.key) == (None, None, None)
    assert read.summary == "AssertionError: 모양이 다릅니다"


def test_a_record_of_an_unknown_version_is_refused():
    with pytest.raises(ValueError, match="version"):
        Verdict.from_record({"version": 99, "function": "f", "check": "c", "outcome": "mismatch"})


def test_a_name_that_is_not_a_function_gets_a_record_too():
    checks = checks_of("ch3_multihead")
    with pytest.raises(CheckFailedError) as failure:
        checks.run("split_heads_random_shapes", 42)
    verdict = failure.value.verdict
    assert (verdict.outcome, verdict.case) == ("not_callable", None)
    assert str(failure.value) == "[split_heads] split_heads 이(가) 함수가 아닙니다: int"


@pytest.mark.parametrize("entry", MISTAKES, ids=lambda e: f"{e.assignment}:{e.function}:{e.key}")
def test_each_failed_check_records_its_functions_output_on_the_probe(entry):
    """The TA report clusters by this record, so it never runs learner code itself."""
    checks = checks_of(entry.assignment)
    namespace = notebook_namespace(entry.assignment, entry)
    by_function = {}
    for _, failure in failed_checks(entry):
        verdict = failure.verdict
        assert verdict.probe is not None and verdict.probe["digest"]
        by_function.setdefault(verdict.function, []).append(verdict.probe)
    for function, records in by_function.items():
        assert all(r == records[0] for r in records), records  # one probe per function
        reference = checks.reference_for(function)
        cases = checks.probe_cases(function)
        assert [c.seed for c in cases] == [c.seed for c in checks.cases_for(function)[:3]]
        try:
            got = [namespace[function](*copy.deepcopy(c.args)) for c in cases]
        except Exception as error:
            assert records[0]["digest"] == f"error:{type(error).__name__}"
            assert records[0]["error"].startswith(type(error).__name__)
            continue
        expected = [reference(*c.args) for c in cases]
        agrees = all(compare(g, e) is None for g, e in zip(got, expected, strict=True))
        assert records[0]["agrees"] == agrees
        first = got[0][0] if isinstance(got[0], tuple) else got[0]
        if isinstance(first, np.ndarray):
            assert str(first.shape) in records[0]["summary"], records[0]


def test_a_version_1_record_is_read_without_a_probe():
    checks = checks_of("ch3_multihead")
    with pytest.raises(CheckFailedError) as failure:
        checks.run("split_heads_random_shapes", lambda M, h: M)
    record = failure.value.verdict.to_record()
    assert record["version"] == 3 and record["probe"]["agrees"] is False
    assert record["picture"]["kind"] == "flow"  # (4, 8) came back where (2, 4, 4) was due
    old = {k: v for k, v in record.items() if k not in ("probe", "picture")} | {"version": 1}
    read = data.failure_of("split_heads_random_shapes", 0, 1, "", old)
    assert read.function == "split_heads" and read.probe is None
    assert Verdict.from_record(old).picture is None
    two = {k: v for k, v in record.items() if k != "picture"} | {"version": 2}
    assert Verdict.from_record(two).picture is None and Verdict.from_record(two).probe
    assert data.failure_of("split_heads_random_shapes", 0, 1, "", record).probe == record["probe"]


def test_a_learner_error_in_the_probe_record_carries_no_terminal_escapes():
    def raising(M, h):
        raise ValueError("\x1b[2J\x1b]0;가짜 제목\x07지워진 화면\n둘째 줄")

    with pytest.raises(CheckFailedError) as failure:
        checks_of("ch3_multihead").run("split_heads_random_shapes", raising)
    probe = failure.value.verdict.probe
    assert probe["digest"] == "error:ValueError" and "지워진 화면" in probe["error"]
    assert not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in probe["error"]), probe
