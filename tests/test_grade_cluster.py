"""`make grade` on Dask: the stock gradebook on a LocalCluster and on a TLS cluster started
from the command line with a worker killed half way; a rerun adds nothing.

One class (the reference, the untouched release and three catalog mistakes of
the first assignment, with submission timestamps) is graded three times in
scratch copies of the course: by stock `nbgrader autograde`, by `make grade
-j 2` (its LocalCluster), and by `make grade --scheduler tls://...` on a real
`dask scheduler` and two `dask worker` processes, each worker in a folder of
its own without the class; one worker is SIGKILLed once half the class is
graded. A submission that kills every worker that takes it is recorded for
that learner (tried on a LocalCluster in process, the kill planted by a
test-only worker plugin) while the rest are graded.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest
from distributed.diagnostics.plugin import WorkerPlugin

from coursekit.cluster import dask_cluster, gradebook
from coursekit.core import incidents
from coursekit.core.environment import venv_environment
from coursekit.core.incidents import WORKER_LOST
from coursekit.simulate import submissions
from tests.support.cluster_class import build_class, ledger, stock_graded_class
from tests.support.course_sandbox import CourseSandbox
from tests.support.ports import free_port

pytestmark = [
    pytest.mark.xdist_group("grade_cluster"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
]

BIN = Path(sys.executable).parent


# Dask's connect timeout (make grade's to reach a scheduler, or reach it again), shortened
# where a test waits on a scheduler that is not there: the default 30 s tells no more.
SHORT_CONNECT = {"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "5s"}


def test_the_class_has_a_late_learner_and_one_saved_by_an_extension(stock):
    """The stock gradebook this module compares with: one late penalty, one extension."""
    penalties = {
        student: sum(p or 0 for p in entry["penalties"].values())
        for (_, student), entry in gradebook.dump(stock.db_url, stock.course_id).items()
    }
    late = [student for student, penalty in penalties.items() if penalty]
    assert len(late) == 1, penalties
    with stock.gradebook() as gb:
        extended = [s.student.id for s in gb.assignment_submissions(stock.assignments()[0])]
        extended = [s for s in extended if gb.find_submission(stock.assignments()[0], s).extension]
    assert len(extended) == 1 and extended[0] not in late, (extended, late)


def autograded_files(course: CourseSandbox) -> dict[str, tuple[int, bytes]]:
    found = {}
    for path in sorted((course.root / "autograded").rglob("*")):
        if path.is_file():
            found[str(path.relative_to(course.root))] = (path.stat().st_mtime_ns, path.read_bytes())
    return found


@pytest.fixture(scope="module")
def stock(tmp_path_factory):
    return stock_graded_class(tmp_path_factory.mktemp("stock"))  # the session's, read only


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    course = build_class(tmp_path_factory.mktemp("local"))
    first = course.grade("-j", "2", check=False)
    before = (
        ledger(course),
        autograded_files(course),
        gradebook.dump(course.db_url, course.course_id),
    )
    again = course.grade("-j", "2", check=False)
    return course, first, before, again


def test_localcluster_grades_the_stock_gradebook(stock, local):
    course, first, _, _ = local
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    expected = gradebook.dump(stock.db_url, stock.course_id)
    assert len(expected) == 5
    assert gradebook.dump(course.db_url, course.course_id) == expected
    assignment = stock.assignments()[0]
    for student in stock.scores(assignment):
        got = course.autograded_errors(student, assignment)
        assert got == stock.autograded_errors(student, assignment)


def test_localcluster_shows_progress_and_a_summary_per_worker(local):
    _, first, _, _ = local
    assert "[5/5]" in first.stdout and "채점 끝" in first.stdout
    # tqdm's bar on stderr, with its rate; the workers are LocalCluster's on loopback
    assert "5/5" in first.stderr, first.stderr[-2000:]
    assert re.search(r"제출물/s|s/제출물", first.stderr), first.stderr[-2000:]
    workers = [line for line in first.stdout.splitlines() if "작업자 tcp://127.0.0.1:" in line]
    assert len(workers) >= 1 and sum(int(w.split(": ")[1].split("개")[0]) for w in workers) == 5
    assert "드라이버 기록 비용" in first.stdout
    assert "worker-saturation" not in first.stderr  # make grade's scheduler holds no task back


def test_a_rerun_adds_nothing(local):
    course, _, before, again = local
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "5개는 건너뛰었습니다" in again.stdout
    assert len(before[0]) == 5
    after = (
        ledger(course),
        autograded_files(course),
        gradebook.dump(course.db_url, course.course_id),
    )
    assert after == before  # not a row, not a file (same mtimes) written again


def test_the_course_bundle_holds_the_course_and_no_learner(local, tmp_path):
    from nbgrader.api import Gradebook

    from coursekit.cluster import bundle
    from coursekit.core.course import gradebook_place
    from coursekit.nbgrader_internals.rows import DEFINITION_TABLES

    course = local[0]
    assignment = course.assignments()[0]
    place = gradebook_place(course.root)
    assert (place.db_url, place.course_id) == (course.db_url, course.course_id)
    made = bundle.make(place, {assignment})
    assert made.digest == bundle.make(place, {assignment}).digest
    tops = {Path(name).parts[0] for name in made.files}
    assert tops == {"nbgrader_config.py", "source", "solutions", "grader_tests"}
    assert set(made.definitions) == set(DEFINITION_TABLES)
    notebook = Path(course.notebook_name(assignment)).stem
    folder = made.unpack(tmp_path / "worker")
    with Gradebook(f"sqlite:///{folder / bundle.DEFINITIONS_DB}", course.course_id) as gb:
        assert [a.name for a in gb.assignments] == [assignment]
        assert gb.students == []
        with course.gradebook() as real:
            cells = {
                c.name: c.max_score for c in real.find_notebook(notebook, assignment).grade_cells
            }
        assert {
            c.name: c.max_score for c in gb.find_notebook(notebook, assignment).grade_cells
        } == cells


def test_a_changed_submission_is_graded_again(tmp_path):
    """Not vacuous: the ledger skips only the same files; a new hand-in is graded."""
    from coursekit.cluster.submission import read_submission

    course = CourseSandbox(tmp_path)
    assignment = course.assignments()[0]
    folder = course.root / "submitted" / "someone" / assignment
    folder.mkdir(parents=True)
    (folder / "a.ipynb").write_text("{}")
    first = read_submission(course.root, assignment, "someone")
    (folder / "a.ipynb").write_text('{"x": 1}')
    assert read_submission(course.root, assignment, "someone").digest != first.digest
    os.symlink("/etc/passwd", folder / "link.txt")  # links are not read (untrusted folder)
    assert set(read_submission(course.root, assignment, "someone").files) == {"a.ipynb"}


# ---------------------------------------------------------------- a TLS cluster by hand


def tls_flags(folder: Path) -> list[str]:
    return [
        f"--tls-ca-file={folder / 'ca.pem'}",
        f"--tls-cert={folder / 'node.pem'}",
        f"--tls-key={folder / 'node-key.pem'}",
    ]


def start_scheduler(port: int, certs: Path, folder: Path) -> subprocess.Popen:
    command = [BIN / "dask", "scheduler", "--host=127.0.0.1", f"--port={port}"]
    command += ["--protocol=tls", "--no-dashboard", *tls_flags(certs)]
    return subprocess.Popen(
        command,
        cwd=folder,
        env={**venv_environment(), **dask_cluster.SCHEDULER_ENVIRONMENT},  # as README starts it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def start_worker(address: str, certs: Path, folder: Path) -> subprocess.Popen:
    """`dask worker ADDRESS` in a folder of its own, without the class."""
    command = [BIN / "dask", "worker", address, "--nthreads=1", "--no-nanny", "--no-dashboard"]
    command += ["--host=127.0.0.1", f"--local-directory={folder}", *tls_flags(certs)]
    return subprocess.Popen(
        command,
        cwd=folder,
        env=venv_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop(processes) -> None:
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("certs")
    dask_cluster.make_certificates(folder, ["127.0.0.1", "localhost"])
    return folder


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory, certs):
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    scheduler = start_scheduler(port, certs, tmp_path_factory.mktemp("scheduler"))
    workers = [
        start_worker(address, certs, tmp_path_factory.mktemp(f"worker{n}")) for n in range(2)
    ]
    yield address, certs, workers
    stop([scheduler, *workers])


def wait_for_workers(address: str, certs: Path, count: int) -> None:
    from distributed import Client
    from distributed.security import Security

    security = Security(
        tls_ca_file=str(certs / "ca.pem"),
        tls_client_cert=str(certs / "node.pem"),
        tls_client_key=str(certs / "node-key.pem"),
        require_encryption=True,
    )
    with Client(address, security=security, timeout=60) as client:
        client.wait_for_workers(count, timeout=120)


@pytest.fixture(scope="module")
def on_tls(tmp_path_factory, tls_cluster):
    address, certs, workers = tls_cluster
    wait_for_workers(address, certs, 2)
    course = build_class(tmp_path_factory.mktemp("tls"))
    env = {**venv_environment(), "COURSE_DASK_TLS_DIR": str(certs)}
    command = [sys.executable, "-m", "coursekit.cluster", "--root", str(course.root)]
    run = subprocess.Popen(
        [*command, "--scheduler", address],
        cwd=course.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines, killed = [], None
    for line in run.stdout:
        lines.append(line)
        if line.startswith("[2/5]") and killed is None:
            killed = workers[0]
            killed.send_signal(signal.SIGKILL)  # half way: its task goes to the other worker
    stderr = run.stderr.read()
    run.wait(timeout=600)
    before = ledger(course)
    again = subprocess.run(
        [*command, "--scheduler", address],
        cwd=course.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return course, run.returncode, "".join(lines), stderr, killed, before, again


def test_a_tls_cluster_with_a_worker_killed_half_way_gives_the_stock_gradebook(stock, on_tls):
    course, returncode, stdout, stderr, killed, _, _ = on_tls
    assert returncode == 0, stdout[-3000:] + stderr[-3000:]
    assert killed is not None and killed.poll() == -signal.SIGKILL
    assert "[5/5]" in stdout
    assert gradebook.dump(course.db_url, course.course_id) == gradebook.dump(
        stock.db_url, stock.course_id
    )
    assert "작업자 tls://127.0.0.1:" in stdout
    assert "worker-saturation" not in stderr  # started with README's environment


def test_a_rerun_on_the_tls_cluster_adds_nothing(on_tls):
    course, _, _, _, _, before, again = on_tls
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "5개는 건너뛰었습니다" in again.stdout
    assert len(before) == 5 and ledger(course) == before


def test_the_scheduler_gone_is_said_plainly_and_a_rerun_finishes_the_class(
    stock, certs, tmp_path_factory
):
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    scheduler = start_scheduler(port, certs, tmp_path_factory.mktemp("scheduler-gone"))
    worker = start_worker(address, certs, tmp_path_factory.mktemp("worker-gone"))
    course = build_class(tmp_path_factory.mktemp("gone"))
    env = {**venv_environment(), "COURSE_DASK_TLS_DIR": str(certs)}
    command = [sys.executable, "-m", "coursekit.cluster", "--root", str(course.root)]
    command += ["--scheduler", address]
    try:
        wait_for_workers(address, certs, 1)
        run = subprocess.Popen(
            command,
            cwd=course.root,
            env={**env, **SHORT_CONNECT},  # the lost scheduler is given up on sooner
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for line in run.stdout:
            if line.startswith("[1/5]"):
                scheduler.send_signal(signal.SIGKILL)
        stderr = run.stderr.read()
        assert run.wait(timeout=600) == 3, stderr[-3000:]
        assert "스케줄러와 연결이 끊겼습니다" in stderr and "다시 실행하면" in stderr, stderr[
            -3000:
        ]
        graded = ledger(course)
        assert 1 <= len(graded) < 5
        stop([worker])
        scheduler = start_scheduler(port, certs, tmp_path_factory.mktemp("scheduler-back"))
        worker = start_worker(address, certs, tmp_path_factory.mktemp("worker-back"))
        wait_for_workers(address, certs, 1)
        again = subprocess.run(command, cwd=course.root, env=env, capture_output=True, text=True)
    finally:
        stop([scheduler, worker])
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert f"{len(graded)}개는 건너뛰었습니다" in again.stdout
    assert len(ledger(course)) == 5
    assert gradebook.dump(course.db_url, course.course_id) == gradebook.dump(
        stock.db_url, stock.course_id
    )


def test_plain_tcp_beyond_loopback_is_refused_and_a_missing_scheduler_is_said_plainly(tmp_path):
    course = CourseSandbox(tmp_path)
    with pytest.raises(dask_cluster.ClusterError, match="TLS"):
        dask_cluster.check_address("tcp://192.0.2.1:8786")
    assert dask_cluster.check_address("tcp://127.0.0.1:8786") == "tcp"
    assert dask_cluster.check_address("tls://192.0.2.1:8786") == "tls"
    folder = course.root / "submitted" / "someone" / course.assignments()[0]
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), folder / "x.ipynb")
    run = course.grade(
        "--scheduler", f"tcp://127.0.0.1:{free_port()}", check=False, env=SHORT_CONNECT
    )
    assert run.returncode == 3, run.stdout[-2000:] + run.stderr[-2000:]
    assert "스케줄러" in run.stderr and "연결하지 못했습니다" in run.stderr


def test_a_cluster_without_workers_is_said_plainly_not_waited_on_forever(tmp_path):
    """A scheduler no worker ever joins: make grade stops after --no-worker-timeout, exit 3."""
    (tmp_path / "course").mkdir()
    course = CourseSandbox(tmp_path / "course")
    assignment = course.assignments()[0]
    course.generate(assignment)
    release, source = course.release_notebook(assignment), course.source_notebook(assignment)
    course.submit("someone", assignment, submissions.fill(release, source))
    port = free_port()
    folder = tmp_path / "scheduler"
    folder.mkdir()
    command = [BIN / "dask", "scheduler", "--host=127.0.0.1", f"--port={port}", "--no-dashboard"]
    scheduler = subprocess.Popen(
        command,
        cwd=folder,
        env={**venv_environment(), **dask_cluster.SCHEDULER_ENVIRONMENT},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        run = course.grade(
            "--scheduler", f"tcp://127.0.0.1:{port}", "--no-worker-timeout", "3", check=False
        )
    finally:
        stop([scheduler])
    assert run.returncode == 3, run.stdout[-2000:] + run.stderr[-2000:]
    assert "작업자가 3초 동안 하나도 없어" in run.stderr, run.stderr[-2000:]
    assert "제출물 1개가 채점되지 않았습니다" in run.stderr
    assert ledger(course) == []


# ---------------------------------------------------------------- a submission that kills workers


class KillOnGrading(WorkerPlugin):
    """Test-only worker plugin: the worker process dies when it starts grading `student`."""

    name = "test-kill-on-grading"

    def __init__(self, student: str):
        self.student = student

    def setup(self, worker):
        from coursekit.cluster import task

        original, student = task.CoursePlugin.grade, self.student

        def grade(plugin, submission, *args, **kwargs):
            if submission.student == student:
                os._exit(1)
            return original(plugin, submission, *args, **kwargs)

        task.CoursePlugin.grade = grade


def graded_on_one_worker(course: CourseSandbox, students: list[str], plugin: WorkerPlugin):
    """`students`' submissions graded by a GradingSession on a LocalCluster of one worker
    (one thread, make grade's scheduler settings) with the test-only `plugin`: their results."""
    import dask
    from distributed import Client, LocalCluster

    from coursekit.cluster.session import GradingSession

    assignment = course.assignments()[0]
    tasks = [(assignment, student) for student in students]
    env = venv_environment()
    old_path, os.environ["PATH"] = os.environ["PATH"], env["PATH"]
    try:
        with (
            # as make grade's scheduler, and README's
            dask.config.set(dask_cluster.ONE_TASK_PER_THREAD),
            # and its workers, forked from a warm forkserver: a killed worker's nanny starts
            # the next in a fork, not a fresh interpreter (twice a CI rehearsal was left with
            # no worker at all after a death, on spawned workers)
            dask_cluster.forkserver_workers(),
            LocalCluster(
                n_workers=1,
                threads_per_worker=1,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=50,
            ) as local_cluster,
            Client(local_cluster) as client,
        ):
            client.register_plugin(plugin)
            with GradingSession(course.root, client=client) as session:
                left, _invalid = session.prepare(tasks)
                session.use_course({assignment})
                submissions = session.not_yet_graded(left)
                return within(GRADING_DEADLINE, lambda: list(session.results(submissions)), client)
    finally:
        os.environ["PATH"] = old_path


# Far beyond the 30-80 s the kill test takes on a loaded machine; a CI rehearsal once hung
# for good there, the LocalCluster left with no worker process after a death.
GRADING_DEADLINE = 300


def within(seconds: float, grade, client) -> dict:
    """grade()'s results by student, or a failure saying what the cluster had left."""
    done: list = []
    worker = threading.Thread(target=lambda: done.append(grade()), daemon=True)
    worker.start()
    worker.join(seconds)
    if not done:
        workers = sorted(client.scheduler_info().get("workers", {}))
        pytest.fail(f"no results after {seconds} s; the scheduler's workers: {workers}")
    return {r.student: r for r in done[0]}


def test_a_submission_that_kills_its_workers_is_recorded_and_the_rest_graded(tmp_path):
    """One worker, so the innocent submission waits for the killer's worker to come back."""
    course = build_class(tmp_path)
    assignment = course.assignments()[0]
    results = graded_on_one_worker(
        course, ["reference", "blank-release"], KillOnGrading("blank-release")
    )
    assert results["reference"].ok and results["reference"].incidents == []
    lost = results["blank-release"]
    assert [i.name for i in lost.incidents] == [WORKER_LOST]
    assert "작업자 프로세스가 3번" in lost.incidents[0].text
    scores = course.scores(assignment)
    assert set(scores["blank-release"].values()) == {0}
    assert sum(v or 0 for v in scores["reference"].values()) > 0
    shown = course.autograded_notebook("blank-release", assignment)
    assert any("작업자 프로세스가 3번" in str(cell.get("outputs")) for cell in shown.cells)
    # the same incident in the notebook, which the TA report reads, as in the incidents report
    # (tests/test_incidents_report.py follows it into the TA report's data)
    recorded = {(i.name, i.text) for i in incidents.in_notebook(shown)}
    assert recorded == {(WORKER_LOST, lost.incidents[0].text)}


class RecordEventLoops(WorkerPlugin):
    """Test-only worker plugin: after each submission a worker grades, its event loop's id,
    the worker process's open event loops (epoll descriptors) and other non-socket descriptors,
    and the results the worker holds in its memory (Dask's data), one JSON line in `path`.
    Sockets are left out: Dask opens and closes its own connections at its own pace."""

    name = "test-record-event-loops"

    def __init__(self, path: Path):
        self.path = str(path)

    def setup(self, worker):
        import contextlib
        import json

        from jupyter_core.utils import ensure_event_loop

        from coursekit.cluster import task

        original, path = task.CoursePlugin._grade, self.path

        def _grade(plugin, *args, **kwargs):
            result = original(plugin, *args, **kwargs)
            kinds = []
            for fd in os.listdir("/proc/self/fd"):
                # the listing's own descriptor is closed by now
                with contextlib.suppress(OSError):
                    kinds.append(os.readlink(f"/proc/self/fd/{fd}"))
            seen = {
                "loop": id(ensure_event_loop()),
                "epolls": kinds.count("anon_inode:[eventpoll]"),
                "files": sum(not k.startswith("socket:") for k in kinds),
                "held": len(worker.data),
            }
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(seen) + "\n")
            return result

        task.CoursePlugin._grade = _grade


def test_a_worker_grades_every_submission_on_one_event_loop(tmp_path_factory):
    """Dask runs each task in a fresh copy of its contextvars, where jupyter_core keeps the
    loop nbclient runs on: a loop per task was made and never closed (descriptors grew)."""
    import json

    course = build_class(tmp_path_factory.mktemp("class"))
    students = sorted(folder.name for folder in (course.root / "submitted").iterdir())
    record = tmp_path_factory.mktemp("record") / "loops.jsonl"
    results = graded_on_one_worker(course, students, RecordEventLoops(record))
    assert len(students) == 5 and all(r.ok for r in results.values()), results
    seen = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(seen) == 5
    assert len({s["loop"] for s in seen}) == 1, seen
    # nothing left open per submission: no loop made and left behind, no file kept open
    assert len({s["epolls"] for s in seen}) == 1, seen
    assert seen[-1]["files"] <= seen[0]["files"], seen
    # A result written by the driver is released: the worker keeps at most the one
    # before (its release may still be on the way), never the whole class's.
    assert max(s["held"] for s in seen) <= 1, seen


def test_a_scheduler_that_hands_workers_tasks_to_hold_is_warned_about():
    """Dask's default worker-saturation (1.1) gives a one-thread worker a second task."""
    import dask
    from distributed import Client, LocalCluster

    def warning(settings):
        with (
            dask.config.set(settings),
            LocalCluster(n_workers=0, processes=False, dashboard_address=None) as local,
            Client(local) as client,
        ):
            return dask_cluster.held_task_warning(client)

    assert "worker-saturation 이 1.1" in warning({})
    assert "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION=1.0" in warning({})
    assert warning(dask_cluster.ONE_TASK_PER_THREAD) is None
    with dask.config.set(dask.config.collect_env(dask_cluster.SCHEDULER_ENVIRONMENT)):
        assert dask.config.get("distributed.scheduler.worker-saturation") == 1.0

    class Refusing:  # a scheduler that runs no function sent to it
        def run_on_scheduler(self, function):
            raise RuntimeError("refused")

    assert "읽지 못했습니다 (RuntimeError)" in dask_cluster.held_task_warning(Refusing())


def test_the_dashboard_is_dasks_own_page_on_loopback_when_asked(tmp_path):
    import urllib.error
    import urllib.request

    with dask_cluster.client_for(tmp_path, None, 1, dashboard=True) as client:
        link = client.dashboard_link
        assert link.startswith("http://127.0.0.1:"), link
        with urllib.request.urlopen(link, timeout=60) as page:
            assert page.status == 200 and b"Dask" in page.read()
    with dask_cluster.client_for(tmp_path, None, 1, dashboard=False) as client:
        # only Dask's /health and metrics routes, on loopback: no dashboard page
        port = client.scheduler_info()["services"]["dashboard"]
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=60)
