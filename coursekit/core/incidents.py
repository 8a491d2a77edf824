"""Why a cell scored 0 because of a grading guard: the grader's records, shown as error outputs.

An incident is one `Incident` (its kind's name, the cell, its text in the
course's language (coursekit.core.messages), a little evidence). The grader
writes it into the cell's metadata (`INCIDENTS_KEY`, as `cells.VERDICT_KEY`
holds a failed check's verdict), next to an error output with its text that
formgrader and the feedback show; `make grade` also lists a submission's
incidents in reports/grading_incidents.json. Every kind is in `KINDS`.
Whatever a submission brings under that key is dropped before grading
(`forget`), and every reader (`make grade`'s summary, the incidents report,
the TA report) reads the records, never an error output's name: a learner's
exception called `KernelDied` is only an error of its cell.

On disk an incident is `{"ename", "reason"}` in a cell's metadata and
`{"cell", "ename", "reason"}` in the report ("*": the whole submission),
with "evidence" only when it has some.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode

from coursekit.core.messages import _, ngettext

# Where the grader keeps a cell's incidents: [{"ename": ..., "reason": ...}].
INCIDENTS_KEY = "coursekit_incidents"
WHOLE_SUBMISSION = "*"  # the report's cell for an incident of the whole submission


@dataclass(frozen=True)
class Kind:
    """One kind of incident: its name (the error output's ename) and when it is recorded."""

    name: str
    when: str  # for developers: which guard records it


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind("KernelDied", "the kernel died running the cell (execute)"),
        Kind("KernelStuck", "the cell ran past its time limit and ignored the interrupt"),
        Kind("NotebookTimeLimit", "the notebook's whole time budget ran out"),
        Kind("NotRunAfterFailure", "an earlier cell stopped the kernel: this one was not run"),
        Kind("OutputLimitExceeded", "the cell printed more than its output limit"),
        Kind("MemoryLimitExceeded", "the sandbox's memory cgroup met its cap in this cell"),
        Kind("TrustedCheckFailed", "the kernel passed a test cell the grader's own run failed"),
        Kind("CallTimeLimit", "a test cell's calls of learner code ran out of time"),
        Kind("BridgeBroken", "the kernel broke the protocol with the grader"),
        Kind("InvalidNotebook", "the submitted file is no notebook: every test cell 0"),
        Kind("NotebookShapeLimit", "part of the notebook was cut to its bounds (autograde.shapes)"),
        Kind("SubmissionFiles", "files beside it left out or renamed (exchange.bound)"),
        Kind("GradingWorkerLost", "make grade gave up: the workers grading it kept dying"),
        Kind("SubmissionFilesLeftOut", "make grade graded only the folder's first files"),
    )
}

KERNEL_DIED = KINDS["KernelDied"].name
KERNEL_STUCK = KINDS["KernelStuck"].name
NOTEBOOK_TIME_LIMIT = KINDS["NotebookTimeLimit"].name
NOT_RUN = KINDS["NotRunAfterFailure"].name
OUTPUT_LIMIT = KINDS["OutputLimitExceeded"].name
MEMORY_LIMIT = KINDS["MemoryLimitExceeded"].name
TRUSTED_CHECK_FAILED = KINDS["TrustedCheckFailed"].name
CALL_TIME_LIMIT = KINDS["CallTimeLimit"].name
BRIDGE_BROKEN = KINDS["BridgeBroken"].name
INVALID_NOTEBOOK = KINDS["InvalidNotebook"].name
NOTEBOOK_SHAPE = KINDS["NotebookShapeLimit"].name
SUBMISSION_FILES = KINDS["SubmissionFiles"].name
WORKER_LOST = KINDS["GradingWorkerLost"].name
FILES_LEFT_OUT = KINDS["SubmissionFilesLeftOut"].name

ENAMES = frozenset(KINDS)

# Evidence is a few plain values (the numbers a text was made from), never learner data.
EVIDENCE_VALUES = (str, int, float, bool, type(None))
MAX_EVIDENCE = 8


@dataclass(frozen=True)
class Incident:
    """One guard's record: which kind, where (a grade_id or `cell N`; None: the whole
    submission), the text the learner and TA read, and the evidence behind it."""

    name: str
    cell: str | None
    text: str
    evidence: Mapping[str, object] = field(default_factory=dict, hash=False)

    def __post_init__(self):
        if self.name not in KINDS:
            raise ValueError(f"not an incident: {self.name}")

    def line(self) -> str:
        """`name: text`, as the TA report shows a guarded cell's reason."""
        return f"{self.name}: {self.text}"

    def to_metadata(self) -> dict:
        """The form kept in a cell's metadata (the cell is the one holding it)."""
        record = {"ename": self.name, "reason": self.text}
        if self.evidence:
            record["evidence"] = dict(self.evidence)
        return record

    def to_record(self) -> dict:
        """The form of reports/grading_incidents.json."""
        return {"cell": self.cell or WHOLE_SUBMISSION, **self.to_metadata()}

    @classmethod
    def from_record(cls, record, cell: str | None = None) -> Incident | None:
        """An incident from either form; None for anything that is not one of ours.
        `cell`: where a metadata record (which names no cell) was found."""
        if not isinstance(record, dict) or record.get("ename") not in KINDS:
            return None
        if "cell" in record:
            where = record["cell"]
            cell = None if where == WHOLE_SUBMISSION or not isinstance(where, str) else where
        return cls(
            record["ename"], cell, str(record.get("reason", "")), _evidence(record.get("evidence"))
        )


def _evidence(found) -> dict:
    if not isinstance(found, dict):
        return {}
    plain = {
        str(k): v for k, v in found.items() if isinstance(k, str) and type(v) in EVIDENCE_VALUES
    }
    return dict(list(plain.items())[:MAX_EVIDENCE])


# ---------------------------------------------------------------- texts of make grade's kinds
# One function per kind make grade records outside a kernel; the guards inside autograde
# (execute, lean_cells, shapes) pass their own texts to `add`.


def unreadable_notebook(notebook: str, why: str) -> Incident:
    """A submitted notebook make grade could not read: the whole submission scores 0."""
    text = _("{notebook} could not be read as a notebook: every cell scores 0 ({why})").format(
        notebook=notebook, why=why
    )
    return Incident(INVALID_NOTEBOOK, None, text)


def worker_lost(tries: int) -> Incident:
    """A submission whose grading workers died `tries` times in a row (Dask's KilledWorker)."""
    text = ngettext(
        "The worker process grading this submission died {tries} time, so grading gave up "
        "(a submission that stops the grader outside the kernel). Every cell scores 0; "
        "a TA must look at it.",
        "The worker processes grading this submission died {tries} times in a row, so grading "
        "gave up (a submission that stops the grader outside the kernel). Every cell scores 0; "
        "a TA must look at it.",
        tries,
    ).format(tries=tries)
    return Incident(WORKER_LOST, None, text, {"tries": tries})


def files_left_out(left_out: int, max_files: int) -> Incident:
    """Files of a submitted folder beyond the `max_files` make grade hands to grading."""
    text = ngettext(
        "{left_out} file of the submitted folder was not handed to grading: of one "
        "submission, the notebooks first and at most {max_files} files in all are graded.",
        "{left_out} files of the submitted folder were not handed to grading: of one "
        "submission, the notebooks first and at most {max_files} files in all are graded.",
        left_out,
    ).format(left_out=left_out, max_files=max_files)
    return Incident(FILES_LEFT_OUT, None, text, {"left_out": left_out, "max_files": max_files})


# ---------------------------------------------------------------- in a notebook


def error_output(ename: str, message: str) -> NotebookNode:
    """An error output as a kernel would write it; nbgrader scores its cell 0."""
    return nbformat.v4.new_output(
        "error", ename=ename, evalue=message, traceback=[f"\x1b[0;31m{ename}\x1b[0m: {message}"]
    )


def add(cell, ename: str, message: str) -> Incident:
    """Record an incident of the grader's in the cell, and show it as an error output."""
    incident = Incident(ename, _grade_id(cell), message)
    put(cell, incident)
    return incident


def put(cell, incident: Incident) -> None:
    """Write `incident` into the cell: its record in the metadata, its text as an error."""
    cell.setdefault("outputs", []).append(error_output(incident.name, incident.text))
    cell.setdefault("metadata", {}).setdefault(INCIDENTS_KEY, []).append(incident.to_metadata())


def of_cell(cell, where: str | None = None) -> list[Incident]:
    """The grader's incidents recorded in this cell ([] for anything malformed).
    `where`: the cell's name in them (default: its grade_id, None without one)."""
    records = cell.get("metadata", {}).get(INCIDENTS_KEY)
    if type(records) is not list:
        return []
    where = where if where is not None else _grade_id(cell)
    found = (Incident.from_record(record, where) for record in records)
    return [incident for incident in found if incident is not None]


def forget(nb) -> None:
    """Drop incident records a submitted notebook carries: only the grader's count."""
    for cell in nb.cells:
        cell.get("metadata", {}).pop(INCIDENTS_KEY, None)


def in_notebook(nb) -> list[Incident]:
    """Every incident the grader recorded in a graded notebook, each with its cell's grade_id
    (`cell N` for a cell without one)."""
    found = []
    for index, cell in enumerate(nb.cells):
        found += of_cell(cell, _grade_id(cell) or f"cell {index}")
    return found


def _grade_id(cell) -> str | None:
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return grade_id if isinstance(grade_id, str) and grade_id else None


# ---------------------------------------------------------------- the report


def write_report(path: Path, incidents: dict[str, dict[str, list[Incident]]], graded) -> None:
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
        report.setdefault(assignment, {}).update(
            {student: [i.to_record() for i in found] for student, found in learners.items()}
        )
    report = {a: learners for a, learners in sorted(report.items()) if learners}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
