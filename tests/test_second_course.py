"""A second course, written from nothing, runs on the installed coursekit unedited.

In a temporary folder: an English course "intro-numpy" with its own
nbgrader_config.py (its own course id, time zone and package names `refs`,
`checks`, `mistakes` set through `c.CourseKit.*`), one assignment with one
function, its source notebook, reference, declared hidden check and catalog.
Then, from that folder (the environment's bin/ first on PATH, as `make` sets
it), the cycle with the installed `coursekit` and stock `nbgrader` commands:
release, learners' fetch and submit through the exchange, collect, `coursekit
grade`, `nbgrader generate_feedback`, `coursekit report`, `coursekit export`,
and Validate on a learner's notebook. The course runs twice, in each language
coursekit speaks (`c.CourseKit.language`): the assertions read the course's own
English texts, which no language changes, and in `en` make grade's lines, the TA
report's table and CSV, Validate's output and the feedback summary hold no Hangul.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from coursekit.checks.verdict import Verdict
from coursekit.core import messages
from coursekit.core.course import CourseKit
from coursekit.core.environment import venv_environment
from coursekit.simulate import learner_actions, submissions
from coursekit.simulate.harness import CourseHarness
from tests.support.authored_notebooks import nbgrader_cell, python_notebook
from tests.support.hangul import HANGUL

pytestmark = [
    pytest.mark.xdist_group("second_course"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
]

ASSIGNMENT = "vectors"
COURSE_ID = "intro-numpy"
LEARNERS = ("alice", "bob")  # alice hands in the reference, bob the catalog's mistake

CONFIG = """
import os

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, ClearOutput, DeduplicateIds,
    GetGrades, IgnorePattern, LimitOutput, OverwriteKernelspec, SaveAutoGrades,
)

from coursekit.learner.feedback import FeedbackSummary
from coursekit.autograde.execute import SandboxedExecute
from coursekit.autograde.roles import RestoreCells
from coursekit.autograde.shapes import BoundedNotebookExporter
from coursekit.staff.inert import InertLearnerContent
from coursekit.learner.tracebacks import SanitizeHiddenTracebacks
from coursekit.exchange import configure as configure_safe_exchange
from coursekit.learner.validation import configure as configure_validate

c = get_config()
HERE = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.course_id = "intro-numpy"
c.CourseDirectory.root = HERE
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(HERE, "gradebook.db")
c.Exchange.root = os.path.join(HERE, "exchange")

c.CourseKit.language = "{language}"
c.CourseKit.timezone = "Europe/Berlin"
c.CourseKit.solutions_package = "refs"
c.CourseKit.checks_package = "checks"
c.CourseKit.catalog_package = "mistakes"

c.ClearSolutions.code_stub = {"python": "# your code here\\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "Your answer here."

c.Autograde.sanitize_preprocessors = [
    ClearOutput, RestoreCells, DeduplicateIds, OverwriteKernelspec, CheckCellMetadata,
]
c.Autograde.exporter_class = BoundedNotebookExporter
c.Autograde.autograde_preprocessors = [
    SandboxedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
    AssignLatePenalties, CheckCellMetadata, InertLearnerContent,
]
c.GenerateFeedback.preprocessors = [
    GetGrades, ClearHiddenTests, SanitizeHiddenTracebacks, InertLearnerContent,
    CSSHTMLHeaderPreprocessor, FeedbackSummary,
]
configure_safe_exchange(c)
configure_validate(c)  # after c.CourseKit.language: Validate speaks it
"""

REFERENCE = '''
"""Reference solutions of the assignment vectors."""

import numpy as np

__all__ = ["normalize"]


def normalize(v):
    return v / np.linalg.norm(v)
'''

CHECKS = '''
"""Hidden checks of the assignment vectors."""

import numpy as np

from coursekit.checks.core import Case, Misconception
from coursekit.checks.declared import HiddenCheck, HiddenChecks
from refs import vectors as ref


def vector_case(seed):
    rng = np.random.default_rng(seed)
    return Case("random vector", (rng.normal(size=int(rng.integers(2, 9))),), ("v",), seed)


CHECKS = HiddenChecks(
    "vectors",
    reference=ref,
    notebook_globals={"v"},
    checks=[
        HiddenCheck(
            "normalize_random_vectors",
            "normalize",
            "random vectors",
            [vector_case(seed) for seed in range(7000, 7006)],
            (
                Misconception(
                    "forgets_square_root",
                    "Divided by the squared length: the square root of the sum is missing",
                    "Divide by np.linalg.norm(v), the square root of the sum of squares.",
                    predict=lambda v: v / np.sum(v**2),
                ),
            ),
        )
    ],
)
globals().update(CHECKS.wrappers())
'''

# The course's catalog of learner-style mistakes: its own format, read only by this test.
MISTAKES = '''
"""Learner-style mistakes of the course intro-numpy, one entry per known mistake."""

MISTAKES = {
    "vectors": {
        "forgets_square_root": "def normalize(v):\\n    return v / np.sum(v**2)\\n",
    },
}
'''


def source_notebook() -> nbformat.NotebookNode:
    return python_notebook(
        [
            nbformat.v4.new_markdown_cell("# Unit vectors\n\nScale a vector to length 1."),
            nbgrader_cell("setup", "import numpy as np\n\nv = np.array([3.0, 4.0])", "seed_setup"),
            nbgrader_cell(
                "answer",
                '''
            def normalize(v):
                """v scaled to length 1 (same direction)."""
                ### BEGIN SOLUTION
                return v / np.linalg.norm(v)
                ### END SOLUTION
            ''',
                "normalize_answer",
            ),
            nbformat.v4.new_code_cell('print("normalized:", normalize(v))'),
            # The graded kernel's clock is the course's (c.CourseKit.timezone), read by the test.
            nbformat.v4.new_code_cell('import time\n\nprint("clock zone:", time.strftime("%Z"))'),
            nbgrader_cell(
                "test",
                '''
            """normalize keeps a unit vector as it is"""
            assert np.allclose(normalize(np.array([0.6, 0.8])), [0.6, 0.8]), "not [0.6, 0.8]"
            ''',
                "normalize_unit",
                points=1,
            ),
            nbgrader_cell(
                "test",
                '''
            """normalize: random vectors (hidden checks)"""
            assert callable(normalize), "define normalize first"
            ### BEGIN HIDDEN TESTS
            from checks import vectors as hidden_checks

            hidden_checks.check_normalize_random_vectors(normalize)
            ### END HIDDEN TESTS
            ''',
                "normalize_random_vectors",
                points=2,
            ),
        ]
    )


def write_course(root: Path, language: str) -> None:
    """The whole second course: the only files its author writes."""
    files = {
        "nbgrader_config.py": CONFIG.replace("{language}", language),
        "refs/__init__.py": "",
        f"refs/{ASSIGNMENT}.py": REFERENCE,
        "checks/__init__.py": "",
        f"checks/{ASSIGNMENT}.py": CHECKS,
        "mistakes/__init__.py": MISTAKES,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text.lstrip(), encoding="utf-8")
    notebook = root / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook.parent.mkdir(parents=True)
    nbformat.write(source_notebook(), notebook)


def command(root: Path, *args: str, status: int = 0) -> subprocess.CompletedProcess:
    """An installed command run from the course folder, as `make` runs it."""
    env = venv_environment()
    env.pop("PYTHONPATH", None)  # the course is found from the working folder, nothing else
    done = subprocess.run(
        list(args), cwd=root, env=env, capture_output=True, text=True, timeout=900
    )
    said = f"{' '.join(args)}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    assert done.returncode == status, said
    return done


@pytest.fixture(scope="module", params=messages.LANGUAGES)
def course(request, tmp_path_factory):
    """The second course after its whole cycle, from nothing, in each language."""
    root = tmp_path_factory.mktemp(f"second-course-{request.param}")
    write_course(root, request.param)
    harness = CourseHarness(root)
    command(root, "coursekit", "release", ASSIGNMENT)
    command(root, "nbgrader", "release_assignment", ASSIGNMENT, "--force")
    for student in LEARNERS:  # the roster the LMS export matches learners by
        command(root, "nbgrader", "db", "student", "add", student, f"--email={student}@uni.test")

    # The learners fetch and submit through the exchange (the test process plays both).
    patch = pytest.MonkeyPatch()
    patch.syspath_prepend(str(root))  # the course's catalog, for this process only
    catalog = CourseKit(config=harness.config).catalog().MISTAKES[ASSIGNMENT]
    source = harness.source_notebook(ASSIGNMENT)
    answers = {"alice": {}, "bob": {"normalize": catalog["forgets_square_root"]}}
    for student in LEARNERS:
        workspace = root / "learners" / student
        folder = learner_actions.fetch(harness, workspace, student, ASSIGNMENT)
        path = folder / f"{ASSIGNMENT}.ipynb"
        given = nbformat.read(path, as_version=4)
        nbformat.write(submissions.fill(given, source, replace=answers[student]), path)
        learner_actions.submit(harness, workspace, student, ASSIGNMENT)
    patch.undo()

    command(root, "nbgrader", "collect", ASSIGNMENT)
    graded = command(root, "coursekit", "grade", ASSIGNMENT, "-j", "2")
    command(root, "nbgrader", "generate_feedback", ASSIGNMENT, "--force")
    report = command(root, "coursekit", "report", ASSIGNMENT)
    command(root, "coursekit", "export", "--to", "canvas")
    # Validate as a learner's button would, on the released notebook untouched (exit 1).
    untouched = root / "learners" / "carol" / f"{ASSIGNMENT}.ipynb"
    untouched.parent.mkdir(parents=True)
    shutil.copy(root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", untouched)
    validated = command(root, "coursekit", "validate", str(untouched), status=1)
    return harness, graded, report, validated.stdout


def test_the_course_names_its_own_id_zone_and_packages(course):
    harness, *_ = course
    kit = harness.kit
    assert harness.course_id == COURSE_ID
    assert (kit.timezone, kit.secret_packages, kit.catalog_package) == (
        "Europe/Berlin",
        ("refs", "checks"),
        "mistakes",
    )
    released = (harness.root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text("utf-8")
    assert "# your code here" in released and "raise NotImplementedError()" in released
    for secret in ("HIDDEN TESTS", "np.linalg.norm(v)", "forgets_square_root"):
        assert secret not in released


def test_the_right_notebook_earns_full_marks_and_the_mistake_loses_the_hidden_cell(course):
    harness, graded, *_ = course
    assert "2/2" in graded.stdout, graded.stdout
    assert harness.scores(ASSIGNMENT) == {
        "alice": {"normalize_unit": 1, "normalize_random_vectors": 2},
        "bob": {"normalize_unit": 1, "normalize_random_vectors": 0},
    }
    verdict = Verdict.from_record(
        harness.autograded_verdicts("bob", ASSIGNMENT)["normalize_random_vectors"]
    )
    assert (verdict.function, verdict.key, verdict.seed) == (
        "normalize",
        "forgets_square_root",
        7000,
    )
    assert harness.autograded_verdicts("alice", ASSIGNMENT) == {}


def test_the_graded_kernel_keeps_the_courses_clock(course):
    harness, *_ = course
    printed = [
        output.get("text", "")
        for cell in harness.autograded_notebook("alice", ASSIGNMENT).cells
        for output in cell.get("outputs", [])
    ]
    # Europe/Berlin is CET or CEST, whatever the season; UTC or the first course's KST is not.
    assert any(re.fullmatch(r"clock zone: CES?T\n", text) for text in printed), printed


def feedback_page(harness, student: str) -> str:
    path = harness.root / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
    return path.read_text(encoding="utf-8")


def test_the_feedback_shows_the_courses_own_message(course):
    harness, *_ = course
    wrong, right = feedback_page(harness, "bob"), feedback_page(harness, "alice")
    message = "Divided by the squared length: the square root of the sum is missing"
    assert message in wrong and message not in right
    assert "Divide by np.linalg.norm(v)" in wrong
    for secret in ("from checks import", "hidden_checks.", "HIDDEN TESTS", "refs"):
        assert secret not in wrong


def test_the_report_names_the_mistake(course):
    harness, _, report, _ = course
    assert "forgets_square_root" in report.stdout, report.stdout
    with (harness.root / "reports" / f"{ASSIGNMENT}.csv").open(encoding="utf-8") as rows:
        table = list(csv.DictReader(rows))
    named = {(r["student"], r["cell"], r["misconception"]) for r in table if r["misconception"]}
    assert named == {("bob", "normalize_random_vectors", "forgets_square_root")}, table
    clusters = {r["student"]: r["cluster"] for r in table if r["cluster"]}
    assert clusters == {"bob": "C1"}, table


def test_the_canvas_export_has_one_row_per_learner_with_their_points(course):
    harness, *_ = course
    (path,) = (harness.root / "exports").glob("canvas*.csv")
    with path.open(encoding="utf-8") as rows:
        table = list(csv.reader(rows))
    header, possible, *learners = table
    (column,) = [i for i, name in enumerate(header) if name.startswith(ASSIGNMENT)]
    assert float(possible[column]) == 3
    points = {row[header.index("SIS Login ID")]: float(row[column]) for row in learners}
    assert points == {"alice@uni.test": 3, "bob@uni.test": 1}, table


def test_validate_and_the_feedback_summary_speak_the_courses_language(course):
    harness, *_, said = course
    page = feedback_page(harness, "bob")
    summary = re.search(r'<div class="course-summary".*?</div>', page, re.S)
    assert summary, "the feedback page opens with coursekit's summary"
    if harness.kit.language == "ko":
        assert "검사 요약: 보이는 검사 칸 1개 중 0개 통과" in said, said
        assert "아직 구현하지 않음" in said
        assert "요약: 함수마다 점수와 첫 번째 진단" in summary.group(0)
    else:
        assert "Check summary: 0 of 1 visible check cell passed" in said, said
        assert "not implemented yet" in said
        assert "Summary: each function's points and first diagnosis" in summary.group(0)
        assert not HANGUL.search(said), said
        assert not HANGUL.search(summary.group(0)), summary.group(0)
    # What the course wrote reads the same in both: its misconception, on bob's page.
    assert "Divided by the squared length" in summary.group(0)


def test_make_grade_and_the_report_speak_the_courses_language(course):
    """In en not one line of make grade or of the TA report's table and CSV holds Hangul;
    in ko each of them speaks Korean (so the en run's check can fail)."""
    harness, graded, report, _ = course
    english = harness.kit.language == "en"
    table = (harness.root / "reports" / f"{ASSIGNMENT}.csv").read_text(encoding="utf-8")
    for name, text in {
        "make grade's lines": graded.stdout + graded.stderr,
        "the report's table": report.stdout + report.stderr,
        "the report's CSV": table,
    }.items():
        korean = [line for line in text.splitlines() if HANGUL.search(line)]
        assert not korean if english else korean, (name, korean or text[-2000:])
    if english:
        assert "Graded: 2/2 submissions" in graded.stdout, graded.stdout
        assert "2 learners" in report.stdout, report.stdout
