"""make grade's first step: each live learner's counted attempt put in submitted/.

For every assignment and learner with attempt records (`attempts`; a learner
the live service never saw is left as collected), `c.LiveGrading.counted`
(`policy.LiveGrading.counted_submission`) picks one of the learner's inbound
submissions as the safe collect reads them, and the safe collect of that one
entry (`inbound.OneSubmissionCollect`) puts it in submitted/<learner>/<assignment>/
when submitted/ holds another one (another time in its timestamp.txt). make
grade then grades submitted/ as always: an unchanged submission is not graded
again (the driver's digest ledger).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.coursedir import CourseDirectory

from coursekit.core.messages import _, ngettext
from coursekit.exchange.collect import due_date
from coursekit.live import attempts
from coursekit.live.inbound import collector, received
from coursekit.live.policy import LiveGrading


@dataclass
class Placed:
    learners: int = 0  # learners with attempt records, over the assignments
    put: list[tuple[str, str]] = field(default_factory=list)  # (assignment, learner)
    not_put: list[tuple[str, str]] = field(default_factory=list)  # the exchange refused it


def live_learners(root: Path, assignments: set[str], students: set[str]) -> dict[str, set[str]]:
    """assignment -> the learners with attempt records (within make grade's selection)."""
    found: dict[str, set[str]] = {}
    for folder in sorted((Path(root) / attempts.FOLDER).glob("*/*")):
        assignment, learner = folder.parent.name, folder.name
        if assignments and assignment not in assignments:
            continue
        if (students and learner not in students) or not any(folder.glob("*.json")):
            continue
        found.setdefault(assignment, set()).add(learner)
    return found


def put_in_place(root: Path, config, assignments=(), students=()) -> Placed:
    root = Path(root)
    policy, placed = LiveGrading(config=config), Placed()
    for assignment, learners in live_learners(root, set(assignments), set(students)).items():
        coursedir = collector(config, assignment).coursedir
        duedate = due_date(coursedir)
        submissions = received(config, assignment, learners)
        for learner in sorted(learners):
            placed.learners += 1
            graded = attempts.of_learner(root, assignment, learner)
            chosen = policy.counted_submission(
                assignment, submissions.get(learner, []), graded, duedate
            )
            if chosen is None or held(coursedir, learner, assignment) == chosen["timestamp"]:
                continue
            app = collector(config, assignment, chosen["filename"], replace=True)
            app.start()
            done = held(coursedir, learner, assignment) == chosen["timestamp"]
            (placed.put if done else placed.not_put).append((assignment, learner))
    return placed


def put_counted_in_place(root: Path, config, assignments=(), students=()) -> str:
    """Each live learner's counted attempt in submitted/; the line saying so ("" when no
    learner was graded live: a class that never ran make live is graded as collected)."""
    if not attempts.any_record(root):
        return ""
    placed = put_in_place(root, config, assignments, students)
    if not placed.learners:
        return ""
    line = ngettext(
        "Counted attempts (c.LiveGrading.counted): put in place for {put} of {learners} "
        "learner graded live",
        "Counted attempts (c.LiveGrading.counted): put in place for {put} of {learners} "
        "learners graded live",
        placed.learners,
    ).format(put=len(placed.put), learners=placed.learners)
    for assignment, learner in placed.not_put:
        refused = _(
            "{assignment} · {learner}: the exchange did not collect the counted attempt "
            "(reports/exchange_incidents.json)"
        )
        line += "\n  " + refused.format(assignment=assignment, learner=learner)
    return line


def held(coursedir: CourseDirectory, learner: str, assignment: str):
    """When the exchange received the submission submitted/ holds (naive UTC), or None."""
    folder = coursedir.format_path(coursedir.submitted_directory, learner, assignment)
    return coursedir.get_existing_timestamp(folder) if os.path.isdir(folder) else None
