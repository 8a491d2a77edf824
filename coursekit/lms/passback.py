"""Live grades back: a counted attempt's score posted to the LMS while the class runs.

Why it takes two accounts: the tool's private key is root's alone (the hub's `lti/`
folder, mode 700; coursekit.lms.lti), and the live service grades as the instructor's
account, which must not read it (a key the course's account can read is a key any code
run as that account can post any grade with). So the live service
(coursekit/live/passback.py) computes the Score from its gradebook and hands it over
HTTP to the hub's LTI poster (coursekit/hub/lti_poster.py), a JupyterHub service run as
root that accepts it only with a token holding `SCOPE`, which the hub gives to the live
service alone. The poster posts it here, with the ledger `make export --to lti` keeps.

- `to_wire` / `from_wire`: a Score as the poster receives it, every field checked (the
  progress pair must be one `lti.progress` gives).
- `post_live`: the poster's post. The new scores, and every score still waiting from
  earlier (`not-posted.json`: the LMS was down, or refused), go through
  `lti.post_grades` (its retries with backoff, its ledger: a score posted as it is is not
  posted again); what still fails waits, with why, for the next post or `make export`.
  A newer score of a learner's assignment replaces the waiting one.
- `post_export`: `make export --to lti`'s post. The gradebook is newer than anything
  waiting, so what waited for the same learners and assignments is dropped.

Both run under one lock on the ledger (`posted.lock`), so a live post and an export
never write past each other.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path

from coursekit.lms import lti
from coursekit.lms.lti import Score

# The JupyterHub custom scope the poster requires of its caller: the live service's role
# only (coursekit/hub/lti_poster.py); no default role, the admin's neither, carries it.
SCOPE = "custom:coursekit-lti:post-scores"
# The poster's address, in the live service's environment when the hub runs one.
POSTER_ENV = "COURSEKIT_LTI_POSTER_URL"
WAITING_FILE = "not-posted.json"
LOCK_FILE = "posted.lock"

PROGRESS = {
    lti.progress(submitted, manual) for submitted in (False, True) for manual in (False, True)
}


def to_wire(score: Score) -> dict:
    return {f.name: getattr(score, f.name) for f in fields(Score)}


def from_wire(data) -> Score:
    """A Score from the poster's request; ValueError saying what is wrong."""
    names = {f.name for f in fields(Score)}
    if not isinstance(data, dict) or set(data) != names:
        raise ValueError(f"a score has exactly the fields {sorted(names)}")
    for name in ("assignment", "student", "user_id", "activity", "grading"):
        if not isinstance(data[name], str):
            raise ValueError(f"{name} is not a string")
    if not (data["assignment"] and data["student"]):
        raise ValueError("assignment and student may not be empty")
    for name in ("score", "maximum"):
        value = data[name]
        if value is None and name == "score":
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{name} is not a number")
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} {value!r} is not a finite number of at least 0")
    if (data["activity"], data["grading"]) not in PROGRESS:
        raise ValueError(f"no such progress: {data['activity']}/{data['grading']}")
    if (data["score"] is None) != (data["grading"] == "NotReady"):
        raise ValueError("a score is given exactly when the attempt is graded")
    return Score(**data)


@dataclass(frozen=True)
class Waiting:
    """A score not posted yet: why, and since when (UTC, ISO 8601)."""

    score: Score
    why: str
    since: str


def key(score: Score) -> tuple[str, str]:
    return score.assignment, score.student


@contextlib.contextmanager
def locked(folder: Path):
    """The ledger and the waiting list, for one poster at a time."""
    fd = os.open(Path(folder) / LOCK_FILE, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def waiting(folder: Path) -> list[Waiting]:
    path = Path(folder) / WAITING_FILE
    if not path.exists():
        return []
    found = json.loads(path.read_text(encoding="utf-8"))
    return [Waiting(Score(**one["score"]), one["why"], one["since"]) for one in found]


def _keep(folder: Path, still: list[Waiting]) -> None:
    path = Path(folder) / WAITING_FILE
    if not still:
        path.unlink(missing_ok=True)
        return
    records = [{"score": to_wire(w.score), "why": w.why, "since": w.since} for w in still]
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(records, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.chmod(0o600)
    tmp.replace(path)


def post_live(
    conn, config: lti.LtiConfig, folder: Path, new: list[Score], delays=lti.RETRY_DELAYS,
    log=print,
) -> tuple[lti.Posting, list[Waiting]]:  # fmt: skip
    """`new` and everything still waiting, posted; (what happened, what waits now)."""
    folder = Path(folder)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    with locked(folder):
        pending = {key(w.score): w for w in waiting(folder)}
        for score in new:
            pending[key(score)] = Waiting(score, "", now)
        done = lti.post_grades(
            conn, config, [w.score for w in pending.values()], folder / lti.POSTED_FILE,
            delays, log,
        )  # fmt: skip
        why = {key(what): reason for what, reason in done.failed if isinstance(what, Score)}
        still = [Waiting(w.score, why[k], w.since) for k, w in pending.items() if k in why]
        _keep(folder, still)
    return done, still


def post_export(
    conn, config: lti.LtiConfig, folder: Path, scores: list[Score], delays=lti.RETRY_DELAYS,
    log=print,
) -> tuple[lti.Posting, list[Waiting]]:  # fmt: skip
    """The gradebook's `scores` posted; (what happened, what had waited from live grading
    for them: dropped, the gradebook's score is the one that counts now)."""
    folder = Path(folder)
    with locked(folder):
        before = waiting(folder)
        done = lti.post_grades(conn, config, scores, folder / lti.POSTED_FILE, delays, log)
        covered = {key(s) for s in scores}
        _keep(folder, [w for w in before if key(w.score) not in covered])
    return done, [w for w in before if key(w.score) in covered]
