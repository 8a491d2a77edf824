"""Do the hidden checks tell each catalog entry apart, without a kernel?

Fast companions of tests/test_autograde.py: each entry's code replaces the
reference in a notebook-like namespace and every hidden check runs on it.
"""

import ast

import nbformat
import pytest

from coursekit.checks.declared import checks_of
from tests.support.catalog_support import all_entries, catalogs, run_hidden_checks
from tests.support.notebook_namespace import notebook_namespace, source_notebook

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


def top_level_names(assignment: str) -> set[str]:
    """Every name a code cell of the source notebook assigns at top level (magics left out)."""
    nb = nbformat.read(source_notebook(assignment), as_version=4)
    names: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        lines = cell.source.splitlines()
        code = "\n".join(line for line in lines if not line.lstrip().startswith("%"))
        for node in ast.parse(code).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def test_ch4s_notebook_globals_are_names_its_own_notebook_defines():
    declared = checks_of("ch4_cross_attention").notebook_globals
    defined = top_level_names("ch4_cross_attention")
    assert declared <= defined, sorted(declared - defined)  # ch3's d_model, X, Qh were not
    assert {"X_dec", "X_enc", "H_enc", "d_k", "n"} <= declared


def test_ch4s_global_read_names_the_global_the_learner_function_read():
    by_key = {(e.function, e.key): e for e in all_entries("mistake")}
    for function, read in (("multi_head_cross_attention", "H_enc"), ("split_heads", "n")):
        entry = by_key[(function, "reads_notebook_globals")]
        assert entry.assignment == "ch4_cross_attention"
        results = run_hidden_checks(entry.assignment, notebook_namespace(entry.assignment, entry))
        own = [
            m
            for g, m in results.items()
            if m and checks_of(entry.assignment)[g].function == function
        ]
        assert own and all(f"노트북 전역 변수({read})를 읽어" in m for m in own), own
