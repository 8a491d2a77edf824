"""A class graded on Dask: one task per submission, results written by the driver alone.

`ClassRun.results()` sends the course bundle to every worker once (a worker
plugin, by content hash), submits one task per submission that is not
already in the gradebook with the same files and course, and yields each
result once the driver has written it. Dask moves the task of a worker that
died to another; a submission whose workers die three times (Dask's
`allowed-failures`) is recorded for that learner with its reason. The
progress bar (tqdm: rate, ETA) goes to stderr; `worker_summary()` says what
each worker did.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import defaultdict
from concurrent.futures import CancelledError

from coursekit.cluster import bundle, task
from coursekit.cluster.dask_cluster import ClusterError, held_task_warning
from coursekit.cluster.driver import Driver
from coursekit.core.messages import N_, _, ngettext

# The worker a submission whose workers kept dying is counted for in worker_summary().
DEAD_WORKER = N_("(dead worker)")


def _lost_scheduler() -> tuple[type[BaseException], ...]:
    from distributed.comm.core import CommClosedError

    return (CommClosedError, ConnectionError, TimeoutError)


# What the client raises when the scheduler is gone.
LOST_SCHEDULER = _lost_scheduler()

# How long a cluster may have no worker at all before make grade stops waiting for one.
NO_WORKER_GRACE = 120.0


def lost_connection(error: BaseException, left: int) -> ClusterError:
    """What a caller says when the scheduler went away with `left` submissions not graded."""
    lost = ngettext(
        "Lost the connection to the scheduler ({error_type}). {left} submission was "
        "not graded; what was graded is in the gradebook: run again to grade only "
        "what is left.",
        "Lost the connection to the scheduler ({error_type}). {left} submissions were "
        "not graded; what was graded is in the gradebook: run again to grade only "
        "what is left.",
        left,
    )
    return ClusterError(lost.format(error_type=type(error).__name__, left=left))


def no_worker(seconds: float, left: int) -> ClusterError:
    """What a caller says when the cluster had no worker for `seconds`."""
    stopped = ngettext(
        "The cluster had no worker for {seconds:.0f} s, so grading stopped. "
        "{left} submission was not graded; what was graded is in the gradebook: "
        "start workers and run again to grade only what is left.",
        "The cluster had no worker for {seconds:.0f} s, so grading stopped. "
        "{left} submissions were not graded; what was graded is in the gradebook: "
        "start workers and run again to grade only what is left.",
        left,
    )
    return ClusterError(stopped.format(seconds=seconds, left=left))


class NoWorkerWatch:
    """While a class is graded: a cluster with no worker for `grace` seconds grades nothing
    (a LocalCluster whose nanny did not bring a dead worker back, a scheduler whose workers
    were never started), so the wait ends with a reason instead of hanging.

    It polls the scheduler from a thread of its own and, once the grace is over, cancels
    the futures still pending: `as_completed` then returns and the caller asks `fired`.
    """

    def __init__(self, client, grace: float = NO_WORKER_GRACE, poll: float = 2.0):
        self.client, self.grace, self.poll = client, grace, poll
        self.fired = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, futures) -> None:
        self._thread = threading.Thread(
            target=self._watch, args=(list(futures),), name="no-worker-watch", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _watch(self, futures) -> None:
        alone_since = None
        while not self._stop.wait(self.poll):
            try:
                workers = len(self.client.nthreads())
            except Exception:  # the scheduler gone: as_completed says so itself
                return
            if workers:
                alone_since = None
                continue
            alone_since = alone_since or time.monotonic()
            if time.monotonic() - alone_since >= self.grace:
                self.fired = True
                self.client.cancel([f for f in futures if not f.done()])
                return


class ClassRun:
    def __init__(
        self,
        client,
        root,
        db_url,
        course_id,
        tasks,
        extra_args,
        *,
        regrade=False,
        unsafe_no_sandbox=False,
        quiet=False,
        no_worker_grace=NO_WORKER_GRACE,
        course_bundle=None,
    ):
        self.client, self.root = client, root
        self.tasks = list(tasks)
        # the worker names its own scratch gradebook
        self.extra_args = [a for a in extra_args if not a.startswith("--CourseDirectory.db_url=")]
        self.regrade, self.quiet = regrade, quiet
        self.no_worker_grace = no_worker_grace
        self.unsafe_no_sandbox = unsafe_no_sandbox
        self.driver = Driver(root, db_url, course_id)
        # A long-lived caller (make live) hands in one bundle of every assignment, so a
        # submission's course digest does not depend on what else it was graded with.
        self.bundle = course_bundle or bundle.make(
            root, db_url, course_id, {a for a, _student in self.tasks}
        )
        # the options change what a submission gets, as the course does
        self.course = bundle.digest_of(
            self.bundle.digest, {"args": repr(self.extra_args).encode()}, {}
        )
        self.per_worker: dict[str, list[float]] = defaultdict(list)
        self.bar = None
        self.pending = self._not_yet_graded()
        self.skipped = len(self.tasks) - len(self.pending)

    def _not_yet_graded(self) -> list[task.Submission]:
        done, extensions = self.driver.graded(), self.driver.extensions()
        found = (self._unless_graded(key, done, extensions) for key in self.tasks)
        return [submission for submission in found if submission is not None]

    def to_grade(self, assignment: str, student: str) -> task.Submission | None:
        """One submission, read as the run's own are: None when the gradebook already
        holds it with the same files and course (for make live, which takes them one by one)."""
        key = (assignment, student)
        return self._unless_graded(key, self.driver.graded(), self.driver.extensions())

    def _unless_graded(self, key, done, extensions) -> task.Submission | None:
        submission = task.read_submission(self.root, *key, extensions.get(key))
        same = done.get(key) == (submission.digest, self.course)
        return submission if self.regrade or not same else None

    def echo(self, line: str) -> None:
        """A progress line on stdout, below the bar."""
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
            sys.stdout.flush()
        else:
            print(line, flush=True)

    def results(self):
        from distributed import as_completed
        from tqdm import tqdm

        submissions = self.pending
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
                graded = self.finish(future, futures.pop(future))
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
            self.driver.close()

    def start(self) -> None:
        """The course bundle on every worker (once per content hash)."""
        plugin = task.CoursePlugin(self.bundle, self.unsafe_no_sandbox)
        self.client.register_plugin(plugin, name=task.plugin_name(self.bundle))
        warning = held_task_warning(self.client)
        if warning:  # not progress: shown even with --quiet
            print(warning, file=sys.stderr, flush=True)

    def submit(self, submission: task.Submission):
        """One submission's task on the cluster (after `start`): its future."""
        key = f"grade-{submission.assignment}-{submission.student}-{submission.digest[:16]}"
        return self.client.submit(
            task.grade_on_worker,
            submission,
            task.plugin_name(self.bundle),
            self.extra_args,
            key=key,
            pure=False,
        )

    def finish(self, future, submission: task.Submission) -> task.Result:
        """The done task's result, written by the driver; the task then forgotten."""
        result = self._finish(future, submission)
        # Written: let Dask forget the task, so no worker keeps the Result in its
        # memory (for every later collection to scan) until the class is done.
        future.release()
        return result

    def _finish(self, future, submission: task.Submission) -> task.Result:
        from distributed import KilledWorker

        assignment, student = submission.assignment, submission.student
        error = future.exception()
        if isinstance(error, KilledWorker):
            tries = self._allowed_failures()
            lost = self.driver.record_lost(
                assignment, student, submission.digest, self.course, tries
            )
            self.per_worker[DEAD_WORKER].append(0.0)
            return task.Result(
                assignment, student, True, attempts=tries, incidents=[lost], written=True
            )
        if error is not None:
            if isinstance(error, (CancelledError, *LOST_SCHEDULER)):
                raise error
            message = f"{type(error).__name__}: {error}"
            return task.Result(assignment, student, False, errors=[message])
        result: task.Result = future.result()
        self.per_worker[result.worker].append(result.seconds)
        if result.course != self.bundle.digest:  # graded with another version of the course
            return task.Result(
                assignment,
                student,
                False,
                result.seconds,
                result.attempts,
                [_("The course bundle this was graded with is not this run's")],
            )
        if not result.ok:
            return result
        result.written = self.driver.apply(result, self.course)
        # Written: the files and rows are in the gradebook and autograded/ now, and the
        # result goes on to make grade's lines without its copy of them.
        result.autograded, result.notebooks, result.verdicts = {}, {}, {}
        if submission.left_out:
            result.incidents.append(task.left_out_incident(submission))
        return result

    @staticmethod
    def _allowed_failures() -> int:
        import dask

        return int(dask.config.get("distributed.scheduler.allowed-failures", 3))

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
        if self.driver.written:
            per = self.driver.cpu / self.driver.written * 1000
            wall = self.driver.wall / self.driver.written * 1000
            cost = _(
                "the driver's cost of writing: CPU {cpu:.1f} ms, elapsed {wall:.1f} ms per "
                "submission (about {per_hour:,.0f} an hour with one driver)"
            )
            per_hour = 3600_000 / max(wall, 0.001)
            lines.append("  " + cost.format(cpu=per, wall=wall, per_hour=per_hour))
        return lines
