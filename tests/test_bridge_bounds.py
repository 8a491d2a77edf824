"""The grader's half of the bridge stays bounded whatever the kernel's half sends.

The kernel here is a plain Python process that runs what the grader sends
it (the bridge's boot code) as a sandboxed kernel would, with or without a
hostile `coursekit_bridge` planted first; the grader's side runs in a fresh
process of its own, so that its memory is measured alone (VmHWM, the peak of
its own resident size, against VmRSS before the call).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from coursekit.sandbox import bridge
from coursekit.sandbox.inside import wire
from tests.support.bridge_client import Client

pytestmark = [pytest.mark.sandbox]

ROOT = Path(__file__).resolve().parent.parent

# The bound docs/security.md states: one session's replies, one frame in flight, and
# the decoded header's objects.
MEMORY_BOUND = bridge.SESSION_REPLY_BYTES + wire.MAX_FRAME_BYTES + (64 << 20)


# A planted kernel half that answers every call with `REPLY` (results and blobs).
PLANTED = """
import json, socket, struct
def serve(path, token, user_ns):
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(path)
    sock.sendall(token.encode())
    def frame(header, blobs=()):
        head = json.dumps({**header, "blobs": [len(b) for b in blobs]}).encode()
        sock.sendall(struct.pack(">I", len(head)) + head)
        for blob in blobs:
            sock.sendall(blob)
    def read():
        (size,) = struct.unpack(">I", sock.recv(4, socket.MSG_WAITALL))
        header = json.loads(sock.recv(size, socket.MSG_WAITALL))
        for n in header["blobs"]:
            sock.recv(n, socket.MSG_WAITALL)
        return header
    while True:
        header = read()
        if header["op"] == "done":
            return
        if header["op"] == "describe":
            frame({"info": {"split_heads": {"kind": "function", "code_names": []}}})
            continue
        frame(*REPLY(len(header["calls"])))
"""

# A 16 MiB array once, referenced 64 times by the value and 64 times by the arguments.
ALIASED_REPLY = (
    PLANTED
    + """
def REPLY(calls):
    array = {"t": "nd", "b": 0, "dtype": "<f8", "shape": [2 * 2**20]}
    huge = {"t": "list", "v": [array] * 64}
    return {"results": [{"ok": huge, "args": huge}] * calls}, [bytes(16 << 20)]
"""
)

# Every reply a full, honest-looking frame of 60 MiB (under the frame's cap).
FULL_FRAMES = (
    PLANTED
    + """
def REPLY(calls):
    array = {"t": "nd", "b": 0, "dtype": "<f8", "shape": [60 * 2**17]}
    args = {"t": "list", "v": [None, None]}
    return {"results": [{"ok": array, "args": args}] * calls}, [bytes(60 << 20)]
"""
)


# The grader's side, in a process of its own: calls split_heads `calls` times in one
# session, keeping every result (as a test cell may), and prints what happened.
GRADER = """
import json, sys, time
import numpy as np
from coursekit.sandbox import bridge
from tests.support.bridge_client import Client

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024

planted, calls, attend = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
the_bridge = bridge.Bridge()
client = Client(planted, the_bridge)
session = bridge.Session(the_bridge, client, time.monotonic() + 120, the_bridge.path)
# The course's language (its config, read once per process) before the session is measured:
# a grading process has imported what that config imports long before its first session.
from coursekit.core import messages
messages.translation(messages.language())
before = status("VmRSS")
kept, outcome = [], "ok"
try:
    if attend:  # a learner function that calls the reference back with arguments it chose
        fn = session.describe(["attend"])["attend"]
        fn = fn.with_helpers({"helper": lambda q, k: q @ k.swapaxes(-1, -2)})
        try:
            kept.append(fn(attend))
        except RuntimeError as error:  # the helper's error, raised in the learner's function
            outcome = f"learner error: {error}"
    else:
        fn = session.describe(["split_heads"])["split_heads"]
        for _ in range(calls):
            kept.append(fn(np.ones((4, 6)), 2))
except bridge.BridgeBroken as error:
    outcome = f"BridgeBroken: {error}"
session.close()
client.kernel.wait(30)
the_bridge.close()
print(json.dumps({"outcome": outcome, "growth": status("VmHWM") - before,
                  "shapes": [list(np.shape(k)) for k in kept]}))
"""


def grade_calls(planted: str, calls: int, attend: int = 0) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", GRADER, planted, str(calls), str(attend)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_an_honest_kernel_half_answers_and_costs_the_grader_little():
    result = grade_calls("", calls=3)
    assert result["outcome"] == "ok"
    assert result["shapes"] == [[2, 4, 3]] * 3
    assert result["growth"] < 32 << 20


def test_one_array_referenced_many_times_breaks_the_bridge_within_the_bound():
    # Stock decoding made 128 arrays of 16 MiB from this one reply (2 GiB).
    result = grade_calls(ALIASED_REPLY, calls=1)
    assert result["outcome"].startswith("BridgeBroken"), result
    assert "used twice" in result["outcome"]
    assert result["growth"] < MEMORY_BOUND, result["growth"] >> 20


def test_full_frames_over_a_session_stop_at_the_sessions_budget_within_the_bound():
    result = grade_calls(FULL_FRAMES, calls=10)  # 600 MiB, each frame under the cap
    assert result["outcome"].startswith("BridgeBroken"), result
    assert len(result["shapes"]) == bridge.SESSION_REPLY_BYTES // (60 << 20)
    assert result["growth"] < MEMORY_BOUND, result["growth"] >> 20


def test_a_reference_helper_called_back_with_huge_arguments_stays_under_its_cap():
    # q @ k.T for a sequence 20 000 long: 3.2 GB in the grader, were it not capped.
    result = grade_calls("", calls=0, attend=20_000)
    assert result["outcome"].startswith("learner error: MemoryError"), result
    assert result["growth"] < bridge.HELPER_MEMORY_BYTES, result["growth"] >> 20
    small = grade_calls("", calls=0, attend=100)  # an ordinary call back goes through
    assert small["outcome"] == "ok" and small["shapes"] == [[1, 100, 100]]


# ---------------------------------------------------------------- time


def test_a_reply_that_trickles_in_stops_at_the_absolute_deadline():
    left, right = socket.socketpair()
    header = json.dumps({"results": [], "blobs": [], "pad": "x" * 200}).encode()
    frame = len(header).to_bytes(4, "big") + header
    sent = []

    def trickle():  # every byte well within any per-recv timeout
        for byte in frame:
            try:
                left.sendall(bytes([byte]))
            except OSError:
                return
            sent.append(byte)
            time.sleep(0.05)

    writer = threading.Thread(target=trickle, daemon=True)
    writer.start()
    with pytest.raises(TimeoutError):
        wire.receive(right, deadline=time.monotonic() + 1)
    assert len(sent) < len(frame)  # it stopped before the frame was in
    right.close()
    writer.join(30)
    left.close()


def test_a_blob_backs_one_array_only():
    blobs = [bytearray(16)]
    array = {"t": "nd", "b": 0, "dtype": "<f8", "shape": [2]}
    decoder = wire.Decoder(blobs)
    assert decoder.value(array).tolist() == [0.0, 0.0]
    with pytest.raises(wire.WireError, match="twice"):
        decoder.value(array)
    with pytest.raises(wire.WireError, match="twice"):
        wire.unpack({"t": "list", "v": [array, array]}, blobs)
    got = wire.Decoder([bytes(8)]).value({"t": "nd", "b": 0, "dtype": "<f8", "shape": [1]})
    assert got.flags.writeable  # as the copies it used to make
    assert np.array_equal(got, [0.0])


# ---------------------------------------------------------------- who may connect


def test_the_socket_lives_in_a_private_folder_of_the_grader():
    the_bridge = bridge.Bridge()
    try:
        for folder in (the_bridge.folder, os.path.dirname(the_bridge.folder)):
            info = os.lstat(folder)
            assert (info.st_uid, info.st_mode & 0o777) == (os.geteuid(), 0o700)
        assert not the_bridge.folder.startswith("/tmp/")
        assert os.lstat(the_bridge.path).st_mode & 0o077 == 0
    finally:
        the_bridge.close()


def test_a_base_folder_someone_else_prepared_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    planted = shared / "coursekit"
    planted.mkdir(mode=0o700)
    with pytest.raises(bridge.BridgeSetupError, match="another account"):
        bridge._check_private(str(planted))
    link = tmp_path / "link"
    link.symlink_to(planted)
    with pytest.raises(bridge.BridgeSetupError, match="not a folder"):
        bridge._check_private(str(link))
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    with pytest.raises(bridge.BridgeSetupError, match="mode"):
        bridge._check_private(str(loose))


def test_only_the_kernels_process_tree_gets_the_session():
    """A process of another tree, even one that knows the token, is closed unread."""
    the_bridge = bridge.Bridge()
    squatter = socket.socket(socket.AF_UNIX)  # this test's process: the grader's uid, no kernel
    squatter.connect(the_bridge.path)  # first in the queue, before the kernel connects
    client = Client("", the_bridge, leak_to=squatter)
    session = bridge.Session(the_bridge, client, time.monotonic() + 60, the_bridge.path)
    try:
        split_heads = session.describe(["split_heads"])["split_heads"]
        assert split_heads(np.ones((4, 6)), 2).shape == (2, 4, 3)
        squatter.settimeout(30)
        with pytest.raises(ConnectionResetError):  # closed with its token still unread
            squatter.recv(1)
    finally:
        session.close()
        if client.kernel is not None:
            client.kernel.wait(30)
        squatter.close()
        the_bridge.close()
