"""Wrong split_heads that asks a server on the grading machine for the reference.

The test listens on a TCP port of 127.0.0.1 and would send the reference
split_heads to anyone who connects; the learner's cell and each call try
that port (IPv4 and IPv6 loopback), exec what comes back, and fall back to a
wrong split_heads. The sandbox has its own empty network namespace, so the
connection fails, the listener accepts nothing and the wrong answer loses.
"""

from tests.hostile import SPLIT_HEADS_LOSSES

FUNCTION = "split_heads"
SOURCE = """
import socket


def _ask_for_the_reference():
    for host in ("127.0.0.1", "localhost", "::1"):
        try:
            with socket.create_connection((host, @PORT@), timeout=2) as connection:
                connection.sendall(b"split_heads\\n")
                code = b""
                while chunk := connection.recv(65536):
                    code += chunk
        except OSError as error:
            print("연결 실패:", host, type(error).__name__, error)
            continue
        namespace = {"np": np}
        exec(code.decode(), namespace)
        return namespace["split_heads"]
    return None


_reference = _ask_for_the_reference()


def split_heads(M, h):
    reference = _reference or _ask_for_the_reference()
    if reference is not None:
        return reference(M, h)
    return np.zeros((h, M.shape[0], M.shape[1] // h))
"""
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
RAN = r"연결 실패: 127\.0\.0\.1 ConnectionRefusedError"
