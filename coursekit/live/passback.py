"""Each counted live attempt's score to the LMS: `c.LiveGrading.lti_passback = True`.

When the service has finished an attempt (graded, its feedback released, its record
written: the learner's answer never waits for the LMS), `Passback.after` asks whether
it is now its learner's counted attempt (`LiveGrading.counted_submission` over the
learner's inbound submissions and attempt records, as make grade will choose), and
if so reads its Score from the gradebook at once (coursekit.lms.export.lti_scores:
what `make export --to lti` would post now, PendingManual while the written answer
waits for a TA; the gradebook holds this attempt until the learner's next one is
graded, so it is read here, not later). A thread of its own (an executor of one) sends
it to the hub's LTI poster (coursekit/hub/lti_poster.py), which alone can post: the
tool's key is root's, and this service runs as the instructor's account. The request
carries the service's own hub token, the one token the poster accepts. The poster
retries while the LMS is down and keeps what it could not post for its next post and
for `make export --to lti`; each outcome is a line in the service's output (make hub's
terminal). A submit the policy held back is not graded, so nothing is posted for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

from coursekit.core.messages import _, ngettext
from coursekit.exchange.collect import due_date
from coursekit.live import attempts
from coursekit.live.attempts import GRADED, Attempt
from coursekit.live.inbound import collector, received
from coursekit.live.policy import LiveGrading
from coursekit.lms import passback
from coursekit.lms.export import lti_scores

# The poster may spend the LMS's retries (1 + 2 + 4 + 8 s) on each line item it posts to.
POSTER_TIMEOUT = 120.0


class Passback:
    def __init__(self, root: Path, config, gradebook: Callable, echo=print, environ=os.environ):
        """`gradebook()`: the course's gradebook, opened (a context manager)."""
        self.root, self.config, self.gradebook, self.echo = Path(root), config, gradebook, echo
        self.policy = LiveGrading(config=config)
        self.url = environ.get(passback.POSTER_ENV, "")
        self.token = environ.get("JUPYTERHUB_API_TOKEN", "")
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lti-passback")
        if not self.url:
            self.echo(
                _(
                    "c.LiveGrading.lti_passback is on, but no LTI poster runs beside this "
                    "service (make hub --lti runs one): scores reach the LMS by make export "
                    "--to lti only"
                )
            )

    def counted(self, attempt: Attempt) -> bool:
        """Whether `attempt` is its learner's counted one now (make grade's choice)."""
        assignment, learner = attempt.assignment, attempt.learner
        submissions = received(self.config, assignment, {learner}).get(learner, [])
        graded = attempts.of_learner(self.root, assignment, learner)
        duedate = due_date(collector(self.config, assignment).coursedir)
        chosen = self.policy.counted_submission(assignment, submissions, graded, duedate)
        return chosen is not None and chosen["filename"] == attempt.entry

    def after(self, attempt: Attempt) -> None:
        """After the attempt's record: its Score on its way to the LMS when it counts."""
        if not self.url or attempt.outcome != GRADED:
            return
        try:
            if not self.counted(attempt):
                return
            with self.gradebook() as gb:
                maximum = gb.find_assignment(attempt.assignment).max_score
                (score,) = lti_scores(gb, [(attempt.assignment, maximum)], [attempt.learner])
        except Exception as error:  # the LMS's copy only: grading goes on
            self.said(attempt.learner, attempt.assignment, f"{type(error).__name__}: {error}")
            return
        self.executor.submit(self.send, score)

    def send(self, score) -> None:
        try:
            answer = requests.post(
                f"{self.url}/scores",
                json=[passback.to_wire(score)],
                headers={"Authorization": f"token {self.token}"},
                timeout=POSTER_TIMEOUT,
            )
            answer.raise_for_status()
            result = answer.json()
        except (requests.RequestException, ValueError) as error:
            self.said(score.student, score.assignment, f"{type(error).__name__}: {error}")
            return
        for assignment, learner in result.get("posted", []):
            self.echo(
                _("{learner} {assignment}: score posted to the LMS").format(
                    learner=learner, assignment=assignment
                )
            )
        if [score.assignment, score.student] in result.get("unchanged", []):
            self.echo(
                _("{learner} {assignment}: the LMS has this score already").format(
                    learner=score.student, assignment=score.assignment
                )
            )
        waiting = result.get("waiting", [])
        for assignment, learner, why in waiting:
            if [assignment, learner] == [score.assignment, score.student]:
                self.echo(
                    _(
                        "{learner} {assignment}: not posted to the LMS yet ({why}); tried again "
                        "with the next score and by make export --to lti"
                    ).format(learner=learner, assignment=assignment, why=why)
                )
        others = sum([a, s] != [score.assignment, score.student] for a, s, _why in waiting)
        if others:  # a count, not a line each: an LMS down for long would flood the log
            self.echo(
                ngettext(
                    "{count} other score waits for the LMS",
                    "{count} other scores wait for the LMS",
                    others,
                ).format(count=others)
            )

    def said(self, learner: str, assignment: str, why: str) -> None:
        """A score that never reached the poster: make export --to lti posts it."""
        self.echo(
            _(
                "{learner} {assignment}: the score was not handed to the LTI poster ({why}); "
                "make export --to lti posts it"
            ).format(learner=learner, assignment=assignment, why=why)
        )

    def close(self) -> None:
        """What is being sent finishes; what waits is left to make export --to lti."""
        self.executor.shutdown(wait=False, cancel_futures=True)
