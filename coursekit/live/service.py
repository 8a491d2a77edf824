"""The live grading service: each inbound submission collected, graded, answered, recorded.

A continuous pipeline (`LiveService.step`, again whenever inbound changes or a
task is done) over one `GradingSession` (coursekit.cluster.session, what
`make grade` grades with: the course plugin, the sandbox, the driver as the
only writer of the gradebook, which writes a submission it already holds with
the same files nothing twice, the incidents report): every attempt whose
grading is done is finished at once (its result written by the session's
driver, the learner's page made and released, the attempt's record written
last, `attempts`), and then, for every learner and assignment with nothing on
the cluster, the earliest submission not handled yet (`inbound.pending`) is
taken: put to the policy (`policy.LiveGrading`: one held back gets its note
and its record), collected by the safe exchange, and its task submitted. So a
learner's attempts are handled in the order the exchange received them, one
at a time, and different learners' side by side, each answered as soon as its
own task is done. At most a few tasks per worker thread are on the cluster
(`IN_FLIGHT_PER_THREAD`); the rest wait in inbound, uncollected. A service
killed at any moment leaves a submission without a record, handled again at
the next start.
"""

from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import CancelledError
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import nbformat
from distributed.diagnostics.plugin import WorkerPlugin
from nbgrader.api import Gradebook

from coursekit.checks.declared import checks_of
from coursekit.cluster.distribute import LOST_SCHEDULER, lost_connection
from coursekit.cluster.session import GradingSession
from coursekit.cluster.submission import Submission
from coursekit.core import cells
from coursekit.core.course import Course, CourseKit
from coursekit.core.messages import _
from coursekit.learner import diagnosis
from coursekit.live import attempts, hints
from coursekit.live.attempts import ERROR, GRADED, Attempt, now
from coursekit.live.feedback import FeedbackError, Publisher
from coursekit.live.inbound import WRITING_POLL, Entry, Inbound, Watch, collect
from coursekit.live.passback import Passback
from coursekit.live.policy import Decision, LiveGrading

RESCAN_SECONDS = 1.0  # the safety net's period, beside inotify's notices
# Tasks on the cluster per worker thread: one running and one queued behind it keeps every
# worker busy; the rest of a burst waits in inbound, so memory does not grow with the class.
IN_FLIGHT_PER_THREAD = 2


@dataclasses.dataclass
class Flight:
    """An attempt whose task is on the cluster."""

    entry: Entry
    submission: Submission  # without its files: the task has them
    stages: dict[str, str]


class TerminalInterruptIgnored(WorkerPlugin):
    """A terminal's Ctrl-C reaches the whole foreground group, the cluster's worker
    processes too: they ignore it, so the service alone decides how to stop (its
    sandboxed kernels run in sessions of their own, and the cell runner sets its own)."""

    name = "coursekit-live-no-terminal-interrupt"

    def setup(self, worker):
        import signal

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)


class LiveService:
    def __init__(
        self,
        session: GradingSession,
        *,
        rescan: float = RESCAN_SECONDS,
        local_cluster: bool = True,
        in_flight_per_thread: int = IN_FLIGHT_PER_THREAD,
        echo=print,
    ):
        """`session`: connected, and closed by the caller once `run` returns."""
        self.session, self.root = session, session.root
        course = Course(self.root)
        self.config = course.config
        self.rescan, self.echo = rescan, echo
        self.local_cluster = local_cluster  # its workers are this terminal's processes
        self.policy = LiveGrading(config=self.config)
        self.assignments = course.assignments()
        self.inbound = Inbound(self.root, self.config, self.assignments)
        self.publisher = Publisher(self.root, self.config)
        self.zone = ZoneInfo(CourseKit.of(self.root).timezone)
        self.stopping, self.wake = threading.Event(), threading.Event()
        self.in_flight_per_thread = in_flight_per_thread
        self.flights: dict[object, Flight] = {}  # Dask future -> its attempt
        self.noticed: dict[str, str] = {}  # inbound name -> when first seen, while it waits
        self._hints: dict[str, dict[str, tuple[str, ...]]] = {}  # assignment -> declared hints
        # c.LiveGrading.lti_passback: each counted attempt's score to the LMS (live/passback.py)
        self.passback = (
            Passback(self.root, self.config, self.gradebook, echo)
            if self.policy.lti_passback
            else None
        )

    def gradebook(self) -> Gradebook:
        return Gradebook(self.session.place.db_url, self.session.place.course_id)

    def stop(self) -> None:
        """Stop after the attempt being finished now (from a signal handler too)."""
        self.stopping.set()
        self.wake.set()

    def use_course(self) -> None:
        """Every assignment's course, read again whenever nothing is on the cluster (a check
        changed since is graded with), and on the workers when it changed."""
        if self.session.use_course(self.assignments):
            self.session.start()  # the course on the workers (once per content hash)

    def capacity(self) -> int:
        """How many tasks may be on the cluster at once."""
        return self.session.threads() * self.in_flight_per_thread

    def run(self) -> None:
        if self.local_cluster:  # a running cluster's workers keep their own Ctrl-C
            self.session.register_plugin(TerminalInterruptIgnored())
        self.use_course()  # the course on the workers before the first submit, not during it
        self.echo(
            _("Live grading of {root}: watching {inbound}").format(
                root=self.root, inbound=self.inbound.path
            )
        )
        # what is still on the cluster when it stops is abandoned: no record, graded next start
        try:
            with Watch(self.inbound.path, self.wake) as watch:
                while not self.stopping.is_set():
                    self.wake.clear()  # before the pass: a notice during it wakes the next
                    watch.start_when_there()  # inbound is made by the first release
                    if not self.step():
                        self.session.check_workers(len(self.flights))
                        self.wake.wait(WRITING_POLL if self.inbound.writing else self.rescan)
        finally:
            if self.passback is not None:
                self.passback.close()

    def step(self) -> int:
        """One pass: every attempt whose task is done finished, then the next attempts
        taken; how many attempts it finished or took."""
        done = self.finish_done()
        return done if self.stopping.is_set() else done + self.take_next()

    def finish_done(self) -> int:
        finished = 0
        for future, flight in list(self.flights.items()):
            if self.stopping.is_set():
                break
            if not future.done():
                continue
            del self.flights[future]
            try:
                result = self.session.finish(future, flight.submission)
            except (CancelledError, *LOST_SCHEDULER) as error:
                raise lost_connection(error, len(self.flights) + 1) from None
            flight.stages["graded"] = now()
            self.session.write_incidents()
            self.finish(flight.entry, result, flight.stages)
            finished += 1
        return finished

    def take_next(self) -> int:
        """For each learner and assignment with nothing on the cluster, its earliest
        unhandled submission, while the cluster has room."""
        first: dict[tuple[str, str], Entry] = {}
        noticed = {}
        for entry in self.inbound.pending():
            noticed[entry.name] = self.noticed.get(entry.name) or now()
            first.setdefault((entry.assignment, entry.learner), entry)
        self.noticed = noticed  # the entries still waiting, and no others
        busy = {(f.entry.assignment, f.entry.learner) for f in self.flights.values()}
        taken = 0
        room = None
        for key, entry in first.items():
            if self.stopping.is_set():
                break
            if key in busy:
                continue  # its earlier attempt is not finished yet
            room = self.capacity() if room is None else room
            if len(self.flights) >= room:
                break  # the rest wait in inbound
            self.take(entry, {"noticed": noticed[entry.name]})
            taken += 1
        return taken

    def take(self, entry: Entry, stages: dict[str, str]) -> None:
        """Put one submission to the policy, collect it and hand its task to the cluster."""
        earlier = attempts.of_learner(self.root, entry.assignment, entry.learner)
        decision = self.policy.decide(entry.assignment, earlier, entry.received)
        if decision.outcome != GRADED:
            self.hold_back(entry, decision, stages)
            return
        if not self.collect(entry, stages):
            return
        stages["collected"] = now()
        key = (entry.assignment, entry.learner)
        _left, invalid = self.session.prepare([key])
        if invalid:  # scored 0 before any grading, as make grade scores it
            self.session.write_incidents()
            self.finish(entry, None, stages)
            return
        if not self.flights:
            self.use_course()
        submission = self.session.to_grade(*key)
        if submission is None:  # its files already graded: the gradebook holds it
            self.finish(entry, None, stages)
            return
        try:
            future = self.session.submit(submission)
        except LOST_SCHEDULER as error:
            raise lost_connection(error, len(self.flights) + 1) from None
        stages["scheduled"] = now()
        future.add_done_callback(lambda _future: self.wake.set())  # from Dask's own thread
        self.flights[future] = Flight(entry, dataclasses.replace(submission, files={}), stages)

    # -- each attempt ---------------------------------------------------------

    def shown(self, when: datetime) -> str:
        return when.astimezone(self.zone).strftime("%Y-%m-%d %H:%M:%S %Z")

    def new_attempt(self, entry: Entry, outcome: str, stages: dict[str, str]) -> Attempt:
        return Attempt(
            entry.learner,
            entry.assignment,
            entry.name,
            entry.received.isoformat(),
            datetime.now(UTC).isoformat(),
            outcome,
            stages=stages,
        )

    def hold_back(self, entry: Entry, decision: Decision, stages: dict[str, str]) -> None:
        interval, most = self.policy.limits(entry.assignment)
        when = {
            "submitted": self.shown(entry.received),
            "next_at": self.shown(decision.next_at) if decision.next_at else "",
            "interval": interval,
            "most": most,
        }
        attempt = self.new_attempt(entry, decision.outcome, stages)
        attempt.next_at = decision.next_at.isoformat() if decision.next_at else None
        try:
            self.publisher.note(entry, self.inbound.path, decision.outcome, when)
            stages["released"] = now()
        except Exception as error:  # this learner's note only: the record says why
            attempt.errors.append(f"{type(error).__name__}: {error}")
        attempts.write(self.root, attempt)
        self.echo(
            _("{learner} {assignment}: kept, not graded (the attempt policy)").format(
                learner=entry.learner, assignment=entry.assignment
            )
        )

    def collect(self, entry: Entry, stages: dict[str, str]) -> bool:
        try:
            collected = collect(self.config, entry)
        except Exception as error:  # nbgrader's ExchangeError, an unreadable folder
            collected, why = False, f"{type(error).__name__}: {error}"
        else:
            why = _("the exchange did not collect it (reports/exchange_incidents.json)")
        if not collected:
            attempt = self.new_attempt(entry, ERROR, stages)
            attempt.errors.append(why)
            attempts.write(self.root, attempt)
            self.echo(f"{entry.learner} {entry.assignment}: {why}")
        return collected

    def finish(self, entry: Entry, result, stages: dict[str, str]) -> None:
        """Feedback made and released, then the record: the attempt is handled. `result`
        None: the gradebook holds it already (written before a kill, or scored 0)."""
        stages.setdefault("graded", now())
        attempt = self.new_attempt(entry, GRADED, stages)
        if result is not None and not result.ok:
            attempt.outcome, attempt.errors = ERROR, list(result.errors)
        else:
            given = {}
            try:
                attempt.cells, attempt.failed = self.outcome(entry.assignment, entry.learner)
                given = self.hints_now(attempt)
            except Exception as error:  # this attempt's record only: it says why
                attempt.outcome = ERROR
                attempt.errors.append(f"{type(error).__name__}: {error}")
            try:
                self.publisher.generate(entry.assignment, entry.learner, given)
                stages["feedback_made"] = now()
                self.publisher.release(entry.assignment, entry.learner)
                stages["released"] = now()
            except FeedbackError as error:
                attempt.errors.append(str(error))
        attempts.write(self.root, attempt)
        if attempt.outcome == ERROR:
            line = _("{learner} {assignment}: grading failed: {why}").format(
                learner=entry.learner, assignment=entry.assignment, why="; ".join(attempt.errors)
            )
        else:
            line = _("{learner} {assignment}: graded, {points:g}/{most:g} points").format(
                learner=entry.learner,
                assignment=entry.assignment,
                points=sum(c["points"] or 0 for c in attempt.cells.values()),
                most=sum(c["max"] or 0 for c in attempt.cells.values()),
            )
        self.echo(line)
        if self.passback is not None:
            self.passback.after(attempt)  # the counted one's score to the LMS, in its own thread

    def hints_now(self, attempt: Attempt) -> dict[str, list[str]]:
        """The hints this graded attempt's page shows (function -> those given so far), by
        the learner's attempts before it and its own verdicts; their levels go into its
        record (coursekit.live.hints)."""
        declared = self.declared_hints(attempt.assignment)
        if not declared:
            return {}
        earlier = attempts.of_learner(self.root, attempt.assignment, attempt.learner)
        before = [a for a in earlier if a.entry != attempt.entry]
        attempt.hints = hints.levels([*before, attempt], self.policy.hint_after, declared)
        return hints.given(declared, attempt.hints)

    def declared_hints(self, assignment: str) -> dict[str, tuple[str, ...]]:
        """The hints the course declares beside the assignment's checks (none: empty)."""
        if assignment not in self._hints:
            try:
                self._hints[assignment] = checks_of(assignment, CourseKit.of(self.root)).hints
            except ImportError:  # an assignment without declared checks has no hints
                self._hints[assignment] = {}
        return self._hints[assignment]

    def outcome(self, assignment: str, learner: str) -> tuple[dict, dict]:
        """Per auto-graded test cell its points and max from the gradebook (a written
        answer is the TA's: nbgrader gives one left as released an auto 0, which is no
        failed function); the verdict record of each failed check from the autograded
        notebooks."""
        cells_of = {}
        with self.gradebook() as gb:
            for notebook in gb.find_submission(assignment, learner).notebooks:
                for grade in notebook.grades:
                    if grade.auto_score is not None:
                        cells_of[grade.name] = {"points": grade.score, "max": grade.max_score}
        failed = {}
        folder = self.root / "autograded" / learner / assignment
        for path in sorted(folder.glob("*.ipynb")):
            try:
                nb = nbformat.read(path, as_version=4)
            except Exception:  # an unreadable output notebook has no verdicts to give
                continue
            failed.update(cells.verdict_records(nb))
            for answer in diagnosis.written_answers(nb):  # a TA's, not the live grading's
                cells_of.pop(cells.grade_id(answer), None)
        return cells_of, failed
