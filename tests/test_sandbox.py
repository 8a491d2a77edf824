"""The sandbox learner code runs in, and the bridge the grader calls it through."""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

from coursekit.sandbox import cgroup, policy, warm
from coursekit.sandbox.bridge import BridgeBroken, CallTimedOut, LearnerError
from coursekit.sandbox.inside import wire
from coursekit.sandbox.kernel import SandboxMixin
from coursekit.sandbox.learner_kernel import LearnerKernel

pytestmark = [pytest.mark.sandbox]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module", autouse=True, params=["bwrap", "warm"])
def sandbox_mode(request):
    """Every test here runs with both ways of starting a sandboxed kernel."""
    if request.param == "warm" and not warm.supported():
        pytest.skip("warm kernels need root and user namespaces (warm.supported)")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SandboxMixin, "warm", request.param == "warm")
        yield request.param


def run_in_sandbox(source: str, *, limits=None, timeout=60) -> dict:
    """Run `source` in a sandboxed kernel and return the variable `found` it leaves."""
    with LearnerKernel(timeout=timeout, limits=limits) as kernel:
        assert kernel.run_cells([source])
        with kernel.session() as session:
            return session.describe(["found"])["found"]


def test_the_sandbox_starts_here():
    policy.check_available()


def test_a_course_environment_under_tmp_stays_visible(tmp_path, monkeypatch):
    """A course cloned under /tmp: its .venv must not vanish under the sandbox's own /tmp."""
    folder = tmp_path / "course-env"
    folder.mkdir(mode=0o755)
    (folder / "marker.txt").write_text("보임", encoding="utf-8")
    (folder / "marker.txt").chmod(0o644)
    assert str(folder).startswith("/tmp/")
    bound = policy._python_folders()
    extra = {"op": "ro-bind", "source": str(folder), "path": str(folder)}
    monkeypatch.setattr(policy, "_python_folders", lambda: [*bound, extra])
    marker = str(folder / "marker.txt")
    assert run_in_sandbox(f"found = open({marker!r}, encoding='utf-8').read()") == "보임"


def test_a_missing_bubblewrap_stops_grading_with_the_fix(monkeypatch):
    policy.check_available.cache_clear()
    monkeypatch.setattr(policy.shutil, "which", lambda name: None)
    try:
        with pytest.raises(policy.SandboxUnavailableError, match="apt-get install bubblewrap"):
            policy.check_available()
    finally:
        policy.check_available.cache_clear()


def test_learner_code_sees_no_course_no_secrets_and_no_privileges(monkeypatch, sandbox_mode):
    monkeypatch.setenv("COURSE_GRADEBOOK_URL", "postgresql://grader:secret@db/course")
    found = run_in_sandbox(
        f"""
import os
root = {ROOT!r}
status = open("/proc/self/status").read()
found = {{
    "visible": [p for p in ("solutions", "grader_tests", "nbgrader_config.py", "source", ".git")
                if os.path.exists(os.path.join(root, p))],
    "venv": os.path.exists(os.path.join({sys.prefix!r}, "bin", "python")),  # the course's env
    "secret": [k for k, v in os.environ.items() if "secret" in v],
    "uid": os.getuid(),
    "caps": status.split("CapEff:")[1].split()[0],
    "pid_one": open("/proc/1/cmdline").read().split("\\0")[0],
    "pid": os.getpid(),
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
}}
"""
    )
    assert found["visible"] == [] and found["venv"]
    assert found["secret"] == []
    assert found["uid"] != 0 and int(found["caps"], 16) == 0
    # Its own PID namespace: the sandbox's init, the kernel, nothing of the host.
    init = "bwrap" if sandbox_mode == "bwrap" else os.path.realpath(sys.executable)
    assert os.path.realpath(found["pid_one"]).endswith(init) and found["pid"] == 2
    assert found["processes"][:2] == [1, 2]


def test_learner_code_cannot_reach_a_loopback_server():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    accepted = []
    watcher = threading.Thread(target=lambda: accepted.append(_accept(server)))
    watcher.start()
    found = run_in_sandbox(
        f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"leak")
    found = "connected"
except OSError as error:
    found = type(error).__name__
"""
    )
    watcher.join()
    server.close()
    assert found != "connected" and accepted == [None]


def _accept(server):
    try:
        return server.accept()
    except TimeoutError:
        return None


def test_learner_code_writes_only_its_capped_scratch():
    limits = policy.Limits(home_mb=8, file_mb=4)
    found = run_in_sandbox(
        """
import os
found = {}
for path in ("/usr/pwned", os.path.expanduser("~/../pwned"), "/etc/pwned"):
    try:
        open(path, "w").write("x")
        found[path] = "written"
    except OSError as error:
        found[path] = type(error).__name__
def fill(path, chunk):
    written = 0
    try:
        with open(path, "wb") as f:
            while written < 64 << 20:
                f.write(chunk)
                f.flush()
                written += len(chunk)
    except OSError as error:
        return type(error).__name__
    return written
found["big_file"] = fill("big.bin", b"x" * (1 << 20))
found["tmp_files"] = [fill(f"/tmp/{i}.bin", b"x" * (1 << 20)) for i in range(4)]
""",
        limits=limits,
    )
    assert "written" not in [found[p] for p in ("/usr/pwned", "/etc/pwned")]
    assert found["big_file"] == "OSError" or isinstance(found["big_file"], str)
    assert any(isinstance(r, str) for r in found["tmp_files"]), found["tmp_files"]


# ---------------------------------------------------------------- bridge


LEARNER = """
import numpy as np
def double(x):
    return 2 * x
def in_place(x):
    x *= 0
    return x
def unfinished(x):
    raise NotImplementedError()
def leaves(x):
    raise SystemExit(3)
def outer(x):
    return helper(x) + 1
def sneaky(x):
    return helper(x)
def forever(x):
    while True:
        pass
def odd(x):
    return {"a": object()}
def forge(x):
    # Find the bridge's socket and ask the grader to run a helper it never offered.
    import gc, json, socket, struct
    head = json.dumps({"op": "callback", "name": "split_heads", "args": {"t": "list", "v": [x]},
                       "kwargs": {"t": "dict", "v": []}, "blobs": []}).encode()
    for obj in gc.get_objects():  # skipping sockets of earlier sessions, closed but not collected
        if isinstance(obj, socket.socket) and obj.family == socket.AF_UNIX and obj.fileno() != -1:
            obj.sendall(struct.pack(">I", len(head)) + head)
            return json.loads(obj.recv(1 << 16)[4:])
"""


@pytest.fixture(scope="module")
def kernel():
    with LearnerKernel(timeout=120) as kernel:
        assert kernel.run_cells([LEARNER])
        yield kernel


def test_a_remote_function_returns_plain_data_and_its_arguments_after_the_call(kernel):
    x = np.arange(6.0).reshape(2, 3)
    with kernel.session() as session:
        fns = session.describe(["double", "in_place", "odd", "missing"])
        assert "missing" not in fns
        got, after, error = fns["double"].invoke((x,), {})
        assert error is None and type(got) is np.ndarray and np.array_equal(got, 2 * x)
        _, after, _ = fns["in_place"].invoke((x,), {})
        assert np.array_equal(after[0], np.zeros_like(x)) and np.array_equal(
            x, np.arange(6.0).reshape(2, 3)
        )
        odd = fns["odd"](x)
        assert isinstance(odd["a"], wire.Unsupported)


def test_learner_exceptions_come_back_as_values_never_as_exits(kernel):
    with kernel.session() as session:
        fns = session.describe(["unfinished", "leaves"])
        with pytest.raises(NotImplementedError):
            fns["unfinished"](1)
        _, _, error = fns["leaves"].invoke((1,), {})
        assert isinstance(error, LearnerError) and type(error).__name__ == "SystemExit"


def test_helpers_are_called_back_and_only_the_ones_asked_for(kernel):
    with kernel.session() as session:
        fns = session.describe(["outer", "sneaky"])
        isolated = fns["outer"].with_helpers({"helper": lambda x: x * 10})
        assert isolated(2) == 21
        with pytest.raises(NameError):  # no helper in the kernel: the learner's own error
            fns["outer"](2)
    with kernel.session() as session:
        sneaky = session.describe(["sneaky"])["sneaky"].with_helpers({"other": abs})
        with pytest.raises(NameError):
            sneaky(2)


def test_a_call_that_never_returns_times_out(kernel):
    import time

    with kernel.session() as session:
        session.deadline = time.monotonic() + 2
        forever = session.describe(["forever"])["forever"]
        with pytest.raises(CallTimedOut):
            forever(1)


def test_wire_refuses_what_is_not_plain_data():
    blobs = []
    packed = wire.pack((np.arange(3), {"k": [1.5, None, True]}, np.float32(2)), blobs)
    value = wire.unpack(packed, blobs)
    assert isinstance(value, tuple) and np.array_equal(value[0], np.arange(3))
    assert value[1] == {"k": [1.5, None, True]} and value[2].dtype == np.float32
    assert isinstance(wire.unpack(wire.pack(np.array([object()]), []), []), wire.Unsupported)
    with pytest.raises(wire.WireError):  # an object array would unpickle
        wire.unpack({"t": "nd", "b": 0, "dtype": "|O", "shape": [1]}, [b"\0" * 8])
    with pytest.raises(wire.WireError):  # more elements than bytes
        wire.unpack({"t": "nd", "b": 0, "dtype": "<f8", "shape": [1000]}, [b"\0" * 8])
    with pytest.raises(wire.WireError):
        wire.unpack({"t": "np", "dtype": "O", "v": 1}, [])
    with pytest.raises(wire.WireError):
        wire.unpack({"t": "nd", "b": 3}, [])


def test_a_frame_over_the_cap_is_refused_before_it_is_read():
    left, right = socket.socketpair()
    header = b'{"blobs": [999999999]}'
    left.sendall(len(header).to_bytes(4, "big") + header)
    with pytest.raises(wire.WireError, match="frame"):
        wire.receive(right)
    left.close()
    right.close()


def test_a_forged_callback_breaks_the_bridge_and_runs_nothing(kernel):
    asked = []
    with kernel.session() as session:
        forge = session.describe(["forge"])["forge"]
        with pytest.raises(BridgeBroken, match="unexpected callback"):
            forge.with_helpers({"helper": asked.append})(1)
    assert asked == []


PLANTED_BRIDGE = """
import json, socket, struct, sys, threading, time, types

def serve(path, token, user_ns):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall(token.encode())
    size = struct.unpack(">I", sock.recv(4))[0]
    sock.recv(size)
    reply = REPLIES.pop(0)
    sock.sendall(struct.pack(">I", len(reply)) + reply)
    time.sleep(0.5)

REPLIES = [json.dumps({"info": 5, "blobs": []}).encode(), b"[" * 200000]
module = types.ModuleType("coursekit_bridge")
module.serve = serve
sys.modules["coursekit_bridge"] = module

def squat():  # keeps connecting to the bridge, to take the grader's place
    while True:
        try:
            socket.socket(socket.AF_UNIX).connect("/run/bridge.sock")
        except OSError:
            pass
        time.sleep(0.01)

threading.Thread(target=squat, daemon=True).start()
"""


def test_a_planted_bridge_that_lies_breaks_only_the_bridge():
    with LearnerKernel(timeout=60) as kernel:
        assert kernel.run_cells([PLANTED_BRIDGE])
        for _ in range(2):  # a description that is no dict; a header nested past recursion
            with kernel.session() as session, pytest.raises(BridgeBroken):
                session.describe(["anything"])


# ---------------------------------------------------------------- no channel between learners


def syscall_numbers(*names: str) -> dict[str, int]:
    """This machine's numbers of these system calls, as libseccomp knows them."""
    import pyseccomp

    arch = pyseccomp.system_arch()
    return {name: pyseccomp.resolve_syscall(arch, name) for name in names}


CALLS = """
import ctypes, errno
_libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    result = _libc.syscall(NUMBERS[name], *args)
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
"""


def test_the_seccomp_filter_denies_what_dockers_default_profile_denies():
    numbers = syscall_numbers(
        "add_key", "keyctl", "request_key", "ptrace", "bpf", "perf_event_open", "userfaultfd",
        "unshare", "setns", "mount", "clone", "clone3", "process_vm_readv",
    )  # fmt: skip
    found = run_in_sandbox(
        f"NUMBERS = {numbers!r}\n"
        + CALLS
        + """
import subprocess, threading
KEY_SPEC_USER_KEYRING, CLONE_NEWUSER, CLONE_NEWNS = -4, 0x10000000, 0x20000
status = open("/proc/self/status").read()
found = {
    "mode": status.split("Seccomp:")[1].split()[0],
    "add_key": call("add_key", b"user", b"plant", b"code", 4, KEY_SPEC_USER_KEYRING),
    "keyctl": call("keyctl", 0, KEY_SPEC_USER_KEYRING, 0),  # KEYCTL_GET_KEYRING_ID
    "request_key": call("request_key", b"user", b"plant", None, 0),
    "ptrace": call("ptrace", 16, 1, 0, 0),  # PTRACE_ATTACH to PID 1
    "bpf": call("bpf", 0, None, 0),
    "perf_event_open": call("perf_event_open", None, 0, -1, -1, 0),
    "userfaultfd": call("userfaultfd", 0),
    "unshare": call("unshare", CLONE_NEWUSER),
    "setns": call("setns", 0, 0),
    "mount": call("mount", b"none", b"/tmp", b"tmpfs", 0, None),
    "clone_newns": call("clone", CLONE_NEWNS | 17, None, None, None, None),
    "clone3": call("clone3", None, 0),
    "process_vm_readv": call("process_vm_readv", 1, None, 0, None, 0, 0),
}
# What learner code does every day still works: threads, processes, numpy.
thread = threading.Thread(target=found.update, kwargs={"thread": "ok"})
thread.start(); thread.join()
found["process"] = subprocess.run(["python", "-c", "print('ok')"], capture_output=True,
                                  text=True).stdout.strip()
import numpy as np
found["numpy"] = float((np.ones((64, 64)) @ np.ones((64, 64))).sum())
"""
    )
    assert found.pop("mode") == "2", "no seccomp filter"  # SECCOMP_MODE_FILTER
    assert found.pop("clone3") == "ENOSYS"  # the C library falls back to clone
    assert (found.pop("thread"), found.pop("process"), found.pop("numpy")) == ("ok", "ok", 64**3)
    assert found == dict.fromkeys(found, "EPERM")


PLANT = """
import os, subprocess
code = "def split_heads(M, h): return M.reshape(M.shape[0], h, -1).transpose(1, 0, 2)"
KEY_SPEC_USER_KEYRING = -4
found = {"uid": os.getuid(),
         "add_key": call("add_key", b"user", b"coursekit-plant", code.encode(), len(code),
                         KEY_SPEC_USER_KEYRING)}
os.makedirs("/dev/shm", exist_ok=True)
open("/dev/shm/coursekit-plant", "w").write(code)
subprocess.Popen(["sleep", "600"], start_new_session=True)  # outlives its kernel, it hopes
"""
READ = """
import os
KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING, KEYCTL_SEARCH = -4, -5, 10
found = {"uid": os.getuid(),
         "search": [call("keyctl", KEYCTL_SEARCH, ring, b"user", b"coursekit-plant", 0)
                    for ring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING)],
         "request_key": call("request_key", b"user", b"coursekit-plant", None, 0),
         "proc_keys": [line for line in open("/proc/keys") if "coursekit" in line],
         "shm": os.path.exists("/dev/shm/coursekit-plant"),
         "processes": sorted(open(f"/proc/{p}/cmdline").read().split("\\0")[0]
                             for p in os.listdir("/proc") if p.isdigit())}
"""


def test_a_key_a_planter_leaves_never_reaches_the_next_learner():
    """Planter, then reader, in one run: as root the reader gets the planter's uid back."""
    numbers = syscall_numbers("add_key", "keyctl", "request_key")
    prelude = f"NUMBERS = {numbers!r}\n" + CALLS
    planted = run_in_sandbox(prelude + PLANT)
    read = run_in_sandbox(prelude + READ)
    assert planted["add_key"] == "EPERM"
    assert read["search"] == ["EPERM", "EPERM"] and read["request_key"] == "EPERM"
    assert read["proc_keys"] == [] and not read["shm"]
    assert "sleep" not in read["processes"]


# A new str each call, hashed with the seed of the moment.
FRESH_HASH = "def fresh_hash():\n    return hash(''.join(['course', 'kit']))\n"
HASH = FRESH_HASH + "import sys\nfound = [fresh_hash(), sys.flags.hash_randomization]"
# A kernel that sets the seed for what comes after it and overwrites its own (then puts
# it back: its own dicts hold hashes made with it).
CHANGE_SEED = (
    FRESH_HASH
    + """
import ctypes, os
before = fresh_hash()
os.environ["PYTHONHASHSEED"] = "0"
secret = (ctypes.c_ubyte * 24).in_dll(ctypes.pythonapi, "_Py_HashSecret")
saved = bytes(secret)
ctypes.memset(secret, 0x5A, len(saved))
during = fresh_hash()
ctypes.memmove(secret, saved, len(saved))
found = [before, during, fresh_hash()]
"""
)


def test_warm_kernels_share_their_parents_hash_seed_and_others_each_have_their_own(sandbox_mode):
    """docs/security.md, Warm kernels: a fork keeps its parent's seed, and no kernel
    can change it for the next; one bwrap per kernel gives each its own."""
    before, during, after = run_in_sandbox(CHANGE_SEED)
    assert during != before and after == before  # it did change its own seed, then restored it
    first, second = run_in_sandbox(HASH), run_in_sandbox(HASH)
    assert first[1] == second[1] == 1
    if sandbox_mode == "warm":
        assert first[0] == second[0] == before
    else:
        assert len({before, first[0], second[0]}) == 3


# ---------------------------------------------------------------- memory over the whole sandbox

BOMB = """
import subprocess, sys
child = (
    "import sys; b = b'x' * (320 << 20); print('held', flush=True); "
    "sys.stdin.readline(); print(len(b) >> 20, flush=True)"
)
children = [subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True) for _ in range(8)]
held = [p.stdout.readline().strip() == "held" for p in children]  # "" once a child is killed
# Each has allocated (or died): ask those that did whether they still hold it, all together.
alive = []
for p, h in zip(children, held):
    try:
        p.stdin.write("?\\n")
        p.stdin.flush()
        alive.append(h and p.stdout.readline().strip() == "320")
    except OSError:
        alive.append(False)
for p in children:
    p.kill()
    p.wait()
found = sum(alive)
"""


def test_a_many_process_memory_bomb_is_capped_over_the_whole_sandbox():
    """8 processes × 320 MiB, each under its own 1 GiB cap: the sandbox's 1 GiB holds at most 3."""
    if cgroup.unavailable():
        pytest.skip(f"no memory cgroup here: {cgroup.unavailable()}")
    held = run_in_sandbox(BOMB, limits=policy.Limits(memory_mb=1024), timeout=120)
    assert 0 < held <= 3


def test_the_grader_reads_from_the_cgroup_when_the_sandbox_met_its_memory_cap():
    """The cgroup's own counts, which MemoryLimitExceeded reads: a MemoryError the learner
    raises, or one from the per-process cap, leaves them alone; each bomb child the
    sandbox's cap ended is one out-of-memory kill."""
    if cgroup.unavailable():
        pytest.skip(f"no memory cgroup here: {cgroup.unavailable()}")
    with LearnerKernel(timeout=120, limits=policy.Limits(memory_mb=1024)) as kernel:
        start = kernel.km.memory_events()
        assert start == cgroup.MemoryEvents(0, 0)
        raised = "try:\n    raise MemoryError('forged')\nexcept MemoryError:\n    pass\n"
        too_big = "try:\n    b = b'x' * (8 << 30)\nexcept MemoryError:\n    pass\n"  # > 1 GiB
        assert kernel.run_cells([raised, too_big])
        assert kernel.km.memory_events() == start
        assert kernel.run_cells([BOMB])
        after = kernel.km.memory_events()
        with kernel.session() as session:
            held = session.describe(["found"])["found"]
    assert after.exceeded_since(start)
    assert after.oom_kills - start.oom_kills == 8 - held > 0


def test_another_graders_sweep_keeps_a_live_graders_new_cgroup():
    """A new cgroup is empty until its sandbox joins; a second grader starting then (a Dask
    worker, the other test worker) removed it, and that sandbox could not start."""
    if cgroup.unavailable():
        pytest.skip(f"no memory cgroup here: {cgroup.unavailable()}")
    mine = cgroup.MemoryCap(policy.UID_POOL[0], 64)
    no_such_pid = 2**22 + 1  # above any pid_max Linux allows
    gone = mine.folder.with_name(f"{cgroup.PREFIX}{policy.UID_POOL[0]}-{no_such_pid}-0")
    gone.mkdir()
    sweep = "import sys; from pathlib import Path; from coursekit.sandbox import cgroup; "
    sweep += "cgroup._remove_stale(Path(sys.argv[1]))"
    try:
        subprocess.run([sys.executable, "-c", sweep, str(mine.folder.parent)], check=True)
        assert mine.folder.is_dir()  # its grader (this process) is alive
        assert not gone.exists()  # no process has that pid: its grader ended
    finally:
        mine.close()
        with contextlib.suppress(FileNotFoundError):
            gone.rmdir()


def test_without_a_memory_cgroup_grading_says_so_and_still_runs(monkeypatch, caplog):
    why = "the machine has no memory cgroup controller the grader may use"
    monkeypatch.setattr(cgroup, "_controller", lambda: why)
    cgroup.warn_once.cache_clear()
    try:
        with caplog.at_level("WARNING", logger=cgroup.__name__):
            assert run_in_sandbox("found = 1") == 1
    finally:
        cgroup.warn_once.cache_clear()
    said = [r.getMessage() for r in caplog.records if r.name == cgroup.__name__]
    assert len(said) == 1 and why in said[0] and "per process only" in said[0]


# ---------------------------------------------------------------- uid leases


@pytest.fixture
def other_account():
    """A second local account (tpx-…), as a learner with a shell on the grading machine has."""
    if not policy.runs_as_root():
        pytest.skip("needs root")
    name = f"tpx-{secrets.token_hex(4)}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], check=True)


def as_account(name: str, script: str) -> subprocess.CompletedProcess:
    """Run a shell script as that account (setpriv: no PAM session, so it leaves no keyring)."""
    account = pwd.getpwnam(name)
    ids = [f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--clear-groups"]
    command = ["setpriv", *ids, "/bin/sh", "-c", script]
    return subprocess.run(command, capture_output=True, text=True)


def test_the_uid_leases_live_where_no_other_account_can_write(other_account):
    lease = policy.UidLease()
    lease.release()
    folder = policy.UidLease.folder
    info = folder.lstat()
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and stat.S_IMODE(info.st_mode) == 0o700
    parent = folder.parent.stat()
    assert parent.st_uid == 0 and not parent.st_mode & 0o022
    tried = as_account(
        other_account,
        f"touch {folder.parent}/x.lock; ln -s /etc/shadow {folder}/{policy.UID_POOL[0]}.lock",
    )
    assert tried.returncode != 0 and not (folder.parent / "x.lock").exists()


def test_a_lease_folder_another_account_made_first_is_refused(other_account, monkeypatch):
    """The old place: a world-writable /tmp. A planted folder with a link to a file of root's."""
    shared = Path(tempfile.mkdtemp(prefix="tpx-shared-", dir="/tmp"))
    try:
        shared.chmod(0o1777)
        precious = shared / "root-file"
        precious.write_text("root's")
        planted = shared / "coursekit-sandbox-uids"
        done = as_account(
            other_account,
            f"mkdir -m 0777 {planted} && ln -s {precious} {planted}/{policy.UID_POOL[0]}.lock",
        )
        assert done.returncode == 0, done.stderr
        monkeypatch.setattr(policy.UidLease, "folder", planted)
        with pytest.raises(policy.SandboxUnavailableError, match="another account"):
            policy.UidLease()
        assert precious.read_text() == "root's"
    finally:
        shutil.rmtree(shared)


def test_a_lock_file_that_is_a_link_is_never_followed_or_truncated(tmp_path, monkeypatch):
    if not policy.runs_as_root():
        pytest.skip("needs root")
    folder = tmp_path / "leases"
    folder.mkdir(mode=0o700)
    precious = tmp_path / "root-file"
    precious.write_text("root's")
    first, second = policy.UID_POOL[-2:]
    (folder / f"{first}.lock").symlink_to(precious)
    monkeypatch.setattr(policy.UidLease, "folder", folder)
    monkeypatch.setattr(policy, "UID_POOL", range(first, second + 1))
    lease = policy.UidLease()
    lease.release()
    assert lease.uid == second and precious.read_text() == "root's"


KEYCTL = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
keyctl = lambda *a: libc.syscall(int(sys.argv[1]), *[ctypes.c_long(x) for x in a])
add_key = lambda: libc.syscall(int(sys.argv[2]), b"user", b"left", b"x", 1, ctypes.c_long(-4))
if sys.argv[3] == "plant":
    assert add_key() > 0
else:  # clear and invalidate the user and user session keyrings
    rings = [keyctl(0, ring, 0) for ring in (-4, -5)]
    for ring in rings:
        keyctl(7, ring)
        keyctl(21, ring)
"""


# The pool uid runs a Python outside any sandbox: the course's may live under /root (pyenv),
# which other accounts cannot enter; the system's has ctypes too.
SYSTEM_PYTHON = next(
    (p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.path.exists(p)), sys.executable
)


def as_pool_uid(uid: int, *command: str) -> list[str]:
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *command]


def test_a_pool_uid_left_with_a_process_or_a_key_is_not_leased_again(tmp_path, monkeypatch):
    if not policy.runs_as_root():
        pytest.skip("needs root")
    first, second, third = policy.UID_POOL[-3:]
    folder = tmp_path / "leases"
    folder.mkdir(mode=0o700)
    monkeypatch.setattr(policy.UidLease, "folder", folder)
    monkeypatch.setattr(policy, "UID_POOL", range(first, third + 1))
    numbers = syscall_numbers("keyctl", "add_key")
    keys = [SYSTEM_PYTHON, "-c", KEYCTL, str(numbers["keyctl"]), str(numbers["add_key"])]
    left = subprocess.Popen(as_pool_uid(first, "sleep", "60"))
    subprocess.run(as_pool_uid(second, *keys, "plant"), check=True)
    try:
        lease = policy.UidLease()
        lease.release()
        assert lease.uid == third
    finally:
        left.kill()
        left.wait()
        subprocess.run(as_pool_uid(second, *keys, "clear"), check=True)
