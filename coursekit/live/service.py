"""The live grading service: each inbound submission collected, graded, answered, recorded.

One pass (`LiveService.step`) takes, for every learner and assignment, the
earliest submission not handled yet (`inbound.pending`), so a learner's
attempts are handled in the order the exchange received them and different
learners' in parallel. Each is first put to the policy (`policy.LiveGrading`):
one held back gets its note and its record. The others are collected by the
safe exchange, graded together on the Dask cluster by `make grade`'s own
`ClassRun` (the course plugin, the sandbox, the driver as the only writer of
the gradebook, which writes a submission it already holds with the same files
nothing twice), then each learner's page is made and released and the
attempt's record written, last (`attempts`). A service killed at any moment
leaves a submission without a record, handled again at the next start.
"""

from __future__ import annotations

import threading
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import nbformat
from distributed.diagnostics.plugin import WorkerPlugin
from nbgrader.api import Gradebook

from coursekit.cluster import bundle, gradebook, task
from coursekit.cluster.distribute import ClassRun
from coursekit.core import cells, incidents
from coursekit.core.course import Course, CourseKit
from coursekit.core.messages import _
from coursekit.live import attempts
from coursekit.live.attempts import ERROR, GRADED, Attempt
from coursekit.live.feedback import FeedbackError, Publisher
from coursekit.live.inbound import Entry, Inbound, Watch, collect
from coursekit.live.policy import Decision, LiveGrading

RESCAN_SECONDS = 5.0  # the safety net's period, beside inotify's notices


class TerminalInterruptIgnored(WorkerPlugin):
    """A terminal's Ctrl-C reaches the whole foreground group, the cluster's worker
    processes too: they ignore it, so the service alone decides how to stop (its
    sandboxed kernels run in sessions of their own, and the cell runner sets its own)."""

    name = "coursekit-live-no-terminal-interrupt"

    def setup(self, worker):
        import signal

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)


class PluginOnce:
    """The client as ClassRun uses it, but a course plugin already on the workers is not
    registered again: distributed would tear it down and set it up anew (the bundle
    unpacked, the warm-kernel parent started) for every pass. A worker that joins later
    gets it from the scheduler all the same."""

    def __init__(self, client):
        self._client, self._names = client, set()

    def register_plugin(self, plugin, name=None, **kwargs):
        if name not in self._names:
            self._client.register_plugin(plugin, name=name, **kwargs)
            self._names.add(name)

    def __getattr__(self, attribute):
        return getattr(self._client, attribute)


def _score_unreadable(root, db_url, course_id, tasks):
    from coursekit.cluster.__main__ import score_unreadable  # make grade's own step

    return score_unreadable(root, db_url, course_id, tasks)


class LiveService:
    def __init__(
        self,
        root: Path,
        client,
        *,
        extra_args: list[str] | None = None,
        unsafe_no_sandbox: bool = False,
        rescan: float = RESCAN_SECONDS,
        local_cluster: bool = True,
        echo=print,
    ):
        self.root, self.client = Path(root).resolve(), PluginOnce(client)
        course = Course(self.root)
        self.config = course.config
        settings = gradebook.course_settings(self.root)
        self.db_url = gradebook.with_busy_timeout(settings.db_url)
        self.course_id = settings.course_id
        self.extra_args = [f"--CourseDirectory.db_url={self.db_url}", *(extra_args or [])]
        self.unsafe_no_sandbox, self.rescan, self.echo = unsafe_no_sandbox, rescan, echo
        self.local_cluster = local_cluster  # its workers are this terminal's processes
        self.policy = LiveGrading(config=self.config)
        self.assignments = course.assignments()
        self.inbound = Inbound(self.root, self.config, self.assignments)
        self.publisher = Publisher(self.root, self.config)
        self.zone = ZoneInfo(CourseKit.of(self.root).timezone)
        self.stopping, self.wake = threading.Event(), threading.Event()

    def stop(self) -> None:
        """Stop after the attempt being finished now (from a signal handler too)."""
        self.stopping.set()
        self.wake.set()

    def course_bundle(self):
        """Every assignment's, read again each pass (a check changed since is graded with)."""
        return bundle.make(self.root, self.db_url, self.course_id, self.assignments)

    def run(self) -> None:
        if self.local_cluster:  # a running cluster's workers keep their own Ctrl-C
            self.client.register_plugin(TerminalInterruptIgnored())
        # The course on the workers before the first submit, not during it.
        course = self.course_bundle()
        self.client.register_plugin(
            task.CoursePlugin(course, self.unsafe_no_sandbox), name=task.plugin_name(course)
        )
        self.echo(
            _("Live grading of {root}: watching {inbound}").format(
                root=self.root, inbound=self.inbound.path
            )
        )
        watch = Watch(self.inbound.path, self.wake) if self.inbound.path.is_dir() else None
        with watch or nullcontext():
            while not self.stopping.is_set():
                if not self.step():
                    self.wake.wait(self.rescan)
                    self.wake.clear()

    def step(self) -> int:
        """One pass: the earliest unhandled submission of each learner; how many there were."""
        first: dict[tuple[str, str], Entry] = {}
        for entry in self.inbound.pending():
            first.setdefault((entry.assignment, entry.learner), entry)
        to_grade = []
        for entry in first.values():
            if self.stopping.is_set():
                break
            earlier = attempts.of_learner(self.root, entry.assignment, entry.learner)
            decision = self.policy.decide(entry.assignment, earlier, entry.received)
            if decision.outcome != GRADED:
                self.hold_back(entry, decision)
            elif self.collect(entry):
                to_grade.append(entry)
        if to_grade:
            self.grade(to_grade)
        return len(first)

    # -- each attempt ---------------------------------------------------------

    def shown(self, when: datetime) -> str:
        return when.astimezone(self.zone).strftime("%Y-%m-%d %H:%M:%S %Z")

    def new_attempt(self, entry: Entry, outcome: str) -> Attempt:
        return Attempt(
            entry.learner,
            entry.assignment,
            entry.name,
            entry.received.isoformat(),
            datetime.now(UTC).isoformat(),
            outcome,
        )

    def hold_back(self, entry: Entry, decision: Decision) -> None:
        interval, most = self.policy.limits(entry.assignment)
        when = {
            "submitted": self.shown(entry.received),
            "next_at": self.shown(decision.next_at) if decision.next_at else "",
            "interval": interval,
            "most": most,
        }
        attempt = self.new_attempt(entry, decision.outcome)
        attempt.next_at = decision.next_at.isoformat() if decision.next_at else None
        try:
            self.publisher.note(entry, self.inbound.path, decision.outcome, when)
        except Exception as error:  # this learner's note only: the record says why
            attempt.errors.append(f"{type(error).__name__}: {error}")
        attempts.write(self.root, attempt)
        self.echo(
            _("{learner} {assignment}: kept, not graded (the attempt policy)").format(
                learner=entry.learner, assignment=entry.assignment
            )
        )

    def collect(self, entry: Entry) -> bool:
        try:
            collected = collect(self.config, entry)
        except Exception as error:  # nbgrader's ExchangeError, an unreadable folder
            collected, why = False, f"{type(error).__name__}: {error}"
        else:
            why = _("the exchange did not collect it (reports/exchange_incidents.json)")
        if not collected:
            attempt = self.new_attempt(entry, ERROR)
            attempt.errors.append(why)
            attempts.write(self.root, attempt)
            self.echo(f"{entry.learner} {entry.assignment}: {why}")
        return collected

    def grade(self, entries: list[Entry]) -> None:
        by_task = {(e.assignment, e.learner): e for e in entries}
        tasks = list(by_task)
        gradebook.prepare(self.db_url, self.course_id, tasks)
        tasks, invalid, report = _score_unreadable(self.root, self.db_url, self.course_id, tasks)
        for key in invalid:
            self.finish(by_task[key], None)
        if not tasks:
            return
        run = ClassRun(
            self.client,
            self.root,
            self.db_url,
            self.course_id,
            tasks,
            self.extra_args,
            unsafe_no_sandbox=self.unsafe_no_sandbox,
            quiet=True,
            course_bundle=self.course_bundle(),
        )
        pending = {(s.assignment, s.student) for s in run.pending}
        for key in tasks:
            if key not in pending:  # its files already graded: the gradebook holds it
                self.finish(by_task[key], None)
        results = run.results()
        try:
            for result in results:
                key = (result.assignment, result.student)
                if result.incidents:
                    report.setdefault(result.assignment, {})[result.student] = result.incidents
                incidents.write_report(
                    self.root / "reports" / "grading_incidents.json", report, [key]
                )
                self.finish(by_task[key], result)
                if self.stopping.is_set():
                    break  # the others are abandoned: no record, graded at the next start
        finally:
            results.close()

    def finish(self, entry: Entry, result) -> None:
        """Feedback made and released, then the record: the attempt is handled."""
        attempt = self.new_attempt(entry, GRADED)
        if result is not None and not result.ok:
            attempt.outcome, attempt.errors = ERROR, list(result.errors)
        else:
            try:
                self.publisher.graded(entry.assignment, entry.learner)
            except FeedbackError as error:
                attempt.errors.append(str(error))
            try:
                attempt.cells, attempt.failed = self.outcome(entry.assignment, entry.learner)
            except Exception as error:  # this attempt's record only: it says why
                attempt.outcome = ERROR
                attempt.errors.append(f"{type(error).__name__}: {error}")
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

    def outcome(self, assignment: str, learner: str) -> tuple[dict, dict]:
        """Per auto-graded cell its points and max from the gradebook; the verdict record
        of each failed check from the autograded notebooks."""
        cells_of = {}
        with Gradebook(self.db_url, self.course_id) as gb:
            for notebook in gb.find_submission(assignment, learner).notebooks:
                for grade in notebook.grades:
                    if grade.auto_score is not None:
                        cells_of[grade.name] = {"points": grade.score, "max": grade.max_score}
        failed = {}
        folder = self.root / "autograded" / learner / assignment
        for path in sorted(folder.glob("*.ipynb")):
            try:
                failed.update(cells.verdict_records(nbformat.read(path, as_version=4)))
            except Exception:  # an unreadable output notebook has no verdicts to give
                continue
        return cells_of, failed
