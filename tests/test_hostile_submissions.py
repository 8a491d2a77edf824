"""Hostile and tampering submissions: graded, losing exactly their affected cells, with a reason.

One `make grade` run (python -m coursekit.cluster) grades every scenario of
tests/hostile/ together with an honest reference learner and a learner with
a catalogued mistake graded after all of them, in a scratch copy of the
course (which, like a real deployment, also holds grader_tests/ and
solutions/), with short caps so the stuck kernels cost seconds. Besides the
scores, the run must leave the course and every submission byte-identical,
show no hidden test, reference or classmate's answer in an attacker's
autograded notebook or feedback, accept no connection on the loopback port
the test listens on, leave no sandbox process behind and put nothing on the
grading machine's disk.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import html
import json
import os
import re
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from coursekit.autograde import shapes
from coursekit.core import incidents
from coursekit.exchange import names
from coursekit.sandbox import cgroup, policy
from coursekit.simulate import submissions
from tests.hostile import (
    ASSIGNMENT,
    SPLIT_HEADS_LOSSES,
    WRONG_LEARNER,
    WRONG_LEARNER_SPLIT_HEADS,
    render,
    scenarios,
    submit,
)
from tests.support.course_sandbox import CourseSandbox

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = scenarios()
LEARNERS = sorted([*SCENARIOS, "reference", WRONG_LEARNER])
HANGUL = re.compile(r"[가-힣]")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
TAG = re.compile(r"<[^>]*>")
# What grading itself writes into the course root; everything else must not change.
GRADING_OUTPUTS = frozenset(
    {"gradebook.db", "gradebook.db-wal", "gradebook.db-shm", "autograded", "reports", "feedback"}
)
# Files that a course deployment keeps next to nbgrader_config.py and that the
# learner's code must never see or change.
SECRET_FOLDERS = ("grader_tests", "solutions")
# A line of those files shorter than this is too common to count as a leak.
MIN_SECRET_LINE = 20
DISK_GROWTH_LIMIT = 100 * 2**20

pytestmark = [
    pytest.mark.xdist_group("hostile"),
    pytest.mark.class_graded,
    pytest.mark.cluster,
    pytest.mark.sandbox,
]


class DiskWatch:
    """The most disk space grading's own files took at once, sampled every 0.2 s.

    What grading writes, not the machine's free space (other processes write
    too): the size on disk of the trees it writes (the course, and the temp
    folder the grader and its kernels' scratch folders use), plus every file
    its processes hold open after unlinking it (the warm-kernel parent's
    stderr), which no tree shows.
    """

    def __init__(self, *trees: Path):
        self.trees, self.pid = list(trees), None
        self.before = self._used()
        self.most = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _used(self) -> int:
        total = sum(tree_size(tree) for tree in self.trees)
        if self.pid is not None:
            total += unlinked_open_files(descendants(self.pid))
        return total

    def _sample(self) -> None:
        # Measured first, then compared under the lock: a sample that read `most` before a
        # slow walk would otherwise write back an older, smaller maximum over a newer one.
        grown = self._used() - self.before
        with self._lock:
            self.most = max(self.most, grown)

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            self._sample()

    def largest_growth(self) -> int:
        self._stop.set()
        self._thread.join(30)
        self._sample()
        return self.most


def tree_size(top: Path) -> int:
    """Bytes on disk of every file under `top` (links not followed). By scandir's entries,
    not os.walk's names joined into paths again: a quarter less CPU, five times a second."""
    total, folders = 0, [top]
    while folders:
        with contextlib.suppress(OSError), os.scandir(folders.pop()) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    else:
                        total += entry.stat(follow_symlinks=False).st_blocks * 512
    return total


def descendants(pid: int) -> set[int]:
    """`pid` and every process below it (by /proc's parent links)."""
    parents = {}
    for entry in os.listdir("/proc"):
        with (
            contextlib.suppress(OSError, ValueError, IndexError),
            open(f"/proc/{entry}/stat", "rb") as info,
        ):
            parents[int(entry)] = int(info.read().rsplit(b")", 1)[1].split()[1])
    found, grew = {pid}, True
    while grew:
        below = {child for child, parent in parents.items() if parent in found}
        grew = not below <= found
        found |= below
    return found


def unlinked_open_files(pids: set[int]) -> int:
    """Bytes on disk of the regular files these processes hold open with no name left."""
    seen = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    info = os.stat(f"/proc/{pid}/fd/{fd}")
                    if stat.S_ISREG(info.st_mode) and info.st_nlink == 0:
                        seen[(info.st_dev, info.st_ino)] = info.st_blocks * 512
    return sum(seen.values())


class Listener:
    """A TCP server on 127.0.0.1 that hands the reference split_heads to whoever connects."""

    def __init__(self, payload: bytes):
        self.payload, self.accepted = payload, []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, peer = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted.append(peer)
            with connection, contextlib.suppress(OSError):
                connection.sendall(self.payload)

    def close(self) -> list:
        self._stop.set()
        self._thread.join(5)
        self.server.close()
        return list(self.accepted)


@dataclass
class Graded:
    sandbox: CourseSandbox
    run: subprocess.CompletedProcess
    scores: dict[str, dict[str, float | None]]
    max_scores: dict[str, float]
    incidents: dict[str, list[dict]]
    context: dict[str, str]
    markers: dict[str, str]
    files_before: dict[str, str]
    files_after: dict[str, str]
    accepted: list
    leftover: list[str]
    disk_growth: int
    feedback: list[subprocess.CompletedProcess]
    seconds: dict[str, float] = field(default_factory=dict)


def course_files(root: Path) -> dict[str, str]:
    """relative path -> digest of content and mode, for every entry but grading's outputs."""
    found = {}
    for folder, dirs, files in os.walk(root):
        relative = Path(folder).relative_to(root)
        if relative == Path("."):
            dirs[:] = [d for d in dirs if d not in GRADING_OUTPUTS]
            files = [f for f in files if f not in GRADING_OUTPUTS]
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            if path.is_symlink():
                digest = "link:" + os.readlink(path)
            elif path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                digest = "dir"
            found[str(relative / name)] = f"{oct(info.st_mode)} {digest}"
    return found


def processes() -> list[tuple[int, int, str]]:
    done = subprocess.run(["ps", "-eo", "pid=,uid=,args="], capture_output=True, text=True)
    rows = []
    for line in done.stdout.splitlines():
        pid, uid, *args = line.split(None, 2)
        rows.append((int(pid), int(uid), args[0] if args else ""))
    return rows


def lease_is_held(uid: int) -> bool:
    """Whether a live sandbox holds `uid` of the pool (policy.UidLease's lock file)."""
    path = policy.UidLease.folder / f"{uid}.lock"
    try:
        handle = open(path, "a")  # noqa: SIM115 -- closed below
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def leftover_processes(marker: str, wait: float = 15) -> list[str]:
    """Processes of this run's sandboxes still alive: a pool uid no sandbox holds, or the marker."""
    deadline = time.monotonic() + wait
    while True:
        left = [
            f"{pid} uid {uid}: {args[:120]}"
            for pid, uid, args in processes()
            if marker in args or (uid in policy.UID_POOL and not lease_is_held(uid))
        ]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def build_class(sandbox: CourseSandbox, context: dict[str, str], markers: dict[str, str]) -> None:
    sandbox.generate(ASSIGNMENT)
    for folder in SECRET_FOLDERS:
        shutil.copytree(
            ROOT / folder, sandbox.root / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    release, source = sandbox.release_notebook(ASSIGNMENT), sandbox.source_notebook(ASSIGNMENT)
    reference_split_heads = submissions.reference_answers(source)["split_heads_answer"]
    classmates = {"reference": reference_split_heads, WRONG_LEARNER: WRONG_LEARNER_SPLIT_HEADS}
    for name, answer in classmates.items():
        marked = f"{answer.rstrip()}\n\n# {markers[name]}\n"
        submit(sandbox, name, submissions.fill(release, source, replace={"split_heads": marked}))
    for name, scenario in SCENARIOS.items():
        function = getattr(scenario, "FUNCTION", None)
        replace = {function: render(scenario.SOURCE, context)} if function else {}
        nb = submissions.fill(release, source, replace=replace)
        submit(
            sandbox, name, nb, getattr(scenario, "tamper", None), getattr(scenario, "corrupt", None)
        )


def generate_feedback(sandbox: CourseSandbox) -> list[subprocess.CompletedProcess]:
    """Stock `nbgrader generate_feedback` for every learner, in two processes (two halves)."""
    halves = ["[a-o]*", "[!a-o]*"]
    with ThreadPoolExecutor(len(halves)) as pool:
        runs = pool.map(
            lambda half: sandbox.run(
                "generate_feedback", ASSIGNMENT, "--force", f"--student={half}", check=False
            ),
            halves,
        )
        return list(runs)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Graded:
    return grade_class(tmp_path_factory.mktemp("hostile"))


def grade_class(folder: Path) -> Graded:
    """Build the class in a scratch course at `folder`, grade it, and look around afterwards."""
    sandbox = CourseSandbox(folder)
    token = secrets.token_hex(6)
    markers = {name: f"반 친구의 답안 표시 {name} {token}" for name in ("reference", WRONG_LEARNER)}
    reference_code = (ROOT / "solutions" / "ch3_multihead.py").read_text(encoding="utf-8")
    listener = Listener(reference_code.encode())
    context = {
        "@COURSE_ROOT@": str(sandbox.root),
        "@REPO_ROOT@": str(ROOT),
        "@PORT@": str(listener.port),
        "@MARKER@": f"coursekit-hostile-{token}",
    }
    try:
        build_class(sandbox, context, markers)
        files_before = course_files(sandbox.root)
        # The grader's temp folder of its own (outside the course), so that its tree
        # is grading's alone.
        scratch = Path(tempfile.mkdtemp(prefix="grader-tmp-", dir=folder.parent))
        disk = DiskWatch(sandbox.root, scratch)
        command = [sys.executable, "-m", "coursekit.cluster", "--root", str(sandbox.root)]
        caps = ["--cell-timeout", "5", "--notebook-timeout", "90", "--memory-mb", "1536"]
        started = time.perf_counter()
        with subprocess.Popen(
            [*command, "-j", "2", *caps],
            cwd=ROOT,
            env={**os.environ, "TMPDIR": str(scratch)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as process:
            disk.pid = process.pid
            try:
                stdout, stderr = process.communicate(timeout=600)
            except subprocess.TimeoutExpired:
                process.kill()  # as subprocess.run(timeout=...) would
                raise
        run = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        seconds = {"grade": time.perf_counter() - started}
        disk_growth = disk.largest_growth()
    finally:
        accepted = listener.close()
    leftover = leftover_processes(context["@MARKER@"])
    files_after = course_files(sandbox.root)
    started = time.perf_counter()
    feedback = generate_feedback(sandbox)
    seconds["feedback"] = time.perf_counter() - started
    report = sandbox.root / "reports" / "grading_incidents.json"
    found = json.loads(report.read_text(encoding="utf-8")).get(ASSIGNMENT, {})
    return Graded(
        sandbox,
        run,
        sandbox.scores(ASSIGNMENT),
        sandbox.max_scores(ASSIGNMENT),
        found,
        context,
        markers,
        files_before,
        files_after,
        accepted,
        leftover,
        disk_growth,
        feedback,
        seconds,
    )


# ---------------------------------------------------------------- grades


def test_the_run_succeeds_and_reports_progress_and_a_summary(graded):
    assert graded.run.returncode == 0, graded.run.stdout[-3000:] + graded.run.stderr[-3000:]
    assert f"[{len(LEARNERS)}/{len(LEARNERS)}]" in graded.run.stdout
    assert "채점 끝" in graded.run.stdout


def test_the_reference_learner_keeps_full_marks(graded):
    reference = graded.scores["reference"]
    lost = {c: s for c, s in reference.items() if s is not None and s < graded.max_scores[c]}
    assert lost == {}, graded.sandbox.autograded_errors("reference", ASSIGNMENT)
    assert "reference" not in graded.incidents


def test_the_wrong_learner_graded_after_the_attackers_is_still_caught(graded):
    # make grade hands submissions to its workers in sorted order of the learners' folders.
    assert LEARNERS[-1] == WRONG_LEARNER
    scores = graded.scores[WRONG_LEARNER]
    autograded = {c for c, s in graded.scores["reference"].items() if s is not None}
    zero = {c for c in autograded if scores[c] == 0}
    full = {c for c in autograded if scores[c] == graded.max_scores[c]}
    assert zero == SPLIT_HEADS_LOSSES, graded.sandbox.autograded_errors(WRONG_LEARNER, ASSIGNMENT)
    assert full == autograded - SPLIT_HEADS_LOSSES
    assert WRONG_LEARNER not in graded.incidents
    # The hidden check still names the catalogued mistake.
    errors = graded.sandbox.autograded_errors(WRONG_LEARNER, ASSIGNMENT)
    assert "reshape_without_transpose" in errors["split_heads_random_shapes"]


# What a learner's code that garbles or hangs its own kernel's half of the bridge is
# recorded as: the bridge broke, the kernel stopped answering, and the cells after it.
OWN_HARM = {"BridgeBroken", "CallTimeLimit", "KernelStuck", "KernelDied", "NotRunAfterFailure"}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_loses_exactly_its_affected_cells(graded, name):
    scenario = SCENARIOS[name]
    scores = graded.scores[name]
    autograded = {c for c, s in graded.scores["reference"].items() if s is not None}
    zero = {c for c in autograded if scores[c] == 0}
    full = {c for c in autograded if scores[c] == graded.max_scores[c]}
    # A scenario that may break its own kernel's half of the bridge (or hang it) loses
    # the later cells too, each with the grader's recorded reason; it never gains a point.
    own_harm = {i["cell"] for i in graded.incidents.get(name, [])} & autograded
    expected = set(scenario.ZERO) | (own_harm if getattr(scenario, "OWN_HARM", False) else set())
    assert zero == expected, {c: scores[c] for c in zero ^ expected}
    assert full == autograded - expected


def test_forged_verdict_records_do_not_survive_grading(graded):
    """Only the grader writes verdict records: the split_heads cells get its own."""
    learner = "planted_verdict_record"
    verdicts = graded.sandbox.autograded_verdicts(learner, ASSIGNMENT)
    assert set(verdicts) == {"split_heads_random_shapes", "split_heads_edge_cases"}
    assert {v["function"] for v in verdicts.values()} == {"split_heads"}
    forged = SCENARIOS[learner].FORGED_KEY
    autograded = nbformat.writes(graded.sandbox.autograded_notebook(learner, ASSIGNMENT))
    assert forged not in autograded


@pytest.mark.parametrize(
    "name", sorted(n for n, s in SCENARIOS.items() if getattr(s, "INCIDENT", None))
)
def test_scenario_reason_is_recorded_in_korean(graded, name):
    found = graded.incidents.get(name, [])
    enames = {incident["ename"] for incident in found}
    if getattr(SCENARIOS[name], "INCIDENT_NEEDS_MEMORY_CGROUP", False) and cgroup.unavailable():
        assert incidents.MEMORY_LIMIT not in enames, found  # never inferred without the cgroup
        why = cgroup.unavailable()
        pytest.skip(f"no memory cgroup to record {SCENARIOS[name].INCIDENT} from: {why}")
    assert SCENARIOS[name].INCIDENT in enames, found
    assert all(HANGUL.search(incident["reason"]) for incident in found)


@pytest.mark.parametrize(
    "name", sorted(n for n, s in SCENARIOS.items() if not getattr(s, "INCIDENT", None))
)
def test_scenario_without_incident_is_recorded_by_its_own_errors_only(graded, name):
    found = graded.incidents.get(name, [])
    if getattr(SCENARIOS[name], "OWN_HARM", False):
        assert all(HANGUL.search(i["reason"]) for i in found), found
        found = [i for i in found if i["ename"] not in OWN_HARM]
    assert found == []


def test_a_learners_exception_named_like_an_incident_is_not_printed_as_one(graded):
    """make grade used to print forged_kernel_died as "보호 장치 1칸: KernelDied"."""
    lines = [line for line in graded.run.stdout.splitlines() if "· forged_kernel_died " in line]
    assert len(lines) == 1 and "보호 장치" not in lines[0], lines
    assert "KernelDied" in graded.sandbox.autograded_errors("forged_kernel_died", ASSIGNMENT).get(
        "split_heads_seed", ""
    )  # the learner's own error is still shown in its cell


@pytest.mark.parametrize("name", sorted(n for n, s in SCENARIOS.items() if hasattr(s, "RAN")))
def test_scenario_attack_really_ran(graded, name):
    """The attacker's own output shows that its attack ran (and how far it got)."""
    text = notebook_outputs(autograded_notebook(graded, name))
    assert re.search(SCENARIOS[name].RAN, text), text[:3000] + "\n…\n" + text[-3000:]


# ---------------------------------------------------------------- what the sandbox kept out


def test_course_files_and_every_submission_are_byte_identical(graded):
    before, after = graded.files_before, graded.files_after
    changed = sorted(p for p in before.keys() & after.keys() if before[p] != after[p])
    assert changed == []
    assert sorted(before.keys() - after.keys()) == []
    assert sorted(after.keys() - before.keys()) == []
    assert any(p.startswith("grader_tests/") for p in before)  # the copies were there to attack
    assert any(p.startswith(f"submitted/{WRONG_LEARNER}/") for p in before)


@pytest.mark.parametrize("name", LEARNERS)
def test_the_autograded_folder_holds_only_what_was_submitted(graded, name):
    root = graded.sandbox.root

    def files(top: Path) -> set[str]:
        return {str(p.relative_to(top)) for p in top.rglob("*") if not p.is_dir()}

    submitted = files(root / "submitted" / name / ASSIGNMENT)
    autograded = files(root / "autograded" / name / ASSIGNMENT)
    assert graded.sandbox.notebook_name(ASSIGNMENT) in autograded
    # Each under the name it is kept as: none a browser would render as a page.
    assert autograded <= {names.kept_path(path) for path in submitted}


def test_nothing_connected_to_the_loopback_listener(graded):
    assert graded.accepted == []


def test_no_sandbox_process_outlives_grading(graded):
    assert graded.leftover == []


def test_the_grading_machines_disk_got_nothing(graded):
    # What grading's own files took, sampled while grading: the fill_disk scenario
    # writes until its sandbox is full; what grading itself writes is a few MiB.
    assert graded.disk_growth < DISK_GROWTH_LIMIT, f"{graded.disk_growth / 2**20:.0f} MiB"


def test_the_disk_watch_sees_a_file_written_and_one_held_open_unlinked(tmp_path):
    """Not vacuous: 8 MiB in a watched tree, and 8 MiB more in a file with no name left."""
    watch = DiskWatch(tmp_path)
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys, tempfile, time\n"
            f"open({str(tmp_path / 'named.bin')!r}, 'wb').write(os.urandom(8 << 20))\n"
            f"held = tempfile.TemporaryFile(dir={str(tmp_path)!r})\n"
            "held.write(os.urandom(8 << 20)); held.flush()\n"
            "print('written', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    watch.pid = writer.pid
    assert writer.stdout.readline() == "written\n"
    watch._sample()
    writer.communicate("")
    assert watch.largest_growth() >= 16 << 20


# ---------------------------------------------------------------- leaks


def autograded_notebook(graded: Graded, name: str) -> nbformat.NotebookNode:
    path = graded.sandbox.root / "autograded" / name / ASSIGNMENT
    return nbformat.read(path / graded.sandbox.notebook_name(ASSIGNMENT), as_version=4)


def notebook_outputs(nb) -> str:
    parts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            parts.append(str(output.get("text", "")))
            parts += [str(v) for v in output.get("data", {}).values()]
            parts.append(str(output.get("evalue", "")))
            parts += [str(line) for line in output.get("traceback", [])]
    return ANSI.sub("", "\n".join(parts))


def notebook_text(nb) -> str:
    return "\n".join([cell.source for cell in nb.cells] + [notebook_outputs(nb)])


def feedback_text(graded: Graded, name: str) -> str:
    path = graded.sandbox.root / "feedback" / name / ASSIGNMENT
    page = (path / graded.sandbox.notebook_name(ASSIGNMENT).replace(".ipynb", ".html")).read_text(
        encoding="utf-8"
    )
    return html.unescape(TAG.sub("", page))


def lines_of(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines()}


@functools.cache
def course_secrets(root: Path) -> tuple[frozenset[str], str]:
    """The lines of the course's grader_tests/ and solutions/, and the text of the release
    notebook every learner was given: read once for all learners."""
    course = CourseSandbox.existing(root)
    found = set()
    for folder in SECRET_FOLDERS:
        for path in (root / folder).glob("*.py"):
            found |= lines_of(path.read_text(encoding="utf-8"))
    return frozenset(found), notebook_text(course.release_notebook(ASSIGNMENT))


def secret_lines(graded: Graded, name: str) -> set[str]:
    """Distinctive lines of grader_tests/ and solutions/ that `name` was never given."""
    found, released = course_secrets(graded.sandbox.root)
    given = [released]
    submitted = graded.sandbox.root / "submitted" / name / ASSIGNMENT
    with contextlib.suppress(Exception):  # the invalid notebook has nothing to give
        # read as the grader reads it: a JSON too deep for nbformat is graded all the same
        with open(submitted / graded.sandbox.notebook_name(ASSIGNMENT), "rb") as stream:
            nb = shapes.Shaper(64, 10**6, 10**6).notebook(shapes.load(stream, 2**31))
        given.append(notebook_text(nb))
    given_text = "\n".join(given)
    # A line that occurs anywhere in what the learner has (a table of the
    # release notebook that quotes `output = concat @ W_O`) is no secret.
    return {line for line in found if len(line) >= MIN_SECRET_LINE and line not in given_text}


def leaks(text: str, secrets_: set[str], markers: dict[str, str]) -> list[str]:
    shown = lines_of(text)
    found = sorted(secrets_ & shown)
    found += [marker for marker in markers.values() if marker in text]
    return found


def test_the_leak_check_sees_a_printed_hidden_test_file(graded):
    """Not vacuous: the printed files, or a classmate's marker, would be caught."""
    secrets_ = secret_lines(graded, "print_classmates_and_hidden_tests")
    for folder in SECRET_FOLDERS:
        printed = (graded.sandbox.root / folder / "ch3_multihead.py").read_text(encoding="utf-8")
        assert len(leaks(printed, secrets_, {})) >= 10
    reference = (graded.sandbox.root / "solutions" / "ch3_multihead.py").read_text(encoding="utf-8")
    body = reference[reference.index("def split_heads(") :].split("\n\n\n")[0]
    assert "pieces = M.reshape(n, h, d_head)" in leaks(body, secrets_, {})
    assert leaks(f"x\n# {graded.markers['reference']}\n", secrets_, graded.markers)


def test_feedback_was_generated_for_every_learner(graded):
    for run in graded.feedback:
        assert run.returncode == 0, run.stderr[-3000:]
    made = {p.parent.parent.name for p in (graded.sandbox.root / "feedback").glob("*/*/*.html")}
    assert made == set(LEARNERS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_attackers_notebook_and_feedback_show_no_hidden_reference_or_classmate_line(graded, name):
    secrets_ = secret_lines(graded, name)
    assert leaks(notebook_text(autograded_notebook(graded, name)), secrets_, graded.markers) == []
    assert leaks(feedback_text(graded, name), secrets_, graded.markers) == []
