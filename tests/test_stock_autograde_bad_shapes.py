"""Stock `nbgrader autograde` with the course's config grades everyone after a bad notebook.

Before the course read submissions itself (coursekit.autograde.roles, .shapes),
a test cell with a schema version nbgrader does not know stopped stock
autograde for the whole class (SchemaTooNewError ends its loop), and a cell
that nbformat's schema rejects, or a JSON nested too deep, failed the learner.
Here one stock run grades a small class in which such learners come first (it
grades in sorted order of the folder names): each bad one is graded as in
make grade, and the honest learner and the wrong one after them exactly as
they would be alone.
"""

from __future__ import annotations

import pytest

from coursekit.simulate import submissions
from tests.hostile import (
    ASSIGNMENT,
    SPLIT_HEADS_LOSSES,
    WRONG_LEARNER,
    WRONG_LEARNER_SPLIT_HEADS,
    scenarios,
    submit,
)
from tests.support.course_sandbox import CourseSandbox

# Sorted before "reference" and WRONG_LEARNER, so stock autograde meets them first.
BAD = (
    "broken_metadata_schema",
    "deeply_nested_json",
    "flipped_solution_flag",
    "many_markdown_cells",
    "newer_schema_version",  # with nbgrader's own sanitize list, no one after it was graded
)

pytestmark = [pytest.mark.xdist_group("stock_autograde_bad_shapes"), pytest.mark.class_graded]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    sandbox = CourseSandbox(tmp_path_factory.mktemp("stock-bad-shapes"))
    sandbox.generate(ASSIGNMENT)
    release, source = sandbox.release_notebook(ASSIGNMENT), sandbox.source_notebook(ASSIGNMENT)
    found = scenarios()
    for name in BAD:
        scenario = found[name]
        function = getattr(scenario, "FUNCTION", None)
        replace = {function: scenario.SOURCE} if function else {}
        nb = submissions.fill(release, source, replace=replace)
        submit(
            sandbox, name, nb, getattr(scenario, "tamper", None), getattr(scenario, "corrupt", None)
        )
    submit(sandbox, "reference", submissions.fill(release, source))
    wrong = submissions.fill(release, source, replace={"split_heads": WRONG_LEARNER_SPLIT_HEADS})
    submit(sandbox, WRONG_LEARNER, wrong)
    assert sorted([*BAD, "reference", WRONG_LEARNER])[-2:] == ["reference", WRONG_LEARNER]
    run = sandbox.run("autograde", ASSIGNMENT, "--force", check=False)
    return sandbox, run, found


def test_stock_autograde_grades_every_learner_without_an_error(graded):
    sandbox, run, _ = graded
    assert run.returncode == 0, run.stderr[-4000:]
    assert "There was an error processing" not in run.stderr
    assert set(sandbox.scores(ASSIGNMENT)) == {*BAD, "reference", WRONG_LEARNER}


@pytest.mark.parametrize("name", [*BAD, "reference", WRONG_LEARNER])
def test_each_learner_loses_exactly_its_cells_and_waits_only_for_the_written_answer(graded, name):
    sandbox, _, found = graded
    scores, most = sandbox.scores(ASSIGNMENT)[name], sandbox.max_scores(ASSIGNMENT)
    honest = {"reference": frozenset(), WRONG_LEARNER: SPLIT_HEADS_LOSSES}
    expected = honest[name] if name in honest else found[name].ZERO
    zero = {cell for cell, score in scores.items() if score == 0}
    manual = {cell for cell, score in scores.items() if score is None}
    full = {cell for cell, score in scores.items() if score == most[cell]}
    if name == "deeply_nested_json":  # no notebook at all: the written answer is 0 too
        assert zero == set(most) and manual == set()
        return
    assert manual == {"why_256_answer"}
    assert zero == expected
    assert full == set(most) - expected - manual
