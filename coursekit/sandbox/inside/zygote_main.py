"""The warm-kernel server: fork a narrower sandbox per request from a pre-imported parent.

Run as `python -c <this file's source>` by bubblewrap (see `warm.Zygote`): it
is already in a sandbox bubblewrap built, with its seccomp filter, no
network, the system and the Python read-only, no course files, and a user
namespace of its own whose root is host uid `policy.PARENT_UID` (nobody's)
and whose only other uids are the sandbox pool's. Its capabilities hold in
that namespace only. It imports ipykernel and the course's usual modules
once, never runs learner code, never reads course files, and holds nothing
a learner may not see: each kernel is a fork of it. Self-contained on
purpose (stdlib and ipykernel only): nothing of coursekit is imported here.

Like an established zygote (Chromium's, Android's), a fork only narrows what
it already is in; it never builds a root or touches the host's mounts:

    A  (the parent's PID namespace) tells the grader its pid, which puts it
       into the sandbox's memory cgroup and says go; unshares mount, PID,
       network, IPC, UTS and cgroup namespaces
    └─ B  PID 1 of the new namespace: fresh tmpfs /run, /tmp, home and
          /run/kernel, the submission's copies, its own /proc and /dev/pts,
          the bridge's socket; then the limits, the leased uid, no
          capabilities, no new privileges, the kernel's full seccomp filter
          (stacked on the parent's); then reaps zombies until the kernel ends
       └─ C  the kernel: ipykernel with the connection file in the sandbox

A sends pidfds (the grader reads the host pids from them) on the request's
reply socket, then waits for B and sends its exit status. B says "ready"
(or why it failed) on the same socket before C starts. The server ends when
its request socket closes (the grader has gone); A dies with the server, B
with A, C with B, and a PID namespace dies with its PID 1.
"""

import base64
import contextlib
import ctypes
import fcntl
import gc
import importlib
import json
import os
import resource
import signal
import socket
import struct
import sys
import time
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
# <sched.h>, <sys/mount.h>, <linux/prctl.h>, <linux/capability.h>: values the kernel's ABI fixes
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x20000000, 0x40000000
NAMESPACES = (
    CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP
)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_SLAVE = 32, 4096, 16384, 1 << 19
SIOCSIFFLAGS, IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x8914, 0x1, 0x8, 0x40
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
LINUX_CAPABILITY_VERSION_3 = 0x20080522


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


def prctl(option, value, arg=0):
    check(LIBC.prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(arg), 0, 0), f"prctl {option}")


# ---------------------------------------------------------------- B: narrowing


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


def bind_read_only(source_fd, target):
    """Bind what `source_fd` (opened in this sandbox) names at `target`, read-only."""
    make_parents(target)
    if not os.path.lexists(target):
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    source = f"/proc/self/fd/{source_fd}"
    mount(source, target, None, MS_BIND)
    mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)


def keep_mounts_under(target):
    """The parent's mounts below `target` (a course under /tmp), opened to be put back on top.

    A bind keeps its mount's read-only flags (locked, in a user namespace).
    """
    with open("/proc/self/mountinfo", encoding="utf-8") as info:
        points = [line.split()[4].replace("\\040", " ") for line in info]
    inside = sorted({p for p in points if p.startswith(target.rstrip("/") + "/")})
    tops = [p for p in inside if not any(p.startswith(q + "/") for q in inside)]
    return [(p, os.open(p, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)) for p in tops]


def narrow(steps, fds):
    """The sandbox's own mounts over the parent's: `policy.kernel_layout`'s steps, in order.

    Only tmpfs, proc and devpts are mounted, and binds of what this sandbox
    already sees: nothing of the host's is reachable from here.
    """
    mount(None, "/", None, MS_REC | MS_SLAVE)  # nothing done here reaches the parent
    # What the binds name is opened first: /run, where the bridge's socket lies, is covered next.
    sources = {
        index: os.open(step["source"], os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        for index, step in enumerate(steps)
        if step["op"] == "ro-bind"
    }
    for index, step in enumerate(steps):
        op, target = step["op"], step["path"]
        if op == "tmpfs":
            make_parents(target)
            make_dir(target)
            kept = keep_mounts_under(target) if step.get("keep") else []
            options = f"mode={step['perms']:o},size={step['size']}"
            mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)
            for point, fd in kept:
                make_parents(point)
                make_dir(point)
                mount(f"/proc/self/fd/{fd}", point, None, MS_BIND | MS_REC)
                os.close(fd)
        elif op == "dir":
            make_parents(target)
            make_dir(target, step["perms"])
        elif op == "proc":
            mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        elif op == "devpts":  # its own terminals, not the parent's
            options = "newinstance,ptmxmode=0666,mode=620"
            mount("devpts", target, "devpts", MS_NOSUID | MS_NOEXEC, options)
        elif op == "file":
            copy_file(fds[step["fd"]], target, step["perms"])
        elif op == "ro-bind":
            bind_read_only(sources.pop(index), target)
        else:
            raise ValueError(f"unknown sandbox step {op!r}")


def loopback_up():
    """Bring up `lo` in the new network namespace, as bwrap does (and nothing else)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", IFF_UP | IFF_LOOPBACK | IFF_RUNNING)
        fcntl.ioctl(probe, SIOCSIFFLAGS, request)


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint32) for name in ("effective", "permitted", "inheritable")]


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
    # A change of uid clears the effective and permitted sets; these two go explicitly.
    header = CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    check(LIBC.capset(ctypes.byref(header), (CapData * 2)()), "capset")
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
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

    It stacks on the parent's (bwrap's) filter: a call either denies is denied.
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
        narrow(request["layout"], fds)
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
    """C: the kernel, as `python -m ipykernel_launcher ARGS` would start it. Never returns.

    With a "runner" (the lean cell runner's source, `cell_runner`) it runs that
    as `python -c RUNNER ARGS` would, in place of ipykernel.
    """
    code = 1
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        os.environ.clear()
        os.environ.update(request["environment"])
        time.tzset()  # the kernel's TZ (the course's), not the one the parent started with
        sys.argv = ["ipykernel_launcher", *request["argv"]]
        # Finders cached before the sandbox's own folders were mounted know nothing true here.
        sys.path_importer_cache.clear()
        importlib.invalidate_caches()
        if "numpy" in sys.modules:  # forks share the parent's random state: draw a fresh one
            sys.modules["numpy"].random.seed()
        if request.get("runner"):
            sys.argv = ["-c", *request["argv"]]
            exec(compile(request["runner"], "<cell runner>", "exec"), {"__name__": "__main__"})
        else:
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
    """A: join the memory cgroup, make the namespaces, fork and report PID 1. Never returns."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if request.get("cgroup"):  # the grader moves this process (its host pid) into it
            me = os.pidfd_open(os.getpid())
            send(reply, {"joining": True}, [me])
            os.close(me)
            if json.loads(reply.recv(4096) or b"{}").get("go") is not True:
                raise RuntimeError("the grader did not put the sandbox into its cgroup")
        check(LIBC.unshare(NAMESPACES), "unshare")
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


# The most descriptors Linux passes in one message (SCM_MAX_FD): a request's
# submission files (policy.submission_files caps them below that) and its two pipes.
SCM_MAX_FD = 253


def serve(requests):
    """Answer requests until the grader closes its end."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forked children are reaped by the kernel
    me = os.pidfd_open(os.getpid())  # the grader learns this process's host pid from it
    send(requests, {"pid": True}, [me])
    os.close(me)  # before "ready": from then on it holds nothing but stdio and its socket
    # What is imported stays out of every kernel's garbage collections (the gc module's
    # advice before fork): they neither scan it nor copy the pages they share with it.
    gc.collect()
    gc.freeze()
    send(requests, {"ready": True, "preloaded": PRELOADED})
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(requests, 1 << 20, SCM_MAX_FD)
        except InterruptedError:
            continue
        if not data:
            return
        request = json.loads(data)
        if len(fds) != len(request["fds"]):  # cut short: answer no one, but keep serving
            for fd in fds:
                os.close(fd)
            continue
        fds = dict(zip(request["fds"], fds, strict=True))
        reply, stderr = fds.pop("reply"), fds.pop("stderr")
        if os.fork() == 0:
            requests.close()
            with socket.socket(fileno=reply) as reply_socket:
                start_sandbox(request, fds, reply_socket, stderr)
        for fd in (reply, stderr, *fds.values()):
            os.close(fd)


if __name__ == "__main__":
    if os.geteuid() != 0 or not os.path.exists("/proc/self/uid_map"):
        raise SystemExit("the warm-kernel parent runs as root of its own user namespace (bwrap)")
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    requests = int(sys.argv[1])
    # Nothing but stdio and the request socket: what bwrap left open is closed.
    os.closerange(3, requests)
    os.closerange(requests + 1, 1 << 16)
    serve(socket.socket(fileno=requests))
