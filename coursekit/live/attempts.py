"""One graded (or held back) attempt: a small JSON record per inbound submission.

Written last, atomically (a temporary file, then rename), under the course root:
`live/attempts/<assignment>/<learner>/<id>.json`, where `<id>` is a hash of the
inbound folder's name (known before the folder is read). A submission with a
record is never handled again; one without (the service was down, or killed
before it finished) is handled at the next start.

The record, for the TA board and any other reader (`Attempt`, `version` 2; a
version 1 record, which has no `stages`, is read as it is):

- `learner`, `assignment`, `entry`: the inbound folder's name;
- `submitted_at`: when the exchange received it (UTC, ISO 8601, from the file
  system as the safe collect reads it), `graded_at`: when this record was made;
- `outcome`: `graded`; `too_soon` or `too_many` (the policy held it back; `next_at`
  says from when a submit is graded again, `null` for never); `error` (grading
  itself broke: `errors` say why);
- `cells`: grade id -> {"points", "max"} of every auto-graded cell;
- `failed`: grade id -> the verdict record (coursekit.checks.verdict `to_record`)
  of each failed hidden check;
- `stages`: where the attempt's time went, stage -> when the service reached it
  (UTC, ISO 8601), in the order of `STAGES`: `noticed` (the service first saw
  it complete in inbound), `collected` (copied into submitted/), `scheduled`
  (its task handed to the cluster), `graded` (its result written by the
  driver), `feedback_made` (generate_feedback done), `released` (the page, or
  a held-back attempt's note, in the exchange for fetch_feedback). A stage the
  attempt never went through (a held-back one is not collected) is absent;
- `hints`: function -> how many of its hints this attempt's page showed
  (coursekit.live.hints; absent from records made before there were hints).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

FOLDER = "live/attempts"  # under the course root
VERSION = 2

STAGES = ("noticed", "collected", "scheduled", "graded", "feedback_made", "released")

GRADED, TOO_SOON, TOO_MANY, ERROR = "graded", "too_soon", "too_many", "error"


@dataclass
class Attempt:
    learner: str
    assignment: str
    entry: str
    submitted_at: str
    graded_at: str = ""
    outcome: str = GRADED
    next_at: str | None = None
    cells: dict[str, dict[str, float | None]] = field(default_factory=dict)
    failed: dict[str, dict] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    stages: dict[str, str] = field(default_factory=dict)
    hints: dict[str, int] = field(default_factory=dict)
    version: int = VERSION

    @property
    def counted(self) -> bool:
        """Whether the policy counts it as a graded attempt."""
        return self.outcome in (GRADED, ERROR)


def now() -> str:
    """A stage's time, as `stages` holds it."""
    return datetime.now(UTC).isoformat()


def attempt_id(entry: str) -> str:
    return hashlib.sha256(os.fsencode(entry)).hexdigest()[:20]


def path_of(root: Path, assignment: str, learner: str, entry: str) -> Path:
    return Path(root) / FOLDER / assignment / learner / f"{attempt_id(entry)}.json"


def write(root: Path, attempt: Attempt) -> Path:
    """The record, whole or not at all (a kill mid-write leaves no half file)."""
    path = path_of(root, attempt.assignment, attempt.learner, attempt.entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".attempt-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(asdict(attempt), fh, ensure_ascii=False, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def read(path: Path) -> Attempt:
    return Attempt(**json.loads(Path(path).read_text(encoding="utf-8")))


def of_learner(root: Path, assignment: str, learner: str) -> list[Attempt]:
    """The learner's records of `assignment`, in submission order."""
    folder = Path(root) / FOLDER / assignment / learner
    found = [read(p) for p in folder.glob("*.json")] if folder.is_dir() else []
    return sorted(found, key=lambda a: (a.submitted_at, a.entry))


def any_record(root: Path) -> bool:
    """Whether the live service recorded any attempt in this course."""
    return any((Path(root) / FOLDER).glob("*/*/*.json"))


def every(root: Path) -> list[Attempt]:
    """Every record of the course, by assignment, learner and submission."""
    found = [read(p) for p in (Path(root) / FOLDER).glob("*/*/*.json")]
    return sorted(found, key=lambda a: (a.assignment, a.learner, a.submitted_at, a.entry))
