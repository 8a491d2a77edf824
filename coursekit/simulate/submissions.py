"""Simulated learners' notebooks, made from what a learner really receives.

A submission starts from the release notebook and fills its answer cells:
with the reference code from the source notebook, or, for one function, with
other code (a catalog entry). Used by `make demo` and the test suite.
"""

from __future__ import annotations

import copy

import nbformat

from coursekit.core.cells import defined_function, grade_id, is_answer

SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def without_markers(source: str) -> str:
    """The source notebook's answer as a learner would have typed it."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in SOLUTION_MARKERS)


def reference_answers(source_nb) -> dict[str, str]:
    """grade_id -> the reference answer of every answer cell in the source notebook."""
    return {grade_id(c): without_markers(c.source) for c in source_nb.cells if is_answer(c)}


def fill(release_nb, source_nb, *, replace: dict[str, str] | None = None, blank=False):
    """A copy of the release notebook with its answer cells filled.

    `replace` maps a contract function name to the code that defines it
    instead of the reference; `blank` leaves every answer as released.
    """
    nb = copy.deepcopy(release_nb)
    if blank:
        return nb
    answers = reference_answers(source_nb)
    replace = replace or {}
    for cell in nb.cells:
        if not is_answer(cell):
            continue
        reference = answers[grade_id(cell)]
        function = defined_function(reference) if cell.cell_type == "code" else None
        cell.source = replace.get(function, reference)
    return nb


def read(path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)
