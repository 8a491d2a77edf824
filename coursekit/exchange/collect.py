"""`nbgrader collect` for an exchange that learners' accounts write.

Who: a submission counts for the learner whose account owns its inbound
folder (`learner_id`), never for the name the folder claims; a folder owned
by the collecting account itself, by root or by a `staff_accounts` account
was written by staff and counts under the name it carries. Every entry inside
must belong to the folder's owner (a classmate cannot slip files into it).

When: the time the exchange received it, the latest change time (ctime) of
the folder and of everything in it. An account cannot set a ctime back, so
neither timestamp.txt nor the folder name can move a late submission on time.

Everything else is nbgrader's ExchangeCollect: the same selection of the
newest submission per learner (`--before-duedate`, `--update`), the same
submitted/ layout, timestamp.txt and log lines.
"""

from __future__ import annotations

import datetime
import os
import pwd
import re
import shutil
import stat
import tempfile

from dateutil.tz import gettz
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default import ExchangeCollect
from nbgrader.utils import check_mode
from traitlets import Dict, Integer, List, Unicode
from traitlets.config import LoggingConfigurable

from coursekit.core.messages import _
from coursekit.exchange import reasons, record
from coursekit.exchange.plain_copy import Budget, copy_folder, shown

# A learner id that is safe as a folder name under submitted/ (no "..", no "/").
LEARNER_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]{0,99}")


class PlainFileLimits(LoggingConfigurable):
    """The copy budget beyond nbgrader's max_file_size / max_dir_size (an exchange mixin)."""

    max_files = Integer(
        50, help="Regular files copied per submission (notebooks first); the rest is left out."
    ).tag(config=True)
    max_entries = Integer(
        2000, help="Directory entries looked at per submission; the rest is not looked at."
    ).tag(config=True)
    max_depth = Integer(8, help="Folder levels below the submission folder.").tag(config=True)

    def budget(self) -> Budget:
        return Budget.from_coursedir(
            self.coursedir,
            max_files=self.max_files,
            max_entries=self.max_entries,
            max_depth=self.max_depth,
        )


def course_budget(config) -> Budget:
    """The budget of a course's nbgrader config (`c.PlainFileLimits.*`, `c.CourseDirectory.*`),
    for the steps that are no exchange: stock autograde and generate_feedback."""
    limits = PlainFileLimits(config=config)
    limits.coursedir = CourseDirectory(config=config)
    return limits.budget()


def due_date(coursedir: CourseDirectory) -> datetime.datetime | None:
    """The assignment's due date in the gradebook (naive UTC, as nbgrader keeps it)."""
    with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
        try:
            return gb.find_assignment(coursedir.assignment_id).duedate
        except MissingEntry:
            return None


def last_before(records: list[dict], duedate: datetime.datetime | None) -> dict:
    """nbgrader's `--before-duedate` choice among one learner's submissions (`_record`s):
    the newest received at or before the due date; none before it, the newest."""
    newest_first = sorted(records, key=lambda rec: rec["timestamp"], reverse=True)
    before = [rec for rec in newest_first if duedate is None or rec["timestamp"] <= duedate]
    return (before or newest_first)[0]


class SafeExchangeCollect(PlainFileLimits, ExchangeCollect):
    """nbgrader's ExchangeCollect; who and when come from the file system, plain files only."""

    learner_ids = Dict(
        {},
        help="Account name -> nbgrader student id, for accounts whose name is not their id "
        "(on the hub every account name is its id, so this stays empty).",
    ).tag(config=True)
    staff_accounts = List(
        Unicode(),
        help="Accounts (besides root and the collecting account) whose submissions count "
        "under the learner name they carry.",
    ).tag(config=True)
    record_path = Unicode(
        record.DEFAULT_PATH,
        help="Where, under the course root, what was left out or refused is recorded.",
    ).tag(config=True)

    def learner_id(self, account: str) -> str:
        """The one place that maps an account to the learner it submits as."""
        return self.learner_ids.get(account, account)

    def staff_uids(self) -> set[int]:
        uids = {0, os.geteuid()}
        for name in self.staff_accounts:
            try:
                uids.add(pwd.getpwnam(name).pw_uid)
            except KeyError:
                self.log.warning("staff account %s does not exist", name)
        return uids

    # -- which submissions --------------------------------------------------

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        self.incidents: dict[str, list[dict]] = {}
        staff = self.staff_uids()
        usergroups: dict[str, list[dict]] = {}
        for filename in sorted(os.listdir(self.inbound_path)):
            rec = self._record(filename, staff)
            if rec is not None:
                usergroups.setdefault(rec["username"], []).append(rec)

        self.duedate = due_date(self.coursedir)
        if self.duedate is None or not self.before_duedate:
            self.src_records = [self._sort_by_timestamp(v)[0] for v in usergroups.values()]
        else:
            self.src_records = [last_before(v, self.duedate) for v in usergroups.values()]

    def _note(self, student: str, filename: str, path: str, reason: str) -> None:
        self.incidents.setdefault(student, []).append(
            {"submission": shown(filename), "path": path, "reason": reason}
        )

    def _refuse(self, student: str, filename: str, reason: str) -> None:
        refused = _("Did not receive the submission {submission}: {reason}")
        self.log.warning(refused.format(submission=shown(filename), reason=reason))
        self._note(student, filename, "", reason)

    def _record(self, filename: str, staff: set[int]) -> dict | None:
        """The submission this inbound entry is, or None (not this assignment's, or refused)."""
        if f"+{self.coursedir.assignment_id}+" not in filename:
            return None  # another assignment's (stock's glob: <student>+<assignment>+*)
        parts = filename.split("+")
        wanted = self.coursedir.student_id
        claimed = parts[0]
        if wanted and wanted != "*" and claimed != wanted:
            return None
        if len(parts) not in (3, 4) or parts[1] != self.coursedir.assignment_id:
            self._refuse(shown(claimed) or "?", filename, _(reasons.BAD_FOLDER_NAME))
            return None
        if not LEARNER_ID.fullmatch(claimed):
            self._refuse(shown(claimed) or "?", filename, _(reasons.BAD_LEARNER_ID))
            return None
        path = os.path.join(self.inbound_path, filename)
        try:
            st = os.lstat(path)
        except OSError as error:
            self._refuse(claimed, filename, reasons.unreadable(error))
            return None
        if not stat.S_ISDIR(st.st_mode):
            self._refuse(claimed, filename, _(reasons.NOT_A_FOLDER))
            return None
        owner = reasons.account(st.st_uid)
        learner = self.learner_id(owner)
        if st.st_uid not in staff and learner != claimed:
            self._refuse(claimed, filename, reasons.planted(owner, learner, claimed))
            return None
        if learner != claimed and self.check_owner:  # a staff account's: kept, as stock warns
            staff_owned = _(
                "{submission} is owned by {owner}, not by {learner}: collected, as a staff "
                "account's (set ExchangeCollect.check_owner = False to silence this)"
            )
            self.log.warning(
                staff_owned.format(submission=shown(filename), owner=shown(owner), learner=claimed)
            )
        try:
            scan = copy_folder(path, None, self.budget(), owner_uid=st.st_uid)
        except OSError as error:
            self._refuse(claimed, filename, reasons.unreadable(error))
            return None
        received = datetime.datetime.fromtimestamp(scan.newest_change, datetime.UTC)
        return {
            "username": claimed,
            "filename": filename,
            "timestamp": received.replace(tzinfo=None),  # naive UTC, as nbgrader's parse_utc
            "owner_uid": st.st_uid,
        }

    # -- copying ------------------------------------------------------------

    def copy_files(self):
        assignment, course = self.coursedir.assignment_id, self.coursedir.course_id
        if len(self.src_records) == 0:
            self.log.warning(f"No submissions of '{assignment}' for course '{course}' to collect")
        else:
            self.log.info(
                f"Processing {len(self.src_records)} submissions of '{assignment}' "
                f"for course '{course}'"
            )
        for rec in self.src_records:
            try:
                self._collect(rec)
            except OSError as error:  # this submission only; the class goes on
                self._refuse(rec["username"], rec["filename"], reasons.unreadable(error))
        record.update(
            os.path.join(self.coursedir.root, self.record_path),
            self.coursedir.assignment_id,
            self.incidents,
        )

    def _collect(self, rec: dict) -> None:
        student_id = rec["username"]
        self.incidents.setdefault(student_id, [])  # a clean collect clears old entries
        assignment = self.coursedir.assignment_id
        src_path = os.path.join(self.inbound_path, rec["filename"])
        dest_path = self.coursedir.format_path(
            self.coursedir.submitted_directory, student_id, assignment
        )
        os.makedirs(os.path.dirname(dest_path), exist_ok=True)

        copy = updating = False
        if os.path.isdir(dest_path):
            existing = self.coursedir.get_existing_timestamp(dest_path)
            newer = self.update and (existing is None or rec["timestamp"] > existing)
            if newer or (self.before_duedate and existing != rec["timestamp"]):
                copy = updating = True
        else:
            copy = True
        if not copy:
            if self.update:
                self.log.info(f"No newer submission to collect: {student_id} {assignment}")
            else:
                self.log.info(
                    f"Submission already exists, use --update to update: {student_id} {assignment}"
                )
            return
        verb = "Updating" if updating else "Collecting"
        self.log.info(f"{verb} submission: {student_id} {assignment}")

        # Copied next to its place, then swapped in: a failure leaves the old one whole.
        staging = tempfile.mkdtemp(prefix=f".{assignment}-", dir=os.path.dirname(dest_path))
        try:
            shared = self.coursedir.groupshared
            result = copy_folder(
                src_path,
                os.path.join(staging, assignment),
                self.budget(),
                exclude=self.coursedir.ignore,
                include=self.coursedir.include,
                owner_uid=rec["owner_uid"],
                skip_top={"timestamp.txt"},  # written below, from the exchange's own time
                file_mode=0o660 if shared else 0,
                dir_mode=0o2770 if shared else 0o755,
                inert_names=True,  # no learner's file keeps a name a browser renders
            )
            received = max(
                rec["timestamp"].replace(tzinfo=datetime.UTC).timestamp(), result.newest_change
            )
            with open(os.path.join(staging, assignment, "timestamp.txt"), "w") as fh:
                fh.write(self._format_time(received))
            for item in result.left_out:
                what = f"{student_id} {assignment}"
                self.log.warning(reasons.left_out(what, item.path, item.reason))
                self._note(student_id, rec["filename"], item.path, item.reason)
            for item in result.renamed:
                reason = reasons.renamed(item.kept)
                self.log.warning("%s %s: %s — %s", student_id, assignment, item.path, reason)
                self._note(student_id, rec["filename"], item.path, reason)
            if updating:
                shutil.rmtree(dest_path)
            os.rename(os.path.join(staging, assignment), dest_path)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _format_time(self, when: float) -> str:
        tz = gettz(self.timezone)
        if tz is None:
            self.fail(f"Invalid timezone: {self.timezone}")
        return datetime.datetime.fromtimestamp(when, tz).strftime(self.timestamp_format)
