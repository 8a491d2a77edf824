"""`make grade --slurm`: the grading workers as SLURM jobs (dask-jobqueue's SLURMCluster).

The scheduler runs in make grade's own process, as LocalCluster's does; each
SLURM job is one Dask worker (its nanny restarts it if a submission kills it)
with one thread, started like LocalCluster's workers: the same Dask settings
(dask_cluster.WORKER_SETTINGS, exported by the job script) and the grader
imported first (dask_cluster.WORKER_PRELOAD, a Dask --preload). Each job's
worker keeps its scratch courses in a folder of its own that `mktemp -d` makes
(0700) on the node and the job's EXIT trap removes. The course reaches the
workers as with --scheduler: the content-hashed plugin (cluster/bundle.py).

The traffic is TLS, with the certificates of `make dask-certs`, whenever the
scheduler's host is not on loopback (or those certificates are there); the job
logs go to build/slurm-logs/, never slurm-N.out in the current folder. The
jobs are cancelled (scancel) when make grade ends, whether it finished, failed,
was interrupted (Ctrl-C) or was sent SIGTERM or SIGHUP.

dask-jobqueue is imported only here, and only for --slurm. A dask-jobqueue
config file (--slurm-config) sets the rest (jobqueue.slurm.*: job-extra-directives,
job-script-prologue such as `module load`, scheduler-options' host or interface, ...).
"""

from __future__ import annotations

import contextlib
import functools
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from coursekit.cluster.dask_cluster import (
    CA_FILE,
    ONE_TASK_PER_THREAD,
    WORKER_PRELOAD,
    WORKER_SETTINGS,
    ClusterError,
    dask_environment,
    is_loopback,
    security,
    tls_folder,
)
from coursekit.core.messages import _

JOB_NAME = "coursekit-grading"
DEFAULT_MEMORY = "2GB"
# The job's private scratch, made on the node when the job starts (the job script's shell
# variable: dask-jobqueue writes the worker's --local-directory into the script as is).
SCRATCH = "$COURSEKIT_SCRATCH"
SCRATCH_LINES = (
    'COURSEKIT_SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/coursekit-grading-XXXXXXXX")" || exit 1',
    'chmod 700 "$COURSEKIT_SCRATCH"',
    # the kernels' connection files and every other temporary file of the job in it too,
    # so a worker killed half way (scancel, walltime) leaves nothing after the trap
    'export TMPDIR="$COURSEKIT_SCRATCH"',
    # scancel sends SIGTERM: the shell exits through its EXIT trap once the worker has ended
    "trap 'rm -rf \"$COURSEKIT_SCRATCH\"' EXIT",
    "trap 'exit 143' TERM INT HUP",
)


@dataclass(frozen=True)
class SlurmOptions:
    """make grade's --slurm-* options; None leaves a setting to the config file, then to
    dask-jobqueue's defaults."""

    partition: str | None = None
    account: str | None = None
    walltime: str | None = None  # HH:MM:SS per job
    jobs: int = 1
    memory: str | None = None  # per job, e.g. 2GB
    cores: int | None = None  # CPUs SLURM gives each job (its worker grades one at a time)
    config: Path | None = None  # a dask-jobqueue config file (YAML)


def flat_settings(tree: dict, prefix: str = "") -> dict:
    """A nested config file's settings as dotted keys: dask.config.set then replaces only
    those, not whole sections (dask-jobqueue's other defaults stay)."""
    flat = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flat_settings(value, name + "."))
        else:
            flat[name] = value
    return flat


@contextlib.contextmanager
def config_file(path: Path | None):
    """While it lasts, the settings of a dask-jobqueue config file (none: nothing)."""
    import dask
    import yaml

    if path is None:
        yield
        return
    try:
        tree = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise ClusterError(
            _("Could not read the SLURM config file {path}: {error}").format(path=path, error=error)
        ) from None
    if not isinstance(tree, dict):
        message = _("The SLURM config file {path} must be a YAML mapping")
        raise ClusterError(message.format(path=path))
    with dask.config.set(flat_settings(tree)):
        yield


def job_script_prologue(settings: dict) -> list[str]:
    """The lines a job runs before its worker: the file's own (e.g. `module load`), the
    workers' Dask settings, the private scratch."""
    exports = [f"export {k}={shlex.quote(v)}" for k, v in dask_environment(settings).items()]
    return [*settings_list("job-script-prologue"), *exports, *SCRATCH_LINES]


def settings_list(name: str) -> list[str]:
    import dask

    return list(dask.config.get(f"jobqueue.slurm.{name}", None) or [])


def scheduler_host() -> str | None:
    """The host the scheduler listens on: the config's scheduler-options host, else (no
    interface named either) this machine's name, which compute nodes resolve."""
    import dask

    options = dask.config.get("jobqueue.slurm.scheduler-options", None) or {}
    if options.get("host"):
        return options["host"]
    if options.get("interface") or dask.config.get("jobqueue.slurm.interface", None):
        return None  # an interface's address: taken as not loopback
    return socket.getfqdn()


def on_loopback(host: str | None) -> bool:
    """Whether every address `host` resolves to is a loopback one."""
    if host is None:
        return False
    if is_loopback(host):
        return True
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(found) and all(is_loopback(address) for address in found)


def needs_tls(root: Path, host: str | None) -> bool:
    folder = tls_folder(root)
    return not on_loopback(host) or (folder / CA_FILE).is_file()


def cluster_kwargs(options: SlurmOptions, root: Path, tls=None, host: str | None = None) -> dict:
    """SLURMCluster's arguments: one single-threaded worker per job, started as
    LocalCluster's are, logs under build/, the scheduler in this process on `host`."""
    import dask

    log_directory = dask.config.get("jobqueue.slurm.log-directory", None)
    scheduler_options = {
        **(dask.config.get("jobqueue.slurm.scheduler-options", None) or {}),
        "port": 0,
        "dashboard_address": "127.0.0.1:0",  # /health on loopback, no dashboard page
    }
    if host is not None:
        scheduler_options["host"] = host
    kwargs = {
        "queue": options.partition,
        "account": options.account,
        "walltime": options.walltime,
        "job_cpu": options.cores,
        "job_name": JOB_NAME,
        # one notebook at a time per worker (autograde changes folder), as LocalCluster's
        "cores": 1,
        "processes": 1,
        "nanny": True,
        "memory": options.memory or dask.config.get("jobqueue.slurm.memory", None),
        "python": sys.executable,  # the same environment on every node (README)
        "local_directory": SCRATCH,
        "worker_extra_args": [*settings_list("worker-extra-args"), "--preload", WORKER_PRELOAD],
        "job_script_prologue": job_script_prologue(WORKER_SETTINGS),
        "log_directory": str(log_directory or Path(root) / "build" / "slurm-logs"),
        "scheduler_options": scheduler_options,
    }
    if not kwargs["memory"]:
        kwargs["memory"] = DEFAULT_MEMORY
    if tls is not None:
        kwargs["security"] = tls
        kwargs["protocol"] = "tls://"
    return {key: value for key, value in kwargs.items() if value is not None}


def slurm_cluster(options: SlurmOptions, root: Path):
    """A SLURMCluster with `options.jobs` jobs submitted; sbatch's refusal is a ClusterError
    in its own words (dask-jobqueue only logs it, and the class would wait for workers
    that never come). Call inside config_file() and ONE_TASK_PER_THREAD's settings."""
    SLURMCluster = slurm_cluster_class()
    host = scheduler_host()
    tls = security(root) if needs_tls(root, host) else None
    cluster = SLURMCluster(
        n_workers=0, job_cls=grading_job_class(), **cluster_kwargs(options, root, tls, host)
    )
    try:
        check_submittable(cluster.job_script())
        cluster.scale(jobs=options.jobs)
        wait_submitted(cluster, options.jobs)
    except BaseException:
        cluster.close()
        raise
    return cluster


def slurm_cluster_class():
    """dask_jobqueue.SLURMCluster, imported with this process's Ctrl-C left as it was:
    dask_jobqueue.runner, on import, makes SIGINT a sys.exit() (exit status 0, a class
    interrupted would look graded)."""
    before = signal.getsignal(signal.SIGINT)
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        message = _("--slurm needs dask-jobqueue (pip install 'coursekit[slurm]').")
        raise ClusterError(message) from None
    finally:
        if threading.current_thread() is threading.main_thread() and before is not None:
            signal.signal(signal.SIGINT, before)
    return SLURMCluster


@functools.cache
def grading_job_class():
    """dask-jobqueue's SLURMJob, whose close (scancel) also says it is closed.

    SLURMJob.close cancels the job but leaves its status 'running'. SpecCluster's close
    then fails its assertion that every job stopped (dask/distributed#6183) and leaves the
    cluster 'closing', half closed; at exit, distributed's handler waits 10 s for it.
    Call after slurm_cluster_class()."""
    from dask_jobqueue.slurm import SLURMJob
    from distributed.core import Status

    class GradingJob(SLURMJob):
        async def close(self):
            await super().close()
            self.status = Status.closed

    return GradingJob


def check_submittable(script: str) -> None:
    """`sbatch --test-only` of the job script: SLURM's verdict, no job submitted."""
    with tempfile.NamedTemporaryFile("w", suffix=".sh", prefix="coursekit-job-") as file:
        file.write(script)
        file.flush()
        try:
            done = subprocess.run(
                ["sbatch", "--test-only", file.name], capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ClusterError(not_submitted(f"sbatch: {error}")) from None
    if done.returncode != 0:
        said = " ".join(line.strip() for line in done.stderr.splitlines() if line.strip())
        raise ClusterError(not_submitted(said or str(done.returncode)))


def not_submitted(reason: str) -> str:
    return _("Could not submit the SLURM jobs: {reason}").format(reason=reason)


# A deadline for sbatch to answer for every job, not a measurement (it answers at once).
SUBMIT_DEADLINE = 120


def wait_submitted(cluster, jobs: int) -> None:
    """Until each of the `jobs` jobs has its SLURM job id."""
    end = time.monotonic() + SUBMIT_DEADLINE
    while True:
        submitted = [job for job in cluster.workers.values() if getattr(job, "job_id", None)]
        if len(submitted) >= jobs:
            return
        if time.monotonic() > end:
            raise ClusterError(
                _(
                    "Only {submitted} of {jobs} SLURM jobs were submitted within {seconds} s; "
                    "run sbatch yourself to see why."
                ).format(submitted=len(submitted), jobs=jobs, seconds=SUBMIT_DEADLINE)
            )
        time.sleep(0.1)


def wait_for_a_worker(client, cluster) -> None:
    """Until a job's worker has joined, however long the jobs wait in SLURM's queue (make
    grade's no-worker watch counts from then on); a ClusterError once no job is left
    pending or running without one having joined (a node without the venv, say)."""
    jobs = list(cluster.workers.values())
    ids = [job.job_id for job in jobs if getattr(job, "job_id", None)]
    logs = next((job.log_directory for job in jobs if getattr(job, "log_directory", None)), "")
    while not client.scheduler_info().get("workers"):
        queued = subprocess.run(
            ["squeue", "--noheader", "--format=%T", f"--jobs={','.join(ids)}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        alive = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING"}
        if queued.returncode == 0 and not alive & set(queued.stdout.split()):
            if client.scheduler_info().get("workers"):  # joined as its job was listed
                return
            raise ClusterError(
                _(
                    "The SLURM jobs ended without a worker joining; their logs are in {folder}."
                ).format(folder=logs)
            )
        time.sleep(1)


@contextlib.contextmanager
def ended_by_signals(signals=(signal.SIGTERM, signal.SIGHUP)):
    """While it lasts, SIGTERM and SIGHUP end make grade as Ctrl-C does (a SystemExit
    through every `finally`), so the jobs are cancelled: not a process gone with its
    jobs left running until their walltime."""

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; its own handlers stand
        return
    before = {number: signal.signal(number, stop) for number in signals}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


@contextlib.contextmanager
def client_for(root: Path, options: SlurmOptions):
    """A distributed Client of a SLURMCluster; its jobs cancelled however this ends."""
    import dask
    from distributed import Client

    # The scheduler's scratch (Dask's lock files) in a folder only this user can enter, as
    # LocalCluster's: not a shared /tmp/dask-scratch-space another account made first.
    private = tempfile.mkdtemp(prefix="coursekit-scheduler-")
    settings = {**ONE_TASK_PER_THREAD, "temporary-directory": private}
    try:
        with ended_by_signals(), config_file(options.config), dask.config.set(settings):
            cluster = slurm_cluster(options, root)
            try:
                with Client(cluster) as client:
                    wait_for_a_worker(client, cluster)
                    yield client
            finally:
                close(cluster)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def close(cluster) -> None:
    """Close the cluster and cancel its jobs, whatever state they are in (scancel again
    here: a job whose cancelling failed in the cluster's close stays no longer)."""
    ids = [job.job_id for job in cluster.workers.values() if getattr(job, "job_id", None)]
    try:
        cluster.close()
    finally:
        if ids:  # jobs already gone make scancel complain: nothing to do then
            subprocess.run(["scancel", *ids], capture_output=True, timeout=60)
