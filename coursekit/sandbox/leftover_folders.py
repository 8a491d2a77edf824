"""The bridge folders a grader leaves when it is killed: named with its pid, swept later.

A grader killed with SIGKILL runs no cleanup, so the folder of its bridge
socket (`bridge.Bridge`) or of a warm kernel's link to it
(`warm.bridge_link`, made while the kernel launches) stays behind, empty or
holding that socket. Each such folder is named `bridge-<pid>-<random>`, and
whoever makes the next one in the same place first removes those that are
provably abandoned: the process named is gone (or a zombie), and the folder
holds nothing but `bridge.sock`, a socket no one listens on. Several graders
run at once: a live one's folder is never touched, its pid is alive.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
import stat
import tempfile

SOCKET_NAME = "bridge.sock"
_NAME = re.compile(r"bridge-(\d+)-[a-z0-9_]+\Z")  # mkdtemp's random part has no "-"


def make(base: str) -> str:
    """A new private folder (0700) in `base` named for this process, after a sweep."""
    sweep(base)
    return tempfile.mkdtemp(prefix=f"bridge-{os.getpid()}-", dir=base)


def sweep(base: str) -> list[str]:
    """Remove the abandoned bridge folders in `base`; the names of those removed."""
    try:
        names = os.listdir(base)
    except OSError:
        return []
    removed = []
    for name in sorted(names):
        found = _NAME.match(name)
        if found is None or alive(int(found.group(1))):
            continue
        with contextlib.suppress(OSError):  # another grader's sweep may be at it too
            if _remove_if_abandoned(os.path.join(base, name)):
                removed.append(name)
    return removed


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is no zombie (when unsure: alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another account's process: it exists
    try:
        with open(f"/proc/{pid}/stat", "rb") as info:
            state = info.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in (b"Z", b"X")


def _remove_if_abandoned(folder: str) -> bool:
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        return False
    entries = os.listdir(folder)
    if entries not in ([], [SOCKET_NAME]):
        return False  # not what a bridge leaves: not ours to remove
    if entries:
        path = os.path.join(folder, SOCKET_NAME)
        if not stat.S_ISSOCK(os.lstat(path).st_mode) or _listened_on(path):
            return False
        os.unlink(path)
    os.rmdir(folder)
    return True


def _listened_on(path: str) -> bool:
    """Whether a process accepts connections on the Unix socket `path` (when unsure: yes)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
    except OSError as error:
        return error.errno != errno.ECONNREFUSED
    finally:
        probe.close()
    return True
