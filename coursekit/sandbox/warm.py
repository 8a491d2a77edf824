"""Warm kernels: each sandboxed kernel is a fork of a pre-imported parent.

Starting Python, importing ipykernel and the course's modules (numpy,
pandas) is most of a graded kernel's CPU (`make grade --budget`). A
`Zygote` is a process that has done that once, as root, with the sandbox's
environment and nothing else: no course files read, no learner code run, no
secret in its memory or its environment. Each request forks it; the fork
builds its own sandbox from the same layout steps bwrap gets
(`policy.layout`) — new mount, PID, network, IPC, UTS and cgroup namespaces,
a leased uid, no capabilities, no new privileges, the same limits, the same
seccomp filter (`seccomp.program`), the same memory cgroup (`cgroup`) — and
only then becomes the kernel. A kernel still serves one submission and sees
nothing of another's. The program is `zygote_main` (self-contained, it runs
outside coursekit).

Only as root: without privileges a process cannot build namespaces this way,
and grading falls back to one bwrap per kernel (`kernel.SandboxMixin`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import platform
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from coursekit.sandbox import policy, seccomp

SOURCE = Path(__file__).with_name("zygote_main.py").read_text(encoding="utf-8")
START_TIMEOUT = 120  # seconds for the zygote's imports on a loaded machine
LAUNCH_TIMEOUT = 60  # seconds for one sandbox to be built
KILL_WAIT = 1.0  # seconds a kill waits for the sandbox's end
MACHINES = ("x86_64", "aarch64")  # pivot_root's syscall number is known for these


class WarmKernelError(policy.SandboxUnavailableError):
    """The zygote could not start or could not build a sandbox."""


def supported() -> bool:
    linux = sys.platform.startswith("linux")
    return linux and policy.runs_as_root() and platform.machine() in MACHINES


def kernel_arguments(kernel_cmd: list[str]) -> list[str] | None:
    """The arguments after `python -m ipykernel_launcher`, if the kernel is this Python's."""
    if len(kernel_cmd) < 3 or kernel_cmd[1:3] != ["-m", "ipykernel_launcher"]:
        return None
    found = shutil.which(kernel_cmd[0])
    if found is None or os.path.realpath(found) != os.path.realpath(sys.executable):
        return None
    return kernel_cmd[3:]


class WarmKernelProcess:
    """The part of `subprocess.Popen` jupyter_client uses, for a sandbox's PID 1 (not our child).

    Liveness and signals go through a pidfd; the exit status comes from the
    zygote's fork that waits for it.
    """

    def __init__(self, pid: int, pidfd: int, reply: socket.socket, stderr):
        self.pid, self._pidfd, self._reply = pid, pidfd, reply
        self.stdin = self.stdout = None
        self.stderr = stderr
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and self._ended(0):
            self.returncode = self._exit_status()
            self._close()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not self._ended(timeout):
                raise subprocess.TimeoutExpired("warm kernel", timeout)
            self.poll()
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.returncode is None and self._pidfd >= 0:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signum)

    def kill(self) -> None:
        """Kill the whole sandbox (its PID namespace ends with its PID 1) and see it end.

        Waiting here (milliseconds) spares jupyter_client's 0.1 s polling sleep.
        """
        self.send_signal(signal.SIGKILL)
        self._ended(KILL_WAIT)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def _ended(self, timeout: float | None) -> bool:
        if self._pidfd < 0:
            return True
        ready, _, _ = select.select([self._pidfd], [], [], timeout)
        return bool(ready)

    def _exit_status(self) -> int:
        """What the sandbox's PID 1 exited with, as its waiting parent reports it."""
        with contextlib.suppress(OSError, ValueError):
            ready, _, _ = select.select([self._reply], [], [], 2)
            if ready:
                record = json.loads(self._reply.recv(4096) or b"{}")
                if "exit" in record:
                    return int(record["exit"])
        return -signal.SIGKILL

    def _close(self) -> None:
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1
        self._reply.close()

    def __del__(self):
        with contextlib.suppress(Exception):
            self._close()


class Zygote:
    """One warm parent per grading process; `launch` forks a sandboxed kernel from it."""

    def __init__(self, preload: tuple[str, ...]):
        self.preload = preload
        self._lock = threading.Lock()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Its stderr goes to an unlinked file, not a pipe read by a thread: `make grade`
        # forks its workers after starting it, and a fork of a multi-threaded process
        # can deadlock in the child (Python 3.12+ warns so).
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        with theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-c", SOURCE, str(theirs.fileno()), json.dumps(list(preload))],
                pass_fds=[theirs.fileno()],
                env=policy.environment(policy.HOME),
                cwd="/",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                start_new_session=True,  # a terminal's Ctrl-C reaches the grader, which ends it
            )
        self._socket = ours
        self._pidfd = os.pidfd_open(self.process.pid)
        self.preloaded: list[str] | None = None  # known once it has said it is ready

    def wait_started(self) -> Zygote:
        """Block until the zygote has imported its modules (the first call reads its word).

        A process that forks workers sharing it calls this first: the word
        comes once, on the shared socket.
        """
        with self._lock:
            if self.preloaded is None:
                ready, _, _ = select.select([self._socket], [], [], START_TIMEOUT)
                record = json.loads(self._socket.recv(65536) or b"{}") if ready else {}
                if not record.get("ready"):
                    self.close()
                    raise WarmKernelError(f"the warm-kernel parent did not start: {self.log()}")
                self.preloaded = record.get("preloaded", [])
        return self

    def log(self) -> str:
        """The end of the zygote's first 4 KiB of stderr (read in place: forks share the file)."""
        start = os.pread(self._stderr.fileno(), 4096, 0)
        return start.decode(errors="replace")[-2000:].strip() or "(no output)"

    def alive(self) -> bool:
        """Whether the zygote runs (asked through a pidfd: a forked worker is not its parent)."""
        return self._pidfd >= 0 and not select.select([self._pidfd], [], [], 0)[0]

    def launch(
        self,
        *,
        argv: list[str],
        layout: list[dict],
        files: dict[int, int],
        workdir: str,
        uid: int,
        limits: policy.Limits,
        cgroup: str | None = None,
    ) -> WarmKernelProcess:
        """Fork a kernel in a new sandbox; return once the sandbox is built (or raise).

        cgroup: the cgroup.procs file of the sandbox's memory cgroup, which the
        fork joins before it makes the sandbox (`cgroup.MemoryCap`), or None.
        """
        self.wait_started()
        reply, reply_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        err_read, err_write = os.pipe()
        names = ["reply", "stderr", *files]
        request = {
            "fds": names,
            "layout": layout,
            "workdir": workdir,
            "uid": uid,
            "limits": limits.rlimits(),
            "environment": policy.environment(workdir),
            "argv": argv,
            "hostname": policy.HOSTNAME,
            "cgroup": cgroup,
            # libseccomp's program, installed by the sandbox's PID 1 before learner code runs
            "seccomp": base64.b64encode(seccomp.program()).decode(),
        }
        try:
            with self._lock:
                socket.send_fds(
                    self._socket,
                    [json.dumps(request).encode()],
                    [reply_theirs.fileno(), err_write, *files.values()],
                )
        except OSError as error:
            reply.close()
            os.close(err_read)
            why = f"the warm-kernel parent is gone ({error}): {self.log()}"
            raise WarmKernelError(why) from None
        finally:
            reply_theirs.close()
            os.close(err_write)
        stderr = os.fdopen(err_read, "rb")
        try:
            pid, pidfd = _await_sandbox(reply)
        except WarmKernelError:
            reply.close()
            stderr.close()
            raise
        return WarmKernelProcess(pid, pidfd, reply, stderr)

    def close(self) -> None:
        """End the zygote (from the process that started it) and every kernel forked from it."""
        self._socket.close()  # the zygote ends when its socket closes, and its forks with it
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._stderr.close()


def _await_sandbox(reply: socket.socket) -> tuple[int, int]:
    """Read the fork's messages until the sandbox is built: (its PID 1, a pidfd for it)."""
    pid = pidfd = None
    ready = False
    deadline = time.monotonic() + LAUNCH_TIMEOUT
    while pid is None or not ready:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([reply], [], [], left)[0]:
            why = "the sandbox took too long to build"
            break
        data, fds, _, _ = socket.recv_fds(reply, 65536, 1)
        if not data:
            why = "the sandbox's builder ended without a word"
            break
        record = json.loads(data)
        if fds:
            pid, pidfd = record["pid"], fds[0]
        if "error" in record:
            why = record["error"]
            break
        ready = ready or bool(record.get("ready"))
    else:
        return pid, pidfd
    if pidfd is not None:
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        os.close(pidfd)
    raise WarmKernelError(f"a warm kernel's sandbox was not built: {why}")


def keep_start(stream, kept: bytearray, limit: int = 4096) -> None:
    """Read a stream to its end, keeping only its first `limit` bytes."""
    with contextlib.suppress(OSError, ValueError):
        while chunk := stream.read1(65536):
            if len(kept) < limit:
                kept.extend(chunk[: limit - len(kept)])


_ZYGOTES: dict[tuple[str, ...], Zygote] = {}
_ZYGOTES_LOCK = threading.Lock()


def zygote(preload: tuple[str, ...]) -> Zygote:
    """The zygote for these modules: this process's, or one its parent started before forking.

    `make grade` starts one before it forks its workers, so they share it: a
    request is one datagram on a shared socket, and each gets its own reply
    socket. A worker whose zygote has gone starts its own.
    """
    return spawn(preload).wait_started()


def spawn(preload: tuple[str, ...]) -> Zygote:
    """Like `zygote`, without waiting for its imports: start it early, wait for it later."""
    key = tuple(preload)
    with _ZYGOTES_LOCK:
        found = _ZYGOTES.get(key)
        if found is None or not found.alive():
            found = _ZYGOTES[key] = Zygote(key)
        return found


def _forget_after_fork() -> None:
    # A lock another thread held at the fork would never be released in the child.
    global _ZYGOTES_LOCK
    _ZYGOTES_LOCK = threading.Lock()
    for found in _ZYGOTES.values():
        found._lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)
