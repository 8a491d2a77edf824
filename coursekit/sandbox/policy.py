"""The bubblewrap command line that every run of learner code goes through.

A sandbox sees the system (/usr, a few files of /etc) and the course's Python
environment read-only, and three private tmpfs folders of capped size: its
home with a copy of its own submission folder, /tmp, and /run/kernel for the
kernel's sockets. It does not see the course root, other learners' files or
the grader's environment variables. It has its own PID, IPC, UTS and (empty)
network namespaces, caps on memory, CPU time, processes, open files and file
size, and dies with the process that started it.

Two ways to drop privileges, chosen by who grades:
- as root (CI, a grading server): bwrap runs privileged and the command runs
  as a uid of its own from a pool (`UidLease`), so a fork bomb's process cap
  counts only that sandbox's processes;
- as anyone else (an instructor on a hub): bwrap makes a user namespace, maps
  the command to uid 65534 and forbids further user namespaces.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from coursekit.sandbox import seccomp

HOME = "/home/learner"
KERNEL_DIR = "/run/kernel"
BRIDGE_SOCKET = "/run/bridge.sock"
HOSTNAME = "sandbox"
NOBODY = 65534
# Uids for root-mode sandboxes; nobody on the machine uses them.
UID_POOL = range(61000, 61512)
# The host uid of the warm-kernel parent's user namespace root (`warm.Zygote`); nobody's either.
PARENT_UID = 60999
# Who holds which of them (`UidLease`): /run is root's, so no other account can make it first.
LEASE_FOLDER = Path("/run/coursekit-sandbox-uids")
# Files of /etc a Python process reads; the rest of /etc (and /etc/jupyter's
# nbgrader config) stays out.
ETC_FILES = (
    "passwd",
    "group",
    "nsswitch.conf",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "alternatives",
    "fonts",
    "mime.types",
)
# Environment the sandboxed command gets: nothing of the grader's own
# (a gradebook URL can hold a password), but OpenBLAS settings that keep numpy
# from crashing on some processors.
PASSED_ENVIRONMENT = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")

FIX = (
    "Install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`, or `make bubblewrap`) "
    "and allow user namespaces (`sysctl kernel.unprivileged_userns_clone=1`, or grade as root). "
    "Grading without a sandbox runs learner code with the grader's rights; only if you accept "
    "that, set `c.SandboxedExecute.unsafe_no_sandbox = True`."
)


class SandboxUnavailableError(RuntimeError):
    """bubblewrap is missing or cannot make namespaces here."""


@dataclass(frozen=True)
class Limits:
    """Caps of one sandbox; `SandboxedExecute` sets them from nbgrader's config."""

    memory_mb: int = 4096  # address space of each process
    cpu_seconds: int = 300  # CPU time of each process
    processes: int = 64  # processes and threads of the sandbox's uid
    file_mb: int = 64  # size of any one file it writes
    open_files: int = 256
    home_mb: int = 256  # its home (with the submission copy) and /tmp, each

    def rlimits(self) -> dict[str, int]:
        """The same caps as `prlimit`, as resource.RLIMIT_<NAME> -> value (-1: unlimited)."""
        mib = 2**20
        return {
            "as": self.memory_mb * mib if self.memory_mb else -1,
            "cpu": self.cpu_seconds,
            "nproc": self.processes,
            "fsize": self.file_mb * mib,
            "nofile": self.open_files,
            "core": 0,
        }

    def prlimit(self) -> list[str]:
        mib = 2**20
        return [
            "/usr/bin/prlimit",
            f"--as={self.memory_mb * mib}" if self.memory_mb else "--as=unlimited",
            f"--cpu={self.cpu_seconds}",
            f"--nproc={self.processes}",
            f"--fsize={self.file_mb * mib}",
            f"--nofile={self.open_files}",
            "--core=0",
            "--",
        ]


class UidLease:
    """A uid of UID_POOL held by this process (a lock file) while its sandbox lives.

    The lock files live in a folder of root's under /run, mode 0700, which no
    other account can create first or write into; its owner and mode are
    checked, and no lock file is followed through a link, truncated or used
    unless it is root's own regular file. A uid that still owns a process (a
    sandbox that outlived its lease) or a kernel key (keys outlive processes;
    the seccomp filter keeps sandboxes from making any, this catches one made
    before or elsewhere) is skipped: a reused uid starts with nothing a
    previous learner left (/dev/shm and IPC are the sandbox's own anyway).
    """

    folder = LEASE_FOLDER

    def __init__(self):
        self._handle = None
        folder = _private_folder(self.folder)
        keyed = _key_users()
        try:
            for uid in UID_POOL:
                handle = _lock_file(folder, f"{uid}.lock")
                if handle is None:
                    continue
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.close()
                    continue
                if uid in keyed or _owns_a_process(uid):
                    handle.close()
                    continue
                self.uid, self._handle = uid, handle
                return
        finally:
            os.close(folder)
        raise SandboxUnavailableError(f"every sandbox uid of {UID_POOL} is in use")

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _private_folder(path: Path) -> int:
    """An open descriptor of `path`, a folder of this account's with mode 0700 (made if missing)."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise SandboxUnavailableError(f"the sandbox uid leases' folder {path}: {error}") from None
    info = os.fstat(fd)
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:
        os.close(fd)
        raise SandboxUnavailableError(
            f"the sandbox uid leases' folder {path} belongs to uid {info.st_uid} with mode "
            f"{info.st_mode & 0o7777:04o}, not to uid {os.geteuid()} with 0700: another account "
            "may have made it; check and remove it"
        )
    return fd


def _lock_file(folder: int, name: str):
    """The lock file `name` in `folder`, opened without following a link or truncating it.

    None when it is not a regular file of this account's (nobody else can put one there).
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(name, flags, 0o600, dir_fd=folder)
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        os.close(fd)
        return None
    return os.fdopen(fd, "r+b", buffering=0)


def _key_users() -> set[int]:
    """The uids that own kernel keys or keyrings (root reads every user's line)."""
    try:
        lines = Path("/proc/key-users").read_text(encoding="ascii").splitlines()
    except OSError:
        return set()
    return {int(line.split(":")[0]) for line in lines if line.strip()}


def _owns_a_process(uid: int) -> bool:
    """Whether a process runs as `uid` (its /proc folder is root's when it is not dumpable)."""
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                owner = entry.stat(follow_symlinks=False).st_uid
                if owner == 0:
                    with open(f"/proc/{entry.name}/status", encoding="ascii") as status:
                        uids = next(line for line in status if line.startswith("Uid:"))
                    owner = int(uids.split()[1])
                if owner == uid:
                    return True
    return False


# A sandbox's file system is a list of steps, each a plain dict, applied in order; bwrap
# gets them as its arguments (`bwrap_command`); a warm kernel's parent gets the shared part
# from bwrap (`system_layout`) and each fork makes its own part (`kernel_layout`, `zygote_main`):
#   {"op": "tmpfs", "path", "perms", "size"}   a private tmpfs of that size (bytes)
#   {"op": "dir", "path", "perms"}             a folder
#   {"op": "ro-bind", "source", "path"}        a host path, read-only
#   {"op": "symlink", "target", "path"}
#   {"op": "proc", "path"} / {"op": "dev", "path"}
#   {"op": "file", "fd", "path", "perms"}      a copy of what an open file holds


def _read_only_system() -> list[dict]:
    steps = []
    for top in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            steps.append({"op": "symlink", "target": os.readlink(path), "path": str(path)})
        elif path.is_dir():
            steps.append({"op": "ro-bind", "source": str(path), "path": str(path)})
    for name in ETC_FILES:
        if (Path("/etc") / name).exists():
            steps.append({"op": "ro-bind", "source": f"/etc/{name}", "path": f"/etc/{name}"})
    return steps


def _python_folders() -> list[dict]:
    """The interpreter's installation and the course environment, read-only, at their paths."""
    folders = {Path(sys.base_prefix).resolve(), Path(sys.prefix)}
    real = Path(sys.executable).resolve().parent.parent
    if not any(real == f or f in real.parents for f in folders):
        folders.add(real)
    steps = []
    for folder in sorted(folders):
        if folder == Path("/usr") or Path("/usr") in folder.parents:
            continue  # already there with /usr
        steps.append({"op": "ro-bind", "source": str(folder), "path": str(folder)})
    return steps


def _parent_folders(targets: list[str]) -> list[dict]:
    """A folder step for every folder above a mount point, readable by the sandbox's uid.

    Privileged bwrap makes missing parents mode 0700, which the unprivileged
    uid could not pass through (/root/.pyenv/... for a pyenv Python).
    """
    parents: set[str] = set()
    for target in targets:
        parents.update(str(p) for p in Path(target).parents if str(p) != "/")
    return [
        {"op": "dir", "path": folder, "perms": 0o755}
        for folder in sorted(parents, key=lambda p: (p.count("/"), p))
    ]


def environment(workdir: str, timezone: str = "UTC") -> dict[str, str]:
    """The whole environment of a sandboxed process; `timezone` is the course's
    (`c.CourseKit.timezone`, passed by the kernel manager that has the config)."""
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": HOME,
        "LANG": "C.UTF-8",
        "TZ": timezone,
        "MPLCONFIGDIR": "/tmp/matplotlib",
        "IPYTHONDIR": f"{HOME}/.ipython",
        "PWD": workdir,
    }
    env.update({k: os.environ[k] for k in PASSED_ENVIRONMENT if k in os.environ})
    return env


def layout(
    limits: Limits,
    *,
    binds: list[tuple[str, str]] = (),
    files: list[tuple[int, str]] = (),
    folders: list[str] = (),
) -> list[dict]:
    """The sandbox's file system, as steps (see above).

    binds: (host path, sandbox path) pairs bound read-only (a socket stays
    connectable); files: (fd, sandbox path) copied into the sandbox's tmpfs;
    folders: sandbox folders to create first.
    """
    size = limits.home_mb * 2**20
    # /tmp first: a course (and so its .venv) may itself live under /tmp, and a later
    # tmpfs on /tmp would hide it.
    steps = [{"op": "tmpfs", "path": "/tmp", "perms": 0o1777, "size": size}]
    steps += system_layout(binds=[path for _, path in binds])
    steps += [{"op": "proc", "path": "/proc"}, {"op": "dev", "path": "/dev"}]
    steps.append({"op": "tmpfs", "path": HOME, "perms": 0o1777, "size": size})
    steps.append({"op": "tmpfs", "path": KERNEL_DIR, "perms": 0o1777, "size": 2**20})
    steps += [{"op": "dir", "path": folder, "perms": 0o1777} for folder in folders]
    steps += [{"op": "file", "fd": fd, "path": path, "perms": 0o666} for fd, path in files]
    steps += [{"op": "ro-bind", "source": host, "path": path} for host, path in binds]
    return steps


def system_layout(*, binds: list[str] = ()) -> list[dict]:
    """What every sandbox shares, read-only: the system, the Python, the folders above them.

    binds: sandbox paths that later steps bind, whose parent folders are made here too.
    """
    mounts = _read_only_system() + _python_folders()
    targets = [step["path"] for step in mounts if step["op"] == "ro-bind"]
    targets += [HOME, KERNEL_DIR, BRIDGE_SOCKET, *binds]
    return _parent_folders(targets) + mounts


def kernel_layout(
    limits: Limits,
    *,
    binds: list[tuple[str, str]] = (),
    files: list[tuple[int, str]] = (),
    folders: list[str] = (),
) -> list[dict]:
    """The steps of `layout` that are one sandbox's own (a warm kernel's fork makes only these).

    The rest (`system_layout`, /proc's and /dev's places) its warm parent's
    bwrap already made; /proc is mounted anew for the fork's PID namespace.
    """
    own = layout(limits, binds=binds, files=files, folders=folders)
    shared = system_layout(binds=[path for _, path in binds])
    return [step for step in own if step not in shared and step["op"] != "dev"]


def bwrap_arguments(steps: list[dict]) -> list[str]:
    """The layout as bubblewrap's arguments."""
    args = []
    for step in steps:
        op, path = step["op"], step["path"]
        if "perms" in step:
            args += ["--perms", f"{step['perms']:04o}"]
        if "size" in step:
            args += ["--size", str(step["size"])]
        if op in ("tmpfs", "dir", "proc", "dev"):
            args += [f"--{op}", path]
        elif op == "ro-bind":
            args += ["--ro-bind", step["source"], path]
        elif op == "symlink":
            args += ["--symlink", step["target"], path]
        elif op == "file":
            args += ["--file", str(step["fd"]), path]
        else:
            raise ValueError(f"unknown sandbox step {op!r}")
    return args


def bwrap_command(
    command: list[str],
    *,
    limits: Limits,
    workdir: str,
    uid: int | None,
    binds: list[tuple[str, str]] = (),
    files: list[tuple[int, str]] = (),
    folders: list[str] = (),
    seccomp_fd: int,
    info_fd: int | None = None,
    timezone: str = "UTC",
) -> list[str]:
    """`command` wrapped in bwrap and prlimit.

    uid: the pool uid to run as when grading as root, else None for a user
    namespace; seccomp_fd: a descriptor holding `seccomp.program()`, which
    bwrap installs right before it starts the command; timezone: the TZ inside;
    the rest as for `layout`.
    """
    args = [shutil.which("bwrap") or "bwrap", "--die-with-parent"]
    args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--hostname", HOSTNAME]
    if uid is None:
        args += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY), "--disable-userns"]
    else:  # privileged bwrap: only the two capabilities setpriv needs, dropped by setpriv
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    args += bwrap_arguments(layout(limits, binds=binds, files=files, folders=folders))
    args.append("--clearenv")
    for name, value in environment(workdir, timezone).items():
        args += ["--setenv", name, value]
    args += ["--chdir", workdir]
    args += ["--seccomp", str(seccomp_fd)]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    args.append("--")
    if uid is not None:
        args += [
            "/usr/bin/setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
    return args + limits.prlimit() + command


def runs_as_root() -> bool:
    return os.geteuid() == 0


@functools.cache
def check_available() -> None:
    """Start one tiny sandbox; raise SandboxUnavailableError with the fix when it cannot start."""
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailableError(f"the sandbox (bubblewrap) needs Linux. {FIX}")
    if shutil.which("bwrap") is None:
        raise SandboxUnavailableError(f"bubblewrap (bwrap) is not installed. {FIX}")
    try:
        program = seccomp.program_fd()
    except seccomp.SeccompUnavailableError as error:
        raise SandboxUnavailableError(f"{error}. {FIX}") from None
    lease = UidLease() if runs_as_root() else None
    try:
        command = bwrap_command(
            [sys.executable, "-c", "pass"],
            limits=Limits(),
            workdir=HOME,
            uid=lease.uid if lease else None,
            seccomp_fd=program,
        )
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=60, pass_fds=[program]
        )
    finally:
        os.close(program)
        if lease:
            lease.release()
    if done.returncode != 0:
        why = done.stderr.strip()
        raise SandboxUnavailableError(f"bubblewrap cannot start a sandbox: {why}. {FIX}")


@contextlib.contextmanager
def submission_files(folder: Path, sandbox_folder: str, *, max_files: int = 200):
    """Open the regular files of a submission folder for `--file`, without following links.

    Yields (fds, [(fd, sandbox path)], [sandbox folders]). A symlink could point
    anywhere on the grader's disk, so links and special files are left out.
    """
    fds: list[int] = []
    files: list[tuple[int, str]] = []
    folders = [sandbox_folder]
    try:
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            relative = Path(dirpath).relative_to(folder)
            for name in sorted(dirnames):
                if not (Path(dirpath) / name).is_symlink():
                    folders.append(f"{sandbox_folder}/{(relative / name).as_posix()}")
            for name in sorted(filenames):
                if len(files) >= max_files:
                    break
                try:
                    fd = os.open(Path(dirpath) / name, os.O_RDONLY | os.O_NOFOLLOW)
                except OSError:
                    continue
                if not _is_regular(fd):
                    os.close(fd)
                    continue
                fds.append(fd)
                files.append((fd, f"{sandbox_folder}/{(relative / name).as_posix()}"))
        yield fds, files, folders
    finally:
        for fd in fds:
            os.close(fd)


def _is_regular(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)
