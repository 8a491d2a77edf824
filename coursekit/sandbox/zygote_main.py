"""The warm-kernel server: fork a sandboxed kernel per request from a pre-imported parent.

Run as `python -c <this file's source>` (see `warm.Zygote`), as root, with the
sandbox's environment and no other open files than its request socket. It
imports ipykernel and the course's usual modules once, never runs learner
code, never reads course files, and holds nothing a learner may not see: each
kernel is a fork of it. Self-contained on purpose (stdlib and ipykernel only):
nothing of coursekit is imported here.

Per request (one datagram: JSON + the file descriptors it names) it forks:

    A  (host PID namespace) joins the sandbox's memory cgroup (if any),
       unshares mount, PID, network, IPC, UTS, cgroup
    └─ B  PID 1 of the new namespace: builds the new root from the layout
          steps (the same list bwrap gets), pivots into it, sets the limits,
          drops to the leased uid (no capabilities, no new privileges),
          installs the seccomp filter, then reaps zombies until the kernel ends
       └─ C  the kernel: ipykernel with the connection file in the sandbox

A sends B's pid and a pidfd for it back on the request's reply socket, then
waits for B and sends its exit status. B says "ready" (or why it failed) on
the same socket before C starts. The server ends when its request socket
closes (the grader has gone); A dies with the server, B with A, C with B, and
a PID namespace dies with its PID 1.
"""

import base64
import contextlib
import ctypes
import fcntl
import importlib
import json
import os
import platform
import resource
import signal
import socket
import struct
import sys
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)  # fork with BLAS threads
sys.modules["debugpy"] = None  # a graded kernel is never debugged (kernel.LAUNCHER)
if sys.path and sys.path[0] == "":
    del sys.path[0]
from ipykernel import kernelapp  # noqa: E402

# What every kernel imports anyway: IPKernelApp.initialize (its history's sqlite3, pdb
# for the debugger hooks, ...) and IPython's first traceback (stack_data and friends);
# measured, ~90 ms of CPU per kernel.
KERNEL_MODULES = (
    "sqlite3",
    "pdb",
    "code",
    "faulthandler",
    "stack_data",
    "executing",
    "asttokens",
    "pure_eval",
)


def import_all(names):
    """Import what can be imported; return those names.

    A module that fails here fails again, visibly, where a kernel imports it;
    an IPython that does without one of KERNEL_MODULES imports something else.
    """
    imported = []
    for name in names:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
            imported.append(name)
    return imported


import_all(KERNEL_MODULES)
PRELOADED = import_all(json.loads(sys.argv[2] if len(sys.argv) > 2 else "[]"))

LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x20000000, 0x40000000
NAMESPACES = (
    CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP
)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_SLAVE = 32, 4096, 16384, 1 << 19
MNT_DETACH = 2
SIOCSIFFLAGS, IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x8914, 0x1, 0x8, 0x40
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine())
STAGE = "/tmp"  # where the new root is put together (in the new mount namespace only)
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")


def check(result, what):
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def mount(source, target, fstype, flags, data=None):
    encode = lambda s: None if s is None else s.encode()  # noqa: E731
    check(
        LIBC.mount(encode(source), encode(target), encode(fstype), flags, encode(data)),
        f"mount {target}",
    )


def unshare(flags):
    check(LIBC.unshare(flags), "unshare")


def pivot_root(new, old):
    check(LIBC.syscall(SYS_PIVOT_ROOT, new.encode(), old.encode()), "pivot_root")


def prctl(option, value):
    check(LIBC.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl {option}")


# ---------------------------------------------------------------- B: the new root


def make_dir(path, perms=0o755):
    try:
        os.mkdir(path, perms)
    except FileExistsError:
        return
    os.chmod(path, perms)  # mkdir's mode passes through the umask


def make_parents(path):
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        make_parents(parent)
        make_dir(parent)


def bind_read_only(source, target):
    """Bind `source` at `target` read-only, every mount below it included."""
    make_parents(target)
    if os.path.isdir(source):
        make_dir(target)
    elif not os.path.lexists(target):
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    mount(source, target, None, MS_BIND | MS_REC)
    for point in mount_points_under(target):
        noexec = MS_NOEXEC if os.statvfs(point).f_flag & os.ST_NOEXEC else 0
        mount(None, point, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | noexec)


def mount_points_under(target):
    points = []
    with open("/oldroot/proc/self/mountinfo", encoding="utf-8") as info:  # before the pivot
        for line in info:
            point = line.split()[4].replace("\\040", " ")
            if point == target or point.startswith(target.rstrip("/") + "/"):
                points.append(point)
    return points


def make_dev(target):
    """A /dev like bwrap's --dev: a few host devices, stdio links, a private devpts."""
    make_parents(target)
    make_dir(target)
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for name in DEVICES:
        node = f"{target}/{name}"
        os.close(os.open(node, os.O_CREAT | os.O_WRONLY, 0o666))
        mount(f"/oldroot/dev/{name}", node, None, MS_BIND | MS_NOSUID)
    for name, link in (("stdin", 0), ("stdout", 1), ("stderr", 2)):
        os.symlink(f"/proc/self/fd/{link}", f"{target}/{name}")
    os.symlink("/proc/self/fd", f"{target}/fd")
    os.symlink("/proc/kcore", f"{target}/core")
    make_dir(f"{target}/shm")
    make_dir(f"{target}/pts")
    options = "newinstance,ptmxmode=0666,mode=620"
    mount("devpts", f"{target}/pts", "devpts", MS_NOSUID | MS_NOEXEC, options)
    os.symlink("pts/ptmx", f"{target}/ptmx")


def copy_file(fd, target, perms):
    make_parents(target)
    out = os.open(target, os.O_CREAT | os.O_WRONLY | os.O_EXCL, perms)
    try:
        offset = 0
        while chunk := os.pread(fd, 1 << 20, offset):
            os.write(out, chunk)
            offset += len(chunk)
    finally:
        os.close(out)
    os.chmod(target, perms)


def apply_step(step, root, fds):
    op, target = step["op"], root + step["path"]
    if op == "tmpfs":
        make_parents(target)
        make_dir(target)
        options = f"mode={step['perms']:o},size={step['size']}"
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)
    elif op == "dir":
        make_parents(target)
        make_dir(target, step["perms"])
    elif op == "ro-bind":
        bind_read_only("/oldroot" + step["source"], target)
    elif op == "symlink":
        make_parents(target)
        os.symlink(step["target"], target)
    elif op == "proc":
        make_parents(target)
        make_dir(target)
        mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    elif op == "dev":
        make_dev(target)
    elif op == "file":
        copy_file(fds[step["fd"]], target, step["perms"])
    else:
        raise ValueError(f"unknown sandbox step {op!r}")


def build_root(steps, fds):
    """The new root from the layout steps, then pivot into it and forget the host's."""
    mount(None, "/", None, MS_REC | MS_SLAVE)  # nothing done here reaches the host
    # Sources are resolved while the host's root is still /: /etc/localtime is a link.
    steps = [
        {**step, "source": os.path.realpath(step["source"])} if "source" in step else step
        for step in steps
    ]
    mount("tmpfs", STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    make_dir(f"{STAGE}/oldroot")
    make_dir(f"{STAGE}/newroot")
    pivot_root(STAGE, f"{STAGE}/oldroot")
    os.chdir("/")
    mount("tmpfs", "/newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for step in steps:
        apply_step(step, "/newroot", fds)
    os.chdir("/newroot")
    pivot_root(".", ".")  # the old root (with the host's under it) now lies on top
    check(LIBC.umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")


def loopback_up():
    """Bring up `lo` in the new network namespace, as bwrap does (and nothing else)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", IFF_UP | IFF_LOOPBACK | IFF_RUNNING)
        fcntl.ioctl(probe, SIOCSIFFLAGS, request)


def drop_privileges(uid, limits):
    for name, value in limits.items():
        kind = getattr(resource, f"RLIMIT_{name.upper()}")
        value = resource.RLIM_INFINITY if value < 0 else value
        resource.setrlimit(kind, (value, value))
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as last:
        for cap in range(int(last.read()) + 1):
            prctl(PR_CAPBSET_DROP, cap)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_DUMPABLE, 1)  # as after an exec: its own /proc/self stays its own
    with open("/proc/self/status", encoding="ascii") as status:
        caps = [line.split()[1] for line in status if line.startswith("Cap")]
    if any(int(c, 16) for c in caps) or 0 in os.getresuid() or 0 in os.getresgid():
        raise PermissionError(f"privileges left after the drop: {caps}")


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_seccomp(program):
    """Install a BPF program compiled by libseccomp (`coursekit.sandbox.seccomp`) on this process.

    Every process it starts inherits it; it needs no new privileges set (done).
    """
    if not program or len(program) % 8:
        raise ValueError("no seccomp program")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    check(
        LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0),
        "seccomp",
    )
    with open("/proc/self/status", encoding="ascii") as status:
        if "Seccomp:\t2" not in status.read():
            raise PermissionError("the seccomp filter is not in force")


# ---------------------------------------------------------------- the three processes


def send(reply, record, fds=()):
    socket.send_fds(reply, [json.dumps(record).encode()], list(fds))


def sandbox_init(request, fds, reply, stderr):
    """B: PID 1 of the sandbox. Never returns."""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        socket.sethostname(request["hostname"])
        loopback_up()
        build_root(request["layout"], fds)
        for fd in fds.values():
            os.close(fd)
        null = os.open("/dev/null", os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(stderr, 2)
        os.close(null)
        os.close(stderr)
        os.chdir(request["workdir"])
        drop_privileges(request["uid"], request["limits"])
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a change of uid clears it
        load_seccomp(base64.b64decode(request["seccomp"]))
        send(reply, {"ready": True})
    except BaseException as error:
        send(reply, {"error": f"{type(error).__name__}: {error}"})
        os._exit(70)
    # Learner code can ptrace this process (same uid): it keeps nothing but 0, 1 and 2,
    # and so does the kernel.
    reply.close()
    os.closerange(3, 1 << 16)
    kernel = os.fork()
    if kernel == 0:
        run_kernel(request)
    while True:  # reap every orphan; end with the kernel
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        if pid == kernel:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def run_kernel(request):
    """C: the kernel, as `python -m ipykernel_launcher ARGS` would start it. Never returns."""
    code = 1
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        os.environ.clear()
        os.environ.update(request["environment"])
        sys.argv = ["ipykernel_launcher", *request["argv"]]
        # Finders cached while the host's files were visible know nothing true here.
        sys.path_importer_cache.clear()
        importlib.invalidate_caches()
        if "numpy" in sys.modules:  # forks share the parent's random state: draw a fresh one
            sys.modules["numpy"].random.seed()
        kernelapp.launch_new_instance()
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


def start_sandbox(request, fds, reply, stderr):
    """A: make the namespaces, fork their PID 1, report it, wait for it. Never returns."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if request.get("cgroup"):  # the sandbox's memory cgroup, which its processes inherit
            with open(request["cgroup"], "w", encoding="ascii") as procs:
                procs.write(str(os.getpid()))
        unshare(NAMESPACES)
        init = os.fork()
        if init == 0:
            sandbox_init(request, fds, reply, stderr)
        for fd in fds.values():
            os.close(fd)
        os.close(stderr)
        pidfd = os.pidfd_open(init)
        send(reply, {"pid": init}, [pidfd])
        os.close(pidfd)
        _, status = os.waitpid(init, 0)
        send(reply, {"exit": os.waitstatus_to_exitcode(status)})
    except BaseException as error:
        try:
            send(reply, {"error": f"{type(error).__name__}: {error}"})
        finally:
            os._exit(70)
    os._exit(0)


def serve(requests):
    """Answer requests until the grader closes its end."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forked children are reaped by the kernel
    send(requests, {"ready": True, "preloaded": PRELOADED})
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(requests, 1 << 20, 64)
        except InterruptedError:
            continue
        if not data:
            return
        request = json.loads(data)
        fds = dict(zip(request["fds"], fds, strict=True))
        reply, stderr = fds.pop("reply"), fds.pop("stderr")
        if os.fork() == 0:
            requests.close()
            with socket.socket(fileno=reply) as reply_socket:
                start_sandbox(request, fds, reply_socket, stderr)
        for fd in (reply, stderr, *fds.values()):
            os.close(fd)


if __name__ == "__main__":
    if SYS_PIVOT_ROOT is None or os.geteuid() != 0:
        raise SystemExit(f"warm kernels need root on x86_64 or aarch64, not {platform.machine()}")
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    serve(socket.socket(fileno=int(sys.argv[1])))
