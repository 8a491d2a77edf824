"""A learner's feedback, made and released the moment their attempt is graded.

A graded attempt: stock `generate_feedback` for that learner with the course's
config (its preprocessors: hidden tests cleared, tracebacks cut, the summary
in the course's language) and the safe exchange's `release_feedback`, through nbgrader's own
API as formgrader calls them. An attempt the policy held back: a short note,
released by the same release class as that submission's page, so stock
`nbgrader fetch_feedback` brings it beside the submission it answers.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

from nbgrader.apps.api import NbGraderAPI
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory

from coursekit.core import templating
from coursekit.core.messages import N_, _
from coursekit.exchange.transfer import SafeExchangeReleaseFeedback, read_small
from coursekit.learner.feedback import ATTEMPT_ID, ATTEMPT_SCHEMA, showing_hints
from coursekit.live.attempts import TOO_MANY, TOO_SOON, attempt_id

NOTES = "live/notes"  # under the course root: each note's page before it is released

TOO_SOON_NOTE = N_(
    "This submission (received {submitted}) is kept, but it is not graded: a submission "
    "is graded at most once every {interval} seconds. Submit again from {next_at} and it "
    "will be graded."
)
TOO_MANY_NOTE = N_(
    "This submission (received {submitted}) is kept, but it is not graded: this "
    "assignment has been graded {most} times for you, the most there may be."
)


class FeedbackError(RuntimeError):
    """nbgrader could not make or release a page (its log says why)."""


class Publisher:
    def __init__(self, root: Path, config):
        self.root, self.config = Path(root), config
        self.api = NbGraderAPI(
            CourseDirectory(config=config), Authenticator(config=config), config=config
        )

    def _check(self, what: str, result: dict) -> None:
        if not result or not result.get("success"):
            detail = (result or {}).get("error") or (result or {}).get("log", "")
            raise FeedbackError(f"nbgrader {what}: {detail[-2000:]}")

    def generate(self, assignment: str, learner: str, hints: dict | None = None) -> None:
        """generate_feedback for this learner alone (release it next), its page showing
        `hints` (function -> the hints given so far; coursekit.live.hints)."""
        with showing_hints(hints or {}):
            result = self.api.generate_feedback(assignment, learner, True)
        self._check("generate_feedback", result)

    def release(self, assignment: str, learner: str) -> None:
        """release_feedback for this learner alone."""
        self._check("release_feedback", self.api.release_feedback(assignment, learner))

    def note(self, entry, inbound: Path, outcome: str, when: dict) -> None:
        """The note of a held-back submission, released under that submission's secret."""
        folder = inbound / entry.name
        secret = read_small(str(folder / "submission_secret.txt"))
        staging = self.root / NOTES / attempt_id(entry.name)
        pages = staging / "feedback" / entry.learner / entry.assignment
        shutil.rmtree(staging, ignore_errors=True)
        pages.mkdir(parents=True)
        (pages / "submission_secret.txt").write_text(secret, encoding="utf-8")
        (pages / "timestamp.txt").write_text(when["submitted"], encoding="utf-8")
        text = _(TOO_MANY_NOTE if outcome == TOO_MANY else TOO_SOON_NOTE).format(**when)
        page = note_page(text, held_back(outcome, when))
        for notebook in sorted(p.name for p in os.scandir(folder) if p.name.endswith(".ipynb")):
            (pages / f"{notebook[: -len('.ipynb')]}.html").write_text(page, encoding="utf-8")
        config = copy.deepcopy(self.config)  # Config.copy() shares its sections
        config.CourseDirectory.root = str(staging)
        config.CourseDirectory.assignment_id = entry.assignment
        config.CourseDirectory.student_id = entry.learner
        SafeExchangeReleaseFeedback(
            coursedir=CourseDirectory(config=config),
            authenticator=Authenticator(config=config),
            config=config,
        ).start()
        shutil.rmtree(staging, ignore_errors=True)


def held_back(outcome: str, when: dict) -> dict:
    """The note's attempt data for the learner's panel (as a feedback page's, read by
    coursekit.learner.feedback.read_attempt): why it was held back and, for too_soon, the
    time from which a submit is graded again, as the note's text says it."""
    return {
        "schema": ATTEMPT_SCHEMA,
        "held_back": TOO_MANY if outcome == TOO_MANY else TOO_SOON,
        "next_graded_at": (when.get("next_at") or None) if outcome != TOO_MANY else None,
    }


def note_page(text: str, attempt: dict | None = None) -> str:
    """A page with no script and no link: its title and `text`, escaped, and the attempt
    data (`held_back`) in a hidden element's attribute, escaped as well."""
    data = json.dumps(attempt, ensure_ascii=False) if attempt is not None else None
    return (
        templating.render("live_note.html.j2", text=text, attempt_id=ATTEMPT_ID, attempt=data)
        + "\n"
    )
