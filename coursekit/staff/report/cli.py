"""The TA report, from the gradebook and the autograded notebooks.

    python -m coursekit.staff.report [assignment ...] [--root DIR] [--out DIR]

Per assignment it prints a terminal table and writes reports/<assignment>.csv
and reports/<assignment>.html (self-contained; open it in a browser). It reads
the gradebook and the grader's records in the autograded notebooks, and runs
no learner code: the clusters come from the verdicts' probe records. The hints
the live workshop gave are counted from its attempt records (coursekit.live.hints).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nbgrader.api import MissingEntry

from coursekit.core.course import Course, add_root_argument
from coursekit.core.environment import use_environment_bin
from coursekit.core.messages import _, ngettext
from coursekit.live import attempts, hints
from coursekit.staff.report import clusters as grouping
from coursekit.staff.report import data, overview, render, summary


def build(root: Path, assignment: str, out: Path) -> str:
    """Write the CSV and HTML of one assignment; return its terminal table."""
    reading = _("{assignment}: reading the gradebook and the graded notebooks")
    print("   " + reading.format(assignment=assignment), file=sys.stderr, flush=True)
    found = data.read_assignment(root, assignment)
    clusters = grouping.clusters(found)
    old = sum(1 for x in found.learners for f in x.failures if f.function and f.probe is None)
    if old:  # records from a grader before the probe was recorded: regrade to cluster them
        unprobed = ngettext(
            "{assignment}: {count} failing cell with no probe record (grade again to group it)",
            "{assignment}: {count} failing cells with no probe record (grade again to group them)",
            old,
        )
        unprobed = unprobed.format(assignment=assignment, count=old)
        print("   " + unprobed, file=sys.stderr, flush=True)
    counts = summary.summarize(found)
    counts.hints = hints.counts([a for a in attempts.every(root) if a.assignment == assignment])
    view = overview.overview(root, found)
    out.mkdir(parents=True, exist_ok=True)
    render.write_csv(out / f"{assignment}.csv", found, clusters, view)
    render.write_html(out / f"{assignment}.html", found, counts, clusters, view)
    return render.terminal(found, counts, clusters, view)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m coursekit.staff.report",
        description=_(
            "The TA report: each learner's failing cells and diagnoses, the class's mistake "
            "counts, learners grouped by the same wrong output. Writes "
            "reports/<assignment>.csv and reports/<assignment>.html."
        ),
    )
    parser.add_argument(
        "assignments", nargs="*", help=_("assignment ids (default: every assignment in source/)")
    )
    add_root_argument(parser)
    parser.add_argument("--out", type=Path, help=_("the reports' folder (default: <root>/reports)"))
    args = parser.parse_args(argv)
    use_environment_bin()  # nbgrader runs alembic by name when it opens a new gradebook
    course = Course(args.root)
    out = args.out or args.root / "reports"
    for assignment in args.assignments or course.assignments():
        try:
            table = build(args.root, assignment, out)
        except MissingEntry:
            ungraded = _("{assignment}: the gradebook has no grades for it (autograde first).")
            print(ungraded.format(assignment=assignment), flush=True)
            continue
        print(table + "\n", flush=True)
        print(f"   → {out / assignment}.html, {out / assignment}.csv\n", flush=True)
    return 0
