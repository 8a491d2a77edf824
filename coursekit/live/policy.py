"""Which submits the live service grades: `c.LiveGrading` in nbgrader_config.py.

    c.LiveGrading.min_interval = 60     # seconds between two graded attempts of a learner
    c.LiveGrading.max_attempts = 30     # graded attempts per learner and assignment
    c.LiveGrading.per_assignment = {"ch3_multihead": {"min_interval": 120}}

A submit outside the policy is kept (nbgrader keeps every submission) and is
not graded: its learner gets a short note as its feedback, saying from when a
submit is graded again. Times are the exchange's (when it received each one).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from traitlets import Dict, Integer
from traitlets.config import Configurable

from coursekit.live.attempts import GRADED, TOO_MANY, TOO_SOON, Attempt


@dataclass(frozen=True)
class Decision:
    outcome: str  # attempts.GRADED, TOO_SOON or TOO_MANY
    next_at: datetime | None = None  # from when a submit is graded again (None: never)


class LiveGrading(Configurable):
    min_interval = Integer(
        60, min=0, help="Least seconds between two graded attempts of one learner."
    ).tag(config=True)
    max_attempts = Integer(30, min=1, help="Most graded attempts per learner.").tag(config=True)
    per_assignment = Dict(
        {},
        help="assignment -> {'min_interval': s, 'max_attempts': n}: what differs for it.",
    ).tag(config=True)

    def limits(self, assignment: str) -> tuple[int, int]:
        own = self.per_assignment.get(assignment, {})
        return (
            int(own.get("min_interval", self.min_interval)),
            int(own.get("max_attempts", self.max_attempts)),
        )

    def decide(self, assignment: str, earlier: list[Attempt], submitted_at: datetime) -> Decision:
        """Grade this submit, received at `submitted_at`, after the learner's `earlier` ones?"""
        interval, most = self.limits(assignment)
        counted = [a for a in earlier if a.counted]
        if len(counted) >= most:
            return Decision(TOO_MANY)
        if counted:
            last = datetime.fromisoformat(counted[-1].submitted_at)
            next_at = last + timedelta(seconds=interval)
            if submitted_at < next_at:
                return Decision(TOO_SOON, next_at)
        return Decision(GRADED)
