"""A correct split_heads whose cell leaves its code where a classmate graded later might look.

It stores its source in its uid's kernel keyring (add_key, with every
permission opened: keys outlive the sandbox, and as root the next sandbox
may get the same pool uid), in /dev/shm (if it may write there), and in a detached process that
serves it on an abstract Unix socket. The seccomp filter refuses add_key,
/dev/shm and the network are the sandbox's own, and the process dies with
the sandbox's PID namespace, so `keyring_reader` (graded after it in the
same run) finds nothing. The planter itself keeps full marks.
"""

FUNCTION = "split_heads"
SOURCE = '''
def split_heads(M, h):
    n, d_model = M.shape
    return M.reshape(n, h, d_model // h).transpose(1, 0, 2)


import ctypes
import errno
import os
import platform
import subprocess
import sys

_code = """
def split_heads(M, h):
    n, d_model = M.shape
    return M.reshape(n, h, d_model // h).transpose(1, 0, 2)
"""
# The attacker types the numbers: add_key and keyctl on this machine.
_ADD_KEY, _KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
_libc = ctypes.CDLL(None, use_errno=True)


def _plant():
    found = {}
    key = _libc.syscall(_ADD_KEY, b"user", b"coursekit-classmate", _code.encode(),
                        len(_code), ctypes.c_long(-4))  # the user keyring
    if key < 0:
        found["key"] = errno.errorcode[ctypes.get_errno()]
    else:
        _libc.syscall(_KEYCTL, 5, key, 0x3F3F3F3F)  # KEYCTL_SETPERM: anyone may read
        found["key"] = "심음"
    try:
        os.makedirs("/dev/shm", exist_ok=True)
        with open("/dev/shm/coursekit-classmate", "w") as shared:
            shared.write(_code)
        found["shm"] = "심음"
    except OSError as error:
        found["shm"] = type(error).__name__
    server = (
        "import socket, sys\\n"
        "s = socket.socket(socket.AF_UNIX)\\n"
        "s.bind('\\\\0coursekit-classmate')\\n"
        "s.listen(8)\\n"
        "while True:\\n"
        "    c, _ = s.accept()\\n"
        "    c.sendall(sys.argv[1].encode())\\n"
        "    c.close()\\n"
    )
    subprocess.Popen([sys.executable, "-c", server, _code], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    found["server"] = "띄움"
    return found


print("심기:", _plant())
'''
ZERO = frozenset()
INCIDENT = None
RAN = r"심기: \{'key': 'EPERM', 'shm': '\w+', 'server': '띄움'\}"
