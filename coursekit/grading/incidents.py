"""Why a cell scored 0 because of a grading guard: error outputs with Korean messages."""

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
    }
)


def error_output(ename: str, message: str) -> NotebookNode:
    """An error output as a kernel would write it; nbgrader scores its cell 0."""
    return nbformat.v4.new_output(
        "error", ename=ename, evalue=message, traceback=[f"\x1b[0;31m{ename}\x1b[0m: {message}"]
    )


def add(cell, ename: str, message: str) -> None:
    cell.setdefault("outputs", []).append(error_output(ename, message))


def in_notebook(nb) -> list[dict[str, str]]:
    """[{cell, ename, reason}] for every guard error output in a graded notebook."""
    found = []
    for index, cell in enumerate(nb.cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {index}"
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error" and output.get("ename") in ENAMES:
                found.append({"cell": grade_id, "ename": output.ename, "reason": output.evalue})
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
