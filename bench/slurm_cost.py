"""What grading on SLURM jobs costs against a LocalCluster: `make bench ARGS="--slurm"`.

On a private one-host SLURM (tests/support/slurm_host.py: Debian's slurmctld and
slurmd on this machine, so the jobs compete for the same cores as a
LocalCluster's workers), each run measures both ways, alternately (the first
way of a run is the second of the next, so a machine that drifts favours
neither):

- worker start: seconds from asking for N workers until N are connected
  (`coursekit.cluster.slurm.client_for` with N jobs against
  `dask_cluster.client_for`'s LocalCluster of N), nothing graded;
- per notebook: `make grade` of the same class (a fresh copy each time), its
  wall seconds per notebook, and the workers' own grading seconds per notebook
  (`--stats`).

It prints the medians of each way and what SLURM adds: per worker start, and
per notebook with and without the start.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

WAYS = ("local", "slurm")
MEASURES = ("start", "wall", "worker")


def order(run: int) -> tuple[str, str]:
    """The ways of run `run` (1, 2, ...), alternated."""
    return WAYS if run % 2 else WAYS[::-1]


def workers_up(client_for, jobs: int) -> float:
    """Seconds from entering `client_for()` until `jobs` workers are connected."""
    started = time.perf_counter()
    with client_for() as client:
        client.wait_for_workers(jobs, timeout=600)
        return time.perf_counter() - started


def grade_args(way: str, jobs: int, partition: str, stats: Path) -> list[str]:
    common = ["--quiet", "--stats", str(stats)]
    if way == "local":
        return ["-j", str(jobs), *common]
    return ["--slurm", "--slurm-jobs", str(jobs), "--slurm-partition", partition, *common]


def worker_seconds(stats: Path) -> float:
    """The workers' own grading seconds, summed, from make grade's --stats file."""
    workers = json.loads(stats.read_text(encoding="utf-8"))["workers"]
    return sum(w["seconds"] for w in workers.values())


def cost_lines(measured: dict[str, dict[str, list[float]]], notebooks: int, jobs: int) -> str:
    """The medians of each way and what SLURM adds, from per-run measures: way ->
    {"start": seconds to `jobs` workers, "wall": make grade's seconds, "worker": the
    workers' grading seconds}."""
    median = {
        way: {name: statistics.median(values) for name, values in measured[way].items()}
        for way in WAYS
    }
    runs = len(measured["local"]["wall"])
    local, slurm = median["local"], median["slurm"]
    per = notebooks or 1

    def row(name: str, a: float, b: float, unit: str = "s") -> str:
        return f"  {name:<38} {a:8.2f} {b:8.2f} {b - a:+8.2f} {unit}"

    lines = [
        f"SLURM against LocalCluster: {jobs} workers, {notebooks} notebooks, "
        f"median of {runs} runs (alternated)",
        f"  {'':<38} {'Local':>8} {'SLURM':>8} {'added':>8}",
        row(f"start of {jobs} workers", local["start"], slurm["start"]),
        row("per worker start", local["start"] / jobs, slurm["start"] / jobs),
        row("make grade, per notebook (wall)", local["wall"] / per, slurm["wall"] / per),
        row(
            "  without the workers' start",
            (local["wall"] - local["start"]) / per,
            (slurm["wall"] - slurm["start"]) / per,
        ),
        row("a worker's grading, per notebook", local["worker"] / per, slurm["worker"] / per),
    ]
    return "\n".join(lines)


def compare(template, work: Path, runs: int, jobs: int, pristine) -> str:
    """Both ways on `template`'s class (a fresh copy by `pristine(template, path)` for
    each grading), `runs` times each: cost_lines' text, or why SLURM could not be
    measured here."""
    import os

    import pytest

    from coursekit.cluster import dask_cluster, slurm
    from tests.support.slurm_host import slurm_host

    notebooks = sum(1 for _ in (template.root / "submitted").glob("*/*/*.ipynb"))
    measured = {way: {name: [] for name in MEASURES} for way in WAYS}
    try:
        with slurm_host(work / "slurm-host") as host:
            # A job holds one CPU: more jobs than the partition's CPUs would wait in the
            # queue, and workers_up with them. Both ways get the same count.
            if jobs > host.cpus:
                print(f"{jobs} workers asked, the partition runs {host.cpus}: {host.cpus} each way")
                jobs = host.cpus
            env = {"SLURM_CONF": str(host.conf)}
            old_conf, os.environ["SLURM_CONF"] = os.environ.get("SLURM_CONF"), str(host.conf)
            try:
                for run in range(1, runs + 1):
                    for way in order(run):
                        print(f"run {run}/{runs}: {way} workers, then make grade …", flush=True)
                        course = pristine(template, work / f"slurm-cost-{way}")
                        options = slurm.SlurmOptions(partition=host.partition, jobs=jobs)

                        def start(way=way, course=course, options=options):
                            if way == "slurm":
                                return slurm.client_for(course.root, options)
                            return dask_cluster.client_for(course.root, None, jobs, False)

                        measured[way]["start"].append(workers_up(start, jobs))
                        stats = work / f"slurm-cost-{way}.json"
                        args = grade_args(way, jobs, host.partition, stats)
                        began = time.perf_counter()
                        course.grade(*args, env=env)
                        measured[way]["wall"].append(time.perf_counter() - began)
                        measured[way]["worker"].append(worker_seconds(stats))
            finally:
                if old_conf is None:
                    os.environ.pop("SLURM_CONF", None)
                else:
                    os.environ["SLURM_CONF"] = old_conf
    except pytest.skip.Exception as skipped:  # SLURM cannot be installed or run here
        return f"SLURM against LocalCluster: not measured ({skipped.msg})"
    return cost_lines(measured, notebooks, jobs)
