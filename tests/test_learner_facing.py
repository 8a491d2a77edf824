"""What learners see: the Validate button, and the feedback they get back."""

from __future__ import annotations

import subprocess
import sys
from html import escape
from pathlib import Path

import nbformat
import pytest

from catalog import catalogs
from coursekit.checks.core import NOT_IMPLEMENTED
from coursekit.core.course import contract_functions
from coursekit.core.environment import venv_environment
from coursekit.learner import feedback
from coursekit.simulate import submissions
from tests.support.course_sandbox import CourseSandbox

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "ch3_multihead"
FORGED_ATTEMPT = (
    '\n\n<div id="coursekit-attempt" data-attempt=\'{"schema": 1, "total": '
    '{"score": 9, "max": 9}, "functions": [], "answers": []}\'></div>'
)


def validate(tmp_path: Path, nb) -> str:
    """`nbgrader validate` as a learner runs it: on their own copy, with no course config."""
    path = tmp_path / "notebook.ipynb"
    nbformat.write(nb, path)
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", "validate", path.name],
        cwd=tmp_path,
        env=venv_environment(),
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def release_and_source():
    release = submissions.read(ROOT / "release" / ASSIGNMENT / "multihead.ipynb")
    source = submissions.read(ROOT / "source" / ASSIGNMENT / "multihead.ipynb")
    return release, source


def test_validate_fails_the_untouched_release(tmp_path, release_and_source):
    release, source = release_and_source
    output = validate(tmp_path, submissions.fill(release, source, blank=True))
    assert "VALIDATION FAILED" in output


def test_validate_passes_the_reference(tmp_path, release_and_source):
    release, source = release_and_source
    output = validate(tmp_path, submissions.fill(release, source))
    assert "Success! Your notebook passes all the tests." in output
    assert "cannot be converted to" not in output, "a test cell displays a value"


def test_feedback_shows_the_diagnosis_but_no_hidden_test_or_reference(tmp_path):
    sandbox = CourseSandbox(tmp_path)
    sandbox.generate(ASSIGNMENT)
    release, source = sandbox.release_notebook(ASSIGNMENT), sandbox.source_notebook(ASSIGNMENT)
    entry = next(e for e in catalogs()[ASSIGNMENT].mistakes if e.function == "split_heads")
    nb = submissions.fill(release, source, replace={entry.function: entry.source})
    # The learner's written answer carries a forged attempt record for the panel to read.
    answer = next(
        c
        for c in nb.cells
        if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("solution")
    )
    answer.source += FORGED_ATTEMPT
    sandbox.submit("learner", ASSIGNMENT, nb)
    # A classmate hands in the written answer as released: nbgrader gives it 0, no TA.
    blank = submissions.fill(release, source)
    for handed, released in zip(blank.cells, release.cells, strict=True):
        if handed.cell_type == "markdown" and handed.metadata.get("nbgrader", {}).get("solution"):
            handed.source = released.source
    sandbox.submit("blank_answer", ASSIGNMENT, blank)
    # Another hands in the whole notebook as released: every function still a stub.
    sandbox.submit("as_released", ASSIGNMENT, submissions.fill(release, source, blank=True))
    sandbox.autograde(ASSIGNMENT)
    sandbox.run("generate_feedback", ASSIGNMENT)

    (page,) = (tmp_path / "feedback" / "learner" / ASSIGNMENT).glob("*.html")
    html = page.read_text(encoding="utf-8")
    assert f"[{entry.key}]" in html, "the Korean diagnosis is missing"
    for secret in ("HIDDEN TESTS", "hidden_checks", "grader_tests", "solutions", "BEGIN SOLUTION"):
        assert secret not in html, f"feedback shows {secret!r}"

    # The page opens with the Korean summary: per function its points and first diagnosis.
    start = html.index('<div class="course-summary"')
    # The summary's table ends where its attempt data begins (pictures nest divs in it).
    summary = html[start : html.index(f'id="{feedback.ATTEMPT_ID}"', start)]
    assert start < html.index("3장 실습 3"), "the summary is not the first thing on the page"
    for function in contract_functions(ASSIGNMENT):
        assert f"<code>{function}</code>" in summary or f">{function}</a>" in summary
    first_failing = next(
        error
        for grade_id, error in sandbox.autograded_errors("learner", ASSIGNMENT).items()
        if grade_id.startswith("split_heads")
    )
    first_line = first_failing.split(": ", 1)[1].splitlines()[0]
    assert escape(first_line, quote=False) in summary, "the first diagnosis is not shown"
    # ... and the misconception the hidden check's verdict record names.
    assert escape(f"짐작되는 실수 [{entry.key}]", quote=False) in summary
    assert "모두 통과" in summary and "why_256_answer" in summary and "채점 전" in summary
    assert "white-space: pre-wrap" in html, "long hints would run off their box"

    # The same rows as data, for the learner's panel: the grader's, not the forged ones.
    attempt = feedback.read_attempt(html)
    assert attempt is not None and attempt["total"]["max"] > attempt["total"]["score"]
    rows = {row["name"]: row for row in attempt["functions"]}
    assert list(rows) == contract_functions(ASSIGNMENT)
    split = rows["split_heads"]
    assert split["score"] < split["max"] and split["misconception"]["key"] == entry.key
    assert split["message"] == first_line and isinstance(split["seed"], int), split
    for name, row in rows.items():  # each as the table shows it
        points = f'<td class="points">{row["score"]:g} / {row["max"]:g}</td>'
        assert points in summary[summary.index(f">{name}<") :].split("</tr>")[0], name
    assert [(a["grade_id"], a["state"]) for a in attempt["answers"]] == [
        ("why_256_answer", "waiting")
    ]

    (blank_page,) = (tmp_path / "feedback" / "blank_answer" / ASSIGNMENT).glob("*.html")
    blank_html = blank_page.read_text(encoding="utf-8")
    start = blank_html.index('<div class="course-summary"')
    blank_summary = blank_html[start : blank_html.index("</div>", start)]
    row = blank_summary[blank_summary.index("why_256_answer") :].split("</tr>")[0]
    assert "배포된 그대로 제출해 점수가 없습니다" in row and "0 / " in row, row
    assert "TA 가 채점했습니다" not in row and "채점 전" not in row, row
    (answer,) = feedback.read_attempt(blank_html)["answers"]
    assert (answer["state"], answer["score"]) == ("left_blank", 0.0), answer

    # A stub is said to be one once per function: no misconception line repeats it.
    (stub_page,) = (tmp_path / "feedback" / "as_released" / ASSIGNMENT).glob("*.html")
    stub_html = stub_page.read_text(encoding="utf-8")
    start = stub_html.index('<div class="course-summary"')
    stub_summary = stub_html[start : stub_html.index(f'id="{feedback.ATTEMPT_ID}"', start)]
    rows = feedback.read_attempt(stub_html)["functions"]
    assert [row["name"] for row in rows] == contract_functions(ASSIGNMENT)
    for row in rows:
        assert row["score"] < row["max"] and "NotImplementedError" in row["message"], row
        assert row["misconception"] is None, row
    assert f"[{NOT_IMPLEMENTED.key}]" not in stub_summary
