"""How grading on Dask stops when the cluster fails it, and what it says then.

The scheduler lost (`LOST_SCHEDULER`, `lost_connection`), or a cluster with
no worker for too long (`NoWorkerWatch`, `no_worker`): make grade and make
live both stop with the reason rather than wait for ever
(coursekit.cluster.session, which grades).
"""

from __future__ import annotations

import threading
import time

from coursekit.cluster.dask_cluster import ClusterError
from coursekit.core.messages import N_, ngettext

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
