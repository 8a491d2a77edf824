"""Another account on the grading machine can neither reach nor disturb the bridge sockets.

On `make hub` every learner has a shell on the grading machine. Stock bridge
sockets lay in a 0711 folder with 0666 sockets under /tmp: an account that
only connected to them and said nothing cut an honest learner from 20/20 to
5/20. Here a second local account (`tpx-…`, made with useradd and removed
afterwards) is handed the path of every bridge socket the moment grading
makes it, and tries, while a class of honest learners is graded, to connect
by that path, through /proc/<pid>/root of every process, and through a
descriptor of the socket itself opened for it by root (as if the folder let
it through). Nothing connects, and the learners keep every point.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pwd
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from coursekit.sandbox import bridge
from coursekit.simulate import submissions
from tests.support.course_sandbox import CourseSandbox

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "ch3_multihead"
LEARNERS = ("honest_a", "honest_b")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root: it makes an account"),
    pytest.mark.sandbox,
    pytest.mark.root,
]

# Started as root: for each socket path read from stdin, two children that become the
# other account and try to connect (by the path, and through a descriptor root opened),
# and one more try through every process's /proc/<pid>/root. A connection that works
# is held open and silent. Each try prints one JSON line: what happened.
CONNECTOR = r"""
import ctypes, errno, glob, json, os, socket, sys, time
uid, gid = int(sys.argv[1]), int(sys.argv[2])

def become_other_account():
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    # A change of uid makes the process undumpable, which would close its own
    # /proc/self/fd to it: the descriptor route must fail for the socket's sake only.
    ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE

def attempt(how, target):
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.connect(target)
    except OSError as error:
        return {"how": how, "error": errno.errorcode.get(error.errno, str(error.errno))}
    time.sleep(20)  # holds it, silent, as the attack did
    return {"how": how, "connected": True}

def tried(how, prepare):
    if os.fork() == 0:
        try:
            target = prepare()
            become_other_account()
            if isinstance(target, list):
                results = [attempt(how, t) for t in target] or [{"how": how, "error": "none"}]
            else:
                results = [attempt(how, target)]
            for result in results:
                # one write(2) per line: the tries of several children share this pipe
                os.write(1, (json.dumps(result) + "\n").encode())
        finally:
            os._exit(0)

for line in sys.stdin:
    path = line.strip()
    tried("path", lambda: path)
    tried("descriptor", lambda: f"/proc/self/fd/{os.open(path, os.O_PATH)}")
    tried("proc-root", lambda: glob.glob("/proc/[0-9]*/root/run/bridge.sock"))
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
"""


@pytest.fixture(scope="module")
def account():
    name = f"tpx-br-{secrets.token_hex(3)}"
    subprocess.run(
        ["useradd", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/bin/sh", name],
        check=True,
    )
    try:
        entry = pwd.getpwnam(name)
        yield entry.pw_uid, entry.pw_gid
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True)


def bridge_sockets() -> list[str]:
    return glob.glob("/run/coursekit-bridges/*/bridge.sock")


class Watcher:
    """Hands the connector every bridge socket path as soon as it appears."""

    def __init__(self, connector: subprocess.Popen):
        self.connector, self.seen = connector, set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            for path in bridge_sockets():
                if path not in self.seen:
                    self.seen.add(path)
                    with contextlib.suppress(OSError):
                        self.connector.stdin.write(path + "\n")
                        self.connector.stdin.flush()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.fixture(scope="module")
def attacked_class(account, tmp_path_factory):
    uid, gid = account
    sandbox = CourseSandbox(tmp_path_factory.mktemp("other-account"))
    sandbox.generate(ASSIGNMENT)
    release, source = sandbox.release_notebook(ASSIGNMENT), sandbox.source_notebook(ASSIGNMENT)
    for name in LEARNERS:
        sandbox.submit(name, ASSIGNMENT, submissions.fill(release, source))
    connector = subprocess.Popen(
        [sys.executable, "-c", CONNECTOR, str(uid), str(gid)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    watcher = Watcher(connector)
    try:
        run = sandbox.grade("-j", "2", "--cell-timeout", "5", check=False)
    finally:
        watcher.stop()
        tries_out, _ = connector.communicate(timeout=120)  # closes its stdin: it ends
    tries = [json.loads(line) for line in tries_out.splitlines()]
    return sandbox, run, watcher.seen, tries


def test_the_other_account_tried_every_socket_and_never_connected(attacked_class):
    _, run, seen, tries = attacked_class
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert len(seen) >= len(LEARNERS)  # one bridge per notebook, each handed over at once
    assert {t["how"] for t in tries} == {"path", "descriptor", "proc-root"}
    assert [t for t in tries if t.get("connected")] == []
    # The folder stops the path; the socket's own mode stops its descriptor.
    assert {t["error"] for t in tries if t["how"] in ("path", "descriptor")} == {"EACCES"}
    assert {t["error"] for t in tries if t["how"] == "proc-root"} <= {"EACCES", "ENOENT", "none"}


def test_the_honest_learners_keep_every_point(attacked_class):
    sandbox, run, _, _ = attacked_class
    scores, max_scores = sandbox.scores(ASSIGNMENT), sandbox.max_scores(ASSIGNMENT)
    for name in LEARNERS:
        lost = {c: s for c, s in scores[name].items() if s is not None and s < max_scores[c]}
        assert lost == {}, sandbox.autograded_errors(name, ASSIGNMENT)
    assert "보호 장치" not in run.stdout


BECOME = (
    "import ctypes, os, socket\n"
    "fd = os.open({path!r}, os.O_PATH)  # root opens it, as if the folder let the account in\n"
    "os.setgroups([]); os.setresgid({gid}, {gid}, {gid}); os.setresuid({uid}, {uid}, {uid})\n"
    "ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: its /proc/self/fd stays its own\n"
)


def test_an_account_that_gets_through_anyway_is_closed_unread(account):
    """The last wall: with the socket's mode opened up by hand and a way past the folder,
    the peer check closes another uid's connection before reading a byte (SO_PEERCRED)."""
    uid, gid = account
    the_bridge = bridge.Bridge()
    try:
        the_bridge.admit(os.geteuid(), os.getpid())  # the other account runs below this test
        os.chmod(the_bridge.path, 0o666)
        script = BECOME.format(path=the_bridge.path, uid=uid, gid=gid) + (
            "s = socket.socket(socket.AF_UNIX); s.connect(f'/proc/self/fd/{fd}')\n"
            "s.sendall(b'x' * 32); s.settimeout(30)\n"
            "try:\n    print(s.recv(1))\nexcept ConnectionResetError:\n    print('reset')\n"
        )
        other = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        the_bridge.listener.settimeout(60)
        connection, _ = the_bridge.listener.accept()  # the route works: it got this far
        assert not the_bridge.is_sandbox(connection)
        time.sleep(0.5)  # its bytes arrive, and stay unread
        connection.close()
        out, _ = other.communicate(timeout=60)
        assert out.strip() == "reset"  # closed with its bytes unread
    finally:
        the_bridge.close()


def test_the_socket_folder_is_closed_to_the_other_account(account):
    uid, gid = account
    the_bridge = bridge.Bridge()
    try:
        script = BECOME.format(path=the_bridge.path, uid=uid, gid=gid) + (
            f"for target in ({the_bridge.folder!r}, {the_bridge.path!r}):\n"
            "    try:\n        os.stat(target)\n        print('seen')\n"
            "    except PermissionError:\n        print('denied')\n"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        assert done.stdout.split() == ["denied", "denied"], done.stderr
    finally:
        the_bridge.close()
