"""Warm kernels: forked from one pre-imported parent, each still in a sandbox of its own.

tests/test_sandbox.py runs every sandbox property with both ways of starting
a kernel; this file checks what only forking could get wrong: what the
parent holds, what two forks could share, and what is left when one ends.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from coursekit.sandbox import kernel as kernel_module
from coursekit.sandbox import policy, seccomp, warm
from coursekit.sandbox.learner_kernel import LearnerKernel

pytestmark = [
    pytest.mark.skipif(not warm.supported(), reason="warm kernels need root"),
    pytest.mark.sandbox,
    pytest.mark.root,
]


@pytest.fixture(autouse=True)
def warm_mode(monkeypatch):
    monkeypatch.setattr(kernel_module.SandboxMixin, "warm", True)


def found_in(kernel: LearnerKernel, source: str):
    assert kernel.run_cells([source])
    with kernel.session() as session:
        return session.describe(["found"])["found"]


def uid_processes(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_the_parent_holds_nothing_of_the_grader(monkeypatch):
    monkeypatch.setenv("COURSE_GRADEBOOK_URL", "postgresql://grader:secret@db/course")
    zygote = warm.Zygote(("numpy",)).wait_started()
    try:
        pid = zygote.server_pid  # the Python below the two bwraps
        assert pid != zygote.process.pid
        environment = Path(f"/proc/{pid}/environ").read_bytes()
        assert b"secret" not in environment and b"COURSE_GRADEBOOK_URL" not in environment
        assert dict(e.split(b"=", 1) for e in environment.split(b"\0") if e).keys() == {
            k.encode() for k in policy.environment(policy.HOME)
        }
        fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        # /dev/null twice, its log (an unlinked file), its request socket: no file of the course
        assert [fds[0], fds[1]] == ["/dev/null"] * 2 and fds[2].endswith(" (deleted)")
        assert len(fds) == 4 and [t for t in fds.values() if t.startswith("socket:")]
        assert os.readlink(f"/proc/{pid}/cwd") == "/"
        # It is a program of its own: nothing of coursekit, the reference or the checks.
        imports = [line for line in warm.SOURCE.splitlines() if line.startswith(("import", "from"))]
        assert not [line for line in imports if "coursekit" in line or "solutions" in line]
        assert zygote.preloaded == ["numpy"]
    finally:
        zygote.close()
    assert zygote.process.poll() is not None


def status_of(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.strip() for k, v in (line.split(":", 1) for line in lines)}


def test_the_parent_runs_in_bwraps_sandbox_not_as_host_root():
    """Started by bubblewrap: a user namespace whose root is nobody's uid, its filter, no course."""
    zygote = warm.Zygote(()).wait_started()
    try:
        pid = zygote.server_pid
        status = status_of(pid)
        assert status["Uid"].split() == [str(policy.PARENT_UID)] * 4  # as the host sees it
        assert status["Seccomp"] == "2" and status["NoNewPrivs"] == "1"
        pool = policy.UID_POOL
        mapping = Path(f"/proc/{pid}/uid_map").read_text().split()
        assert mapping == ["0", str(policy.PARENT_UID), "1", *[str(pool.start)] * 2, str(len(pool))]
        for ns in ("user", "mnt", "pid", "net", "ipc", "uts"):
            assert os.readlink(f"/proc/{pid}/ns/{ns}") != os.readlink(f"/proc/self/ns/{ns}")
        root = Path(f"/proc/{pid}/root")
        course = Path(__file__).resolve().parent.parent
        assert not (root / course.relative_to("/") / "solutions").exists()
        assert (root / sys.prefix.lstrip("/") / "bin" / "python").exists()
        # Its filter lets its forks make namespaces and mounts; each kernel's own denies them.
        assert seccomp.program(parent=True) != seccomp.program()
    finally:
        zygote.close()


def test_each_kernel_stacks_the_full_filter_and_has_its_own_terminals():
    with LearnerKernel(timeout=60) as kernel:
        found = found_in(
            kernel,
            """
import os
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
found = {"filters": status["Seccomp_filters"].strip(), "pts": os.stat("/dev/pts").st_dev}
""",
        )
        parent = warm.zygote(kernel.km.preload).server_pid
        parents_pts = os.stat(f"/proc/{parent}/root/dev/pts").st_dev
    assert found["filters"] == "2"  # the parent's, and the kernel's on top
    assert found["pts"] != parents_pts  # a devpts instance of its own


def test_two_kernels_alive_at_once_share_nothing():
    with LearnerKernel(timeout=60) as first, LearnerKernel(timeout=60) as second:
        mine = found_in(
            first,
            """
import os, socket, numpy as np
open(os.path.expanduser("~/mine.txt"), "w").write("first")
open("/tmp/mine.txt", "w").write("first")
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1)
abstract = socket.socket(socket.AF_UNIX)
abstract.bind("\\0coursekit-first")
abstract.listen(1)
found = {"uid": os.getuid(), "port": listener.getsockname()[1],
         "random": np.random.rand(4).tolist(), "home": os.listdir(os.path.expanduser("~"))}
""",
        )
        theirs = found_in(
            second,
            f"""
import os, socket, numpy as np
def reach(family, address):
    try:
        socket.socket(family).connect(address)
        return "connected"
    except OSError as error:
        return type(error).__name__
found = {{"uid": os.getuid(), "random": np.random.rand(4).tolist(),
         "home": os.path.exists(os.path.expanduser("~/mine.txt")),
         "tmp": os.path.exists("/tmp/mine.txt"),
         "port": reach(socket.AF_INET, ("127.0.0.1", {mine["port"]})),
         "abstract": reach(socket.AF_UNIX, "\\0coursekit-first")}}
""",
        )
    assert mine["uid"] != theirs["uid"]
    assert not theirs["home"] and not theirs["tmp"]
    assert theirs["port"] != "connected" and theirs["abstract"] != "connected"
    # Forks of one parent would share numpy's global random state; each draws its own.
    assert mine["random"] != theirs["random"]


def test_an_ended_kernel_leaves_no_process_behind():
    with LearnerKernel(timeout=60) as kernel:
        found = found_in(
            kernel,
            """
import os, subprocess
subprocess.Popen(["sleep", "600"], start_new_session=True)  # outlives its kernel, it hopes
found = os.getuid()
""",
        )
        assert uid_processes(found)
    deadline = time.monotonic() + 10
    while uid_processes(found) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert uid_processes(found) == []


def test_the_kernels_end_with_the_parent():
    with LearnerKernel(timeout=60) as kernel:
        uid = found_in(kernel, "import os\nfound = os.getuid()")
        warm.zygote(kernel.km.preload).close()
        deadline = time.monotonic() + 10
        while uid_processes(uid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert uid_processes(uid) == []


def test_a_sandbox_that_cannot_be_built_says_why():
    zygote = warm.Zygote(())
    lease = policy.UidLease()
    try:
        steps = [{"op": "ro-bind", "source": "/no/such/folder", "path": "/data"}]
        with pytest.raises(warm.WarmKernelError, match=r"/no/such/folder|/data"):
            zygote.launch(
                argv=[],
                layout=steps,
                files={},
                workdir="/",
                uid=lease.uid,
                limits=policy.Limits(),
            )
        assert zygote.alive()  # one bad request ends only its own fork
    finally:
        lease.release()
        zygote.close()


def _kernel_from_a_forked_worker(preload) -> tuple[int, int]:
    with LearnerKernel(timeout=60) as kernel:
        uid = found_in(kernel, "import os\nfound = os.getuid()")
    return warm.zygote(preload).process.pid, uid


def test_forked_workers_share_the_zygote_their_parent_started(monkeypatch):
    import multiprocessing

    preload = kernel_module.SandboxMixin.preload
    parent = warm.zygote(preload)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map(_kernel_from_a_forked_worker, [preload] * 2)
    assert [pid for pid, _ in results] == [parent.process.pid] * 2
    assert all(uid >= policy.UID_POOL.start for _, uid in results)


def test_starting_the_parent_adds_no_thread_to_the_process_that_forks_the_workers():
    """make grade forks its workers after starting the parent: a multi-threaded fork can hang."""
    import threading

    before = set(threading.enumerate())
    parent = warm.Zygote(kernel_module.SandboxMixin.preload)  # a fresh one, not the shared one
    try:
        parent.wait_started()
        assert set(threading.enumerate()) == before
        assert parent.alive() and parent.log() == "(no output)"
    finally:
        parent.close()


def test_the_sandbox_init_learner_code_can_reach_holds_nothing():
    """PID 1 runs as the learner's uid (it could be traced): no descriptor but 0, 1 and 2."""
    with LearnerKernel(timeout=60) as kernel:
        found = found_in(
            kernel,
            """
import os
found = {"fds": sorted(os.listdir("/proc/1/fd")), "uid": os.stat("/proc/1").st_uid,
         "mine": os.getuid(), "groups": os.getgroups()}
""",
        )
    assert found["fds"] == ["0", "1", "2"]
    assert found["uid"] == found["mine"] and found["groups"] == []
