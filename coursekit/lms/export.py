"""Grades for an LMS's own CSV import, through nbgrader's export plugin interface.

    nbgrader export --exporter=coursekit.lms.export.CanvasExport --to exports/canvas.csv
    nbgrader export --exporter=coursekit.lms.export.MoodleExport --to exports/moodle.csv
    python -m coursekit.lms.export --to canvas|moodle [--root DIR]   # make export ARGS=...
    python -m coursekit.lms.export --to lti [--root DIR]   # posted by LTI AGS (as root)

One row per learner in the gradebook, one column per assignment. A cell is the
points the learner earned on that assignment: every notebook's auto and manual
grades (a manual answer not graded yet counts 0, and the export warns), minus
the late penalty, never below 0; a learner with no submission gets an explicit 0.
Learners are matched to the LMS by the gradebook's `lms_user_id` or `email`
(the roster puts them there: `coursekit.lms.roster`, `nbgrader db student import`).

Canvas ("Gradebook import CSV"): the columns Student, ID, SIS User ID, SIS Login
ID, Section, then one per assignment, named "Name (Canvas assignment id)" when
`CanvasExport.assignment_ids` knows the id (else the name: Canvas then creates
the assignment), and a "Points Possible" row under the header.
Moodle ("Import grades from CSV"): First name, Last name, ID number, Email
address, then one per assignment; on import, map "ID number" to idnumber or
"Email address" to email, and each assignment column to its grade item.

Optionally the Canvas export also sends the points through the Canvas API
(`canvasapi`, one bulk grade update per assignment of `assignment_ids`) when
`CanvasExport.canvas_url` and `canvas_course_id` are set and `CANVAS_TOKEN` is
in the environment (never on the command line). Learners are named by
`sis_user_id:<LMS id>` (or Canvas's user id with `lms_id_column=ID`).

`--to lti` posts the scores through LTI Assignment and Grade Services instead
(coursekit.lms.lti.post_grades, with the key `make hub --lti` made): `LtiScores`
writes them as JSON, run by the course's own account, and root posts them
(coursekit.lms.passback.post_export: what live grading left waiting for the same
learners and assignments is superseded by the gradebook's score).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins.export import ExportPlugin
from traitlets import Dict, Enum, Int, Unicode

from coursekit.core.course import add_root_argument
from coursekit.core.environment import nbgrader


class ExportError(RuntimeError):
    """The gradebook cannot be exported as the LMS needs it (message says what to fix)."""


@dataclass(frozen=True)
class Row:
    """One learner's points per assignment, as the LMS should receive them."""

    student: str
    first_name: str
    last_name: str
    email: str
    lms_user_id: str
    points: dict[str, float]
    missing: frozenset[str]  # assignments with no submission (their points are 0)
    ungraded: frozenset[str]  # assignments with a manual answer still to grade


def points(value: float) -> str:
    """A score as both LMSs parse it: decimal point, no thousands separator, no trailing .0."""
    text = f"{round(value, 2):.2f}".rstrip("0").rstrip(".")
    return text if text != "-0" else "0"


def class_rows(gradebook: Gradebook, assignments: list[str], students: list[str]) -> list[Row]:
    rows = []
    for student in gradebook.students:
        if students and student.id not in students:
            continue
        earned, missing, ungraded = {}, set(), set()
        for name in assignments:
            try:
                submission = gradebook.find_submission(name, student.id)
            except MissingEntry:
                earned[name] = 0.0
                missing.add(name)
                continue
            penalty = submission.late_submission_penalty or 0.0
            earned[name] = max(0.0, (submission.score or 0.0) - penalty)
            if submission.needs_manual_grade:
                ungraded.add(name)
        rows.append(
            Row(
                student.id,
                student.first_name or "",
                student.last_name or "",
                student.email or "",
                student.lms_user_id or "",
                earned,
                frozenset(missing),
                frozenset(ungraded),
            )
        )
    return rows


class LmsExport(ExportPlugin):
    """What both LMS exports share: the rows, the checks, the file."""

    default_file = "lms.csv"

    def assignments_of(self, gradebook: Gradebook) -> list[tuple[str, float]]:
        wanted = [str(a) for a in self.assignment]
        found = [(a.name, a.max_score) for a in gradebook.assignments]
        if wanted:
            unknown = sorted(set(wanted) - {name for name, _ in found})
            if unknown:
                raise ExportError(f"no such assignment in the gradebook: {', '.join(unknown)}")
            found = [(name, score) for name, score in found if name in wanted]
        return sorted(found)

    def unmatched(self, rows: list[Row]) -> list[str]:
        """Learners the LMS could not find (override per LMS)."""
        return [r.student for r in rows if not (r.lms_user_id or r.email)]

    def export(self, gradebook: Gradebook) -> None:
        """nbgrader export's entry point: a clear message and exit 1 instead of a traceback."""
        try:
            self.write(gradebook)
        except ExportError as error:
            self.log.error("%s", error)
            sys.exit(1)

    def write(self, gradebook: Gradebook) -> Path:
        """Write the LMS file (ExportError when the gradebook cannot be exported as is)."""
        dest = Path(self.to or self.default_file)
        assignments = self.assignments_of(gradebook)
        if not assignments:
            raise ExportError("the gradebook has no assignments to export")
        rows = class_rows(gradebook, [n for n, _ in assignments], [str(s) for s in self.student])
        unmatched = self.unmatched(rows)
        if unmatched:
            raise ExportError(
                f"{self.lms}: these learners have no {self.identifier_help} in the gradebook, so "
                f"the LMS cannot match them: {', '.join(unmatched)}. Import a roster with "
                "their LMS id or email (`nbgrader db student import`, README: roster)."
            )
        for row in rows:
            for name in sorted(row.ungraded):
                self.log.warning(
                    "%s: %s has a manual answer not graded yet (counted 0)", name, row.student
                )
        dest.parent.mkdir(parents=True, exist_ok=True)
        with open(dest, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            for line in self.lines(assignments, rows):
                writer.writerow(line)
        missing = sum(len(r.missing) for r in rows)
        self.log.info(
            "%s: %d learners × %d assignments -> %s (%d without a submission, written as 0)",
            self.lms, len(rows), len(assignments), dest, missing,
        )  # fmt: skip
        return dest

    lms = "LMS"
    identifier_help = "LMS id or email"

    def lines(self, assignments, rows):
        raise NotImplementedError


class CanvasExport(LmsExport):
    """Canvas's Gradebook import CSV."""

    lms = "Canvas"
    default_file = "canvas_grades.csv"
    HEADER = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")

    assignment_ids = Dict(
        {},
        help="nbgrader assignment -> Canvas assignment id; a column without one makes a new "
        "Canvas assignment on import",
    ).tag(config=True)
    section = Unicode("", help="the Section column (Canvas ignores it when empty)").tag(config=True)
    lms_id_column = Enum(
        ["SIS User ID", "ID"],
        default_value="SIS User ID",
        help="the Canvas column the roster's LMS id goes into: the institution's SIS User ID, "
        "or Canvas's own user ID",
    ).tag(config=True)
    canvas_url = Unicode(
        "", help="also send the grades through the Canvas API (token: $CANVAS_TOKEN)"
    ).tag(config=True)
    canvas_course_id = Int(0, help="the Canvas course the grades go to").tag(config=True)

    def write(self, gradebook: Gradebook) -> Path:
        dest = super().write(gradebook)
        if self.canvas_url:
            self.push(gradebook)
        return dest

    def canvas_user(self, row: Row) -> str:
        """How the Canvas API names a learner: by SIS id, or by Canvas's own user id."""
        return row.lms_user_id if self.lms_id_column == "ID" else f"sis_user_id:{row.lms_user_id}"

    def push(self, gradebook: Gradebook) -> None:
        """One bulk grade update per assignment with a Canvas id (an asynchronous Canvas job)."""
        from canvasapi import Canvas  # only when pushing

        token = os.environ.get("CANVAS_TOKEN", "")
        if not token or not self.canvas_course_id or not self.assignment_ids:
            raise ExportError(
                "Canvas push: set CANVAS_TOKEN, CanvasExport.canvas_course_id and "
                "CanvasExport.assignment_ids (nbgrader assignment -> Canvas assignment id)"
            )
        known = {name for name, _ in self.assignments_of(gradebook)}
        unknown = sorted(set(self.assignment_ids) - known)
        if unknown:
            raise ExportError(f"Canvas push: no such assignment in the gradebook: {unknown}")
        rows = class_rows(gradebook, sorted(self.assignment_ids), [str(s) for s in self.student])
        unnamed = [r.student for r in rows if not r.lms_user_id]
        if unnamed:
            raise ExportError(f"Canvas push: these learners have no LMS id: {', '.join(unnamed)}")
        course = Canvas(self.canvas_url, token).get_course(self.canvas_course_id)
        for name, canvas_id in sorted(self.assignment_ids.items()):
            grades = {self.canvas_user(r): {"posted_grade": points(r.points[name])} for r in rows}
            progress = course.get_assignment(canvas_id).submissions_bulk_update(grade_data=grades)
            self.log.info(
                "Canvas: %s -> assignment %s, %d grades (job %s, %s)",
                name, canvas_id, len(grades), progress.id, progress.workflow_state,
            )  # fmt: skip

    def column(self, name: str) -> str:
        canvas_id = self.assignment_ids.get(name)
        return f"{name} ({canvas_id})" if canvas_id else name

    def lines(self, assignments, rows):
        yield [*self.HEADER, *(self.column(name) for name, _ in assignments)]
        yield ["Points Possible", "", "", "", ""] + [points(score) for _, score in assignments]
        for row in sorted(rows, key=lambda r: (r.last_name, r.first_name, r.student)):
            canvas_id = row.lms_user_id if self.lms_id_column == "ID" else ""
            sis_id = row.lms_user_id if self.lms_id_column == "SIS User ID" else ""
            name = f"{row.last_name}, {row.first_name}" if row.last_name else row.student
            yield [name, canvas_id, sis_id, row.email, self.section] + [
                points(row.points[n]) for n, _ in assignments
            ]


class MoodleExport(LmsExport):
    """Moodle's Import grades from CSV (gradeimport_csv)."""

    lms = "Moodle"
    default_file = "moodle_grades.csv"
    HEADER = ("First name", "Last name", "ID number", "Email address")

    identifier = Enum(
        ["email", "idnumber"],
        default_value="email",
        help="the user field you map on import: every learner must have it "
        "(Moodle aborts the whole import on a row it cannot match)",
    ).tag(config=True)

    @property
    def identifier_help(self) -> str:
        return "email" if self.identifier == "email" else "LMS id (Moodle ID number)"

    def unmatched(self, rows):
        key = "email" if self.identifier == "email" else "lms_user_id"
        return [r.student for r in rows if not getattr(r, key)]

    def lines(self, assignments, rows):
        yield [*self.HEADER, *(name for name, _ in assignments)]
        for row in sorted(rows, key=lambda r: (r.last_name, r.first_name, r.student)):
            yield [row.first_name, row.last_name, row.lms_user_id, row.email] + [
                points(row.points[n]) for n, _ in assignments
            ]


class LtiScores(LmsExport):
    """The scores `make export ARGS="--to lti"` posts, as JSON (coursekit.lms.lti.Score):
    per learner and assignment the points, the maximum, and where grading stands."""

    lms = "LTI"
    default_file = "lti_scores.json"
    identifier_help = "LMS id"

    def unmatched(self, rows):
        return []  # posted one by one: a learner without an LMS id is listed, not fatal

    def write(self, gradebook: Gradebook) -> Path:
        dest = Path(self.to or self.default_file)
        assignments = self.assignments_of(gradebook)
        scores = lti_scores(gradebook, assignments, [str(s) for s in self.student])
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps([vars(s) for s in scores], indent=1), encoding="utf-8")
        self.log.info("LTI: %d scores -> %s", len(scores), dest)
        return dest


def lti_scores(gradebook: Gradebook, assignments: list[tuple[str, float]], students: list[str]):
    """The coursekit.lms.lti.Score of each learner (all: `students` empty) per assignment
    (name, maximum): the points the CSV exports count, and where grading stands. What
    `--to lti` posts, and what the live service posts of a counted attempt."""
    from coursekit.lms.lti import Score, progress  # pylti1p3 only where LTI is used

    scores = []
    for row in class_rows(gradebook, [n for n, _ in assignments], students):
        for name, maximum in assignments:
            submitted = name not in row.missing
            activity, grading = progress(submitted, name in row.ungraded)
            scores.append(Score(name, row.student, row.lms_user_id,
                                row.points[name] if submitted else None, maximum,
                                activity, grading))  # fmt: skip
    return scores


EXPORTERS = {"canvas": CanvasExport, "moodle": MoodleExport}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="make export", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--to", choices=[*sorted(EXPORTERS), "lti"], required=True,
        help="the LMS (lti: post through LTI Assignment and Grade Services)",
    )  # fmt: skip
    add_root_argument(parser)
    parser.add_argument("--out", type=Path, help="the file (default exports/<lms>_grades.csv)")
    parser.add_argument(
        "--lti-dir", type=Path,
        help="--to lti: the hub's lti/ folder (config, tool key; default /srv/<course id>-hub/lti)",
    )  # fmt: skip
    parser.add_argument(
        "--retry-delays", default="1,2,4,8",
        help="--to lti: seconds between tries while the LMS is down (default 1,2,4,8)",
    )  # fmt: skip
    # Anything else (--CanvasExport.section=..., --assignment=...) goes to nbgrader export.
    args, nbgrader_args = parser.parse_known_args(argv)
    if args.to == "lti":
        return post_to_lti(args, nbgrader_args)
    plugin = EXPORTERS[args.to]
    out = (args.out or Path("exports") / plugin.default_file).absolute()
    result = nbgrader(
        args.root,
        "export",
        f"--exporter=coursekit.lms.export.{plugin.__name__}",
        f"--to={out}",
        *nbgrader_args,
        check=False,
    )
    sys.stderr.write(result.stderr)
    if result.returncode == 0:
        print(f"{plugin.lms}: {out}")
    return result.returncode


if __name__ == "__main__":
    raise SystemExit(main())


def post_to_lti(args, nbgrader_args: list[str]) -> int:
    """`--to lti`: the gradebook's scores (read by the course's own account: root never
    opens its gradebook), then posted with the hub's tool key (readable by root only)."""
    import pwd
    import subprocess

    from coursekit.core.course import Course
    from coursekit.lms import lti, passback

    root = Path(args.root)
    folder = args.lti_dir or Path(f"/srv/{Course(root).course_id}-hub") / "lti"
    try:
        config = lti.LtiConfig.read(folder / lti.CONFIG_FILE)
        key = (folder / lti.KEY_FILE).read_text()
    except (lti.LtiError, OSError) as error:
        print(
            f"make export --to lti: {error} (run it as root, who reads the tool's key; "
            "make hub --lti CONFIG makes the folder)",
            file=sys.stderr,
        )
        return 2
    out = root / "exports" / LtiScores.default_file
    command = [sys.executable, "-m", "nbgrader", "export",
               f"--exporter=coursekit.lms.export.{LtiScores.__name__}", f"--to={out}",
               *nbgrader_args]  # fmt: skip
    owner = pwd.getpwuid(root.stat().st_uid)
    if os.geteuid() == 0 and owner.pw_uid != 0:
        command = ["runuser", "-u", owner.pw_name, "--", "env", f"HOME={owner.pw_dir}", *command]
    from coursekit.core.environment import venv_environment

    result = subprocess.run(
        command, cwd=root, env=venv_environment(), capture_output=True, text=True
    )
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        return result.returncode
    scores = [lti.Score(**one) for one in json.loads(out.read_text(encoding="utf-8"))]
    delays = list(lti.retry_delays(args.retry_delays))
    conn = lti.connector(config, key)
    try:
        done, superseded = passback.post_export(conn, config, folder, scores, delays)
    except lti.LtiError as error:
        print(f"make export --to lti: {error}", file=sys.stderr)
        return 2
    if superseded:
        waited = len(superseded)
        print(
            f"LTI: {waited} scores live grading could not post waited; posted from the gradebook:"
        )
        for w in superseded:
            print(f"  {w.score.assignment} {w.score.student}: {w.why} (since {w.since})")
    print(
        f"LTI: {len(done.posted)} scores posted, {len(done.unchanged)} unchanged since the last "
        f"run, {len(done.lineitems_made)} line items made ({', '.join(done.lineitems_made) or '-'})"
    )
    if done.failed:
        print(f"LTI: {len(done.failed)} not posted (run make export again once the LMS answers):")
        for what, why in done.failed:
            name = what if isinstance(what, str) else f"{what.assignment} {what.student}"
            print(f"  {name}: {why}")
        return 1
    return 0
