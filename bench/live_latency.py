"""`make bench ARGS="--live"`: how long a learner waits for the live service's feedback.

A course copy of its own (build/bench/live/, `c.LiveGrading.min_interval = 0`)
and real local accounts (prefix `tpb-`, removed at the end; tests/support/live_class.py,
as the live tests make them) submitting with nbgrader's own exchange submit
while `coursekit live -j N` runs:

- alone: one learner submits `--alone` times, each once the last was answered;
- a burst: `--burst` learners each submit within one minute (spread evenly),
  then each resubmits within the next minute.

Latency is from the end of the submit command to the record's `released` stage
(the page in the exchange for fetch_feedback); the first stage, `noticed`, may
come a few ms before the submit's end (inotify wakes the service once the
secret is written, before the submit command has returned). It prints the latency's p50, p95
and max alone and in the burst (targets: alone p50 ≤ 2 s, burst p95 ≤ 45 s),
the burst's throughput (submissions graded per minute, from the first submit's
end to the last page released), the median time of each stage (the record's
`stages`), and the peak RSS of the service, and of it with its Dask workers and
their kernels (psutil, sampled every half second).
"""

from __future__ import annotations

import math
import shutil
import statistics
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from coursekit.live import attempts

TARGET_ALONE_P50, TARGET_BURST_P95 = 2.0, 45.0
WINDOW = 60.0  # seconds a round of the burst is spread over
WAIT = 900.0  # a bound on each wait for records


def percentile(values: list[float], share: float) -> float:
    """Nearest rank: the smallest value with at least `share` of them at or below it."""
    ordered = sorted(values)
    rank = math.ceil(len(ordered) * share)
    return ordered[min(max(rank, 1), len(ordered)) - 1]


class PeakMemory:
    """The peak RSS of a process and of it with all its descendants, sampled in a thread."""

    def __init__(self, pid: int, period: float = 0.5):
        import psutil

        self.process, self.period = psutil.Process(pid), period
        self.own = self.tree = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True, name="peak-rss")

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *_):
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        import psutil

        while not self._stop.wait(self.period):
            try:
                own = self.process.memory_info().rss
                children = self.process.children(recursive=True)
            except psutil.Error:
                return
            tree = own
            for child in children:
                try:
                    tree += child.memory_info().rss
                except psutil.Error:  # gone between the listing and the reading
                    continue
            self.own, self.tree = max(self.own, own), max(self.tree, tree)


class Submits:
    """Each submit's end, by its inbound entry, and the records the service wrote for them."""

    def __init__(self, c, assignment: str):
        self.c, self.assignment = c, assignment
        self.ended: dict[str, datetime] = {}  # entry -> when the submit command ended

    def submit(self, role: str, nb) -> str:
        before = set(self.c.entries(role))
        self.c.submit(role, nb)
        ended = datetime.now(UTC)
        (entry,) = set(self.c.entries(role)) - before
        self.ended[entry] = ended
        return entry

    def record(self, role: str, entry: str) -> attempts.Attempt | None:
        path = attempts.path_of(self.c.root, self.assignment, self.c.accounts[role], entry)
        return attempts.read(path) if path.exists() else None

    def wait(self, pairs, proc) -> list[attempts.Attempt]:
        deadline = time.monotonic() + WAIT
        while True:
            found = [self.record(role, entry) for role, entry in pairs]
            if all(found):
                return found
            if proc.poll() is not None:
                raise RuntimeError(f"the service exited:\n{self.c.output()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no record of every submit in {WAIT:.0f} s")
            time.sleep(0.2)

    def latency(self, record: attempts.Attempt) -> float:
        released = datetime.fromisoformat(record.stages["released"])
        return (released - self.ended[record.entry]).total_seconds()


def stage_medians(submits: Submits, records: list[attempts.Attempt]) -> dict[str, float]:
    """From one stage to the next (the first from the submit's end), median seconds."""
    steps: dict[str, list[float]] = {}
    for record in records:
        last, last_name = submits.ended[record.entry], "submit"
        for name in attempts.STAGES:
            if name not in record.stages:
                continue
            at = datetime.fromisoformat(record.stages[name])
            steps.setdefault(f"{last_name} → {name}", []).append((at - last).total_seconds())
            last, last_name = at, name
    return {step: statistics.median(values) for step, values in steps.items()}


def latency_line(name: str, values: list[float], target: str) -> str:
    p50, p95 = percentile(values, 0.50), percentile(values, 0.95)
    return (
        f"  {name:<22} {p50:7.2f} {p95:7.2f} {max(values):7.2f} s  "
        f"({len(values)} submits; {target})"
    )


def measure(work: Path, burst: int, alone: int, jobs: int) -> str:
    from tests.support.live_class import live_class, released_course, stop
    from tests.support.untrusted_class import ASSIGNMENT

    roles = ["alone", *(f"b{i:02d}" for i in range(burst))]
    folder = work / "live"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    with live_class(folder, roles, prefix="tpb") as c:
        released_course(c, min_interval=0)  # every submit graded
        submits = Submits(c, ASSIGNMENT)
        print(f"live: starting coursekit live -j {jobs} on {folder} …", flush=True)
        proc = c.start(jobs)
        deadline = time.monotonic() + WAIT
        while "실시간 채점" not in c.output():  # its first line: the course is on the workers
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the service did not start:\n{c.output()[-3000:]}")
            time.sleep(0.2)
        with PeakMemory(proc.pid) as memory:
            print(f"live: one learner alone, {alone} submits …", flush=True)
            alone_records = []
            for i in range(alone):
                entry = submits.submit("alone", c.reference if i % 2 else c.wrong)
                alone_records += submits.wait([("alone", entry)], proc)
            learners = roles[1:]
            pairs, rounds = [], []
            for round_ in range(2):
                print(f"live: a burst of {burst} learners, round {round_ + 1}/2 …", flush=True)
                started = time.monotonic()
                for i, role in enumerate(learners):
                    time.sleep(max(0.0, started + i * WINDOW / burst - time.monotonic()))
                    nb = c.wrong if (i + round_) % 2 else c.reference
                    pairs.append((role, submits.submit(role, nb)))
                rounds.append(time.monotonic() - started)  # within WINDOW, or submits are slow
            burst_records = submits.wait(pairs, proc)
        stop_status = stop(proc)
    alone_latency = [submits.latency(r) for r in alone_records]
    burst_latency = [submits.latency(r) for r in burst_records]
    first_end = min(submits.ended[entry] for _role, entry in pairs)
    last_release = max(datetime.fromisoformat(r.stages["released"]) for r in burst_records)
    span = (last_release - first_end).total_seconds()
    graded = sum(1 for r in burst_records if r.outcome == attempts.GRADED and not r.errors)
    lines = [
        f"live grading: coursekit live -j {jobs}; 1 learner alone × {alone}, then "
        f"{burst} learners × 2 rounds spread over {WINDOW:.0f} s each (real accounts; the "
        f"rounds' submits took {', '.join(f'{r:.0f}' for r in rounds)} s)",
        f"  {'submit → feedback':<22} {'p50':>7} {'p95':>7} {'max':>7}",
        latency_line("alone", alone_latency, f"target p50 ≤ {TARGET_ALONE_P50:g} s"),
        latency_line(f"burst of {burst}", burst_latency, f"target p95 ≤ {TARGET_BURST_P95:g} s"),
        f"  throughput in the burst {graded / span * 60:6.1f} submissions graded per minute "
        f"({graded} of {len(burst_records)} graded without error in {span:.1f} s)",
        f"  {'median per stage':<28} {'alone':>7} {'burst':>7}",
    ]
    alone_stages = stage_medians(submits, alone_records)
    burst_stages = stage_medians(submits, burst_records)
    for step in dict.fromkeys([*alone_stages, *burst_stages]):
        a, b = alone_stages.get(step), burst_stages.get(step)
        cells = " ".join(f"{v:7.2f}" if v is not None else f"{'-':>7}" for v in (a, b))
        lines.append(f"    {step:<26} {cells} s")
    lines.append(
        f"  peak RSS                 service {memory.own / 2**20:.0f} MiB; with its workers "
        f"and kernels {memory.tree / 2**20:.0f} MiB"
    )
    lines.append(f"  the service's exit on SIGTERM: {stop_status}")
    return "\n".join(lines)
