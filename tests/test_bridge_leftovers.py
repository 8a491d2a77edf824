"""A grader SIGKILLed mid-launch leaves its bridge folder; the next one sweeps it.

Each case is a real grader process (the course's interpreter, the course's
code) stopped at the point named, then SIGKILLed: with its bridge socket
(`bridge.Bridge`) made or not yet bound, with a warm kernel's link folder
(`warm.bridge_link`) made, before or after its link. The next folder made in
the same place sweeps it; a live grader's folder, stopped at the same
point, is kept.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from coursekit.sandbox import bridge, leftover_folders, policy, warm

pytestmark = [pytest.mark.sandbox]

ROOT = Path(__file__).resolve().parent.parent

# The grader's side, stopped where the case says: it prints its folder, then waits.
GRADER = r"""
import os, socket, sys, time
from coursekit.sandbox import bridge, warm
case = sys.argv[1]

def report_and_wait(folder):
    print(folder, flush=True)
    time.sleep(600)

class NeverBound(socket.socket):  # the folder is made, the socket not yet bound
    def bind(self, path):
        report_and_wait(os.path.dirname(path))

if case == "bridge-empty":
    socket.socket = NeverBound
    bridge.Bridge()
elif case == "bridge-socket":
    report_and_wait(bridge.Bridge().folder)
else:
    own = bridge.Bridge()
    if case == "link-empty":
        os.link = lambda source, link, **kwargs: report_and_wait(os.path.dirname(link))
    with warm.bridge_link(own.path, int(sys.argv[2])) as link:
        report_and_wait(os.path.dirname(link))
"""
CASES = ["bridge-empty", "bridge-socket", "link-empty", "link-socket"]


def stopped_grader(case: str) -> tuple[subprocess.Popen, Path]:
    uid = str(policy.UID_POOL.start)
    process = subprocess.Popen(
        [sys.executable, "-c", GRADER, case, uid],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline().strip()
    assert line, f"the grader said nothing ({case})"
    return process, Path(line)


def base_of(case: str) -> str:
    return bridge.private_base() if case.startswith("bridge") else str(warm._bridge_links())


@pytest.mark.skipif(os.geteuid() != 0, reason="warm links live in root's /run/coursekit-warm")
@pytest.mark.parametrize("case", CASES)
def test_a_killed_graders_folder_is_swept_and_a_live_ones_kept(case):
    killed, left = stopped_grader(case)
    live, kept = stopped_grader(case)
    try:
        assert left.name.startswith(f"bridge-{killed.pid}-")
        expected = [] if case.endswith("empty") else [leftover_folders.SOCKET_NAME]
        assert sorted(os.listdir(left)) == expected
        killed.send_signal(signal.SIGKILL)
        killed.wait()  # reaped, as a grader's parent does
        ours = leftover_folders.make(base_of(case))  # the next start
        os.rmdir(ours)
        assert not left.exists()
        assert kept.is_dir() and sorted(os.listdir(kept)) == expected
    finally:
        for process in (killed, live):
            process.kill()
            process.wait()
        for base in {base_of(case), bridge.private_base()}:  # a link's grader has a Bridge too
            leftover_folders.sweep(base)
    assert not kept.exists()  # gone once its grader is


@pytest.fixture
def short_base():
    """A folder with a short path: a Unix socket's path must fit in 108 bytes, and
    pytest's tmp_path under xdist does not leave room for bridge-<pid>-<name>/bridge.sock."""
    base = Path(tempfile.mkdtemp(prefix="bl-", dir="/tmp"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_a_folder_holding_anything_else_or_a_socket_in_use_is_kept(short_base):
    base = short_base
    dead = subprocess.Popen(["true"])
    dead.wait()
    odd = base / f"bridge-{dead.pid}-odd"
    odd.mkdir()
    (odd / "notes.txt").write_text("not a bridge's")
    in_use = base / f"bridge-{dead.pid}-inuse"
    in_use.mkdir()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(in_use / leftover_folders.SOCKET_NAME))
    listener.listen(1)
    unnamed = base / "bridge-nopid"  # no pid in its name: nothing proves it abandoned
    unnamed.mkdir()
    empty = base / f"bridge-{dead.pid}-empty"
    empty.mkdir()
    zombie = subprocess.Popen(["true"])
    os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)  # ended, not yet reaped
    of_zombie = base / f"bridge-{zombie.pid}-zombie"
    of_zombie.mkdir()
    try:
        assert set(leftover_folders.sweep(str(base))) == {empty.name, of_zombie.name}
        assert odd.is_dir() and in_use.is_dir() and unnamed.is_dir()
    finally:
        listener.close()
        zombie.wait()
    assert leftover_folders.sweep(str(base)) == [in_use.name]  # no one listens now
