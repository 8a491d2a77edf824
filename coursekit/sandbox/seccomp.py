"""The seccomp filter of every sandboxed kernel, compiled by libseccomp.

It denies what Docker's default profile denies to a container without extra
capabilities: kernel keyrings (a key outlives its sandbox and its uid is
reused by the next one, so it would be a channel between learners), tracing
and reading other processes (ptrace, process_vm_*), bpf, perf events,
userfaultfd, new namespaces and mounts once the sandbox is built, kernel
modules, clocks, swap, reboot, quotas, NUMA policy, file handles, the
io_uring interface (which bypasses per-syscall filtering). `clone3` answers
ENOSYS, as in Docker, so that the C library falls back to `clone`, whose
namespace flags the filter can see. Any other system call ABI (x32, i386 on
x86_64) kills the process.

The program is libseccomp's (through PyPI's `pyseccomp`, ctypes over Debian's
libseccomp2), exported as BPF once per grading process: bubblewrap installs
it with `--seccomp FD`, a warm kernel's sandbox with one prctl
(`zygote_main.load_seccomp`), on top of its parent's (`program(parent=True)`).
"""

from __future__ import annotations

import errno
import functools
import os

DENIED = (
    # a channel between learners, or a look into another process
    "add_key",
    "keyctl",
    "request_key",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    # the kernel's own attack surface
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    # namespaces, mounts and roots: the sandbox is built once, before learner code
    "unshare",
    "setns",
    "mount",
    "mount_setattr",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    # the machine's
    "acct",
    "clock_adjtime",
    "clock_settime",
    "settimeofday",
    "stime",
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "create_module",
    "get_kernel_syms",
    "query_module",
    "swapon",
    "swapoff",
    "syslog",
    "sysfs",
    "_sysctl",
    "ustat",
    "uselib",
    "nfsservctl",
    "lookup_dcookie",
    "quotactl",
    "quotactl_fd",
    "vhangup",
    "iopl",
    "ioperm",
    "vm86",
    "vm86old",
    "name_to_handle_at",
    "open_by_handle_at",
    "get_mempolicy",
    "set_mempolicy",
    "mbind",
    "move_pages",
)
# clone's flags that make a namespace (CLONE_NEWNS ... CLONE_NEWNET, CLONE_NEWTIME).
NAMESPACE_FLAGS = (
    0x00000080,  # CLONE_NEWTIME
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)


class SeccompUnavailableError(RuntimeError):
    """libseccomp (Debian's libseccomp2) or its Python binding is missing."""


# What the warm-kernel parent's forks still do before they narrow themselves into a
# kernel's sandbox (`zygote_main.narrow`); the kernel's own filter then denies them too.
NARROWING = ("unshare", "mount")


@functools.cache
def program(parent: bool = False) -> bytes:
    """The filter as a BPF program (struct sock_filter[]), built by libseccomp.

    parent: the warm-kernel parent's (bwrap's `--seccomp` for `warm.Zygote`):
    the same, except that NARROWING calls are let through (unshare without
    CLONE_NEWUSER only). Each kernel forked from it stacks the full one on top.
    """
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as error:  # OSError: libseccomp.so.2 not found
        raise SeccompUnavailableError(
            f"libseccomp is missing ({error}): `apt-get install libseccomp2` "
            "and `pip install pyseccomp` (make venv)"
        ) from None
    denied = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED:
        if parent and name in NARROWING:
            continue
        try:
            rules.add_rule(denied, name)
        except (ValueError, OSError):  # no such call on this architecture
            continue
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for flag in NAMESPACE_FLAGS:
        rules.add_rule(denied, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    if parent:  # its forks make every namespace but a user namespace
        user = 0x10000000  # CLONE_NEWUSER
        rules.add_rule(denied, "unshare", seccomp.Arg(0, seccomp.MASKED_EQ, user, user))
    with open(os.memfd_create("coursekit-seccomp", os.MFD_CLOEXEC), "w+b") as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


def program_fd(parent: bool = False) -> int:
    """A new file descriptor holding the program from its start (bwrap's `--seccomp FD`)."""
    fd = os.memfd_create("coursekit-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program(parent))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
