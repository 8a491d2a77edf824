"""A scratch course and world-writable exchange with one Linux account per learner
(`tpx-…`, removed at the end): what tests/test_exchange_untrusted.py attacks and the live
tests (tests/support/live_class.py) build on."""

from __future__ import annotations

import datetime
import json
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import traceback
from pathlib import Path

import nbformat

from tests.support.course_sandbox import ROOT, CourseSandbox

ASSIGNMENT = "ch3_multihead"


NOTEBOOK = "multihead.ipynb"


# The attackers' side: plain os calls, run as their own accounts by the system Python.
LEARNER_SCRIPT = r"""
import base64, json, os, sys
inbound, role, name, notebook, when = sys.argv[1:6]
links = json.loads(sys.argv[6])
random = base64.urlsafe_b64encode(os.urandom(9)).decode()
folder = os.path.join(inbound, f"{name}+ch3_multihead+{when}+{random}")

def submission(folder, secret=True):
    os.mkdir(folder)
    with open(notebook, "rb") as src, open(os.path.join(folder, "multihead.ipynb"), "wb") as out:
        out.write(src.read())
    with open(os.path.join(folder, "timestamp.txt"), "w") as fh:
        fh.write(when.replace("T", " ") + " UTC")
    if secret:
        with open(os.path.join(folder, "submission_secret.txt"), "w") as fh:
            fh.write(os.urandom(64).hex())
    os.chmod(folder, 0o777)

if role in ("honest", "linker", "planter", "dangler", "zero", "sparse", "crowd"):
    submission(folder)
if role == "linker":
    for link, target in links.items():
        os.symlink(target, os.path.join(folder, link))
elif role == "dangler":
    os.symlink("/nonexistent/tpx-target", os.path.join(folder, "data.npy"))
elif role == "zero":
    os.symlink("/dev/zero", os.path.join(folder, "weights.bin"))
elif role == "sparse":
    with open(os.path.join(folder, "big.bin"), "wb") as fh:
        fh.truncate(2 << 30)
elif role == "fifo":
    submission(folder, secret=False)
    os.mkfifo(os.path.join(folder, "submission_secret.txt"))
elif role == "crowd":
    for i in range(300):
        with open(os.path.join(folder, f"a{i:03d}.txt"), "w") as fh:
            fh.write(f"file {i}\n")
    for odd in ("new\nline.txt", "-rf", "x" * 200):
        with open(os.path.join(folder, odd), "w") as fh:
            fh.write("odd\n")
    with open(os.path.join(os.fsencode(folder), b"not-utf8-\xff.txt"), "wb") as fh:
        fh.write(b"odd\n")
    deep = folder
    for level in range(12):
        deep = os.path.join(deep, f"d{level}")
        os.mkdir(deep)
    with open(os.path.join(deep, "bottom.txt"), "w") as fh:
        fh.write("deep\n")
elif role == "shapes":
    base = os.path.join(inbound, f"{name}+ch3_multihead+")
    os.mkfifo(base + "2030-01-01 00:00:00.000000 UTC+fifo")
    os.symlink(links["solutions"], base + "2030-01-02 00:00:00.000000 UTC+link")
    with open(base + "2030-01-03 00:00:00.000000 UTC+file", "w") as fh:
        fh.write("not a folder\n")
    submission(base + "not-a-time+garbage")
print(folder)
"""


def run_as(user: str, args: list[str], home: Path, **kwargs) -> subprocess.CompletedProcess:
    entry = pwd.getpwnam(user)
    result = subprocess.run(
        args,
        cwd=home,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        user=entry.pw_uid,
        group=entry.pw_gid,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=300,
        **kwargs,
    )
    assert result.returncode == 0, f"{user}: {args[:2]}\n{result.stdout}\n{result.stderr}"
    return result


class Class:
    """The scratch course, its exchange, its accounts and everything they did."""

    def __init__(self, root: Path, exchange: Path, homes: Path):
        self.course = CourseSandbox(root)
        self.root, self.exchange, self.homes = root, exchange, homes
        self.suffix = secrets.token_hex(2)
        self.prefix = "tpx"  # of every account's name: removed by it if a run is killed
        self.accounts: dict[str, str] = {}
        self.before: dict[str, str] = {}  # notebooks as submitted, by role

    @property
    def inbound(self) -> Path:
        return self.exchange / self.course.course_id / "inbound"

    def add_account(self, role: str) -> str:
        name = f"{self.prefix}-{self.suffix}-{role}"
        home = self.homes / name
        subprocess.run(
            ["useradd", "--no-create-home", "--home-dir", str(home), "--shell", "/bin/sh", name],
            check=True,
        )
        self.accounts[role] = name
        home.mkdir()
        shutil.chown(home, name, name)
        return name

    def remove_accounts(self) -> None:
        for name in self.accounts.values():
            subprocess.run(["userdel", name], check=False, capture_output=True)

    def home(self, role: str) -> Path:
        return self.homes / self.accounts[role]

    def give(self, role: str, nb, relative: str) -> Path:
        """Write a notebook into the learner's home, owned by them."""
        path = self.home(role) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        for part in [path, *path.relative_to(self.home(role)).parents]:
            shutil.chown(self.home(role) / part, self.accounts[role], self.accounts[role])
        return path

    def stock_submit(self, role: str, nb) -> str:
        """What stock `nbgrader submit` writes, written by the learner's own account.

        The course's interpreter lives under /root, which other accounts cannot
        enter outside `make hub`, so the learner's side is a plain script.
        """
        return self.attack(role, nb, script_role="honest")

    def attack(self, role, nb, name=None, when=None, script_role=None) -> str:
        """Run the learner's script as their account; returns the inbound folder it names."""
        notebook = self.give(role, nb, "attack.ipynb")
        when = when or datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        links = {
            "solutions": str(self.root / "solutions"),
            "grader_tests": str(self.root / "grader_tests"),
            "gradebook.db": str(self.root / "gradebook.db"),
            "notes.txt": str(self.root / "instructor_notes.txt"),
        }
        name = name or self.accounts[role]
        args = [str(self.inbound), script_role or role, name, str(notebook), when]
        return run_as(
            self.accounts[role],
            ["/usr/bin/python3", "-c", LEARNER_SCRIPT, *args, json.dumps(links)],
            self.home(role),
        ).stdout.strip()

    def nbgrader(self, *args: str) -> subprocess.CompletedProcess:
        return self.course.run(*args, check=False)


def shared_folders() -> tuple[Path, Path]:
    """An exchange every account may write to (sticky, as a shared /srv/nbgrader/exchange)
    and a folder for the learners' homes, outside the root-only pytest folder."""
    exchange = Path(tempfile.mkdtemp(prefix="tpx-exchange-", dir="/tmp"))
    homes = Path(tempfile.mkdtemp(prefix="tpx-homes-", dir="/tmp"))
    exchange.chmod(0o1777)
    homes.chmod(0o755)
    return exchange, homes


def copy_course_packages(root: Path) -> None:
    """The assignment's reference and the hidden checks, which the grader imports."""
    (root / "solutions").mkdir()
    shutil.copy(ROOT / "solutions" / f"{ASSIGNMENT}.py", root / "solutions")
    (root / "solutions" / "__init__.py").write_text("")
    shutil.copytree(ROOT / "grader_tests", root / "grader_tests")


def reference_lines(c: Class) -> list[str]:
    """Distinctive lines of the reference and the hidden checks (not the notebook's own)."""
    released = "\n".join(cell.source for cell in c.course.release_notebook(ASSIGNMENT).cells)
    lines = []
    for path in [
        c.root / "solutions" / f"{ASSIGNMENT}.py",
        *(c.root / "grader_tests").glob("*.py"),
    ]:
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if len(line) > 25 and not line.startswith("#") and line not in released:
                lines.append(line)
    return lines


def as_account(user: str, home: Path, action) -> None:
    """`action()` in a fork of this process that has become `user` (the course's
    interpreter lives under /root, which a learner's account cannot enter)."""
    entry = pwd.getpwnam(user)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)
            os.environ["HOME"] = str(home)
            os.chdir(home)
            action()
            status = 0
        except BaseException:
            os.write(write, traceback.format_exc().encode())
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        error = pipe.read().decode()
    assert os.waitpid(pid, 0)[1] == 0, error
