"""A Jupyter kernel manager whose kernel runs inside a bubblewrap sandbox.

The sandbox has no network, so the kernel cannot talk over TCP: it binds
ZeroMQ's `ipc` transport (Unix sockets) in its own small tmpfs
(/run/kernel), and the grader reaches those sockets through the sandbox's
root as /proc/<pid>/root/run/kernel. Nothing the sandbox can write lies on
the grader's disk. The kernel gets a copy of its submission folder (regular
files only) as its working folder, and a read-only bind of the bridge socket
over which the trusted checker calls its functions (`bridge`).

Interrupts go as messages (ipykernel signals itself): a SIGINT to the
process group would end bwrap, and with it the kernel.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager, KernelManager

from coursekit.sandbox import cgroup, policy, seccomp, warm

CONNECTION_FILE = f"{policy.KERNEL_DIR}/connection.json"

# `python -m ipykernel_launcher` without ipykernel's debugger: a graded kernel is
# never debugged, and importing debugpy is a sixth of a kernel's start-up CPU
# (bench/budget.py). ipykernel starts without it when it cannot import it.
LAUNCHER = """\
import sys
if sys.path and sys.path[0] == "":
    del sys.path[0]  # as ipykernel_launcher: the working folder is added back later
sys.modules["debugpy"] = None
from ipykernel import kernelapp
kernelapp.launch_new_instance()
"""


def without_debugger(kernel_cmd: list[str]) -> list[str]:
    """The kernel command with `-m ipykernel_launcher` replaced by LAUNCHER."""
    for i in range(len(kernel_cmd) - 1):
        if kernel_cmd[i : i + 2] == ["-m", "ipykernel_launcher"]:
            return [*kernel_cmd[:i], "-c", LAUNCHER, *kernel_cmd[i + 2 :]]
    return kernel_cmd


class SandboxMixin:
    """The launch steps of a kernel manager, sandboxed; set the three fields before start."""

    limits: policy.Limits = policy.Limits()
    bridge_socket: str = ""  # host path of the bridge socket to bind into the sandbox
    sandboxed: bool = True  # False only for the explicit, unsafe opt-out
    warm: bool = True  # fork from a warm zygote where it can (root), else one bwrap per kernel
    preload: tuple[str, ...] = ()  # modules the zygote imports once, besides ipykernel
    # The lean cell runner's source (`cell_runner`): started in place of ipykernel when set.
    runner: str = ""
    timezone: str = "UTC"  # the kernel's TZ: the course's c.CourseKit.timezone

    _lease: policy.UidLease | None = None
    _memory: cgroup.MemoryCap | None = None
    _scratch: str | None = None
    _stderr: bytearray | None = None
    kernel_pid: int | None = None  # the sandbox's first process (or the kernel), for CPU times

    async def _async_pre_start_kernel(self, **kw):
        self.transport = "ipc"
        self._scratch = tempfile.mkdtemp(prefix="coursekit-kernel-")
        if self.sandboxed:
            self.ip = f"{policy.KERNEL_DIR}/k"
        else:
            self.ip = f"{self._scratch}/k"
        self.kernel_spec.interrupt_mode = "message"
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        if not self.sandboxed:
            if self.runner:
                kernel_cmd = [sys.executable, "-c", self.runner, self.connection_file]
                kernel_cmd.append(self.bridge_socket)
            kernel_cmd = without_debugger(kernel_cmd)
            await super()._async_launch_kernel([*self.limits.prlimit(), *kernel_cmd], **kw)
            self.kernel_pid = self.provisioner.pid
            return
        host_folder = Path(kw.pop("cwd", None) or tempfile.gettempdir())
        workdir = f"{policy.HOME}/{host_folder.name}"
        binds = []
        if self.bridge_socket:
            binds.append((self.bridge_socket, policy.BRIDGE_SOCKET))
        self._lease = policy.UidLease() if policy.runs_as_root() else None
        self._memory = self._memory_cap()
        with (
            policy.submission_files(host_folder, workdir) as (_, files, folders),
            open(self.connection_file, "rb") as connection,
        ):
            # A copy the sandbox's uid can read (the original is private to the grader).
            files = [*files, (connection.fileno(), CONNECTION_FILE)]
            argv = warm.kernel_arguments(kernel_cmd) if self.warm else None
            if self.runner:  # the lean runner in the same sandbox, forked or under bwrap
                argv = argv_of_runner() if argv is not None else None
                kernel_cmd = [sys.executable, "-c", self.runner, *argv_of_runner()]
            if argv is not None and self._lease is not None and warm.supported():
                child = self._launch_warm(argv, workdir, binds, files, folders)
            else:
                child = await self._launch_bwrap(kernel_cmd, workdir, binds, files, folders, kw)
        # The client (and the manager's control socket) reach the kernel's
        # sockets through the sandbox's root.
        self.ip = f"/proc/{child}/root{policy.KERNEL_DIR}/k"
        self.kernel_pid = child

    def _launch_warm(self, argv, workdir, binds, files, folders) -> int:
        """Fork the kernel from this process's zygote; the provisioner gets a Popen stand-in."""
        argv = self._as_seen_inside(argv)
        fds = {f"file{i}": fd for i, (fd, _) in enumerate(files)}
        uid = self._lease.uid
        with contextlib.ExitStack() as links:
            # The fork binds what its parent's sandbox sees: a link of uid's to each socket.
            seen = [(links.enter_context(warm.bridge_link(h, uid)), path) for h, path in binds]
            steps = policy.kernel_layout(
                self.limits,
                binds=seen,
                files=[(f"file{i}", path) for i, (_, path) in enumerate(files)],
                folders=folders,
            )
            process = warm.zygote(tuple(self.preload)).launch(
                argv=argv,
                runner=self.runner,
                layout=steps,
                files=fds,
                workdir=workdir,
                uid=uid,
                limits=self.limits,
                cgroup=self._memory.procs if self._memory else None,
                timezone=self.timezone,
            )
        provisioner = self.provisioner
        provisioner.process, provisioner.pid, provisioner.pgid = process, process.pid, None
        provisioner.cwd = self._scratch
        self._reconcile_connection_info(provisioner.connection_info)
        self._keep_stderr(process.stderr)
        return process.pid

    async def _launch_bwrap(self, kernel_cmd, workdir, binds, files, folders, kw) -> int:
        command = self._as_seen_inside(without_debugger(kernel_cmd))
        info_read, info_write = os.pipe()
        program = seccomp.program_fd()
        wrapped = policy.bwrap_command(
            command,
            limits=self.limits,
            workdir=workdir,
            uid=self._lease.uid if self._lease else None,
            binds=binds,
            files=files,
            folders=folders,
            seccomp_fd=program,
            info_fd=info_write,
            timezone=self.timezone,
        )
        kw.update(
            cwd=self._scratch,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            # A pipe, not a file: the sandbox must not be able to write to the
            # grader's disk through its stderr; the first few KiB are kept.
            stderr=subprocess.PIPE,
            pass_fds=[info_write, program, *(fd for fd, _ in files)],
        )
        if self._memory is not None:  # bwrap and all it starts are born in the sandbox's cgroup
            wrapped = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', self._memory.procs, *wrapped]
        try:
            await super()._async_launch_kernel(wrapped, **kw)
        finally:
            os.close(info_write)
            os.close(program)
        self._keep_stderr(self.provisioner.process.stderr)
        try:
            return json.loads(_read_info(info_read))["child-pid"]
        except (ValueError, KeyError):
            raise policy.SandboxUnavailableError(
                f"the kernel's sandbox did not start: {self.startup_log()}. {policy.FIX}"
            ) from None

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        # jupyter_client looks whether a killed kernel has ended every 100 ms; a sandbox
        # ends within milliseconds, so each notebook waited up to 100 ms for the next look.
        await super()._async_wait(pollinterval=min(pollinterval, 0.005))

    def memory_events(self) -> cgroup.MemoryEvents | None:
        """What the sandbox's memory cgroup did so far; None where it has none (no cgroup)."""
        return self._memory.events() if self._memory is not None else None

    async def _async_interrupt_kernel(self) -> None:
        if self.runner:  # the lean runner is interrupted by its client (a signal to its pid)
            return
        await super()._async_interrupt_kernel()

    def _memory_cap(self) -> cgroup.MemoryCap | None:
        """A memory cgroup for the whole sandbox, where the machine has one (see `cgroup`)."""
        if not self.limits.memory_mb:
            return None
        if self._lease is None or cgroup.unavailable():
            cgroup.warn_once()
            return None
        try:
            return cgroup.MemoryCap(self._lease.uid, self.limits.memory_mb)
        except OSError as error:  # the machine has cgroups: no sandbox goes without its cap
            self._lease.release()
            self._lease = None
            raise policy.SandboxUnavailableError(
                f"the sandbox's memory cgroup could not be made: {error}"
            ) from None

    def _as_seen_inside(self, args: list[str]) -> list[str]:
        """The kernel's arguments with the connection file at its path in the sandbox."""
        ours = os.path.realpath(self.connection_file)
        return [CONNECTION_FILE if os.path.realpath(a) == ours else a for a in args]

    def _keep_stderr(self, stream) -> None:
        self._stderr = bytearray()
        threading.Thread(target=warm.keep_start, args=(stream, self._stderr), daemon=True).start()

    def startup_log(self) -> str:
        time.sleep(0.2)  # bwrap has just exited: let the reader take its last words
        return bytes(self._stderr or b"").decode(errors="replace")[:2000].strip()

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        try:
            await super()._async_cleanup_resources(restart=restart)
        finally:
            if self._memory is not None:
                self._memory.close()
                self._memory = None
            if self._lease is not None:
                self._lease.release()
                self._lease = None
            if self._scratch:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None


def argv_of_runner() -> list[str]:
    """The lean runner's arguments in the sandbox: its connection file and the bridge socket."""
    return [CONNECTION_FILE, policy.BRIDGE_SOCKET]


def _read_info(fd: int) -> bytes:
    """bwrap's --info-fd JSON; one os.read, since the sandbox may keep the pipe open."""
    try:
        chunks = b""
        while not chunks.rstrip().endswith(b"}"):
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            chunks += chunk
        return chunks
    finally:
        os.close(fd)


class SandboxedKernelManager(SandboxMixin, AsyncKernelManager):
    """For nbclient (nbgrader's Execute)."""


class BlockingSandboxedKernelManager(SandboxMixin, KernelManager):
    """For code that waits on the kernel directly (the TA report's probe)."""
