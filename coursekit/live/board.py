"""What the TA live board shows, from the attempt records only (`coursekit.live.attempts`).

No learner notebook is read and no learner code runs: a record's cells (points
per grade id) and the verdict records of its failed hidden checks are all
there is. Which contract function a grade id tests comes from the instructor's
source notebook (`staff.report.overview.cell_functions`), passed in by the caller.

- per assignment and function: how many learners pass and fail on their LAST
  graded attempt (a held-back submit is no grade: it changes nothing here);
- stuck: a learner whose last `LiveBoard.stuck_after` graded attempts in a row
  failed the same function (`c.LiveBoard.stuck_after = 3` in nbgrader_config.py),
  and which of the function's hints they have seen (coursekit.live.hints); a
  function still as released is not one they are stuck on (`hints.not_started`);
- misconceptions seen on the last graded attempts, with their learners (a function still
  as released is none: `checks.core.is_misconception`);
- unknown mistakes: learners whose function gave the same wrong output on the
  probe and whose check named no misconception (the TA report's grouping rule,
  `staff.report.clusters.grouped`);
- each learner's last attempt, held back or graded.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field

from traitlets import Integer
from traitlets.config import Configurable

from coursekit.checks.core import is_misconception
from coursekit.core.messages import _
from coursekit.live import hints
from coursekit.live.attempts import ERROR, GRADED, TOO_MANY, TOO_SOON, Attempt
from coursekit.staff.report import clusters
from coursekit.staff.report.data import LearnerResult, failure_of


class LiveBoard(Configurable):
    stuck_after = Integer(
        3, min=1, help="Graded attempts in a row failing one function that make a learner stuck."
    ).tag(config=True)


def outcome_label(outcome: str) -> str:
    return {
        GRADED: _("graded"),
        TOO_SOON: _("held back: too soon"),
        TOO_MANY: _("held back: no attempts left"),
        ERROR: _("grading failed"),
    }.get(outcome, outcome)


@dataclass
class FunctionCount:
    function: str
    passing: list[str] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)


@dataclass
class Stuck:
    learner: str
    function: str
    attempts: int  # graded attempts in a row, up to the last, that failed it
    hint: int = 0  # how many of the function's hints the last attempt's page showed


@dataclass
class Seen:
    """A misconception (key, title) or an unknown mistake (its probe output) and who has it."""

    function: str
    key: str
    title: str
    learners: list[str]


@dataclass
class LastAttempt:
    learner: str
    submitted_at: str
    outcome: str
    outcome_label: str
    points: float | None  # None for a held-back submit
    max: float | None
    failing: list[str] | None  # functions that lost points on the last graded attempt (None: none)
    seeds: dict[str, int]  # function -> the seed of its first failing case
    next_at: str | None = None


@dataclass
class AssignmentBoard:
    assignment: str
    learners: int
    functions: list[FunctionCount]
    stuck: list[Stuck]
    misconceptions: list[Seen]
    unknown: list[Seen]
    last: list[LastAttempt]


def function_of(cell: str, record: dict | None, cell_functions: dict[str, str]) -> str:
    """The contract function a lost cell tests: its verdict's, else the source notebook's."""
    if record and record.get("function"):
        return str(record["function"])
    return cell_functions.get(cell, cell)


def failing(attempt: Attempt, cell_functions: dict[str, str]) -> list[str]:
    """Functions that lost points in a graded attempt, in notebook order."""
    lost = {
        function_of(cell, attempt.failed.get(cell), cell_functions)
        for cell, score in attempt.cells.items()
        if (score.get("points") or 0) < (score.get("max") or 0)
    }
    lost |= {function_of(c, r, cell_functions) for c, r in attempt.failed.items()}
    order = list(dict.fromkeys(cell_functions.values()))
    return sorted(lost, key=lambda f: (order.index(f) if f in order else len(order), f))


def functions_of(attempts: list[Attempt], cell_functions: dict[str, str]) -> list[str]:
    """The assignment's functions: the source notebook's, then any a record names besides."""
    found = list(dict.fromkeys(cell_functions.values()))
    for attempt in attempts:
        for function in failing(attempt, cell_functions):
            if function not in found:
                found.append(function)
        for cell in attempt.cells:
            if cell_functions.get(cell, cell) not in found:
                found.append(cell_functions.get(cell, cell))
    return found


def stuck_on(graded: list[Attempt], cell_functions: dict[str, str], after: int) -> list[Stuck]:
    """Functions failed on each of the learner's last `after` (or more) graded attempts,
    with how many of its hints the last one showed (`Attempt.hints`, coursekit.live.hints)."""
    if not graded:
        return []
    # newest first, each attempt's failed functions once; a stub left as released is no one's
    worked_on = [
        set(failing(attempt, cell_functions)) - hints.not_started(attempt)
        for attempt in reversed(graded)
    ]
    found = []
    for function in failing(graded[-1], cell_functions):
        if function not in worked_on[0]:
            continue
        streak = 0
        for failed in worked_on:
            if function not in failed:
                break
            streak += 1
        if streak >= after:
            hint = graded[-1].hints.get(function, 0)
            found.append(Stuck(graded[-1].learner, function, streak, hint))
    return found


def learner_result(attempt: Attempt) -> LearnerResult:
    """A graded attempt as the TA report's learner, its failures from the verdict records."""
    result = LearnerResult(attempt.learner, 0.0, 0.0, 0.0)
    for cell, record in attempt.failed.items():
        score = attempt.cells.get(cell, {})
        result.failures.append(
            failure_of(cell, score.get("points") or 0, score.get("max") or 0, "", record)
        )
    return result


def stubbed(result: LearnerResult) -> list[str]:
    """Functions still raising the released stub's error, by their verdicts (no code read)."""
    return [
        f.function
        for f in result.failures
        if f.function and str((f.probe or {}).get("digest", "")).endswith(hints.STUB_ERROR)
    ]


def misconceptions(results: list[LearnerResult]) -> list[Seen]:
    seen: dict[tuple[str, str], Seen] = {}
    for result in results:
        for failure in result.failures:
            if failure.function and is_misconception(failure.key):
                item = seen.setdefault(
                    (failure.function, failure.key),
                    Seen(failure.function, failure.key, failure.key_title, []),
                )
                if result.student not in item.learners:
                    item.learners.append(result.student)
    return sorted(seen.values(), key=lambda s: (-len(s.learners), s.function, s.key))


def unknown_mistakes(results: list[LearnerResult], functions: list[str]) -> list[Seen]:
    """The report's clusters no misconception explains (stubs left out): the mistakes to
    look at in the room."""
    groups = clusters.grouped(results, functions, {r.student: stubbed(r) for r in results}.get)
    return [
        Seen(c.function, c.fingerprint, c.error or c.summary, c.students)
        for c in groups
        if not c.known
    ]


def last_attempt(records: list[Attempt], cell_functions: dict[str, str]) -> LastAttempt:
    latest = records[-1]
    graded = [a for a in records if a.outcome == GRADED]
    shown = latest if latest.outcome in (GRADED, ERROR) else None
    held = latest.outcome in (TOO_SOON, TOO_MANY)
    basis = graded[-1] if graded else None
    row = LastAttempt(
        latest.learner,
        latest.submitted_at,
        latest.outcome,
        outcome_label(latest.outcome),
        None,
        None,
        None if basis is None else failing(basis, cell_functions),
        {},
        latest.next_at if held else None,
    )
    if shown is not None and shown.outcome == GRADED:
        row.points = sum(c.get("points") or 0 for c in shown.cells.values())
        row.max = sum(c.get("max") or 0 for c in shown.cells.values())
    if basis is not None:
        for cell, record in basis.failed.items():
            seed = (record.get("case") or {}).get("seed")
            function = function_of(cell, record, cell_functions)
            if seed is not None:
                row.seeds.setdefault(function, seed)
    return row


def assignment_board(
    assignment: str, records: list[Attempt], cell_functions: dict[str, str], stuck_after: int
) -> AssignmentBoard:
    by_learner: dict[str, list[Attempt]] = defaultdict(list)
    for attempt in sorted(records, key=lambda a: (a.submitted_at, a.entry)):
        by_learner[attempt.learner].append(attempt)
    functions = functions_of(records, cell_functions)
    counts = {f: FunctionCount(f) for f in functions}
    stuck, results, last = [], [], []
    for learner in sorted(by_learner):
        own = by_learner[learner]
        last.append(last_attempt(own, cell_functions))
        graded = [a for a in own if a.outcome == GRADED]
        if not graded:
            continue
        lost = failing(graded[-1], cell_functions)
        for function in functions:
            side = counts[function].failing if function in lost else counts[function].passing
            side.append(learner)
        stuck += stuck_on(graded, cell_functions, stuck_after)
        results.append(learner_result(graded[-1]))
    return AssignmentBoard(
        assignment,
        len(by_learner),
        list(counts.values()),
        stuck,
        misconceptions(results),
        unknown_mistakes(results, functions),
        last,
    )


def board(
    records: list[Attempt], cell_functions: dict[str, dict[str, str]], stuck_after: int = 3
) -> list[AssignmentBoard]:
    """The board of each assignment with records (`cell_functions`: assignment -> grade id
    -> function), in the assignments' order."""
    by_assignment: dict[str, list[Attempt]] = defaultdict(list)
    for attempt in records:
        by_assignment[attempt.assignment].append(attempt)
    return [
        assignment_board(a, by_assignment[a], cell_functions.get(a, {}), stuck_after)
        for a in sorted(by_assignment)
    ]


def as_json(boards: list[AssignmentBoard]) -> list[dict]:
    return [asdict(b) for b in boards]
