"""One submission as plain data: what a grading task takes and what it gives back.

In: a `Submission` (assignment, learner, digest of the submitted files, and
the files as bytes), read from submitted/ as the course's exchange collects
them (`read_submission`). Out: a `Result` (the autograded files, per notebook
the gradebook values stock `nbgrader autograde` wrote, incidents and verdict
records). The worker's side (`task`, `worker`) and the driver's (`driver`,
`session`) both speak these types; neither imports the other for them.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from coursekit.core import incidents
from coursekit.core.incidents import Incident
from coursekit.exchange import plain_copy
from coursekit.exchange.collect import PlainFileLimits

# Files of one submission handed to grading, notebooks first: the exchange's own limit
# (SafeExchangeCollect.max_files), so a folder collected by it is graded whole, and one
# placed in submitted/ by other means cannot cost the worker a copy per file per file
# (nbgrader copies the other files into autograded/ in time quadratic in their number).
MAX_FILES = PlainFileLimits.max_files.default_value
NBGRADER_FILES = plain_copy.FIRST


@dataclass(frozen=True)
class Submission:
    assignment: str
    student: str
    digest: str  # of the files and the extension: what the grade depends on besides the course
    files: dict[str, bytes]  # relative path in the submitted folder -> content
    # The learner's extension of the due date in the class gradebook: the late penalty
    # (AssignLatePenalties) depends on it, and the worker's scratch gradebook has no learners.
    extension: timedelta | None = None
    left_out: int = 0  # files of the folder beyond MAX_FILES, not graded


@dataclass
class NotebookRows:
    """What autograde wrote for one submitted notebook, by cell name."""

    submitted: bool  # False: the file was missing, every cell scored 0 (stock's rule)
    late_submission_penalty: float | None
    grades: dict[str, tuple[float | None, bool]]  # cell -> (auto_score, needs_manual_grade)
    comments: dict[str, str | None]  # cell -> auto_comment


@dataclass
class Result:
    """One graded submission, the one type from the worker that graded it to the driver
    that writes it and make grade's progress lines and summary."""

    assignment: str
    student: str
    ok: bool  # False: grading itself broke (errors say why); nothing is written
    seconds: float = 0.0
    attempts: int = 1
    errors: list[str] = field(default_factory=list)
    digest: str = ""  # of the submitted files
    bundle_digest: str = ""  # the digest of the bundle it was graded with
    worker: str = ""  # the Dask worker's address
    timestamp: datetime | None = None
    notebooks: dict[str, NotebookRows] = field(default_factory=dict)
    autograded: dict[str, bytes] = field(default_factory=dict)
    incidents: list[Incident] = field(default_factory=list)
    verdicts: dict[str, dict[str, dict]] = field(default_factory=dict)  # notebook -> cell -> record
    written: bool = False  # set by the driver's side: False when it was already in the gradebook


def files_digest(files: dict[str, bytes], extension: timedelta | None = None) -> str:
    digest = hashlib.sha256()
    for relative in sorted(files):
        # fsencode: a file name need not be UTF-8 (it is the learner's)
        digest.update(b"\0" + os.fsencode(relative) + b"\0")
        digest.update(hashlib.sha256(files[relative]).digest())
    if extension is not None:  # none: the digest stays what it was before extensions counted
        digest.update(f"\0extension\0{extension.total_seconds()!r}".encode())
    return digest.hexdigest()


def read_submission(
    root: Path, assignment: str, student: str, extension: timedelta | None = None
) -> Submission:
    """The submitted folder's regular files (links and special files are left out: untrusted),
    at most MAX_FILES of them, the notebooks first, as the course's exchange collects them."""
    folder = Path(root) / "submitted" / student / assignment
    found: list[Path] = []
    for current, dirs, names in os.walk(folder):  # os.walk does not follow links to folders
        dirs[:] = sorted(d for d in dirs if not (Path(current) / d).is_symlink())
        for name in sorted(names):
            path = Path(current) / name
            if path.is_file() and not path.is_symlink():
                found.append(path)
    # nbgrader's own files (timestamp.txt, written by collect, and the secret) never count
    own = [path for path in found if path.parent == folder and path.name in NBGRADER_FILES]
    found = [path for path in found if path not in own]
    found.sort(key=lambda path: (not (path.parent == folder and path.suffix == ".ipynb"), path))
    kept = [*own, *found[:MAX_FILES]]
    files = {str(path.relative_to(folder)): path.read_bytes() for path in kept}
    left_out = len(found) - min(len(found), MAX_FILES)
    return Submission(
        assignment, student, files_digest(files, extension), files, extension, left_out
    )


def left_out_incident(submission: Submission) -> Incident:
    return incidents.files_left_out(submission.left_out, MAX_FILES)
