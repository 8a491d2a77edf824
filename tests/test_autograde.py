"""Is the simulated class graded as intended: every catalog mistake caught, every variant passed?

One class per assignment is graded once (module fixture) with `make grade`:
the reference, the untouched release, every catalog mistake and every correct
variant. `make grade` writes what stock `nbgrader autograde` writes
(tests/test_grade_parallel.py compares the two gradebooks and notebooks);
it grades the ~45 notebooks of a class in parallel. Tests of one assignment
share a pytest-xdist group so the class is graded only once.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from catalog import Entry, catalogs
from coursekit.checks.declared import checks_of
from coursekit.checks.verdict import Verdict
from coursekit.simulate import submissions
from coursekit.simulate.harness import CourseHarness
from tests.support import same_results
from tests.support.course_sandbox import CourseSandbox

pytestmark = [pytest.mark.class_graded, pytest.mark.cluster]

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENTS = sorted(a for a in catalogs() if (ROOT / "source" / a).is_dir())
REFERENCE, BLANK = "reference", "blank-release"


@dataclass
class GradedClass:
    sandbox: CourseSandbox
    scores: dict[str, dict[str, float | None]]
    max_scores: dict[str, float]
    ungraded: Path  # a copy of the class as submitted, before grading

    def lost(self, student: str) -> set[str]:
        """grade_ids of autograded cells where the learner got less than full points."""
        return {
            cell
            for cell, score in self.scores[student].items()
            if score is not None and score < self.max_scores[cell]
        }

    @property
    def autograded_cells(self) -> set[str]:
        return {cell for cell, score in self.scores[REFERENCE].items() if score is not None}


def variant_learners(assignment: str) -> dict[str, list[Entry]]:
    """Correct variants combined: learner k writes the k-th variant of every function.

    Each function is graded in its own cells, so one notebook can prove
    several functions' variants at once; this keeps the class small.
    """
    by_function: dict[str, list[Entry]] = {}
    for entry in catalogs()[assignment].variants:
        by_function.setdefault(entry.function, []).append(entry)
    learners: dict[str, list[Entry]] = {}
    for entries in by_function.values():
        for k, entry in enumerate(entries, start=1):
            learners.setdefault(f"variants-{k}", []).append(entry)
    return learners


def variant_learner(entry: Entry) -> str:
    return next(
        learner
        for learner, entries in variant_learners(entry.assignment).items()
        if entry in entries
    )


def grade_class(path: Path, assignment: str) -> GradedClass:
    sandbox = CourseSandbox(path)
    sandbox.generate(assignment)
    release, source = sandbox.release_notebook(assignment), sandbox.source_notebook(assignment)
    sandbox.submit(REFERENCE, assignment, submissions.fill(release, source))
    sandbox.submit(BLANK, assignment, submissions.fill(release, source, blank=True))
    for entry in catalogs()[assignment].mistakes:
        nb = submissions.fill(release, source, replace={entry.function: entry.source})
        sandbox.submit(entry.student_id, assignment, nb)
    for learner, entries in variant_learners(assignment).items():
        nb = submissions.fill(release, source, replace={e.function: e.source for e in entries})
        sandbox.submit(learner, assignment, nb)
    ungraded = path.with_name(f"{path.name}-ungraded")
    shutil.copytree(path, ungraded, symlinks=True)
    sandbox.grade(assignment, "--quiet")
    scores, max_scores = sandbox.scores(assignment), sandbox.max_scores(assignment)
    return GradedClass(sandbox, scores, max_scores, ungraded)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    cache: dict[str, GradedClass] = {}

    def get(assignment: str) -> GradedClass:
        if assignment not in cache:
            cache[assignment] = grade_class(tmp_path_factory.mktemp(assignment), assignment)
        return cache[assignment]

    return get


@pytest.fixture(scope="module")
def graded_by_the_other_runner(graded):
    """The same class, as submitted (same files and times), graded with the other runner."""
    cache: dict[str, CourseHarness] = {}

    def get(assignment: str) -> CourseHarness:
        if assignment not in cache:
            sandbox = CourseHarness(graded(assignment).ungraded)
            with (sandbox.root / "nbgrader_config.py").open("a", encoding="utf-8") as config:
                config.write(same_results.OTHER_RUNNER_CONFIG)
            sandbox.grade(assignment, "--quiet")
            cache[assignment] = sandbox
        return cache[assignment]

    return get


def per_assignment(values, ids):
    return pytest.mark.parametrize(
        "item",
        [pytest.param(v, marks=pytest.mark.xdist_group(a), id=i) for a, v, i in values],
    )


def entry_params(kind: str):
    return [
        (e.assignment, e, f"{e.assignment}:{e.function}:{e.key}")
        for c in catalogs().values()
        for e in c.entries
        if e.kind == kind and e.assignment in ASSIGNMENTS
    ]


@per_assignment([(a, a, a) for a in ASSIGNMENTS], ids=None)
def test_reference_earns_full_marks_and_waits_for_manual_grading(graded, item):
    result = graded(item)
    assert result.lost(REFERENCE) == set(), result.sandbox.autograded_errors(REFERENCE, item)
    manual = {cell for cell, score in result.scores[REFERENCE].items() if score is None}
    assert manual, "the manual answer cell should wait for a TA"


@per_assignment([(a, a, a) for a in ASSIGNMENTS], ids=None)
def test_untouched_release_scores_zero_on_every_cell(graded, item):
    result = graded(item)
    assert result.scores[BLANK], "the blank submission was not graded"
    assert {cell: s for cell, s in result.scores[BLANK].items() if s != 0} == {}


@per_assignment([(a, a, a) for a in ASSIGNMENTS], ids=None)
def test_the_cell_runner_changes_no_output_and_no_grade(graded, graded_by_the_other_runner, item):
    """The lean cell runner and ipykernel write, field by field, the same outputs and grades."""
    default, other = graded(item).sandbox, graded_by_the_other_runner(item)
    compared = same_results.assert_same_results(default, other)
    assert compared == len(graded(item).scores)


@per_assignment(entry_params("variant"), ids=None)
def test_correct_variant_earns_full_marks(graded, item: Entry):
    result = graded(item.assignment)
    learner = variant_learner(item)
    errors = result.sandbox.autograded_errors(learner, item.assignment)
    assert result.lost(learner) == set(), errors


@per_assignment(entry_params("mistake"), ids=None)
def test_mistake_loses_points_in_exactly_its_cells_with_a_korean_diagnosis(graded, item: Entry):
    result = graded(item.assignment)
    lost = result.lost(item.student_id)
    errors = result.sandbox.autograded_errors(item.student_id, item.assignment)
    assert lost == set(item.fails), {cell: errors.get(cell, "")[:300] for cell in lost ^ item.fails}
    named = [cell for cell in lost if f"[{item.key}]" in errors.get(cell, "")]
    assert named, f"no failing cell names [{item.key}]: {errors}"
    # A hidden cell's message is rendered from the record the grader stored beside it.
    verdicts = result.sandbox.autograded_verdicts(item.student_id, item.assignment)
    hidden = {check.grade_id for check in checks_of(item.assignment)}
    for cell in set(named) & hidden:
        verdict = Verdict.from_record(verdicts[cell])
        assert (verdict.key, verdict.grade_id) == (item.key, cell)
        assert errors[cell] == f"AssertionError: {verdict.render()}"
    assert set(verdicts) <= lost, "a verdict record on a cell that kept its points"
