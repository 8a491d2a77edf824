"""Correct answers, and a planted bridge that answers with one 16 MiB array referenced 128 times.

The kernel's half of the bridge lives in the kernel, so the learner's cell
plants its own for the grader's first test cell: it answers the first call
with one 16 MiB blob that every value and argument of the reply references
64 times (decoded one array per reference, that was 2 GiB in the grader
for one call), then removes itself, so the grader's own half serves the
rest. The grader admits each blob once: the reply breaks the bridge, that
cell scores 0 with the reason recorded, and every later cell is graded as
usual.
"""

FUNCTION = "split_heads"
SOURCE = """
import json
import socket
import struct
import sys
import types


def _frame(sock, header, blobs=()):
    head = json.dumps({**header, "blobs": [len(b) for b in blobs]}).encode()
    sock.sendall(struct.pack(">I", len(head)) + head)
    for blob in blobs:
        sock.sendall(blob)


def _read(sock):
    (size,) = struct.unpack(">I", sock.recv(4, socket.MSG_WAITALL))
    header = json.loads(sock.recv(size, socket.MSG_WAITALL))
    for length in header.get("blobs", []):
        sock.recv(length, socket.MSG_WAITALL)
    return header


def serve(path, token, user_ns):
    del sys.modules["coursekit_bridge"]  # once: the grader's own half serves the next cells
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(path)
        sock.sendall(token.encode())
        while True:
            header = _read(sock)
            if header.get("op") != "describe":
                break
            info = {name: {"kind": "function"} for name in header.get("names", [])}
            _frame(sock, {"info": info})
        if header.get("op") == "call":
            array = {"t": "nd", "b": 0, "dtype": "<f8", "shape": [2 * 2**20]}
            huge = {"t": "list", "v": [array] * 64}
            results = [{"ok": huge, "args": huge}] * len(header.get("calls", []))
            _frame(sock, {"results": results}, [bytes(16 << 20)])
            try:
                _read(sock)
            except (OSError, EOFError, struct.error):
                pass


planted = types.ModuleType("coursekit_bridge")
planted.serve = serve
sys.modules["coursekit_bridge"] = planted


def split_heads(M, h):
    n, d_model = M.shape
    return M.reshape(n, h, d_model // h).transpose(1, 0, 2)
"""
ZERO = frozenset({"split_heads_seed"})
INCIDENT = "BridgeBroken"
