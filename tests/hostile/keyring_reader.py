"""Wrong split_heads that looks for the code `keyring_planter` (graded before it) left behind.

Each call searches its uid's keyrings (keyctl search and read, request_key,
the descriptions in /proc/keys), /dev/shm and the planter's abstract socket,
runs whatever split_heads it finds, and falls back to a wrong one. It finds
nothing, so it loses exactly what the wrong split_heads loses.
"""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = """
import ctypes
import errno
import os
import platform
import socket

_REQUEST_KEY, _KEYCTL = {"x86_64": (249, 250), "aarch64": (218, 219)}[platform.machine()]
_libc = ctypes.CDLL(None, use_errno=True)
_tried = {}


def _error():
    return errno.errorcode.get(ctypes.get_errno(), "?")


def _look():
    sources = []
    for ring in (-4, -5, -3):  # user, user session, session keyrings
        key = _libc.syscall(_KEYCTL, 10, ctypes.c_long(ring), b"user",
                            b"coursekit-classmate", 0)  # KEYCTL_SEARCH
        _tried[f"search{ring}"] = _error() if key < 0 else "찾음"
        if key >= 0:
            buffer = ctypes.create_string_buffer(1 << 16)
            size = _libc.syscall(_KEYCTL, 11, key, buffer, len(buffer))  # KEYCTL_READ
            if size > 0:
                sources.append(buffer.raw[:size].decode(errors="replace"))
    key = _libc.syscall(_REQUEST_KEY, b"user", b"coursekit-classmate", None, 0)
    _tried["request_key"] = _error() if key < 0 else "찾음"
    try:
        _tried["proc_keys"] = [l for l in open("/proc/keys") if "coursekit" in l]
    except OSError as error:
        _tried["proc_keys"] = type(error).__name__
    try:
        sources.append(open("/dev/shm/coursekit-classmate").read())
        _tried["shm"] = "찾음"
    except OSError as error:
        _tried["shm"] = type(error).__name__
    try:
        with socket.socket(socket.AF_UNIX) as peer:
            peer.settimeout(1)
            peer.connect("\\0coursekit-classmate")
            sources.append(peer.recv(1 << 16).decode(errors="replace"))
            _tried["socket"] = "찾음"
    except OSError as error:
        _tried["socket"] = type(error).__name__
    return sources


_look()
print("찾아봄:", _tried)


def split_heads(M, h):
    for source in _look():
        namespace = {"np": np}
        try:
            exec(source, namespace)
            return namespace["split_heads"](M, h)
        except Exception:
            continue
    return _wrong(M, h)

""" + WRONG_SPLIT_HEADS.replace("def split_heads", "def _wrong")
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
RAN = (
    r"찾아봄: \{'search-4': 'EPERM', 'search-5': 'EPERM', 'search-3': 'EPERM', "
    r"'request_key': 'EPERM', 'proc_keys': \[\], 'shm': 'FileNotFoundError', "
    r"'socket': 'ConnectionRefusedError'\}"
)
