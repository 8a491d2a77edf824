"""Do the hidden checks tell each catalog entry apart, without a kernel?

Fast companions of tests/test_autograde.py: each entry's code replaces the
reference in a notebook-like namespace and every hidden check runs on it.
"""

import pytest

from coursekit.checks.declared import checks_of
from tests.catalog_support import all_entries, catalogs, run_hidden_checks
from tests.notebook_namespace import notebook_namespace

MISTAKES = all_entries("mistake")
VARIANTS = all_entries("variant")


@pytest.mark.parametrize("assignment", sorted(catalogs()))
def test_reference_passes_every_hidden_check(assignment):
    results = run_hidden_checks(assignment, notebook_namespace(assignment))
    assert results, f"{assignment} has no hidden checks"
    assert {g: m for g, m in results.items() if m} == {}


@pytest.mark.parametrize("entry", VARIANTS, ids=lambda e: f"{e.assignment}:{e.function}:{e.key}")
def test_correct_variant_passes_every_hidden_check(entry):
    results = run_hidden_checks(entry.assignment, notebook_namespace(entry.assignment, entry))
    assert {g: m for g, m in results.items() if m} == {}


@pytest.mark.parametrize("entry", MISTAKES, ids=lambda e: f"{e.assignment}:{e.function}:{e.key}")
def test_mistake_fails_exactly_its_hidden_cells_and_is_named(entry):
    checks = {c.grade_id: c for c in checks_of(entry.assignment)}
    results = run_hidden_checks(entry.assignment, notebook_namespace(entry.assignment, entry))
    failing = {grade_id for grade_id, message in results.items() if message}
    assert failing == entry.fails & set(checks), (
        f"hidden cells that lost points: {sorted(failing)}; "
        f"declared: {sorted(entry.fails & set(checks))}"
    )
    own = [g for g in failing if checks[g].function == entry.function]
    assert own, f"no hidden cell of {entry.function} fails for {entry.key}"
    for grade_id in own:
        assert f"[{entry.key}]" in results[grade_id], (
            f"{grade_id} does not name [{entry.key}]:\n{results[grade_id]}"
        )


def test_every_misconception_key_is_exercised_by_the_catalog():
    """A diagnosis no catalog entry triggers is untested: each key needs an entry."""
    for assignment, catalog in catalogs().items():
        keys = {m.key for check in checks_of(assignment) for m in check.misconceptions}
        covered = {e.key for e in catalog.mistakes}
        assert keys <= covered, f"{assignment}: no catalog entry for {sorted(keys - covered)}"
