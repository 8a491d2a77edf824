"""`make grade --slurm` on a real SLURM: Debian's slurmctld and slurmd on this host alone
(tests/support/slurm_host.py).

The private SLURM itself first: a batch job runs on its one node, and when the
host is torn down no job, job step or daemon of it is left. Then the class of
tests/test_grade_cluster.py (five learners, one late, one with an extension) is
graded by stock `nbgrader autograde` and by `python -m coursekit grade --slurm`
as README's *Past one machine* runs it (its recipe read from README: two jobs,
an account, a walltime, a dask-jobqueue config file; TLS with make dask-certs'
certificates), one job `scancel`led once the first submission is graded: the
gradebooks are equal, a rerun grades nothing, and no job, job step, worker or
job scratch is left. make grade stopped (SIGTERM, Ctrl-C) or refused by sbatch
leaves no job either. Last, the job script unit by unit, without SLURM.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import dask
import pytest

from coursekit.cluster import dask_cluster, gradebook, slurm
from coursekit.core.environment import venv_environment
from tests.support.cluster_class import build_class, ledger, stock_graded_class
from tests.support.slurm_host import processes_of, slurm_host

pytestmark = [
    pytest.mark.xdist_group("slurm"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
    pytest.mark.slurm,
    pytest.mark.root,
]

# A deadline for a job to run, far beyond the second it takes; not a measurement.
JOB_DEADLINE = 60
# And for make grade to grade the class: it takes 45-130 s here.
GRADING_DEADLINE = 900


def wait_for(condition, seconds: float = JOB_DEADLINE):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    pytest.fail(f"not within {seconds} s: {condition.__doc__ or condition}")


def test_a_job_runs_on_the_private_slurm_and_nothing_of_it_is_left(tmp_path):
    with slurm_host(tmp_path / "slurm") as host:
        out = tmp_path / "job.out"
        job = host.run("sbatch", "--parsable", f"--output={out}", "--wrap=id -un; sleep 300")
        job = job.strip()

        def running():
            """the job running"""
            return (job, "wrap", "RUNNING") in host.jobs() and out.is_file()

        wait_for(running)
        assert wait_for(lambda: out.read_text().strip()) == "root"
        assert any("slurmstepd" in p for p in processes_of(host.conf))
    assert processes_of(host.conf) == []  # the job cancelled, its step and the daemons gone


# ---------------------------------------------------------------- a class graded on SLURM

# The daemons tests/support/slurm_host.py starts (slurmctld forks slurmscriptd): what may be left
# while the host is up.
DAEMONS = ("munged ", "slurmctld ", "slurmd ", ": slurmscriptd")
README = Path(__file__).resolve().parent.parent / "README.md"


def readme_recipe() -> tuple[list[str], str]:
    """README's university-cluster recipe: make grade's ARGS, and the config file its
    printf writes (jobqueue.yaml, in the course root)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("**On a university's SLURM cluster**", 1)[1]
    block = section.split("```bash\n", 1)[1].split("\n```", 1)[0].replace("\\\n", " ")
    lines = block.splitlines()
    printf = next(line for line in lines if line.startswith("printf "))
    command, _, target = printf.rpartition(" > ")
    assert target.strip() == "jobqueue.yaml", printf
    config = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=True)
    make_grade = shlex.split(next(line for line in lines if line.startswith("make grade ")))
    return shlex.split(make_grade[2].removeprefix("ARGS=")), config.stdout


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    with slurm_host(tmp_path_factory.mktemp("slurm")) as running:
        yield running


@pytest.fixture(scope="module")
def stock(tmp_path_factory):
    return stock_graded_class(tmp_path_factory.mktemp("stock"))  # the session's, read only


@pytest.fixture(scope="module")
def slurm_run(tmp_path_factory, host):
    """The class, its certificates, config file and job scratch folder, and how make grade
    --slurm is started on it."""
    course = build_class(tmp_path_factory.mktemp("class"))
    certs = tmp_path_factory.mktemp("certs")
    dask_cluster.make_certificates(certs, ["127.0.0.1", "localhost", host.node])
    args, config = readme_recipe()
    assert args[args.index("--slurm-partition") + 1] == host.partition
    (course.root / "jobqueue.yaml").write_text(config, encoding="utf-8")
    scratch = tmp_path_factory.mktemp("job-tmp")
    command = [sys.executable, "-m", "coursekit", "grade", "--root", str(course.root), *args]
    env = {
        **venv_environment(),
        "SLURM_CONF": str(host.conf),
        "COURSE_DASK_TLS_DIR": str(certs),
        "TMPDIR": str(scratch),  # where each job's mktemp -d scratch is made
    }
    return course, command, env, scratch


def grade(slurm_run, *extra: str, **popen) -> subprocess.Popen:
    course, command, env, _ = slurm_run
    return subprocess.Popen(
        [*command, *extra],
        cwd=course.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def finish(run: subprocess.Popen, seconds: float) -> tuple[str, str]:
    """What a make grade said once it ended; killed when it has not within `seconds`,
    so a hung run fails its test and outlives no test."""
    try:
        return run.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        run.kill()
        run.communicate()
        raise


def left_of(host) -> list[str]:
    return [p for p in processes_of(host.conf) if not p.split(" ", 1)[1].startswith(DAEMONS)]


@pytest.fixture(scope="module")
def graded(host, slurm_run):
    course = slurm_run[0]
    run = grade(slurm_run)
    lines, cancelled = [], None
    deadline = threading.Timer(GRADING_DEADLINE, run.kill)  # a hung run fails, not hangs
    deadline.start()
    try:
        for line in run.stdout:
            lines.append(line)
            if line.startswith("[1/5]") and cancelled is None:
                cancelled = host.jobs()[0]  # half way: its worker's task goes to the other job
                host.run("scancel", cancelled[0])
        stderr = run.stderr.read()
        run.wait()
    finally:
        deadline.cancel()
    returncode = run.returncode
    after = {"jobs": wait_for_no_jobs(host), "left": left_of(host)}
    before = ledger(course)
    again = grade(slurm_run)
    again_out, again_err = finish(again, GRADING_DEADLINE)
    after_again = {"jobs": wait_for_no_jobs(host), "left": left_of(host)}
    return {
        "returncode": returncode,
        "stdout": "".join(lines),
        "stderr": stderr,
        "cancelled": cancelled,
        "after": after,
        "ledger": before,
        "again": (again.returncode, again_out, again_err),
        "after_again": after_again,
    }


def wait_for_no_jobs(host) -> list:
    """SLURM's jobs once none is left (a cancelled job is COMPLETING for a moment), or
    those still there at the deadline."""
    end = time.monotonic() + JOB_DEADLINE
    while host.jobs() and time.monotonic() < end:
        time.sleep(0.5)
    return host.jobs()


def test_slurm_grades_the_stock_gradebook_with_a_job_cancelled_half_way(stock, graded, slurm_run):
    course = slurm_run[0]
    assert graded["returncode"] == 0, graded["stdout"][-3000:] + graded["stderr"][-3000:]
    # a job of make grade's, running its worker when it was cancelled
    assert graded["cancelled"] is not None and graded["cancelled"][1:] == (
        slurm.JOB_NAME,
        "RUNNING",
    )
    assert "SLURM 작업 2개의 작업자" in graded["stdout"] and "[5/5]" in graded["stdout"]
    assert gradebook.dump(course.db_url, course.course_id) == gradebook.dump(
        stock.db_url, stock.course_id
    )
    assignment = stock.assignments()[0]
    for student in stock.scores(assignment):
        assert course.autograded_errors(student, assignment) == stock.autograded_errors(
            student, assignment
        )
    # the same progress bar and per-worker summary as a LocalCluster's, over TLS
    assert "5/5" in graded["stderr"] and "드라이버 기록 비용" in graded["stdout"]
    assert "작업자 tls://" in graded["stdout"], graded["stdout"][-2000:]
    assert "worker-saturation" not in graded["stderr"]


def test_no_job_worker_or_scratch_is_left_and_the_logs_are_under_build(graded, slurm_run):
    course, _, _, scratch = slurm_run
    assert graded["after"] == {"jobs": [], "left": []}
    assert graded["after_again"] == {"jobs": [], "left": []}
    assert list(scratch.iterdir()) == []  # every job's EXIT trap removed its scratch
    logs = sorted(p.name for p in (course.root / "build" / "slurm-logs").iterdir())
    assert any(name.endswith(".err") for name in logs), logs
    assert not list(course.root.glob("slurm-*.out"))


def test_a_rerun_on_slurm_grades_nothing_new(graded, slurm_run):
    returncode, stdout, stderr = graded["again"]
    assert returncode == 0, stdout[-3000:] + stderr[-3000:]
    assert "5개는 건너뛰었습니다" in stdout
    assert len(graded["ledger"]) == 5 and ledger(slurm_run[0]) == graded["ledger"]


def default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(
    ("stop", "returncode"),
    # Ctrl-C: Python's KeyboardInterrupt, through every finally, then its own exit by SIGINT
    [(signal.SIGTERM, 128 + signal.SIGTERM), (signal.SIGINT, -signal.SIGINT)],
    ids=["SIGTERM", "Ctrl-C"],
)
def test_make_grade_stopped_cancels_its_jobs(host, graded, slurm_run, stop, returncode):
    # as from a terminal: a process started in the background (this pytest, maybe) has
    # SIGINT ignored, and Python then raises no KeyboardInterrupt
    run = grade(slurm_run, "--regrade", preexec_fn=default_sigint)

    def running():
        """make grade's jobs running"""
        return [job for job in host.jobs() if job[2] == "RUNNING"]

    try:
        assert len(wait_for(running, 300)) >= 1
    finally:
        run.send_signal(stop)
        stdout, stderr = finish(run, 300)
    assert run.returncode == returncode, stdout[-2000:] + stderr[-2000:]
    assert wait_for_no_jobs(host) == [] and left_of(host) == []


def test_jobs_slurm_refuses_are_said_plainly_and_none_is_left(host, graded, slurm_run):
    run = grade(slurm_run, "--regrade", "--slurm-partition", "no-such-partition")
    stdout, stderr = finish(run, 300)
    assert run.returncode == 3, stdout[-2000:] + stderr[-2000:]
    assert "SLURM 작업을 제출하지 못했습니다" in stderr and "no-such-partition" in stderr, stderr
    assert wait_for_no_jobs(host) == [] and left_of(host) == []


def test_jobs_that_end_without_a_worker_are_said_plainly(host, graded, slurm_run, tmp_path):
    """A node where the worker cannot start (here: the job script exits first) stops make
    grade with the logs' folder, not a class waiting for workers."""
    broken = tmp_path / "broken.yaml"
    broken.write_text("jobqueue:\n  slurm:\n    job-script-prologue: ['exit 1']\n")
    run = grade(slurm_run, "--regrade", "--slurm-config", str(broken))
    stdout, stderr = finish(run, 300)
    assert run.returncode == 3, stdout[-2000:] + stderr[-2000:]
    assert "작업자 하나 없이 끝났습니다" in stderr and "slurm-logs" in stderr, stderr[-2000:]
    assert wait_for_no_jobs(host) == [] and left_of(host) == []


def test_a_closed_cluster_is_closed_and_leaves_no_job(host, slurm_run, monkeypatch):
    """slurm.close leaves the cluster closed, not half closed: at the end of each make
    grade --slurm, distributed's exit handler would wait 10 s for a cluster left closing."""
    from distributed.core import Status

    course, _command, env, _scratch = slurm_run
    for name in ("SLURM_CONF", "TMPDIR"):  # sbatch's, and the job's scratch
        monkeypatch.setenv(name, env[name])
    options = slurm.SlurmOptions(partition=host.partition, jobs=1)
    with slurm.config_file(None), dask.config.set(dask_cluster.ONE_TASK_PER_THREAD):
        cluster = slurm.slurm_cluster(options, course.root)
    # The jobs held, as when make grade is stopped while wait_for_a_worker watches them:
    # the exception's traceback holds its frame. (Once nothing holds a job, SpecCluster's
    # close no longer sees it, and no test could tell.)
    jobs = list(cluster.workers.values())
    try:
        wait_for(host.jobs)
    finally:
        slurm.close(cluster)
    assert cluster.status == Status.closed
    assert all(job.status == Status.closed for job in jobs)
    assert wait_for_no_jobs(host) == [] and left_of(host) == []


# ---------------------------------------------------------------- the job script, no SLURM needed


def job_script(root: Path, options, tls: bool = False) -> str:
    """The job script make grade --slurm would submit for `options` (no job submitted)."""
    cluster_class = slurm.slurm_cluster_class()

    with slurm.config_file(options.config):
        security = dask_cluster.security(root) if tls else None
        kwargs = slurm.cluster_kwargs(options, root, security, "127.0.0.1")
        with cluster_class(**kwargs) as cluster:
            return cluster.job_script()


def test_a_job_is_one_single_threaded_worker_started_like_localclusters(tmp_path):
    options = slurm.SlurmOptions(
        partition="short", account="cs101", walltime="00:20:00", memory="3GB", cores=2
    )
    script = job_script(tmp_path, options)
    header = [line for line in script.splitlines() if line.startswith("#SBATCH")]
    assert {"#SBATCH -p short", "#SBATCH -A cs101", "#SBATCH -t 00:20:00"} <= set(header)
    assert {"#SBATCH --mem=3G", "#SBATCH --cpus-per-task=2", "#SBATCH -n 1"} <= set(header)
    logs = tmp_path / "build" / "slurm-logs"
    assert f"#SBATCH -o {logs}/{slurm.JOB_NAME}-%J.out" in header  # never slurm-N.out in cwd
    worker = script.strip().splitlines()[-1]
    assert worker.startswith(f"{sys.executable} -m distributed.cli.dask_worker tcp://127.0.0.1:")
    assert "--nthreads 1 " in worker and "--nanny" in worker and "--protocol" not in worker
    assert f"--preload {dask_cluster.WORKER_PRELOAD}" in worker
    assert "--local-directory $COURSEKIT_SCRATCH" in worker
    # the workers' Dask settings, exported as Dask reads them back
    exported = dict(
        line.removeprefix("export ").split("=", 1)
        for line in script.splitlines()
        if line.startswith("export DASK_")
    )
    assert len(exported) == len(dask_cluster.WORKER_SETTINGS)
    with dask.config.set(dask.config.collect_env(exported)):
        for key, value in dask_cluster.WORKER_SETTINGS.items():
            assert dask.config.get(key) == value, key


def child_running(children: Path, command: bytes) -> int | None:
    """The pid of a child process running `command`, once it does."""
    for pid in children.read_text().split():
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").strip() == command:
                return int(pid)
    return None


def test_the_job_scratch_is_private_and_gone_when_the_job_ends_or_is_cancelled(tmp_path):
    prologue = "\n".join(slurm.SCRATCH_LINES)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    finished = subprocess.run(
        ["bash", "-c", f'{prologue}\nstat -c %a "$COURSEKIT_SCRATCH"; echo "$TMPDIR"'],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    mode, job_tmp = finished.stdout.split()
    assert mode == "700" and Path(job_tmp).parent == tmp_path  # the job's TMPDIR is its scratch
    assert list(tmp_path.iterdir()) == []  # and gone once the job ended
    cancelled = subprocess.Popen(
        ["bash", "-c", f'{prologue}\necho "$COURSEKIT_SCRATCH"; sleep 300'],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    scratch = Path(cancelled.stdout.readline().strip())
    assert scratch.is_dir() and scratch.parent == tmp_path
    children = Path(f"/proc/{cancelled.pid}/task/{cancelled.pid}/children")
    worker = wait_for(lambda: child_running(children, b"sleep 300"))
    # as scancel does: SIGTERM to each process of the job, its worker and its shell
    for pid in (worker, cancelled.pid):
        os.kill(pid, signal.SIGTERM)
    assert cancelled.wait(timeout=60) == 143
    assert list(tmp_path.iterdir()) == []


def test_a_config_file_sets_the_rest_and_the_options_win(tmp_path):
    config = tmp_path / "jobqueue.yaml"
    config.write_text(
        "jobqueue:\n  slurm:\n    queue: from-file\n    walltime: '02:00:00'\n"
        "    job-extra-directives: ['--qos=teaching']\n"
        "    job-script-prologue: ['module load python/3.11']\n"
    )
    script = job_script(tmp_path, slurm.SlurmOptions(config=config, walltime="00:05:00"))
    lines = script.splitlines()
    assert "#SBATCH -p from-file" in lines and "#SBATCH --qos=teaching" in lines
    assert "#SBATCH -t 00:05:00" in lines  # the option, not the file's
    assert lines.index("module load python/3.11") < lines.index(slurm.SCRATCH_LINES[0])
    assert dask.config.get("jobqueue.slurm.queue") is None  # the file's settings only while used


def test_tls_when_the_certificates_are_there_or_the_scheduler_is_not_on_loopback(tmp_path):
    assert not slurm.needs_tls(tmp_path, "127.0.0.1") and not slurm.needs_tls(tmp_path, "localhost")
    assert slurm.needs_tls(tmp_path, "192.0.2.1") and slurm.needs_tls(tmp_path, None)
    with pytest.raises(dask_cluster.ClusterError, match="TLS 인증서가 없습니다"):
        dask_cluster.security(tmp_path)
    dask_cluster.make_certificates(tmp_path / "build" / "dask-tls", ["127.0.0.1"])
    assert slurm.needs_tls(tmp_path, "127.0.0.1")
    worker = job_script(tmp_path, slurm.SlurmOptions(), tls=True).strip().splitlines()[-1]
    assert " tls://127.0.0.1:" in worker and "--protocol tls://" in worker
    certs = tmp_path / "build" / "dask-tls"
    assert f"--tls-ca-file {certs / 'ca.pem'}" in worker
    assert f"--tls-cert {certs / 'node.pem'} --tls-key {certs / 'node-key.pem'}" in worker


CTRL_C_AFTER = """
import signal, sys
{imports}
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def test_importing_dask_jobqueue_through_slurm_leaves_ctrl_c_alone():
    """dask_jobqueue.runner makes SIGINT a sys.exit() (status 0) when imported."""

    def ctrl_c_is_pythons(imports: str) -> bool:
        code = CTRL_C_AFTER.format(imports=imports)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip() == "True"

    assert ctrl_c_is_pythons("signal.signal(signal.SIGINT, signal.default_int_handler)")
    bare = "signal.signal(signal.SIGINT, signal.default_int_handler)\nimport dask_jobqueue"
    assert not ctrl_c_is_pythons(bare)
    through = "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    through += "from coursekit.cluster import slurm\nslurm.slurm_cluster_class()"
    assert ctrl_c_is_pythons(through)
