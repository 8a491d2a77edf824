"""What `make grade` says: its first line, a line per graded submission, and its summary.

The texts go through the course's message catalog; `bench.pool` prints the
same summary for the grading it compares with.
"""

from __future__ import annotations

from pathlib import Path

from coursekit.cluster import gradebook
from coursekit.cluster.submission import Result
from coursekit.core.messages import _, ngettext


def grading_line(total: int, jobs: int, root: Path, on_slurm: bool = False) -> str:
    submissions = ngettext("{total} submission", "{total} submissions", total).format(total=total)
    if on_slurm:
        line = ngettext(
            "Grading {submissions} with the workers of {jobs} SLURM job ({root})",
            "Grading {submissions} with the workers of {jobs} SLURM jobs ({root})",
            jobs,
        )
    else:
        line = ngettext(
            "Grading {submissions} with {jobs} worker ({root})",
            "Grading {submissions} with {jobs} workers ({root})",
            jobs,
        )
    return line.format(submissions=submissions, jobs=jobs, root=root)


def progress_line(done: int, total: int, outcome: Result) -> str:
    found = outcome.incidents
    mark = "✓" if outcome.ok else "✗ " + _("grading failed")
    line = f"[{done:>{len(str(total))}}/{total}] {outcome.assignment} · {outcome.student} "
    line += f"{mark} {outcome.seconds:.1f} s"
    if outcome.attempts > 1 and outcome.ok:
        line += " " + _("(attempt {attempt})").format(attempt=outcome.attempts)
    if found:
        names = ", ".join(sorted({i.name for i in found}))
        line += " — " + ngettext(
            "a grading guard in {cells} cell: {names}",
            "a grading guard in {cells} cells: {names}",
            len(found),
        ).format(cells=len(found), names=names)
    return line


def summary(place, tasks, invalid, failed, report, elapsed) -> str:
    graded = len(tasks) + len(invalid) - len(failed)
    total = len(tasks) + len(invalid)
    lines = [
        ngettext(
            "Graded: {graded}/{total} submission, {seconds:.1f} s",
            "Graded: {graded}/{total} submissions, {seconds:.1f} s",
            total,
        ).format(graded=graded, total=total, seconds=elapsed),
    ]
    for assignment, totals in sorted(gradebook.totals(place, tasks, invalid).items()):
        mean = sum(totals) / len(totals) if totals else 0.0
        learners = ngettext(
            "{assignment}: {learners} learner, mean automatic score {mean:.2f}",
            "{assignment}: {learners} learners, mean automatic score {mean:.2f}",
            len(totals),
        )
        lines.append("  " + learners.format(assignment=assignment, learners=len(totals), mean=mean))
    flagged = sum(len(v) for v in report.values())
    if flagged:
        stopped = ngettext(
            "{flagged} submission stopped by a grading guard: the reasons are in "
            "reports/grading_incidents.json and in the graded notebook's cells",
            "{flagged} submissions stopped by a grading guard: the reasons are in "
            "reports/grading_incidents.json and in the graded notebooks' cells",
            flagged,
        )
        lines.append("  " + stopped.format(flagged=flagged))
    for outcome in failed:
        failure = _("grading failed: {assignment} · {student}:")
        lines.append("  " + failure.format(assignment=outcome.assignment, student=outcome.student))
        lines += [f"    {message.splitlines()[0][:300]}" for message in outcome.errors[-3:]]
    return "\n".join(lines)
