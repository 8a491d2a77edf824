"""Grade every collected submission in parallel, into the stock gradebook (`make grade`).

    python -m coursekit.cluster                      # every assignment in submitted/
    python -m coursekit.cluster ch3_multihead -j 4   # one assignment, 4 workers
    python -m coursekit.cluster --help

Each submission is one Dask task, graded by stock nbgrader autograde (with
the course's preprocessors from nbgrader_config.py) on a worker of a
LocalCluster on this machine (-j processes), of a running cluster
(--scheduler tls://HOST:8786, or COURSE_DASK_SCHEDULER), or of SLURM jobs
(--slurm, coursekit.cluster.slurm; the jobs cancelled however it ends); only this process
writes the gradebook and autograded/, and a submission already graded with
the same files and course is not graded again (--regrade to force). A
learner graded by `make live` first gets the attempt that counts
(`c.LiveGrading.counted`, coursekit/live/counted.py) in submitted/, unless
--as-collected. A
notebook that is not valid JSON is graded as stock nbgrader grades a missing
notebook (0 on every cell) and the reason is recorded. Reasons for cells that
scored 0 because of a grading guard are printed and written to
reports/grading_incidents.json. The exit status is non-zero only when grading
itself broke for some submission (3: the cluster could not be reached).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from traitlets import TraitError

from coursekit.autograde.execute import UNSAFE_WARNING
from coursekit.cluster import dask_cluster, distribute
from coursekit.cluster.session import GradingSession, find_submissions
from coursekit.cluster.submission import Result
from coursekit.cluster.summary import grading_line, progress_line, summary
from coursekit.core.course import add_root_argument, load_config
from coursekit.core.messages import _
from coursekit.live.counted import put_counted_in_place
from coursekit.live.policy import check_settings
from coursekit.nbgrader_internals import quiet
from coursekit.sandbox import policy


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="make grade", description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2]
    )
    parser.add_argument("assignments", nargs="*", help="default: every assignment in submitted/")
    parser.add_argument("--student", action="append", help="only this learner (repeatable)")
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=dask_cluster.default_jobs(),
        help="workers (default: cores + 2)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a running Dask scheduler (tls://HOST:8786; default: COURSE_DASK_SCHEDULER, "
        "else a LocalCluster of -j workers on 127.0.0.1)",
    )
    add_slurm_arguments(parser)
    parser.add_argument(
        "--dashboard",
        action="store_true",
        help="the LocalCluster's Dask dashboard on 127.0.0.1:8787",
    )
    parser.add_argument(
        "--no-worker-timeout",
        type=float,
        default=distribute.NO_WORKER_GRACE,
        metavar="SECONDS",
        help="stop, saying why, when the cluster has had no worker for this long "
        f"(default {distribute.NO_WORKER_GRACE:.0f})",
    )
    parser.add_argument(
        "--regrade", action="store_true", help="grade again what is graded with the same files"
    )
    parser.add_argument(
        "--as-collected",
        action="store_true",
        help="grade submitted/ as it is: no live learner's counted attempt put in place first",
    )
    add_root_argument(parser)
    parser.add_argument("--cell-timeout", type=int, help="seconds per cell (Execute.timeout)")
    parser.add_argument("--notebook-timeout", type=int, help="seconds per notebook")
    parser.add_argument("--memory-mb", type=int, help="address-space cap per kernel (MiB)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--stats",
        type=Path,
        metavar="FILE",
        help="write what each worker did and the driver's own cost per result to FILE (JSON)",
    )
    parser.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="run learner code WITHOUT the bubblewrap sandbox (only for code you trust)",
    )
    args = parser.parse_args(argv)
    if args.slurm and (args.scheduler or args.dashboard):
        parser.error("--slurm starts its own scheduler: not with --scheduler or --dashboard")
    return args


def add_slurm_arguments(parser) -> None:
    group = parser.add_argument_group(
        "SLURM",
        "the workers as SLURM jobs, the scheduler in this process (README, 'Past one machine')",
    )
    group.add_argument("--slurm", action="store_true", help="grade on SLURM jobs (dask-jobqueue)")
    group.add_argument("--slurm-partition", metavar="P", help="the jobs' partition (sbatch -p)")
    group.add_argument("--slurm-account", metavar="A", help="the jobs' account (sbatch -A)")
    group.add_argument("--slurm-walltime", metavar="HH:MM:SS", help="each job's time limit")
    group.add_argument(
        "--slurm-jobs", type=int, metavar="N", help="jobs, one worker each (default: as -j)"
    )
    group.add_argument("--slurm-memory", metavar="SIZE", help="each job's memory (default: 2GB)")
    group.add_argument("--slurm-cores", type=int, metavar="N", help="CPUs SLURM gives each job")
    group.add_argument(
        "--slurm-config",
        type=Path,
        metavar="FILE",
        help="a dask-jobqueue config file (YAML, jobqueue.slurm.*) for the rest",
    )


def slurm_options(args, jobs: int):
    from coursekit.cluster.slurm import SlurmOptions

    return SlurmOptions(
        partition=args.slurm_partition,
        account=args.slurm_account,
        walltime=args.slurm_walltime,
        jobs=jobs,
        memory=args.slurm_memory,
        cores=args.slurm_cores,
        config=args.slurm_config,
    )


def client_for(args, root: Path, jobs: int):
    """The Client make grade grades with: of SLURM jobs, a running scheduler or a
    LocalCluster."""
    if args.slurm:
        from coursekit.cluster import slurm

        return slurm.client_for(root, slurm_options(args, jobs))
    return dask_cluster.client_for(root, args.scheduler, jobs, args.dashboard)


def nbgrader_args(args) -> list[str]:
    """autograde's options for every submission (each worker names its own gradebook)."""
    extra = []
    if args.cell_timeout:
        extra.append(f"--Execute.timeout={args.cell_timeout}")
    if args.notebook_timeout:
        extra.append(f"--SandboxedExecute.notebook_timeout={args.notebook_timeout}")
    if args.memory_mb:
        extra.append(f"--SandboxedExecute.memory_limit_mb={args.memory_mb}")
    if args.unsafe_no_sandbox:
        extra.append("--SandboxedExecute.unsafe_no_sandbox=True")
    return extra


def main(argv=None) -> int:
    args = parse_args(argv)
    root = args.root.resolve()
    if args.unsafe_no_sandbox:
        print(_("Warning: {warning}").format(warning=UNSAFE_WARNING), file=sys.stderr)
    else:
        try:
            policy.check_available()
        except policy.SandboxUnavailableError as error:
            print(_("Grading did not start: {error}").format(error=error), file=sys.stderr)
            return 2
    config = load_config(root)  # the course's, read once: checked, then the counted attempts'
    try:
        check_settings(config)
    except TraitError as error:
        print(_("Grading did not start: {error}").format(error=error), file=sys.stderr)
        return 2
    session = GradingSession(
        root,
        nbgrader_args=nbgrader_args(args),
        regrade=args.regrade,
        unsafe_no_sandbox=args.unsafe_no_sandbox,
        quiet=args.quiet,
        no_worker_grace=args.no_worker_timeout,
    )
    if not args.as_collected:
        counted_line = put_counted_in_place(root, config, args.assignments, args.student or ())
        if counted_line:
            print(counted_line)
    tasks = find_submissions(root, set(args.assignments), set(args.student or ()))
    if not tasks:
        print(_("No submission to grade (submitted/<learner>/<assignment>/)."))
        return 0
    tasks, invalid = session.prepare(tasks)

    started = time.perf_counter()
    wanted = args.slurm_jobs if args.slurm and args.slurm_jobs else args.jobs
    jobs = max(1, min(wanted, len(tasks) or 1))
    total = len(tasks) + len(invalid)
    if not args.quiet:
        print(grading_line(total, jobs, root, on_slurm=args.slurm))
        for assignment, student in invalid:
            print(f"  {assignment} · {student}: {invalid[(assignment, student)].text}")
    failed: list[Result] = []
    quiet.ignore_add_submission_warning()
    try:
        session.connect(client_for(args, root, jobs))
        session.use_course({assignment for assignment, _student in tasks})
        submissions = session.not_yet_graded(tasks)
        total -= session.skipped  # graded before with the same files and course
        for done, result in enumerate(session.results(submissions), start=len(invalid) + 1):
            if not result.ok:
                failed.append(result)
            if not args.quiet:
                session.echo(progress_line(done, total, result))
    except dask_cluster.ClusterError as error:
        print(_("Grading did not finish: {error}").format(error=error), file=sys.stderr)
        return 3
    finally:  # what was written is reported, even when the cluster went away
        session.close()
    elapsed = time.perf_counter() - started
    report = session.found
    print(summary(session.place, tasks, invalid, failed, report, elapsed))
    print("\n".join(session.worker_summary()))
    if args.stats:
        args.stats.write_text(json.dumps(session.stats(), indent=2) + "\n", encoding="utf-8")
    return 1 if failed else 0
