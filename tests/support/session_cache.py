"""What a test session makes once and reuses: a folder the pytest-xdist workers share, and
making something in it under a file lock, by whichever worker asks first.

tests/conftest.py sets SHARED at the start of a session; outside one (bench/ using a
helper) it is None and every caller makes its own.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

SHARED: Path | None = None


def shared_base(tmp_path_factory) -> Path:
    """The session's tmp folder, shared by its pytest-xdist workers."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the workers' own folders are popen-gw0, popen-gw1 in it
    return base


def made_once(name: str, make: Callable[[Path], None]) -> Path | None:
    """SHARED/name, made by `make(folder)` once per session; None when no session shares."""
    if SHARED is None:
        return None
    folder, done = SHARED / name, SHARED / f"{name}.done"
    with (SHARED / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # an earlier attempt that failed
            folder.mkdir(parents=True)
            make(folder)
            done.touch()
    return folder


def contents_key(root: Path, *extra: str) -> str:
    """A digest of every file under `root` (names and bytes), the COURSE_/NBGRADER_/
    JUPYTER_ environment, and `extra`: what a command run in `root` can depend on."""
    digest = hashlib.sha256("\0".join(extra).encode())
    for name, value in sorted(os.environ.items()):
        if name.startswith(("COURSE_", "NBGRADER", "JUPYTER")):
            digest.update(f"{name}={value}\0".encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink()):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    return digest.hexdigest()[:24]
