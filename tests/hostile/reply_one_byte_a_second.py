"""Correct answers, and a planted bridge that sends its reply one byte a second.

The learner's cell plants its own kernel half of the bridge for the grader's
first test cell: it answers the first call with a frame that announces a
1 MiB header and sends it a byte a second (each byte well within any
per-read timeout: a reply that would take twelve days), then removes itself
so the grader's own half serves the rest. One absolute deadline covers the
grader's whole call, so the cell costs its time limit, scores 0 with the
reason recorded, and every later cell is graded as usual.
"""

FUNCTION = "split_heads"
SOURCE = """
import json
import socket
import struct
import sys
import time
import types


def _frame(sock, header):
    head = json.dumps({**header, "blobs": []}).encode()
    sock.sendall(struct.pack(">I", len(head)) + head)


def _read(sock):
    (size,) = struct.unpack(">I", sock.recv(4, socket.MSG_WAITALL))
    header = json.loads(sock.recv(size, socket.MSG_WAITALL))
    for length in header.get("blobs", []):
        sock.recv(length, socket.MSG_WAITALL)
    return header


sent = [0]


def serve(path, token, user_ns):
    del sys.modules["coursekit_bridge"]  # once: the grader's own half serves the next cells
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(path)
        sock.sendall(token.encode())
        while (header := _read(sock)).get("op") == "describe":
            info = {name: {"kind": "function"} for name in header.get("names", [])}
            _frame(sock, {"info": info})
        try:
            sock.sendall(struct.pack(">I", 2**20))
            while True:
                sock.sendall(b" ")
                sent[0] += 1
                time.sleep(1)
        except (OSError, KeyboardInterrupt):
            pass


planted = types.ModuleType("coursekit_bridge")
planted.serve = serve
sys.modules["coursekit_bridge"] = planted
get_ipython().events.register(
    "post_run_cell", lambda result: sent[0] and print(f"한 바이트씩 {sent[0]}초 보냄")
)


def split_heads(M, h):
    n, d_model = M.shape
    return M.reshape(n, h, d_model // h).transpose(1, 0, 2)
"""
ZERO = frozenset({"split_heads_seed"})
INCIDENT = "CallTimeLimit"
RAN = r"한 바이트씩 [1-9]\d*초 보냄"
