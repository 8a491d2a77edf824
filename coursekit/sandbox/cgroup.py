"""A memory cap over a whole sandbox: every process it starts, together.

The per-process caps (`policy.Limits`) bound each process's address space;
a sandbox of 64 processes could still hold 64 of those. Where the machine
has a memory cgroup controller the grader may write to (grading as root),
each sandbox gets a cgroup of its own under the grader's own cgroup, capped
at `Limits.memory_mb` of memory (and no swap), and its first process joins
it before anything else runs in the sandbox; the kernel's out-of-memory
killer then ends a process of that sandbox only. Both cgroup versions: v2
(memory.max) where the grader's cgroup can delegate the memory controller,
else v1's memory hierarchy (memory.limit_in_bytes). Where there is neither,
`unavailable()` says why and the caps stay per process.

`MemoryCap.events()` is the grader's evidence that a sandbox met its cap
(its out-of-memory kills, counted by the kernel in the cgroup): what the
grader's MemoryLimitExceeded incident is recorded from, a few small reads.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import time
from pathlib import Path
from typing import NamedTuple

log = logging.getLogger(__name__)
PREFIX = "coursekit-sandbox-"
_NUMBERS = itertools.count()


@functools.cache
def _controller() -> tuple[str, Path] | str:
    """("v2" | "v1", the grader's own memory cgroup folder), or why there is none."""
    if os.geteuid() != 0:
        return "the grader does not run as root, so it cannot make cgroups"
    try:
        mounts = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
        membership = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError as error:
        return f"no cgroup information ({error})"
    own = {}
    for line in membership:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else ["(v2)"]:
            own[name] = path
    v1 = v2 = None
    for line in mounts:
        fields = line.split()
        tail = fields[fields.index("-") + 1 :]
        fstype, options = tail[0], tail[2].split(",")
        if fstype == "cgroup2":
            v2 = Path(fields[4])
        elif fstype == "cgroup" and "memory" in options:
            v1 = Path(fields[4])
    if v2 is not None and "(v2)" in own:
        folder = v2 / own["(v2)"].lstrip("/")
        with contextlib.suppress(OSError):
            if "memory" in (folder / "cgroup.controllers").read_text().split():
                (folder / "cgroup.subtree_control").write_text("+memory")
                return "v2", folder
    if v1 is not None and "memory" in own:
        folder = v1 / own["memory"].lstrip("/")
        if os.access(folder, os.W_OK):
            return "v1", folder
    return "the machine has no memory cgroup controller the grader may use"


def unavailable() -> str | None:
    """Why sandboxes get no memory cgroup here, or None when they do."""
    found = _controller()
    return found if isinstance(found, str) else None


class MemoryEvents(NamedTuple):
    """What a sandbox's memory cap did, counted since the sandbox started."""

    oom_kills: int  # processes the cap's out-of-memory killer ended
    refusals: int  # allocations the cap refused, reclaim failing (v2's "oom"; v1: 0)

    def exceeded_since(self, before: MemoryEvents) -> bool:
        """Whether the sandbox met its cap between `before` and these counts."""
        return self.oom_kills > before.oom_kills or self.refusals > before.refusals


def _counts(path: Path) -> dict[str, int]:
    """A cgroup's flat "name count" lines (memory.events, memory.oom_control)."""
    found = {}
    for line in path.read_text(encoding="ascii").splitlines():
        name, _, count = line.partition(" ")
        with contextlib.suppress(ValueError):
            found[name] = int(count)
    return found


class MemoryCap:
    """The cgroup of one sandbox: `procs` is the file its first process writes its pid into.

    Named by the sandbox's uid, this process and a counter: never one that exists.
    """

    def __init__(self, uid: int, limit_mb: int):
        found = _controller()
        if isinstance(found, str):
            raise OSError(found)
        self.version, parent = found
        _remove_stale(parent)
        self.folder = parent / f"{PREFIX}{uid}-{os.getpid()}-{next(_NUMBERS)}"
        self.folder.mkdir(mode=0o755)
        limit = str(limit_mb * 2**20)
        try:
            if self.version == "v2":
                (self.folder / "memory.max").write_text(limit)
                with contextlib.suppress(OSError):  # no swap configured: no such file
                    (self.folder / "memory.swap.max").write_text("0")
            else:
                (self.folder / "memory.limit_in_bytes").write_text(limit)
                with contextlib.suppress(OSError):  # memsw exists only with swap accounting
                    (self.folder / "memory.memsw.limit_in_bytes").write_text(limit)
        except OSError:
            self.close()
            raise
        self.procs = str(self.folder / "cgroup.procs")

    def events(self) -> MemoryEvents | None:
        """The cap's counts of what it did to the sandbox so far (None once unreadable).

        The grader's own evidence that the sandbox met its cap, read from the
        cgroup (no learner process can write there): v2's memory.events, v1's
        memory.oom_control. Neither the usage peak nor v1's failcnt (v2's `max`)
        counts: those also rise when the cap only made the kernel reclaim cache.
        """
        try:
            if self.version == "v2":
                counts = _counts(self.folder / "memory.events")
                return MemoryEvents(counts.get("oom_kill", 0), counts.get("oom", 0))
            # v1 (oom_kill since Linux 4.13) has no count of refused allocations.
            return MemoryEvents(_counts(self.folder / "memory.oom_control").get("oom_kill", 0), 0)
        except OSError:
            return None

    def close(self) -> None:
        """Remove the cgroup once its processes are gone (a killed sandbox takes milliseconds)."""
        _remove(self.folder, wait=1.0)


@functools.cache
def _remove_stale(parent: Path) -> None:
    """Once per process: remove the empty cgroups of graders that ended without doing so.

    Only those whose grader (the pid in the name) is gone: a live grader's new cgroup
    is empty until its sandbox's first process joins it.
    """
    for folder in parent.glob(f"{PREFIX}*"):
        try:
            os.kill(int(folder.name.removeprefix(PREFIX).split("-")[1]), 0)
            continue  # its grader is alive
        except (IndexError, ValueError, ProcessLookupError):
            pass  # not one of ours by name, or its grader ended
        except PermissionError:
            continue  # a live process of another account
        with contextlib.suppress(OSError):
            folder.rmdir()  # refused while it holds a process: a live sandbox's


def _remove(folder: Path, wait: float = 0.0) -> None:
    deadline = time.monotonic() + wait
    while True:
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= deadline:
                log.warning("the sandbox cgroup %s still holds processes", folder)
                return
            time.sleep(0.01)


@functools.cache
def warn_once() -> None:
    """Say once per grading process that memory is capped per process only, and why."""
    why = unavailable()
    if why:
        log.warning(
            "Sandboxes get no memory cap over all their processes (%s): memory is capped "
            "per process only (Limits.memory_mb of address space each). Grade as root on "
            "a machine with cgroups (v1's memory hierarchy or v2 with the memory "
            "controller) for the cap.",
            why,
        )
