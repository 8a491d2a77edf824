"""`make demo`: the whole course cycle on a simulated class, with stock nbgrader.

For every assignment: `generate_assignment` → `release_assignment` → each
simulated learner fetches it, fills in their work and submits (one of them
after the due date) → `collect` → `autograde` → `generate_feedback` →
`release_feedback`; then `export` writes grades.csv and the TA report is
printed and written to reports/. The instructor's steps go through nbgrader's
NbGraderAPI (coursekit/simulate/instructor.py), the learners' through its exchange
classes (coursekit/simulate/learner_actions.py), all with the course's nbgrader_config.py.
Everything it writes (gradebook.db, exchange/, submitted/, autograded/,
feedback/, demo/, grades.csv, reports/) is ignored by git. Running it again
regrades the same class to the same grades.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from coursekit.core.course import Course, CourseKit, add_root_argument
from coursekit.core.messages import _, ngettext
from coursekit.simulate import learner_actions, submissions
from coursekit.simulate.instructor import Instructor
from coursekit.staff.report.cli import main as report_main

CATALOG_MISTAKES = 4


def catalogs(kit: CourseKit | None = None) -> dict:
    """assignment -> its catalog, from the course's catalog package (`c.CourseKit`)."""
    return (kit or CourseKit.of()).catalog().catalogs()


def unknown_mistakes(kit: CourseKit | None = None) -> dict[str, tuple[str, list[str]]]:
    """Two learners per assignment make the same mistake that the catalog does not
    name, written differently (its `unknown_mistake`): the report's probe clustering
    groups them anyway. assignment -> (function, two answer cells)."""
    return {
        assignment: (catalog.unknown_mistake.function, list(catalog.unknown_mistake.sources))
        for assignment, catalog in catalogs(kit).items()
        if catalog.unknown_mistake is not None
    }


@contextlib.contextmanager
def stderr_to(path: Path):
    """Send this process's stderr (file descriptor 2, so its children's too) to a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    with path.open("a") as log:
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


@dataclass(frozen=True)
class Learner:
    student: str
    plan: str  # what this simulated learner writes, for the demo's log
    replace: dict[str, str] | None = None  # contract function -> learner code
    blank: bool = False
    late: bool = False


def simulated_class(assignment: str, kit: CourseKit | None = None) -> list[Learner]:
    """Nine learners: reference, blank, catalog mistakes, an unknown mistake twice, one late."""
    plans = [
        Learner("", _("correct (reference)")),
        Learner("", _("blank submission (as released)"), blank=True),
    ]
    catalog = catalogs(kit).get(assignment)
    seen: set[str] = set()
    for entry in catalog.mistakes if catalog else []:
        if entry.function in seen or len(seen) == CATALOG_MISTAKES:
            continue  # one mistake per function, so the class shows several cells failing
        seen.add(entry.function)
        plan = _("catalog mistake {function}/{key}").format(function=entry.function, key=entry.key)
        plans.append(Learner("", plan, {entry.function: entry.source}))
    unknown = unknown_mistakes(kit)
    if assignment in unknown:
        function, sources = unknown[assignment]
        for source in sources:
            plan = _("a mistake not in the catalog ({function})").format(function=function)
            plans.append(Learner("", plan, {function: source}))
    plans.append(Learner("", _("correct, submitted after the due date"), late=True))
    return [
        Learner(f"learner-{i:02d}", p.plan, p.replace, p.blank, p.late)
        for i, p in enumerate(plans, start=1)
    ]


class Cycle:
    """One course root driven through the cycle; `log` receives progress lines."""

    def __init__(self, root: Path, log=print):
        self.course = Course(root)
        self.root = Path(root)
        self.log = log
        self.workspaces = self.root / "demo" / "learners"
        self.instructor = Instructor(self.root)

    def learner_works(self, learner: Learner, assignment: str) -> None:
        """fetch → fill in the notebook → submit, as this learner."""
        workspace = self.workspaces / learner.student
        shutil.rmtree(workspace / assignment, ignore_errors=True)
        folder = learner_actions.fetch(self.course, workspace, learner.student, assignment)
        (path,) = folder.glob("*.ipynb")
        fetched = nbformat.read(path, as_version=4)
        source = self.course.source_notebook(assignment)
        nb = submissions.fill(fetched, source, replace=learner.replace, blank=learner.blank)
        nbformat.write(nb, path)
        learner_actions.submit(self.course, workspace, learner.student, assignment)

    def set_due_date(self, assignment: str, when: datetime.datetime | None) -> None:
        with self.course.gradebook() as gb:
            gb.update_or_create_assignment(assignment, duedate=when)

    def submitted(self, assignment: str) -> list[str]:
        """Every learner collected for the assignment (the demo's and any others)."""
        folder = self.root / "submitted"
        return sorted(p.parent.name for p in folder.glob(f"*/{assignment}") if p.is_dir())

    def run_assignment(self, assignment: str) -> list[Learner]:
        learners = simulated_class(assignment, self.course.kit)
        self.log(f"== {assignment}: generate_assignment, release_assignment")
        self.instructor.generate_assignment(assignment)
        self.set_due_date(assignment, None)
        self.instructor.release_assignment(assignment)

        working = ngettext(
            "{assignment}: {count} learner fetch → solve → submit",
            "{assignment}: {count} learners fetch → solve → submit",
            len(learners),
        )
        self.log("== " + working.format(assignment=assignment, count=len(learners)))
        for learner in [learner for learner in learners if not learner.late]:
            self.learner_works(learner, assignment)
            self.log(f"   {learner.student}: {learner.plan}")
        # The due date falls between the on-time submissions and the late ones.
        time.sleep(1.1)
        self.set_due_date(assignment, datetime.datetime.now(datetime.UTC).replace(tzinfo=None))
        time.sleep(1.1)
        for learner in [learner for learner in learners if learner.late]:
            self.learner_works(learner, assignment)
            self.log(f"   {learner.student}: {learner.plan} " + _("(late)"))

        self.log(f"== {assignment}: collect, autograde")
        self.instructor.collect(assignment)
        students = self.submitted(assignment)
        started = time.perf_counter()
        # Kernels write start-up warnings to stderr: into a log, not between the progress lines.
        with stderr_to(self.root / "demo" / "autograde.log"):
            for i, student in enumerate(students, start=1):
                grading = _("grading [{done}/{total}] {student}")
                self.log("   " + grading.format(done=i, total=len(students), student=student))
                self.instructor.autograde(assignment, student)
        elapsed = time.perf_counter() - started
        self.log(f"   autograde {elapsed:.1f} s ({elapsed / len(students):.1f} s/notebook)")
        self.log(f"== {assignment}: generate_feedback, release_feedback")
        self.instructor.generate_feedback(assignment)
        self.instructor.release_feedback(assignment)
        return learners

    def run(self, assignments: list[str]) -> dict[str, list[Learner]]:
        classes = {a: self.run_assignment(a) for a in assignments}
        self.log("== export → grades.csv")
        self.instructor.export(self.root / "grades.csv")
        return classes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="default: every assignment in source/")
    add_root_argument(parser)
    parser.add_argument("--no-report", action="store_true", help="skip the TA report at the end")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    cycle = Cycle(args.root, log=lambda line: print(line, flush=True))
    assignments = args.assignments or cycle.course.assignments()
    cycle.run(assignments)
    whole = _("the whole cycle {seconds:.0f} s").format(seconds=time.perf_counter() - started)
    print(f"== {whole}\n", flush=True)
    if args.no_report:
        return 0

    return report_main(["--root", str(args.root), *assignments])


if __name__ == "__main__":
    raise SystemExit(main())
