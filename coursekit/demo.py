"""`make demo`: grade a small simulated class with stock nbgrader, in this course root.

For every assignment in source/: `nbgrader generate_assignment`, then a class
of simulated learners (the reference answers, the untouched release, and a
few entries of the misconception catalog) is placed in submitted/, graded
with `nbgrader autograde`, and shown as a learner × cell score table with the
Korean diagnosis of each failing cell. Everything it writes (gradebook.db,
submitted/, autograded/) is ignored by git; running it again regrades.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from coursekit import submissions
from coursekit.course import Course

ROOT = Path(__file__).resolve().parent.parent
MISTAKES_PER_ASSIGNMENT = 4


def simulated_class(course: Course, assignment: str) -> dict[str, object]:
    """learner id -> notebook: reference, blank, and the first catalog mistakes."""
    from tests.catalog_support import catalogs  # the catalog lives with the tests

    release, source = course.release_notebook(assignment), course.source_notebook(assignment)
    learners = {
        "reference": submissions.fill(release, source),
        "blank-release": submissions.fill(release, source, blank=True),
    }
    catalog = catalogs().get(assignment)
    mistakes = catalog.mistakes[:MISTAKES_PER_ASSIGNMENT] if catalog else []
    for entry in mistakes:
        learners[entry.student_id] = submissions.fill(
            release, source, replace={entry.function: entry.source}
        )
    return learners


def score_table(course: Course, assignment: str) -> str:
    scores, points = course.scores(assignment), course.max_scores(assignment)
    cells = list(points)
    learner_width = max(len(s) for s in scores)
    header = f"{'learner':<{learner_width}} | " + " ".join(f"{i + 1:>3}" for i in range(len(cells)))
    lines = [header + " | total", "-" * (len(header) + 8)]
    for learner in sorted(scores):
        row = scores[learner]
        shown = ["  ?" if row[c] is None else f"{row[c]:>3g}" for c in cells]
        total = sum(v for v in row.values() if v is not None)
        lines.append(f"{learner:<{learner_width}} | {' '.join(shown)} | {total:g}")
    legend = [f"  {i + 1:>2}. {cell} ({points[cell]:g}점)" for i, cell in enumerate(cells)]
    return "\n".join([*lines, "  ? = 조교 채점 대기", "cells:", *legend])


def diagnoses(course: Course, assignment: str) -> str:
    """One line per failing graded cell: the named misconception, else the message's first line."""
    graded = set(course.max_scores(assignment))
    lines = []
    for learner in sorted(course.scores(assignment)):
        if learner in ("reference", "blank-release"):
            continue
        for cell, message in course.autograded_errors(learner, assignment).items():
            if cell not in graded:
                continue
            message_lines = [line.strip() for line in message.splitlines() if line.strip()]
            named = [line for line in message_lines if line.startswith("짐작되는 실수")]
            lines.append(f"  {learner} · {cell}: {(named or message_lines)[0]}"[:160])
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="default: every assignment in source/")
    args = parser.parse_args(argv)
    course = Course(ROOT)
    for assignment in args.assignments or course.assignments():
        print(f"== {assignment}: nbgrader generate_assignment")
        course.generate(assignment)
        learners = simulated_class(course, assignment)
        for learner, nb in learners.items():
            course.submit(learner, assignment, nb)
        print(f"== {assignment}: nbgrader autograde ({len(learners)} learners)")
        started = time.perf_counter()
        course.autograde(assignment)
        elapsed = time.perf_counter() - started
        print(f"   {elapsed:.1f} s, {elapsed / len(learners):.1f} s per notebook\n")
        print(score_table(course, assignment))
        print("\nKorean diagnoses of the failing cells:")
        print(diagnoses(course, assignment) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
