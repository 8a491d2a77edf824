"""The sandbox learner code runs in, and the bridge the grader calls it through."""

from __future__ import annotations

import os
import socket
import sys
import threading

import numpy as np
import pytest

from coursekit.sandbox import policy, warm, wire
from coursekit.sandbox.bridge import BridgeBroken, CallTimedOut, LearnerError
from coursekit.sandbox.kernel import SandboxMixin
from coursekit.sandbox.learner_kernel import LearnerKernel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module", autouse=True, params=["bwrap", "warm"])
def sandbox_mode(request):
    """Every test here runs with both ways of starting a sandboxed kernel."""
    if request.param == "warm" and not warm.supported():
        pytest.skip("warm kernels need root on x86_64 or aarch64")
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
