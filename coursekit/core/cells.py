"""What a notebook cell is — answer, test, setup, drawing — decided in one place.

nbgrader's metadata says it (`nbgrader.solution`, `nbgrader.grade`,
`nbgrader.locked`); every module of the course asks here instead of reading
the metadata itself.
"""

from __future__ import annotations

import ast
import copy
import re

from nbgrader import utils
from nbgrader.preprocessors import ClearHiddenTests

# Drawing cells (heatmaps) earn nothing and are not run while grading: importing
# matplotlib and rendering cost about a third of a notebook's grading time, and
# the learner saw the drawing in their own run.
SKIP_TAG = "skip-autograde"

# Where the grader keeps a failed hidden check's record (coursekit.checks.verdict)
# in the autograded notebook. Only the grader writes it: whatever a submission
# brings under this key is dropped before grading (forget_verdicts).
VERDICT_KEY = "coursekit_verdict"

# A top-level `def`, for a source that does not parse (a learner's half-written cell).
DEF_LINE = re.compile(r"^def (\w+)\(", re.MULTILINE)


def grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def defined_function(source: str) -> str | None:
    """The name of the first function a cell's source defines at its top level."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        match = DEF_LINE.search(source)
        return match.group(1) if match else None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            return node.name
    return None


def is_answer(cell) -> bool:
    """A cell the learner fills in (code or a written answer)."""
    return utils.is_solution(cell)


def is_code_answer(cell) -> bool:
    """An answer cell with code, graded by the test cells after it (not by itself)."""
    return cell.cell_type == "code" and utils.is_solution(cell) and not utils.is_grade(cell)


def is_test(cell) -> bool:
    """An autograded test cell."""
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


def is_trusted_setup(cell, setup_sources: set[str]) -> bool:
    """A setup cell whose source is the instructor's as the gradebook knows it.

    While grading, the metadata is the learner's file: only the source, checked
    against the gradebook, makes a cell the instructor's.
    """
    return cell.cell_type == "code" and cell.source in setup_sources and not is_test(cell)


def is_skipped(cell) -> bool:
    """A drawing cell not run while grading; a test cell never is, whatever its tags say.

    While grading, an instructor's cell has the instructor's tags
    (coursekit.autograde.roles); a learner's own cell keeps the learner's.
    """
    tags = cell.metadata.get("tags")
    return isinstance(tags, list) and SKIP_TAG in tags and not is_test(cell)


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


def store_verdict(cell, record: dict) -> None:
    cell.metadata[VERDICT_KEY] = record


def verdict_record(cell) -> dict | None:
    """The grader's record of this cell's failed hidden check, if it has one."""
    return cell.metadata.get(VERDICT_KEY)


def forget_verdicts(nb) -> None:
    """Drop verdict records a submitted notebook carries: only the grader's count."""
    for cell in nb.cells:
        cell.metadata.pop(VERDICT_KEY, None)


def verdict_records(nb) -> dict[str, dict]:
    """grade_id -> the grader's verdict record, for each cell of the notebook that has one."""
    return {grade_id(c): r for c in nb.cells if (r := verdict_record(c)) is not None}


def error_texts(nb) -> dict[str, str]:
    """grade_id -> the error (or stderr) text each failing cell of the notebook shows."""
    errors = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                errors[grade_id(cell) or ""] = f"{output.ename}: {output.evalue}"
            elif output.output_type == "stream" and output.name == "stderr":
                errors[grade_id(cell) or ""] = output.text
    return errors
