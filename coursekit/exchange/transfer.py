"""`nbgrader submit`, `fetch_assignment` and `release_feedback` that hand over plain files only.

nbgrader's classes with their copy step replaced: links are not followed,
FIFOs, devices and sockets are left out (and logged in the course's language), and nothing is
written through a link that already sits at the destination.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import stat

from nbgrader.exchange.default import (
    ExchangeFetchAssignment,
    ExchangeReleaseAssignment,
    ExchangeReleaseFeedback,
    ExchangeSubmit,
)
from nbgrader.utils import notebook_hash

from coursekit.core.messages import _
from coursekit.exchange import reasons
from coursekit.exchange.collect import PlainFileLimits
from coursekit.exchange.plain_copy import (
    DIR_FLAGS,
    FILE_FLAGS,
    Budget,
    copy_folder,
    shown,
)

SMALL_FILE = 4096  # timestamp.txt, submission_secret.txt


def _log_left_out(log, what: str, result) -> None:
    for item in result.left_out:
        log.warning(reasons.left_out(what, item.path, item.reason))


class SafeExchangeSubmit(PlainFileLimits, ExchangeSubmit):
    """nbgrader's ExchangeSubmit; the learner's folder is copied as plain files, within budget."""

    def do_copy(self, src, dest, log=None):
        result = copy_folder(
            src,
            dest,
            self.budget(),
            exclude=self.coursedir.ignore,
            include=self.coursedir.include,
            file_mode=0o660 if self.coursedir.groupshared else 0,
            dir_mode=0o2770 if self.coursedir.groupshared else 0o755,
        )
        _log_left_out(self.log, _("submit"), result)

    def copy_files(self):
        super().copy_files()
        # Stock leaves the submission folder 0777 "so the instructor can delete later":
        # a classmate who learns its name could add, delete and rename files in it.
        writable_by_owner_and_staff(os.path.join(self.inbound_path, self.assignment_filename))


def writable_by_owner_and_staff(folder: str) -> None:
    """A submission folder writable by its owner and by the instructors, readable by all.

    The instructors are the folder's group, which stock's setgid inbound folder
    gives it, unless that is a group of the learner's own (one account for
    everything, or a group every learner is in): then the owner alone.
    """
    fd = os.open(folder, DIR_FLAGS)
    try:
        group = os.fstat(fd).st_gid
        own_group = group == os.getegid() or group in os.getgroups()
        os.chmod(fd, 0o755 if own_group else 0o775)
    finally:
        os.close(fd)


class SafeExchangeReleaseAssignment(ExchangeReleaseAssignment):
    """nbgrader's ExchangeReleaseAssignment; the inbound folder gets the sticky bit.

    Stock makes inbound 2733: every learner may add a submission and none may
    list the others, but anyone who knows a folder's name may rename it. With
    the sticky bit only the folder's owner and inbound's (the instructor) may.
    """

    def init_dest(self):
        super().init_dest()
        st = os.stat(self.inbound_path)
        if st.st_mode & stat.S_ISVTX:
            return
        if st.st_uid != os.geteuid():
            not_sticky = _(
                "Could not set the sticky bit on {folder}, which is not ours: a learner can "
                "rename another learner's submitted folder (its owner can chmod +t it)"
            )
            self.log.warning(not_sticky.format(folder=self.inbound_path))
            return
        os.chmod(self.inbound_path, stat.S_IMODE(st.st_mode) | stat.S_ISVTX)


class SafeExchangeFetchAssignment(ExchangeFetchAssignment):
    """nbgrader's ExchangeFetchAssignment; never follows a link, on either side."""

    def do_copy(self, src, dest):
        # The instructor's release: no size budget, only plain files.
        result = copy_folder(
            src,
            dest,
            Budget(max_files=10**6, max_entries=10**6, max_depth=64),
            exclude=self.coursedir.ignore,
            only_missing=os.path.isdir(self.dest_path),
        )
        _log_left_out(self.log, _("fetch"), result)


def read_small(path: str, limit: int = SMALL_FILE) -> str:
    """A short text file that must be a regular file (no link, no FIFO); errors name it."""
    name = os.path.basename(path)
    try:
        fd = os.open(path, FILE_FLAGS)
    except OSError as error:
        raise ValueError(f"{name}: {error.strerror}") from error
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{name}: " + _("not a regular file"))
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(_("{name}: longer than {limit} bytes").format(name=name, limit=limit))
    return data.decode("utf-8")


class SafeExchangeReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's ExchangeReleaseFeedback; each page on its own, plain files only.

    A page that cannot be released (no submission_secret.txt, a link, a FIFO)
    is logged with its reason and the others are released all the same.
    """

    def copy_files(self):
        exclude = set(filter(None, (self.coursedir.student_id_exclude or "").split(",")))
        regexp = re.escape(os.path.sep).join(
            [
                self.coursedir.format_path(
                    self.coursedir.feedback_directory,
                    "(?P<student_id>.*)",
                    self.coursedir.assignment_id,
                    escape=True,
                ),
                "(?P<notebook_id>.*).html",
            ]
        )
        released, failed = 0, 0
        for html_file in sorted(glob.glob(os.path.join(self.src_path, "*.html"))):
            m = re.match(regexp, html_file)
            if m is None:
                self.log.error("Could not match '%s' with regexp '%s'", html_file, regexp)
                continue
            student_id, notebook_id = m.group("student_id"), m.group("notebook_id")
            if student_id in exclude:
                self.log.debug(f"Skipping student '{student_id}'")
                continue
            try:
                self._release(html_file, student_id, notebook_id)
                released += 1
            except (OSError, ValueError) as error:
                failed += 1
                why = error.strerror if isinstance(error, OSError) and error.strerror else error
                self.log.error(
                    "%s %s/%s: %s",
                    shown(student_id),
                    self.coursedir.assignment_id,
                    shown(notebook_id),
                    reasons.feedback_not_released(f"{shown(os.path.basename(html_file))}: {why}"),
                )
        self.log.info("Released %d feedback page(s); %d could not be released", released, failed)

    def _release(self, html_file: str, student_id: str, notebook_id: str) -> None:
        feedback_dir = os.path.dirname(html_file)
        timestamp = read_small(os.path.join(feedback_dir, "timestamp.txt"))
        secret = read_small(os.path.join(feedback_dir, "submission_secret.txt"))
        checksum = notebook_hash(secret=secret, notebook_id=notebook_id)
        tmp = os.path.join(self.dest_path, f"{checksum}-tmp.html")
        final = os.path.join(self.dest_path, f"{checksum}.html")
        self.log.info(
            "Releasing feedback for student '%s' on assignment '%s/%s/%s' (%s)",
            student_id,
            self.coursedir.course_id,
            self.coursedir.assignment_id,
            notebook_id,
            timestamp,
        )
        src = os.open(html_file, FILE_FLAGS)
        try:
            st = os.fstat(src)
            if not stat.S_ISREG(st.st_mode):
                raise ValueError(_("not a regular file"))
            limit = 1000 * self.coursedir.max_file_size if self.coursedir.max_file_size else None
            if limit is not None and st.st_size > limit:
                raise ValueError(reasons.too_big(st.st_size, limit))
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)  # an earlier run's leftover
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            try:
                while chunk := os.read(src, 1 << 20):
                    os.write(out, chunk)
                os.chmod(out, 0o644)
            finally:
                os.close(out)
        finally:
            os.close(src)
        os.replace(tmp, final)  # atomically, as stock does with shutil.move
        self.log.info(f"Feedback released to: {final}")
