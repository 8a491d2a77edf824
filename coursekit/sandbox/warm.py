"""Warm kernels: each sandboxed kernel is a fork of a pre-imported parent.

Starting Python, importing ipykernel and the course's modules (numpy,
pandas) is most of a graded kernel's CPU (bench/budget.py). A
`Zygote` is a process that has done that once, with the sandbox's
environment and nothing else: no course files read, no learner code run, no
secret in its memory or its environment.

It is built the way Chromium's and Android's zygotes are: it starts inside a
sandbox, and each fork only narrows it. bubblewrap builds it in two steps,
both audited code: a privileged bwrap makes the read-only root every sandbox
shares (`policy.system_layout`; as root, so that a Python installed under
/root is reachable), then, as host uid `policy.PARENT_UID`, an unprivileged
bwrap makes a user namespace (whose uid map the grader writes: its root is
PARENT_UID, the pool's uids are themselves), a PID namespace, its own /proc
and /dev, and installs the parent's seccomp filter (`seccomp.program` with
`parent=True`). No network, no course files. Each request forks it; the
fork (`zygote_main`, unprivileged on the host, small) only narrows: its own
mount, PID, network, IPC, UTS and cgroup namespaces, fresh tmpfs /run, /tmp,
home and /run/kernel, its files, /proc and /dev/pts, the leased uid, no
capabilities, no new privileges, the same limits, the kernel's full seccomp
filter on top, the same memory cgroup (`cgroup`; the grader moves the fork
in) — and only then becomes the kernel. A kernel still serves one submission
and sees nothing of another's. No Python running as host root makes a
namespace or a mount.

Only as root (the uid map and the pool's uids need it); otherwise grading
uses one bwrap per kernel (`kernel.SandboxMixin`).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import os
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from coursekit.sandbox import leftover_folders, policy, seccomp

SOURCE = Path(__file__).with_name("inside").joinpath("zygote_main.py").read_text(encoding="utf-8")
# Linux passes at most this many descriptors in one message; zygote_main reads as many
# (it runs without coursekit, so it states the same kernel limit itself).
SCM_MAX_FD = 253
START_TIMEOUT = 120  # seconds for the zygote's imports on a loaded machine
LAUNCH_TIMEOUT = 60  # seconds for one sandbox to be built
KILL_WAIT = 1.0  # seconds a kill waits for the sandbox's end
# Where a warm kernel's bridge socket is linked for its fork to bind: root's, 0711, bound
# read-only into the parent's sandbox; each kernel's folder in it is its uid's, 0700.
BRIDGE_LINKS = Path("/run/coursekit-warm")


class WarmKernelError(policy.SandboxUnavailableError):
    """The zygote could not start or could not build a sandbox."""


@functools.cache
def supported() -> bool:
    """As root, where bwrap can build the parent's sandbox (tried once per process).

    It needs an account without privileges to make a user namespace and mount
    a /proc in it: not where that is switched off (Debian's
    `kernel.unprivileged_userns_clone=0`, Ubuntu's AppArmor restriction) or
    where the host's /proc is partly covered (some containers).
    """
    linux = sys.platform.startswith("linux")
    if not (linux and policy.runs_as_root() and shutil.which("bwrap") is not None):
        return False
    inner = [shutil.which("bwrap"), "--unshare-user", "--unshare-pid", "--bind", "/", "/"]
    inner += ["--proc", "/proc", "--dev", "/dev", "--", "/bin/true"]
    try:
        done = subprocess.run(
            _outer_command(policy.system_layout()) + inner,
            capture_output=True,
            timeout=60,
            env=policy.environment(policy.HOME),
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


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

    def __init__(self, preload: tuple[str, ...], system: list[dict] | None = None):
        self.preload = preload
        self.system = policy.system_layout() if system is None else system
        self._lock = threading.Lock()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Its stderr goes to an unlinked file, not a pipe read by a thread: `make grade`
        # forks its workers after starting it, and a fork of a multi-threaded process
        # can deadlock in the child (Python 3.12+ warns so).
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        info_read, info_write = os.pipe()
        block_read, block_write = os.pipe()
        program = seccomp.program_fd(parent=True)
        command = parent_command(
            self.system, theirs.fileno(), preload, info_write, block_read, program
        )
        try:
            with theirs:
                self.process = subprocess.Popen(
                    command,
                    pass_fds=[theirs.fileno(), info_write, block_read, program],
                    env=policy.environment(policy.HOME),
                    cwd="/",
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=self._stderr,
                    start_new_session=True,  # a terminal's Ctrl-C reaches the grader, which ends it
                )
            for fd in (info_write, block_read, program):
                os.close(fd)
            info_write = block_read = program = -1
            _map_users(_read_child_pid(info_read))
        except (OSError, ValueError) as error:
            with contextlib.suppress(Exception):
                self.process.kill()
            why = f"the warm-kernel parent's sandbox did not start: {error}"
            raise WarmKernelError(why) from None
        finally:
            for fd in (info_read, info_write, block_read, program):
                if fd >= 0:
                    os.close(fd)
            os.write(block_write, b"1")  # go on (or, after a failure, end)
            os.close(block_write)
        self._socket = ours
        self._pidfd = os.pidfd_open(self.process.pid)
        self.preloaded: list[str] | None = None  # known once it has said it is ready
        self.server_pid: int | None = None  # the parent's Python, as the host sees it

    def wait_started(self) -> Zygote:
        """Block until the zygote has imported its modules (the first call reads its word).

        A process that forks workers sharing it calls this first: the word
        comes once, on the shared socket.
        """
        with self._lock:
            if self.preloaded is None:
                ready, _, _ = select.select([self._socket], [], [], START_TIMEOUT)
                said = self._first_words() if ready else {}
                if not said.get("ready") or not said.get("pid"):
                    why = self.log()
                    self.close()
                    raise WarmKernelError(f"the warm-kernel parent did not start: {why}")
                self.server_pid = said["pid"]
                self.preloaded = said.get("preloaded", [])
        return self

    def _first_words(self) -> dict:
        """Its two first messages: a pidfd of itself (its host pid), then "ready"."""
        said: dict = {}
        with contextlib.suppress(OSError, ValueError):
            data, fds, _, _ = socket.recv_fds(self._socket, 65536, 1)
            if json.loads(data or b"{}").get("pid") and len(fds) == 1:
                said["pid"] = host_pid(fds[0])
            for fd in fds:
                os.close(fd)
            if select.select([self._socket], [], [], START_TIMEOUT)[0]:
                said.update(json.loads(self._socket.recv(65536) or b"{}"))
        return said

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
        files: dict[str, int],
        workdir: str,
        uid: int,
        limits: policy.Limits,
        cgroup: str | None = None,
        runner: str = "",
        timezone: str = "UTC",
    ) -> WarmKernelProcess:
        """Fork a kernel in a new sandbox; return once the sandbox is built (or raise).

        layout: its own steps (`policy.kernel_layout`; a bind's source is a
        path the parent sees); cgroup: the cgroup.procs file of the sandbox's
        memory cgroup (`cgroup.MemoryCap`), which the fork is moved into
        before it makes the sandbox, or None; runner: the lean cell runner's source
        (`cell_runner`), run with `argv` in place of ipykernel, or ""; timezone: the
        kernel's TZ (the course's).
        """
        self.wait_started()
        if len(files) + 2 > SCM_MAX_FD:
            raise WarmKernelError(f"{len(files)} files are more than one request can pass")
        reply, reply_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        err_read, err_write = os.pipe()
        names = ["reply", "stderr", *files]
        # Its own /run first: the parent's holds the bridge links of every kernel.
        run = {"op": "tmpfs", "path": "/run", "perms": 0o755, "size": 2**20}
        pts = {"op": "devpts", "path": "/dev/pts"}
        request = {
            "fds": names,
            "layout": [run, *(_keeping_tmp(step) for step in layout), pts],
            "workdir": workdir,
            "uid": uid,
            "limits": limits.rlimits(),
            "environment": policy.environment(workdir, timezone),
            "argv": argv,
            "runner": runner,
            "hostname": policy.HOSTNAME,
            "cgroup": bool(cgroup),
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
            pid, pidfd = _await_sandbox(reply, cgroup)
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


def _await_sandbox(reply: socket.socket, cgroup: str | None) -> tuple[int, int]:
    """Read the fork's messages until the sandbox is built: (its PID 1's host pid, a pidfd)."""
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
        if "error" in record:
            why = record["error"]
            for fd in fds:
                os.close(fd)
            break
        if record.get("joining") and fds and cgroup:
            # The fork (not yet in any namespace of its own) goes into the sandbox's
            # memory cgroup; all it starts is born there.
            try:
                with open(cgroup, "w", encoding="ascii") as procs:
                    procs.write(str(host_pid(fds[0])))
            except (OSError, ValueError) as error:
                why = f"the sandbox's memory cgroup: {error}"
                os.close(fds[0])
                break
            os.close(fds[0])
            reply.send(json.dumps({"go": True}).encode())
            continue
        if fds:
            try:
                pid, pidfd = host_pid(fds[0]), fds[0]
            except ValueError:  # PID 1 ended already (and was reaped): its reason follows
                os.close(fds[0])
                why = "the sandbox's first process ended before it was ready"
                continue
        ready = ready or bool(record.get("ready"))
    else:
        return pid, pidfd
    if pidfd is not None:
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        os.close(pidfd)
    raise WarmKernelError(f"a warm kernel's sandbox was not built: {why}")


def _keeping_tmp(step: dict) -> dict:
    """/tmp's tmpfs keeps the parent's mounts below it on top (a course under /tmp)."""
    return {**step, "keep": True} if step == {**step, "op": "tmpfs", "path": "/tmp"} else step


def host_pid(pidfd: int) -> int:
    """The pid a pidfd names, in this process's PID namespace (its fdinfo says it)."""
    with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii") as info:
        for line in info:
            if line.startswith("Pid:"):
                pid = int(line.split()[1])
                if pid > 0:
                    return pid
    raise ValueError("the process is gone or not visible here")


def parent_command(
    system: list[dict], sock: int, preload, info_fd: int, block_fd: int, seccomp_fd: int
) -> list[str]:
    """bwrap (privileged: the shared root), setpriv, bwrap (a user namespace), the zygote.

    The outer bwrap makes the root every sandbox shares: /tmp, `system`,
    /dev, the home's place, the bridge links' folder (read-only) and the
    host's /proc, which only the kernel's rule that a new /proc needs a
    fully visible one wants there; the inner bwrap mounts its own /proc over
    it. The inner bwrap runs as PARENT_UID without privileges, waits on
    `block_fd` until the grader has written its user namespace's uid map
    (`_map_users`), and installs the parent's seccomp filter.
    """
    bwrap = shutil.which("bwrap") or "bwrap"
    inner = [bwrap, "--die-with-parent", "--unshare-user", "--unshare-pid"]
    inner += ["--userns-block-fd", str(block_fd), "--info-fd", str(info_fd)]
    inner += ["--bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    inner += ["--cap-add", "ALL"]
    inner += ["--seccomp", str(seccomp_fd), "--chdir", "/", "--"]
    zygote = [sys.executable, "-c", SOURCE, str(sock), json.dumps(list(preload))]
    return _outer_command(system) + inner + zygote


def _outer_command(system: list[dict]) -> list[str]:
    """The privileged bwrap of the parent's sandbox, then setpriv to PARENT_UID."""
    bwrap = shutil.which("bwrap") or "bwrap"
    folder = _bridge_links()
    outer = [bwrap, "--die-with-parent", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    outer += ["--hostname", policy.HOSTNAME]
    outer += ["--perms", "0755", "--tmpfs", "/tmp"]  # first: a course may live under /tmp
    outer += policy.bwrap_arguments(system)
    outer += ["--dir", policy.HOME, "--dev", "/dev"]  # the forks' /run is a tmpfs of their own
    outer += ["--ro-bind", str(folder), str(folder), "--bind", "/proc", "/proc"]
    outer += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--chdir", "/", "--"]
    ids = [f"--reuid={policy.PARENT_UID}", f"--regid={policy.PARENT_UID}", "--clear-groups"]
    drop = ["/usr/bin/setpriv", *ids, "--inh-caps=-all", "--bounding-set=-all", "--"]
    return outer + drop


def _read_child_pid(fd: int) -> int:
    """The inner bwrap's sandbox's first process, from its --info-fd JSON."""
    raw = b""
    deadline = time.monotonic() + START_TIMEOUT
    while not raw.rstrip().endswith(b"}"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise ValueError("bwrap said nothing")
        chunk = os.read(fd, 4096)
        if not chunk:
            raise ValueError("bwrap ended before it made the user namespace")
        raw += chunk
    return int(json.loads(raw)["child-pid"])


def _map_users(pid: int) -> None:
    """Write the parent's user namespace's maps: its root is PARENT_UID, the pool is itself."""
    pool = policy.UID_POOL
    mapping = f"0 {policy.PARENT_UID} 1\n{pool.start} {pool.start} {len(pool)}\n"
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w", encoding="ascii") as out:
            out.write(mapping)


def _bridge_links() -> Path:
    """BRIDGE_LINKS, root's with mode 0711 (made if missing), or an error saying why not."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(BRIDGE_LINKS, 0o711)
    info = os.lstat(BRIDGE_LINKS)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or stat.S_IMODE(info.st_mode) != 0o711:
        raise OSError(
            f"{BRIDGE_LINKS} is not root's folder with mode 0711 "
            f"(uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):04o}): remove it"
        )
    os.chmod(BRIDGE_LINKS, 0o711, follow_symlinks=False)
    return BRIDGE_LINKS


@contextlib.contextmanager
def bridge_link(socket_path: str, uid: int):
    """A link to a bridge's socket that the warm kernel of `uid` can bind, while it is needed.

    The socket's own folder (`bridge.private_base`) is root's and private; a
    hard link to the same socket in a folder of `uid`'s (0700) in BRIDGE_LINKS
    is what the fork, root of a user namespace that maps `uid`, may reach.
    """
    folder = leftover_folders.make(str(_bridge_links()))  # a killed launch's are swept
    try:
        os.chown(folder, uid, uid)
        link = os.path.join(folder, "bridge.sock")
        os.link(socket_path, link, follow_symlinks=False)
        yield link
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def keep_start(stream, kept: bytearray, limit: int = 4096) -> None:
    """Read a stream to its end, keeping only its first `limit` bytes."""
    with contextlib.suppress(OSError, ValueError):
        while chunk := stream.read1(65536):
            if len(kept) < limit:
                kept.extend(chunk[: limit - len(kept)])


_ZYGOTES: dict[tuple[tuple[str, ...], str], Zygote] = {}
_ZYGOTES_LOCK = threading.Lock()


def zygote(preload: tuple[str, ...]) -> Zygote:
    """The zygote for these modules: this process's, or one its parent started before forking.

    `make grade` starts one before it forks its workers, so they share it: a
    request is one datagram on a shared socket, and each gets its own reply
    socket. A worker whose zygote has gone starts its own, and so does a
    process whose shared layout (`policy.system_layout`) changed.
    """
    return spawn(preload).wait_started()


def spawn(preload: tuple[str, ...]) -> Zygote:
    """Like `zygote`, without waiting for its imports: start it early, wait for it later."""
    system = policy.system_layout()
    key = (tuple(preload), json.dumps(system, sort_keys=True))
    with _ZYGOTES_LOCK:
        found = _ZYGOTES.get(key)
        if found is None or not found.alive():
            found = _ZYGOTES[key] = Zygote(tuple(preload), system)
        return found


def _forget_after_fork() -> None:
    # A lock another thread held at the fork would never be released in the child.
    global _ZYGOTES_LOCK
    _ZYGOTES_LOCK = threading.Lock()
    for found in _ZYGOTES.values():
        found._lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)
