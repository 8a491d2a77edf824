"""Which submits the live service grades, and which one counts: `c.LiveGrading`.

    c.LiveGrading.min_interval = 60     # seconds between two graded attempts of a learner
    c.LiveGrading.max_attempts = 30     # graded attempts per learner and assignment
    c.LiveGrading.counted = "last"      # or "best": the attempt make grade grades
    c.LiveGrading.hint_after = 2        # failed attempts in a row per hint (coursekit.live.hints)
    c.LiveGrading.per_assignment = {"ch3_multihead": {"min_interval": 120, "counted": "best"}}
    c.LiveGrading.lti_passback = True   # each counted attempt's score to the LMS (make hub --lti)

Checked when make live and make grade start (`check_settings`): a wrong value
stops them at once, exit status 2, with one line naming the setting.

A submit outside the policy is kept (nbgrader keeps every submission) and is
not graded: its learner gets a short note as its feedback, saying from when a
submit is graded again. Times are the exchange's (when it received each one).

The counted attempt (`counted_submission`, put in place by make grade through
coursekit/live/counted.py): "last" is the learner's last submission received at
or before the gradebook's due date, as `nbgrader collect --before-duedate`
chooses (none before it: the last one, which nbgrader then marks late); "best"
is the graded attempt with the most points by its record (ties: the later),
among those on time when there are any.

`lti_passback` (off by default): on a hub made with `make hub --lti`, each graded
attempt that is now its learner's counted one has its score posted to the LMS at
once (coursekit/live/passback.py); `make export ARGS="--to lti"` posts them all anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from traitlets import Bool, Dict, Enum, Integer, TraitError, validate
from traitlets.config import Configurable

from coursekit.core.messages import _
from coursekit.exchange.collect import last_before
from coursekit.live.attempts import GRADED, TOO_MANY, TOO_SOON, Attempt
from coursekit.live.board import LiveBoard

COUNTED = ("last", "best")
OVERRIDDEN = ("min_interval", "max_attempts", "counted")  # what per_assignment may set


@dataclass(frozen=True)
class Decision:
    outcome: str  # attempts.GRADED, TOO_SOON or TOO_MANY
    next_at: datetime | None = None  # from when a submit is graded again (None: never)


class LiveGrading(Configurable):
    min_interval = Integer(
        60, min=0, help="Least seconds between two graded attempts of one learner."
    ).tag(config=True)
    max_attempts = Integer(30, min=1, help="Most graded attempts per learner.").tag(config=True)
    counted = Enum(
        COUNTED,
        "last",
        help="The attempt make grade grades: the last before the due date, or the best graded.",
    ).tag(config=True)
    hint_after = Integer(
        2,
        min=1,
        help="Graded attempts in a row failing one function before its next hint is shown.",
    ).tag(config=True)
    lti_passback = Bool(
        False,
        help="Post each counted attempt's score to the LMS as soon as it is graded (a hub "
        "made with make hub --lti; make export --to lti posts every score anyway).",
    ).tag(config=True)
    per_assignment = Dict(
        {},
        help="assignment -> {'min_interval': s, 'max_attempts': n, 'counted': 'last'|'best'}: "
        "what differs for it.",
    ).tag(config=True)

    @validate("per_assignment")
    def _checked_per_assignment(self, proposal):
        """Checked when the config is loaded, so a typo stops make live and make grade at
        once with its setting named (TraitError), not at the first submit it concerns."""
        for assignment, own in proposal["value"].items():
            setting = f"c.LiveGrading.per_assignment[{assignment!r}]"
            if not isinstance(own, dict):
                raise TraitError(_("{setting}: not a dict of settings").format(setting=setting))
            for key, value in own.items():
                where = f"{setting}[{key!r}]"
                if key not in OVERRIDDEN:
                    message = _("{setting}: unknown setting {key!r} (known: {known})")
                    known = ", ".join(OVERRIDDEN)
                    raise TraitError(message.format(setting=setting, key=key, known=known))
                if key == "counted":
                    if value not in COUNTED:
                        unknown = _("{setting}: {rule!r} is neither 'last' nor 'best'")
                        raise TraitError(unknown.format(setting=where, rule=value))
                    continue
                least = self.traits()[key].min  # the class-wide setting's own bound
                if isinstance(value, bool) or not isinstance(value, int) or value < least:
                    message = _("{setting}: {value!r} is not a whole number of at least {least}")
                    raise TraitError(message.format(setting=where, value=value, least=least))
        return proposal["value"]

    def limits(self, assignment: str) -> tuple[int, int]:
        own = self.per_assignment.get(assignment, {})
        return (
            own.get("min_interval", self.min_interval),
            own.get("max_attempts", self.max_attempts),
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

    def counted_rule(self, assignment: str) -> str:
        return self.per_assignment.get(assignment, {}).get("counted", self.counted)

    def counted_submission(
        self, assignment: str, submissions: list[dict], graded: list[Attempt], duedate
    ) -> dict | None:
        """The counted one of a learner's inbound `submissions` (the safe collect's records:
        "filename", "timestamp" naive UTC), by their attempt records `graded`."""
        if not submissions:
            return None
        if self.counted_rule(assignment) == "best":
            by_entry = {rec["filename"]: rec for rec in submissions}
            scored = [a for a in graded if a.outcome == GRADED and a.entry in by_entry]
            on_time = [
                a for a in scored if duedate is None or by_entry[a.entry]["timestamp"] <= duedate
            ]
            if scored:
                best = max(
                    on_time or scored,
                    key=lambda a: (points(a), by_entry[a.entry]["timestamp"], a.entry),
                )
                return by_entry[best.entry]
        return last_before(submissions, duedate)  # "last", or "best" with nothing graded


def points(attempt: Attempt) -> float:
    return sum(cell["points"] or 0 for cell in attempt.cells.values())


def check_settings(config) -> None:
    """The live settings of a course's config, as make live and make grade read them:
    TraitError naming the setting when one is wrong."""
    LiveGrading(config=config)
    LiveBoard(config=config)
