"""The exchange's inbound folder, as the live service reads it.

`pending` lists the submissions not handled yet, each as the safe exchange's
collect sees it (`SafeExchangeCollect._record`: the learner is the folder's
owner, the time is when the exchange received it, plain files within the
budget; a refused entry is logged and recorded there, once per run), in the
order the exchange received them, each once it is complete (its secret written, or
unchanged for a while); `received` lists some learners' entries of one assignment,
handled or not (make grade's counted attempt). `OneSubmissionCollect` collects that one
entry into submitted/ by the same rules. `Watch` wakes the service when
inbound changes (watchdog's inotify observer, started once inbound exists: on
the hub the service starts before the instructor's first release makes it, and
until this was so every submit there waited for a rescan, 2.7-4.7 s late with a
5 s period); the service rescans anyway every second, since a notice can be missed
and it may have been down. An entry seen before its secret is written
(`Inbound.writing`) is looked at again after `WRITING_POLL`, not left to a notice
of the secret's write.
"""

from __future__ import annotations

import copy
import os
import stat
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from traitlets import Bool, Unicode

from coursekit.exchange import reasons, record
from coursekit.exchange.collect import SafeExchangeCollect
from coursekit.live import attempts


@dataclass(frozen=True)
class Entry:
    name: str  # the inbound folder's name
    learner: str
    assignment: str
    received: datetime  # UTC, aware


# A folder is complete once nbgrader's submit wrote its secret (its last file: created,
# then written, so an empty one is not yet); one that
# never gets one (a hand-made folder) is taken once nothing in it changed for this long.
SECRET = "submission_secret.txt"
SETTLE_SECONDS = 10.0
# How soon the service looks again at an entry still being written (nbgrader's submit
# takes ~0.1 s to copy a notebook and write the secret).
WRITING_POLL = 0.05


class OneSubmissionCollect(SafeExchangeCollect):
    """The safe collect of one inbound entry (`entry`), replacing the learner's submitted/."""

    entry = Unicode("", help="The inbound folder's name to collect.").tag(config=True)
    replace = Bool(
        False,
        help="Put the entry in place whichever submission submitted/ holds (make grade's "
        "counted attempt); else only over an older one.",
    ).tag(config=True)

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        self.incidents = {}
        found = self._record(self.entry, self.staff_uids())
        self.src_records = [found] if found else []
        # _collect's rules: --update copies a newer one, --before-duedate any that differs
        self.update, self.before_duedate = True, self.replace

    def copy_files(self):
        # SafeExchangeCollect's loop, but what it notes is added to the learner's entries in
        # reports/exchange_incidents.json: a collect of one attempt does not clear the others'.
        for rec in self.src_records:
            try:
                self._collect(rec)
            except OSError as error:
                self._refuse(rec["username"], rec["filename"], reasons.unreadable(error))
        add_incidents(self, self.incidents)


def add_incidents(app: SafeExchangeCollect, incidents: dict[str, list[dict]]) -> None:
    path = os.path.join(app.coursedir.root, app.record_path)
    for student, entries in incidents.items():
        record.add(path, app.coursedir.assignment_id, student, entries)


def collector(
    config, assignment: str, entry: str = "", replace: bool = False
) -> OneSubmissionCollect:
    config = copy.deepcopy(config)  # Config.copy() shares its sections
    config.CourseDirectory.assignment_id = assignment
    config.CourseDirectory.student_id = "*"
    return OneSubmissionCollect(
        coursedir=CourseDirectory(config=config),
        authenticator=Authenticator(config=config),
        config=config,
        entry=entry,
        replace=replace,
    )


def collect(config, entry: Entry) -> bool:
    """Copy `entry` into submitted/<learner>/<assignment>/ as `nbgrader collect` would;
    False when the exchange refused it (it says why in reports/exchange_incidents.json)."""
    app = collector(config, entry.assignment, entry.name)
    app.start()
    return bool(app.src_records)


def inbound_path(config) -> Path:
    return Path(config.Exchange.root) / config.CourseDirectory.course_id / "inbound"


def received(config, assignment: str, learners: set[str]) -> dict[str, list[dict]]:
    """learner -> their inbound submissions of `assignment` as the safe collect reads them
    (`_record`s: who, when received); a refused one is left out (the exchange logs why)."""
    reader = collector(config, assignment)
    path = inbound_path(config)
    reader.inbound_path, reader.incidents = str(path), {}
    staff, found = reader.staff_uids(), {}
    try:
        names = sorted(os.listdir(path))
    except FileNotFoundError:
        names = []
    for name in names:
        if name.split("+")[0] not in learners:
            continue
        rec = reader._record(name, staff)
        if rec is not None:
            found.setdefault(rec["username"], []).append(rec)
    return found


class Inbound:
    def __init__(self, root: Path, config, assignments: list[str]):
        self.root, self.config = Path(root), config
        self.path = inbound_path(config)
        self.readers = {a: collector(config, a) for a in assignments}
        self.refused: set[str] = set()  # logged once per run, never retried
        self.writing = False  # the last pass left an entry that is still being written

    def names(self) -> list[str]:
        try:
            return sorted(os.listdir(self.path))
        except FileNotFoundError:
            return []

    def pending(self) -> list[Entry]:
        """Entries with no attempt record yet, in the order the exchange received them;
        one still being written waits for a later pass."""
        found, self.writing = [], False
        for name in self.names():
            parts = name.split("+")
            reader = self.readers.get(parts[1]) if len(parts) > 1 else None
            if reader is None or name in self.refused:
                continue
            if attempts.path_of(self.root, parts[1], parts[0], name).exists():
                continue
            reader.inbound_path, reader.incidents = str(self.path), {}
            rec = reader._record(name, reader.staff_uids())
            if rec is None:  # logged by the exchange's rule; recorded as collect records it
                self.refused.add(name)
                add_incidents(reader, reader.incidents)
                continue
            when = rec["timestamp"].replace(tzinfo=UTC)
            settled = (datetime.now(UTC) - when).total_seconds() >= SETTLE_SECONDS
            if not (settled or written(self.path / name / SECRET)):
                self.writing = True  # still being written: a pass soon takes it
                continue
            found.append(Entry(name, rec["username"], parts[1], when))
        return sorted(found, key=lambda e: (e.received, e.name))


def written(path: Path) -> bool:
    """A non-empty regular file: submit creates the secret, then writes it in one go."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size > 0


class Watch:
    """Sets `event` whenever something is created or moved in the inbound folder, from the
    first `start_when_there` that finds the folder: on a hub the service starts before the
    instructor's first release makes inbound, and a watch asked for then would never be."""

    def __init__(self, path: Path, event: threading.Event):
        self.path, self.event = path, event
        self.observer = None

    def start_when_there(self) -> bool:
        """Start watching if the folder exists now; whether it is watched."""
        if self.observer is None and self.path.is_dir():
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer

            event = self.event

            class Wake(FileSystemEventHandler):
                def on_any_event(self, _event):
                    event.set()

            self.observer = Observer()
            self.observer.schedule(Wake(), str(self.path), recursive=True)
            self.observer.start()
        return self.observer is not None

    def __enter__(self):
        self.start_when_there()
        return self

    def __exit__(self, *_):
        if self.observer is not None:
            self.observer.stop()
            self.observer.join()
