"""A new assignment needs new files only.

A scratch copy of the course gets a tiny throwaway assignment, `zz_double`
(one function, one visible and one hidden test cell), written the way
docs/authoring.md tells an author to: its source notebook, its reference in
solutions/, its declared checks in grader_tests/ and its catalog in catalog/.
No file of the existing course is edited. Then the whole cycle runs on it
with the stock commands: generate_assignment (release) → submissions →
autograde → generate_feedback → the TA report.
"""

from __future__ import annotations

import csv
import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from coursekit.checks.verdict import Verdict
from coursekit.core.environment import venv_environment
from coursekit.simulate import submissions
from tests.support.authored_notebooks import nbgrader_cell, python_notebook
from tests.support.course_sandbox import CourseSandbox

pytestmark = [pytest.mark.class_graded]

ROOT = Path(__file__).resolve().parent.parent
NEW = "zz_double"
PACKAGES = ("solutions", "grader_tests", "catalog")

REFERENCE = '''
"""Reference for the throwaway assignment zz_double."""

import numpy as np

__all__ = ["double"]


def double(x: np.ndarray) -> np.ndarray:
    return 2.0 * x
'''

CHECKS = '''
"""Hidden checks for the throwaway assignment zz_double."""

import numpy as np

from solutions import zz_double as ref

from coursekit.checks.core import Case, Misconception, distinct_ints
from coursekit.checks.declared import HiddenCheck, HiddenChecks


def double_case(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(distinct_ints(rng, 2, 2, 7))
    return Case("무작위 모양", (rng.normal(size=shape),), ("x",), seed)


CHECKS = HiddenChecks(
    "zz_double",
    reference=ref,
    notebook_globals={"x"},
    checks=[
        HiddenCheck(
            "double_random_shapes",
            "double",
            "무작위 모양",
            [double_case(seed) for seed in range(9000, 9004)],
            (
                Misconception(
                    "double_plus_one",
                    "두 배에 1 을 더했습니다",
                    "2 * x 만 돌려주세요.",
                    predict=lambda x: 2 * x + 1,
                ),
            ),
        )
    ],
)
globals().update(CHECKS.wrappers())
'''

CATALOG = '''
"""Known mistakes for the throwaway assignment zz_double."""

from catalog import Catalog

catalog = Catalog("zz_double", page_outputs=("두 배: [0. 2. 4.]",))


@catalog.mistake(fails={"double_seed", "double_random_shapes"})
def double__double_plus_one(x):
    return 2 * x + 1
'''


def source_notebook() -> nbformat.NotebookNode:
    return python_notebook(
        [
            nbformat.v4.new_markdown_cell("# 두 배 만들기 (시험용 과제)"),
            nbgrader_cell("setup", "import numpy as np\n\nx = np.arange(3.0)", "seed_setup"),
            nbgrader_cell(
                "answer",
                '''
            def double(x):
                """x 의 모든 칸을 두 배로 한다."""
                ### BEGIN SOLUTION
                return 2.0 * x
                ### END SOLUTION
            ''',
                "double_answer",
            ),
            nbformat.v4.new_code_cell('print("두 배:", double(x))'),
            nbgrader_cell(
                "test",
                '''
            """double 이 씨앗 예제 [0, 1, 2] 를 [0, 2, 4] 로 만드는지 확인"""
            assert np.allclose(double(np.arange(3.0)), [0, 2, 4]), "[0, 2, 4] 가 아닙니다"
            ''',
                "double_seed",
                points=1,
            ),
            nbgrader_cell(
                "test",
                f'''
            """double: 무작위 모양 (숨은 검사)"""
            assert callable(double), "double 함수를 먼저 정의하세요"
            ### BEGIN HIDDEN TESTS
            from grader_tests import {NEW} as hidden_checks

            hidden_checks.check_double_random_shapes(double)
            ### END HIDDEN TESTS
            ''',
                "double_random_shapes",
                points=2,
            ),
        ]
    )


def new_files(course_root: Path) -> list[Path]:
    """Write the new assignment's files: the only files the author adds."""
    written = {
        course_root / "solutions" / f"{NEW}.py": REFERENCE,
        course_root / "grader_tests" / f"{NEW}.py": CHECKS,
        course_root / "catalog" / f"{NEW}.py": CATALOG,
    }
    for path, text in written.items():
        path.write_text(text.lstrip(), encoding="utf-8")
    notebook = course_root / "source" / NEW / f"{NEW}.ipynb"
    notebook.parent.mkdir()
    nbformat.write(source_notebook(), notebook)
    return [*written, notebook]


def changed_course_files(course_root: Path) -> list[str]:
    """Files of the repository's course that the copy holds with other content."""
    changed = []
    for top in ("source", *PACKAGES):
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                copy = course_root / path.relative_to(ROOT)
                if not copy.is_file() or not filecmp.cmp(path, copy, shallow=False):
                    changed.append(str(path.relative_to(ROOT)))
    return changed


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("new-assignment")
    sandbox = CourseSandbox(root)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    added = new_files(root)
    # The copy's packages, with the new files, come first for every command run in it.
    patch = pytest.MonkeyPatch()
    patch.setenv("PYTHONPATH", str(root))
    yield sandbox, added
    patch.undo()


def run_module(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=root,
        env=venv_environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_new_assignment_goes_round_the_whole_cycle(course):
    sandbox, added = course
    assert changed_course_files(sandbox.root) == []
    assert sorted(p.relative_to(sandbox.root).parts[0] for p in added) == sorted(
        ["source", *PACKAGES]
    )

    release = sandbox.generate(NEW)
    released = (release / f"{NEW}.ipynb").read_text(encoding="utf-8")
    assert "raise NotImplementedError()" in released
    for secret in ("HIDDEN TESTS", "grader_tests", "2.0 * x", "double_plus_one"):
        assert secret not in released

    source, given = sandbox.source_notebook(NEW), sandbox.release_notebook(NEW)
    mistake = "def double(x):\n    return 2 * x + 1\n"
    sandbox.submit("right", NEW, submissions.fill(given, source))
    sandbox.submit("wrong", NEW, submissions.fill(given, source, replace={"double": mistake}))
    sandbox.submit("blank", NEW, submissions.fill(given, source, blank=True))
    sandbox.autograde(NEW)

    scores = sandbox.scores(NEW)
    assert scores["right"] == {"double_seed": 1, "double_random_shapes": 2}
    assert scores["wrong"] == {"double_seed": 0, "double_random_shapes": 0}
    assert scores["blank"] == {"double_seed": 0, "double_random_shapes": 0}
    record = sandbox.autograded_verdicts("wrong", NEW)["double_random_shapes"]
    verdict = Verdict.from_record(record)
    assert (verdict.function, verdict.key, verdict.seed) == ("double", "double_plus_one", 9000)
    blank = Verdict.from_record(sandbox.autograded_verdicts("blank", NEW)["double_random_shapes"])
    assert blank.key == "not_implemented"

    sandbox.run("generate_feedback", NEW, "--force")
    feedback = (sandbox.root / "feedback" / "wrong" / NEW / f"{NEW}.html").read_text("utf-8")
    assert "두 배에 1 을 더했습니다" in feedback
    assert "grader_tests" not in feedback and "hidden_checks" not in feedback

    report = run_module(sandbox.root, "coursekit.staff.report", NEW, "--root", str(sandbox.root))
    assert report.returncode == 0, report.stderr[-3000:]
    assert "double_plus_one" in report.stdout, report.stdout
    with (sandbox.root / "reports" / f"{NEW}.csv").open(encoding="utf-8") as rows:
        table = list(csv.DictReader(rows))
    # The new assignment's verdicts carry its probe too: the wrong learner is clustered.
    clusters = {(r["student"], r["cell"]): r["cluster"] for r in table}
    assert clusters[("wrong", "double_random_shapes")] == "C1", table
    assert not any(r["cluster"] for r in table if r["student"] == "blank"), table
