"""Why a cell scored 0 because of a grading guard: the grader's records, shown as error outputs.

An incident is a record the grader writes into the cell's metadata
(`INCIDENTS_KEY`, as `cells.VERDICT_KEY` holds a failed check's verdict),
next to an error output with its Korean reason that formgrader and the
feedback show. Whatever a submission brings under that key is dropped before
grading (`forget`), and every reader (`make grade`'s summary,
reports/grading_incidents.json, the TA report) reads the records, never an
error output's name: a learner's exception called `KernelDied` is only an
error of its cell.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode

KERNEL_DIED = "KernelDied"
KERNEL_STUCK = "KernelStuck"
NOTEBOOK_TIME_LIMIT = "NotebookTimeLimit"
NOT_RUN = "NotRunAfterFailure"
OUTPUT_LIMIT = "OutputLimitExceeded"
MEMORY_LIMIT = "MemoryLimitExceeded"
TRUSTED_CHECK_FAILED = "TrustedCheckFailed"
CALL_TIME_LIMIT = "CallTimeLimit"
BRIDGE_BROKEN = "BridgeBroken"
INVALID_NOTEBOOK = "InvalidNotebook"
NOTEBOOK_SHAPE = "NotebookShapeLimit"  # part of a notebook cut to its bounds (grading.shapes)
SUBMISSION_FILES = "SubmissionFiles"  # files beside it left out or renamed (safe_exchange.bound)

# Where the grader keeps a cell's incidents: [{"ename": ..., "reason": ...}].
INCIDENTS_KEY = "coursekit_incidents"

ENAMES = frozenset(
    {
        KERNEL_DIED,
        KERNEL_STUCK,
        NOTEBOOK_TIME_LIMIT,
        NOT_RUN,
        OUTPUT_LIMIT,
        MEMORY_LIMIT,
        TRUSTED_CHECK_FAILED,
        CALL_TIME_LIMIT,
        BRIDGE_BROKEN,
        INVALID_NOTEBOOK,
        NOTEBOOK_SHAPE,
        SUBMISSION_FILES,
    }
)


def error_output(ename: str, message: str) -> NotebookNode:
    """An error output as a kernel would write it; nbgrader scores its cell 0."""
    return nbformat.v4.new_output(
        "error", ename=ename, evalue=message, traceback=[f"\x1b[0;31m{ename}\x1b[0m: {message}"]
    )


def add(cell, ename: str, message: str) -> None:
    """Record an incident of the grader's in the cell, and show it as an error output."""
    if ename not in ENAMES:
        raise ValueError(f"not an incident: {ename}")
    cell.setdefault("outputs", []).append(error_output(ename, message))
    cell.setdefault("metadata", {}).setdefault(INCIDENTS_KEY, []).append(
        {"ename": ename, "reason": message}
    )


def of_cell(cell) -> list[dict[str, str]]:
    """The grader's incidents recorded in this cell ([] for anything malformed)."""
    records = cell.get("metadata", {}).get(INCIDENTS_KEY)
    if type(records) is not list:
        return []
    return [
        {"ename": r["ename"], "reason": str(r.get("reason", ""))}
        for r in records
        if isinstance(r, dict) and r.get("ename") in ENAMES
    ]


def forget(nb) -> None:
    """Drop incident records a submitted notebook carries: only the grader's count."""
    for cell in nb.cells:
        cell.get("metadata", {}).pop(INCIDENTS_KEY, None)


def in_notebook(nb) -> list[dict[str, str]]:
    """[{cell, ename, reason}] for every incident the grader recorded in a graded notebook."""
    found = []
    for index, cell in enumerate(nb.cells):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or f"cell {index}"
        found += [{"cell": grade_id, **record} for record in of_cell(cell)]
    return found


def write_report(path: Path, incidents: dict[str, dict[str, list[dict[str, str]]]], graded) -> None:
    """assignment -> learner -> incidents, as JSON for the TA report.

    Only the (assignment, learner) pairs in `graded` are replaced: grading one
    learner again keeps what the file says of everyone else.
    """
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        report = {}
    for assignment, student in graded:
        report.get(assignment, {}).pop(student, None)
    for assignment, learners in incidents.items():
        report.setdefault(assignment, {}).update(learners)
    report = {a: learners for a, learners in sorted(report.items()) if learners}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
