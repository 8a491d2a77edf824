"""Formgrader in a real browser: JupyterLab from .venv serves the demo's graded course,
headless Chromium (Debian's, driven by Playwright) grades a manual answer cell."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from coursekit.core.course import Course
from tests.support.browser import chromium
from tests.support.demo_class import GROUP, DemoRun
from tests.support.lab_server import running_lab

ASSIGNMENT, NOTEBOOK, MANUAL_CELL = "ch3_multihead", "multihead", "why_256_answer"
LEARNER = "learner-04"  # a catalog mistake: failing cells and a manual cell waiting

pytestmark = [pytest.mark.xdist_group(GROUP), pytest.mark.class_graded, pytest.mark.browser]


@pytest.fixture
def lab(demo_run: DemoRun, tmp_path):
    """`jupyter lab` from .venv on loopback, serving the demo's course; yields its base URL."""
    with running_lab(demo_run.root, tmp_path, tmp_path / "lab.log") as (base, token):
        yield base, token


def manual_score(root: Path) -> float | None:
    with Course(root).gradebook() as gb:
        grade = gb.find_grade(MANUAL_CELL, NOTEBOOK, ASSIGNMENT, LEARNER)
        return grade.manual_score


def test_formgrader_grades_a_manual_cell_of_a_failing_submission(demo_run, lab, tmp_path):
    base, token = lab
    assert manual_score(demo_run.root) is None
    screenshot = tmp_path / "formgrader.png"
    with chromium(tmp_path / "chromium-profile") as browser:
        page = browser.new_page()
        page.goto(f"{base}/formgrader?token={token}")
        course_assignments = Course(demo_run.root).assignments()
        page.wait_for_selector(f"text={course_assignments[-1]}")
        assignments = page.inner_text("body")
        assert all(a in assignments for a in course_assignments), assignments

        page.goto(f"{base}/formgrader/manage_students")
        page.wait_for_selector(f"text={LEARNER}")
        for n in range(1, 10):
            assert f"learner-{n:02d}" in page.inner_text("body")

        page.goto(f"{base}/formgrader/gradebook/{ASSIGNMENT}/{NOTEBOOK}")
        # Names are hidden until "Show All Names"; the learner's link leads to the submission.
        link = page.locator(f"a.name-shown:text-is('{LEARNER}')")
        link.wait_for(state="attached")
        page.goto(base + link.get_attribute("href"))
        page.wait_for_load_state("networkidle")  # formgrader's scripts have bound the inputs
        assert "짐작되는 실수 [reshape_without_transpose]" in page.inner_text("body")

        score = page.locator(f"input#{MANUAL_CELL}")
        # formgrader saves a score (PUT to its grade API) when the field loses focus.
        saved = lambda r: "/api/grade/" in r.url and r.request.method == "PUT"  # noqa: E731
        with page.expect_response(saved, timeout=60_000):
            score.fill("2")
            score.press("Tab")
        deadline = time.monotonic() + 20
        while manual_score(demo_run.root) != 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        score.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot))
    assert manual_score(demo_run.root) == 2
    assert screenshot.stat().st_size > 10_000
    shutil.copy(screenshot, demo_run.root / "formgrader.png")  # kept for a look after the run
