"""Correct answers, and a bridge server of its own planted in the kernel.

The kernel's half of the bridge lives in the kernel (sys.modules
["coursekit_bridge"]), so the learner's cell can plant its own before the
grader's first test cell: a server that speaks the protocol and answers
every call the grader makes with "verdict": "passed" and True. The grader
takes whatever comes over the bridge as the learner's answer only, so every
cell judged on these answers scores 0, even though the functions themselves
are right (the kernel's own runs of the visible cells pass, hence
TrustedCheckFailed).
"""

from tests.hostile import ALL_CELLS

FUNCTION = "split_heads"
SOURCE = """
import json
import socket
import struct
import sys
import types

answered = [0]


def _send(sock, header):
    head = json.dumps({**header, "blobs": []}).encode()
    sock.sendall(struct.pack(">I", len(head)) + head)


def _receive(sock):
    def exactly(size):
        data = b""
        while len(data) < size:
            chunk = sock.recv(size - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    (size,) = struct.unpack(">I", exactly(4))
    header = json.loads(exactly(size))
    for length in header.get("blobs", []):
        exactly(length)
    return header


def serve(path, token, user_ns):
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(path)
        sock.sendall(token.encode())  # as the real kernel half does
        while True:
            try:
                header = _receive(sock)
            except EOFError:
                return
            if header.get("op") == "done":
                return
            answered[0] += 1
            if header.get("op") == "describe":
                info = {name: {"kind": "function"} for name in header.get("names", [])}
                _send(sock, {"verdict": "passed", "info": info})
            else:
                calls = len(header.get("calls", []))
                _send(sock, {"verdict": "passed", "results": [{"ok": True}] * calls})


planted = types.ModuleType("coursekit_bridge")
planted.serve = serve
sys.modules["coursekit_bridge"] = planted
get_ipython().events.register("post_run_cell", lambda result: print("가짜 답:", answered[0]))


def split_heads(M, h):
    n, d_model = M.shape
    return M.reshape(n, h, d_model // h).transpose(1, 0, 2)
"""
ZERO = ALL_CELLS
INCIDENT = "TrustedCheckFailed"
RAN = r"가짜 답: [1-9]\d+"
