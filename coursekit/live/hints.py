"""Progressive hints: which of a function's hints a learner's graded attempt shows.

The course declares the hints beside its checks (`HiddenChecks(..., hints=...)`,
coursekit.checks.declared), from a nudge to the idea just short of the code. A
learner whose hidden checks of a function failed on `c.LiveGrading.hint_after`
graded attempts in a row (default 2) gets its first hint in that attempt's
feedback, the next after as many more, and so on; an attempt that passes the
function's checks starts the count again. A function still as released (its
stub raises NotImplementedError) is not being worked on: it counts as no
failure. Held-back and broken attempts are no graded attempts: they neither
count nor break a run.

`level` is the rule. The live service applies it (`levels`) to the learner's
graded attempts, shows the hints given so far on the attempt's page
(coursekit.learner.feedback.showing_hints) and keeps the levels in its record
(`Attempt.hints`), which the TA board and the TA report read (`seen`,
`counts`). `make grade` grades no attempt: its pages carry none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from coursekit.live.attempts import GRADED, Attempt

STUB_ERROR = "NotImplementedError"  # the released stub's: a function not started yet


def level(streak: int, after: int, available: int) -> int:
    """How many hints a learner whose checks of a function failed on `streak` graded
    attempts in a row, the last included, has been given: one more per `after`
    failures, at most the `available` ones."""
    if after < 1:
        raise ValueError("hint_after is at least 1")
    return min(max(streak, 0) // after, available)


def _verdicts(attempt: Attempt):
    for record in attempt.failed.values():
        if isinstance(record, dict) and record.get("function"):
            yield str(record["function"]), (record.get("error") or {}).get("type") == STUB_ERROR


def not_started(attempt: Attempt) -> set[str]:
    """The functions an attempt hands in as released (their stub raised): no learner is
    stuck on them, and no hint counts them (the TA board's rule too)."""
    return {function for function, stub in _verdicts(attempt) if stub}


def failed_functions(attempt: Attempt) -> set[str]:
    """The functions whose hidden checks failed in a graded attempt, by its verdict records
    (a stub left as released is left out)."""
    return {function for function, stub in _verdicts(attempt) if not stub}


def streak(attempts: list[Attempt], function: str) -> int:
    """How many graded attempts in a row, up to the last, failed the function's checks."""
    count = 0
    for attempt in reversed([a for a in attempts if a.outcome == GRADED]):
        if function not in failed_functions(attempt):
            break
        count += 1
    return count


def levels(
    attempts: list[Attempt], after: int, hints: Mapping[str, Sequence[str]]
) -> dict[str, int]:
    """function -> how many of its `hints` the last of the learner's `attempts` (in
    submission order, that one graded) shows: each function with hints it failed and a
    level above 0."""
    if not attempts or attempts[-1].outcome != GRADED:
        return {}
    found = {}
    for function in sorted(failed_functions(attempts[-1])):
        shown = level(streak(attempts, function), after, len(hints.get(function, ())))
        if shown:
            found[function] = shown
    return found


def given(hints: Mapping[str, Sequence[str]], shown: Mapping[str, int]) -> dict[str, list[str]]:
    """function -> the hints given so far, in the order written, for the levels `shown`."""
    return {function: list(hints[function][:n]) for function, n in shown.items() if n > 0}


def seen(records: list[Attempt]) -> dict[str, dict[str, int]]:
    """learner -> function -> the highest hint level any of their attempts showed."""
    found: dict[str, dict[str, int]] = {}
    for attempt in records:
        for function, n in attempt.hints.items():
            own = found.setdefault(attempt.learner, {})
            own[function] = max(own.get(function, 0), int(n))
    return found


def counts(records: list[Attempt]) -> list[tuple[str, int, int]]:
    """(function, hint level, learners whose highest hint seen of it is that level), by
    function and level: how far into its hints the class needed to go."""
    tally: dict[tuple[str, int], int] = {}
    for own in seen(records).values():
        for function, n in own.items():
            tally[function, n] = tally.get((function, n), 0) + 1
    return sorted((f, n, k) for (f, n), k in tally.items())
