"""One grading session: what `make grade` and `make live` both grade with.

A `GradingSession` owns, for as long as it is open, everything that grading a
submission on Dask needs besides the submission: the Dask client (`connect`),
the grading bundle and the worker plugins that carry it (each registered once:
a plugin registered again would be torn down and set up anew on every
worker), the driver that alone writes the gradebook and autograded/, and the
incidents record (`reports/grading_incidents.json`, written by
`write_incidents` alone). Its steps:

- `prepare(tasks)`: the learners in the gradebook, and the submissions with an
  unreadable notebook scored 0 before any grading (their incidents recorded);
- `start(assignments)`: the grading bundle of those assignments on the workers
  (made again and sent when the course changed since);
- `to_grade` / `not_yet_graded`: a submission read from submitted/, unless the
  gradebook holds it with the same files and course;
- `submit(submission)` -> a Dask future, `finish(future, submission)` -> its
  result once the driver wrote it (make live takes them one at a time);
- `results(submissions)`: a whole class submitted and each result yielded as
  it is written, with the progress bar and the no-worker watch (make grade);
- `close()`: the driver closed, the client closed when the session opened it,
  the incidents found since the last write written.

`make grade` (coursekit/cluster/cli.py) is one pass over it, the live service
(coursekit/live/service.py) a loop over `submit` and `finish`.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections import defaultdict
from concurrent.futures import CancelledError
from pathlib import Path

from coursekit.cluster import bundle, gradebook, task
from coursekit.cluster.dask_cluster import ClusterError, held_task_warning
from coursekit.cluster.distribute import (
    DEAD_WORKER,
    LOST_SCHEDULER,
    NO_WORKER_GRACE,
    NoWorkerWatch,
    lost_connection,
    no_worker,
)
from coursekit.cluster.driver import Driver
from coursekit.cluster.submission import Result, Submission, left_out_incident, read_submission
from coursekit.core import incidents
from coursekit.core.incidents import Incident
from coursekit.core.messages import _, ngettext


def incidents_report(root: Path) -> Path:
    """The file the TA report reads every grading guard's reasons from."""
    return Path(root) / "reports" / "grading_incidents.json"


def write_incidents(root: Path, found: dict[str, dict[str, list[Incident]]], graded) -> None:
    """`found` (assignment -> learner -> incidents) into the course's incidents report, the
    (assignment, learner) pairs of `graded` replaced, everyone else's kept."""
    incidents.write_report(incidents_report(root), found, graded)


def find_submissions(root: Path, assignments, students) -> list[tuple[str, str]]:
    """(assignment, learner) of each folder submitted/<learner>/<assignment>/, within the
    assignments and learners asked for (empty: all)."""
    submitted = Path(root) / "submitted"
    found = []
    for folder in sorted(submitted.glob("*/*")) if submitted.is_dir() else []:
        student, assignment = folder.parent.name, folder.name
        if not folder.is_dir() or (assignments and assignment not in assignments):
            continue
        if students and student not in students:
            continue
        found.append((assignment, student))
    return found


class GradingSession:
    """The client, course, driver, worker plugins and incidents record of one grading run
    (a make grade) or one long service (make live)."""

    def __init__(
        self,
        root: Path,
        *,
        nbgrader_args=(),
        regrade: bool = False,
        unsafe_no_sandbox: bool = False,
        quiet: bool = True,
        no_worker_grace: float = NO_WORKER_GRACE,
        client=None,
    ):
        """`nbgrader_args`: autograde's options for every submission (each worker names its
        own scratch gradebook). `client`: a Dask client the caller keeps, else `connect`."""
        self.root = Path(root).resolve()
        self.place = gradebook.grading_place(self.root)
        self.nbgrader_args = [
            a for a in nbgrader_args if not a.startswith("--CourseDirectory.db_url=")
        ]
        self.regrade, self.quiet = regrade, quiet
        self.unsafe_no_sandbox = unsafe_no_sandbox
        self.no_worker_grace = no_worker_grace
        self.client = client
        self._owned = contextlib.ExitStack()  # the client, when the session opened it
        self._plugins: set[str] = set()  # registered on the cluster by this session
        self.bundle: bundle.GradingBundle | None = None
        self.driver: Driver | None = None
        self.bundle_digest = ""  # of the bundle and the options: what the ledger holds
        self.per_worker: dict[str, list[float]] = defaultdict(list)
        self.skipped = 0
        self.bar = None
        self.alone_since: float | None = None
        # the incidents found (for the summary) and those not yet written, with the
        # (assignment, learner) pairs whose entries they replace
        self.found: dict[str, dict[str, list[Incident]]] = {}
        self._unwritten: dict[str, dict[str, list[Incident]]] = {}
        self._replaced: list[tuple[str, str]] = []

    # -- the session's life ---------------------------------------------------

    def __enter__(self) -> GradingSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def connect(self, clients) -> None:
        """Grade with the client that the context manager `clients` opens (the session
        closes it): raises ClusterError when the cluster cannot be reached."""
        self.client = self._owned.enter_context(clients)

    def close(self) -> None:
        """The driver closed, then the client the session opened, then the incidents found
        since the last write written (even when the cluster went away)."""
        try:
            self._close_driver()
            self._owned.close()
        finally:
            self.write_incidents()

    def _close_driver(self) -> None:
        if self.driver is not None:
            self.driver.close()

    # -- incidents ------------------------------------------------------------

    def record(self, assignment: str, student: str, found: list[Incident], *, replace: bool):
        """A submission's incidents for the report; `replace`: its entry is replaced even
        with none."""
        if found:
            self.found.setdefault(assignment, {})[student] = found
            self._unwritten.setdefault(assignment, {})[student] = found
        if replace:
            self._replaced.append((assignment, student))

    def write_incidents(self) -> None:
        """What `record` was given since the last write, into reports/grading_incidents.json."""
        if not (self._unwritten or self._replaced):
            return
        write_incidents(self.root, self._unwritten, self._replaced)
        self._unwritten, self._replaced = {}, []

    # -- before grading -------------------------------------------------------

    def prepare(self, tasks):
        """The learners created first, in one writer, so workers never race to insert one;
        then the submissions with a notebook that cannot be read scored 0 (as stock
        autograde scores a missing one) and their incidents recorded: the tasks left to
        grade, and the unreadable ones with their incidents."""
        gradebook.prepare(self.place, tasks)
        left, invalid, report = gradebook.score_unreadable(self.place, tasks)
        for assignment, student in invalid:
            self.record(assignment, student, report[assignment][student], replace=True)
        return left, invalid

    def use_bundle(self, made: bundle.GradingBundle) -> bool:
        """Grade with the bundle `made` from now on: False when it is the one already in
        use. A new bundle gets a driver of its own (the old one is closed)."""
        if self.bundle is not None and self.bundle.digest == made.digest:
            return False
        self._close_driver()
        self.bundle = made
        self.driver = Driver(self.place)
        # the options change what a submission gets, as the course does
        self.bundle_digest = bundle.digest_of(
            made.digest, {"args": repr(self.nbgrader_args).encode()}, {}
        )
        return True

    def use_course(self, assignments) -> bool:
        """The grading bundle of `assignments`, read now (see `use_bundle`)."""
        return self.use_bundle(bundle.make(self.place, assignments))

    def start(self) -> None:
        """The grading bundle on every worker: its plugin registered once per session and
        content hash (a worker that joins later gets it from the scheduler); a scheduler
        that would hand a worker more than one task at a time said so."""
        plugin = task.CoursePlugin(self.bundle, self.unsafe_no_sandbox)
        self.register_plugin(plugin, task.plugin_name(self.bundle))
        warning = held_task_warning(self.client)
        if warning:  # not progress: shown even with --quiet
            print(warning, file=sys.stderr, flush=True)

    def register_plugin(self, plugin, name: str | None = None) -> bool:
        """A worker plugin on the cluster, unless this session registered it already
        (distributed would tear it down and set it up again): whether it was registered."""
        name = name or plugin.name
        if name in self._plugins:
            return False
        self.client.register_plugin(plugin, name=name)
        self._plugins.add(name)
        return True

    def to_grade(self, assignment: str, student: str) -> Submission | None:
        """One submission read from submitted/: None when the gradebook already holds it
        with the same files and course (unless regrading)."""
        key = (assignment, student)
        return self._unless_graded(key, self.driver.graded(), self.driver.extensions())

    def not_yet_graded(self, tasks) -> list[Submission]:
        """The submissions of `tasks` to grade (see `to_grade`); the others counted in
        `skipped`."""
        done, extensions = self.driver.graded(), self.driver.extensions()
        found = (self._unless_graded(key, done, extensions) for key in tasks)
        pending = [submission for submission in found if submission is not None]
        self.skipped += len(tasks) - len(pending)
        return pending

    def _unless_graded(self, key, done, extensions) -> Submission | None:
        submission = read_submission(self.root, *key, extensions.get(key))
        same = done.get(key) == (submission.digest, self.bundle_digest)
        return submission if self.regrade or not same else None

    # -- grading --------------------------------------------------------------

    def submit(self, submission: Submission):
        """One submission's task on the cluster (after `start`): its future."""
        key = f"grade-{submission.assignment}-{submission.student}-{submission.digest[:16]}"
        return self.client.submit(
            task.grade_on_worker,
            submission,
            task.plugin_name(self.bundle),
            self.nbgrader_args,
            key=key,
            pure=False,
        )

    def finish(self, future, submission: Submission, *, replace: bool = True) -> Result:
        """The done task's result, written by the driver, its incidents recorded (`replace`:
        its report entry replaced even when it failed); the task then forgotten."""
        result = self._finish(future, submission)
        self.record(
            result.assignment, result.student, result.incidents, replace=replace or result.ok
        )
        # Written: let Dask forget the task, so no worker keeps the Result in its
        # memory (for every later collection to scan) until the class is done.
        future.release()
        return result

    def _finish(self, future, submission: Submission) -> Result:
        from distributed import KilledWorker

        assignment, student = submission.assignment, submission.student
        error = future.exception()
        if isinstance(error, KilledWorker):
            tries = self._allowed_failures()
            lost = self.driver.record_lost(
                assignment, student, submission.digest, self.bundle_digest, tries
            )
            self.per_worker[DEAD_WORKER].append(0.0)
            return Result(assignment, student, True, attempts=tries, incidents=[lost], written=True)
        if error is not None:
            if isinstance(error, (CancelledError, *LOST_SCHEDULER)):
                raise error
            message = f"{type(error).__name__}: {error}"
            return Result(assignment, student, False, errors=[message])
        result: Result = future.result()
        self.per_worker[result.worker].append(result.seconds)
        if result.bundle_digest != self.bundle.digest:  # graded with another version of the course
            return Result(
                assignment,
                student,
                False,
                result.seconds,
                result.attempts,
                [_("The grading bundle this was graded with is not this run's")],
            )
        if not result.ok:
            return result
        result.written = self.driver.apply(result, self.bundle_digest)
        # Written: the files and rows are in the gradebook and autograded/ now, and the
        # result goes on to make grade's lines without its copy of them.
        result.autograded, result.notebooks, result.verdicts = {}, {}, {}
        if submission.left_out:
            result.incidents.append(left_out_incident(submission))
        return result

    @staticmethod
    def _allowed_failures() -> int:
        import dask

        return int(dask.config.get("distributed.scheduler.allowed-failures", 3))

    def results(self, submissions: list[Submission]):
        """Every submission graded, each result yielded once the driver wrote it (a failed
        one keeps the incidents report's entry: nothing of it was written). Dask moves the
        task of a worker that died to another; a submission whose workers die three times
        (`allowed-failures`) is recorded for that learner with its reason. The progress bar
        (tqdm: rate, ETA) goes to stderr."""
        from distributed import as_completed
        from tqdm import tqdm

        if not submissions:
            return
        try:
            self.start()
            futures = {self.submit(submission): submission for submission in submissions}
        except LOST_SCHEDULER as error:
            lost = _("Lost the connection to the scheduler ({error_type}: {error}).")
            raise ClusterError(lost.format(error_type=type(error).__name__, error=error)) from None
        self.bar = tqdm(
            total=len(futures),
            desc=_("grading"),
            unit=_("submission"),
            file=sys.stderr,
            disable=self.quiet,
            dynamic_ncols=True,
        )
        left = set(futures)
        watch = NoWorkerWatch(self.client, self.no_worker_grace)
        watch.start(futures)
        try:
            for future in as_completed(futures):
                graded = self.finish(future, futures.pop(future), replace=False)
                left.discard(future)  # after: a future that raised was not graded
                yield graded
                self.bar.update(1)
        except (CancelledError, *LOST_SCHEDULER) as error:
            if watch.fired:
                raise no_worker(self.no_worker_grace, len(left)) from None
            raise lost_connection(error, len(left)) from None
        finally:
            watch.stop()
            self.bar.close()
            self.bar = None
            self._close_driver()

    def echo(self, line: str) -> None:
        """A progress line on stdout, below the bar."""
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
            sys.stdout.flush()
        else:
            print(line, flush=True)

    # -- the cluster ----------------------------------------------------------

    def threads(self) -> int:
        """The cluster's worker threads now (at least 1)."""
        return max(1, sum(self.client.nthreads().values()))

    def check_workers(self, out: int) -> None:
        """With `out` tasks on a cluster that has had no worker for `no_worker_grace`:
        ClusterError with the reason, as make grade's watch says it, rather than a wait
        for ever."""
        if out and not self.client.nthreads():
            self.alone_since = self.alone_since or time.monotonic()
            if time.monotonic() - self.alone_since >= self.no_worker_grace:
                raise no_worker(self.no_worker_grace, out)
        else:
            self.alone_since = None

    # -- what it did ----------------------------------------------------------

    def stats(self) -> dict:
        """What each worker graded, and the driver's own cost per result written."""
        written = max(self.driver.written, 1)
        return {
            "workers": {
                a: {"results": len(s), "seconds": sum(s)} for a, s in self.per_worker.items()
            },
            "skipped": self.skipped,
            "driver": {
                "results": self.driver.written,
                "cpu_ms_per_result": self.driver.cpu / written * 1000,
                "wall_ms_per_result": self.driver.wall / written * 1000,
            },
        }

    def worker_summary(self) -> list[str]:
        """What each worker did, what was skipped, and the driver's cost."""
        lines = []
        for address, seconds in sorted(self.per_worker.items()):
            mean = sum(seconds) / len(seconds) if seconds else 0.0
            worker = _(DEAD_WORKER) if address == DEAD_WORKER else address
            graded = ngettext(
                "worker {worker}: {count} submission, mean {mean:.1f} s",
                "worker {worker}: {count} submissions, mean {mean:.1f} s",
                len(seconds),
            )
            lines.append("  " + graded.format(worker=worker, count=len(seconds), mean=mean))
        if self.skipped:
            skipped = ngettext(
                "skipped {skipped} submission already graded with the same files and settings",
                "skipped {skipped} submissions already graded with the same files and settings",
                self.skipped,
            )
            lines.append("  " + skipped.format(skipped=self.skipped))
        written = self.driver.written if self.driver is not None else 0
        if written:
            per = self.driver.cpu / written * 1000
            wall = self.driver.wall / written * 1000
            cost = _(
                "the driver's cost of writing: CPU {cpu:.1f} ms, elapsed {wall:.1f} ms per "
                "submission (about {per_hour:,.0f} an hour with one driver)"
            )
            per_hour = 3600_000 / max(wall, 0.001)
            lines.append("  " + cost.format(cpu=per, wall=wall, per_hour=per_hour))
        return lines
