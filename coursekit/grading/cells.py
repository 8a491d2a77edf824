"""What a notebook cell is, for grading: test, setup, or the learner's own."""

from __future__ import annotations

import copy

from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests

SKIP_TAG = "skip-autograde"


def is_test(cell) -> bool:
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


def is_skipped(cell) -> bool:
    """Drawing cells (tag `skip-autograde`) earn nothing and are not run while grading."""
    return SKIP_TAG in cell.metadata.get("tags", [])


def is_setup(cell, setup_sources: set[str]) -> bool:
    """A locked, ungraded cell whose source is the instructor's (as the gradebook knows it)."""
    return (
        cell.cell_type == "code"
        and cell.source in setup_sources
        and not utils.is_grade(cell)
        and not utils.is_solution(cell)
    )


def visible_source(cell, config=None) -> str:
    """The test cell's source without its hidden region: what the learner was given."""
    shown = copy.deepcopy(cell)
    ClearHiddenTests(config=config)._remove_hidden_test_region(shown)
    return shown.source


def passed(cell) -> bool:
    """nbgrader's rule: a test cell passes when it has no error and no stderr output."""
    return not any(
        out.output_type == "error" or (out.output_type == "stream" and out.name == "stderr")
        for out in cell.get("outputs", [])
    )
