"""Where one notebook's grading time goes: a measured budget, per phase.

Measurement only, from outside the library: a Dask worker preload. `make grade`
run with `environment(FILE)` added to its environment has each worker import
this module (Dask's own `distributed.worker.preload` setting), whose
`dask_setup` wraps the worker's `grade` and `autograde_once` and, before each
submission, a few methods of nbgrader, nbclient and SandboxedExecute with
timers; nothing they do changes. Each phase keeps its *own* time (a phase inside
another is subtracted from the outer one), so the phases of a notebook add
up to its total. For each phase it records wall-clock seconds and the
worker's CPU seconds (`time.process_time`, all of its threads); the kernel's
own CPU seconds are read from /proc when its kernel is ready and just
before it is killed. One JSON line per graded submission goes to the file;
`summarize` turns the lines into the per-notebook table `make bench` prints.

Measured on 20 learners x 2 notebooks, three pairs of runs back to back
(docs/performance.md, The lean cell runner), median per notebook: with
`cell_runner = "ipykernel"` the grader 297 + the kernel 276 = 572 CPU-ms;
with the lean runner 226 + 97 = 323.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import os
import statistics
import time
from collections import defaultdict
from pathlib import Path

# (key, label) in the order a notebook meets them; `summarize` prints this order.
PHASES = (
    ("app", "nbgrader app: config, logging, find files"),
    ("init_assignment", "nbgrader: learner & submission rows, copy files"),
    ("sanitize_pass", "pass 1 (sanitize): read + write notebook"),
    ("ClearOutput", "  ClearOutput"),
    ("DeduplicateIds", "  DeduplicateIds"),
    ("OverwriteKernelspec", "  OverwriteKernelspec"),
    ("OverwriteCells", "  OverwriteCells (gradebook reads)"),
    ("CheckCellMetadata", "  CheckCellMetadata (both passes)"),
    ("autograde_pass", "pass 2 (autograde): read + write notebook"),
    ("setup_sources", "  execute: setup cells from the gradebook"),
    ("kernel_start", "  kernel start (sandbox + python + cell runner)"),
    ("first_cell", "  first code cell (imports)"),
    ("learner_cells", "  other non-test cells in the kernel"),
    ("test_cells", "  test cells in the kernel (visible part)"),
    ("trusted_setup", "  trusted side: setup cells"),
    ("trusted_checks", "  trusted side: checks over the bridge"),
    ("kernel_stop", "  kernel kill + cleanup"),
    ("execute_other", "  execute: the rest"),
    ("IgnorePattern", "  IgnorePattern"),
    ("ClearMetadataPreprocessor", "  ClearMetadataPreprocessor"),
    ("LimitOutput", "  LimitOutput"),
    ("SaveAutoGrades", "  SaveAutoGrades (gradebook writes)"),
    ("AssignLatePenalties", "  AssignLatePenalties"),
    ("worker", "worker: the rest"),
)


class Budget:
    """Exclusive wall and CPU seconds per phase for the submission being graded."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.wall: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self.kernel: dict[str, float] = defaultdict(float)  # the kernel's CPU in the phase
        self.km = None  # the kernel manager whose kernel is running, if any
        self.kernel_cpu_ready: list[float] = []
        self.kernel_cpu_total: list[float] = []
        self._stack: list[str] = []

    def _enter(self, name: str):
        self._stack.append(name)
        return time.perf_counter(), time.process_time(), kernel_cpu_seconds(self.km)

    def _leave(self, name: str, started) -> None:
        wall = time.perf_counter() - started[0]
        cpu = time.process_time() - started[1]
        kernel = max(0.0, kernel_cpu_seconds(self.km) - started[2]) if self.km else 0.0
        self._stack.pop()
        self.kernel[name] += kernel  # phases that see the kernel run do not nest
        for kind, value in ((self.wall, wall), (self.cpu, cpu)):
            kind[name] += value
            if self._stack:  # the outer phase keeps only its own time
                kind[self._stack[-1]] -= value

    @contextlib.contextmanager
    def phase(self, name: str):
        started = self._enter(name)
        try:
            yield
        finally:
            self._leave(name, started)

    def record(self) -> dict:
        return {
            "wall": dict(self.wall),
            "cpu": dict(self.cpu),
            "kernel": dict(self.kernel),
            "kernel_cpu_ready": sum(self.kernel_cpu_ready),
            "kernel_cpu_total": sum(self.kernel_cpu_total),
        }


BUDGET = Budget()


def _wrap(cls, method: str, phase) -> None:
    """Time `cls.method` as `phase` (a name, or a function of self and the arguments)."""
    original = getattr(cls, method)
    if getattr(cls.__dict__.get(method), "_budget", False):
        return
    name_of = phase if callable(phase) else (lambda *_: phase)

    if inspect.iscoroutinefunction(original):

        @functools.wraps(original)
        async def timed(self, *args, **kwargs):
            name = name_of(self, *args)
            if name is None:
                return await original(self, *args, **kwargs)
            started = BUDGET._enter(name)
            try:
                return await original(self, *args, **kwargs)
            finally:
                BUDGET._leave(name, started)

    else:

        @functools.wraps(original)
        def timed(self, *args, **kwargs):
            name = name_of(self, *args)
            if name is None:
                return original(self, *args, **kwargs)
            started = BUDGET._enter(name)
            try:
                return original(self, *args, **kwargs)
            finally:
                BUDGET._leave(name, started)

    timed._budget = True
    setattr(cls, method, timed)


def kernel_cpu_seconds(km) -> float:
    """User + system CPU seconds of the kernel's processes (0.0 when they are gone)."""
    pid = getattr(km, "kernel_pid", None)
    if pid is None:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for process in [pid, *_children(pid)]:
        try:
            fields = Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / ticks


def _children(pid: int) -> list[int]:
    found, stack = [], [pid]
    while stack:
        parent = stack.pop()
        try:
            kids = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        found += [int(k) for k in kids]
        stack += [int(k) for k in kids]
    return found


# The file each worker appends its records to, named in the environment it starts in.
FILE_VARIABLE = "BENCH_BUDGET_FILE"


def environment(path: Path) -> dict[str, str]:
    """What `make grade`'s environment needs for its workers to record a budget to `path`."""
    return {
        "DASK_DISTRIBUTED__WORKER__PRELOAD": json.dumps([__name__]),
        FILE_VARIABLE: str(Path(path).resolve()),
    }


def dask_setup(worker=None) -> None:
    """Dask's preload hook: time each submission this worker grades."""
    from coursekit.cluster import worker as grading

    if getattr(grading.grade, "_budget", False):
        return
    grade, autograde_once = grading.grade, grading.autograde_once

    def timed_grade(assignment, student, extra_args):
        BUDGET.reset()
        # Each time: a worker may import the grader's modules again from the course
        # bundle (task.use_course_packages), and their classes then have no timers.
        install()
        try:
            with BUDGET.phase("worker"):
                return grade(assignment, student, extra_args)
        finally:
            append(os.environ[FILE_VARIABLE], assignment, student, BUDGET.record())

    def timed_autograde(*args, **kwargs):
        with BUDGET.phase("app"):
            return autograde_once(*args, **kwargs)

    timed_grade._budget = True
    grading.grade, grading.autograde_once = timed_grade, timed_autograde


def install() -> None:
    """Put the timers in place on the classes now imported (each class once)."""
    from nbconvert.preprocessors.base import Preprocessor
    from nbgrader.converters.autograde import Autograde
    from nbgrader.converters.base import BaseConverter

    from coursekit.autograde.execute import SandboxedExecute
    from coursekit.autograde.trusted import TrustedNotebook
    from coursekit.core import cells

    known = {key for key, _ in PHASES}

    def preprocessor_phase(self, *_):
        if isinstance(self, SandboxedExecute):
            return "execute_other"
        # make grade's replacements (coursekit.nbgrader_internals) count as nbgrader's own
        names = [cls.__name__ for cls in type(self).__mro__]
        return next((name for name in names if name in known), "execute_other")

    def pass_phase(self, *_):
        if isinstance(self, Autograde):
            return "sanitize_pass" if self._sanitizing else "autograde_pass"
        return None

    def cell_phase(self, cell, *_):
        if cells.is_test(cell):
            return "test_cells"
        if not getattr(self, "_budget_first_done", False):
            self._budget_first_done = True
            return "first_cell"
        return "learner_cells"

    _wrap(Preprocessor, "__call__", preprocessor_phase)
    _wrap(BaseConverter, "convert_single_notebook", pass_phase)
    _wrap(Autograde, "init_assignment", "init_assignment")
    _wrap(SandboxedExecute, "_gradebook_setup_sources", "setup_sources")
    # nbclient's sync entry points (run_sync copies made when its class was defined).
    _wrap(SandboxedExecute, "start_new_kernel", "kernel_start")
    _wrap(SandboxedExecute, "_run_in_kernel", cell_phase)
    _wrap(SandboxedExecute, "_judge", "trusted_checks")
    _wrap(TrustedNotebook, "run_setup", "trusted_setup")

    if getattr(SandboxedExecute.__dict__.get("_cleanup_kernel"), "_budget", False):
        return
    start_client = SandboxedExecute.start_new_kernel_client

    def start_client_timed(self):
        with BUDGET.phase("kernel_start"):
            kc = start_client(self)
        BUDGET.kernel_cpu_ready.append(kernel_cpu_seconds(self.km))
        BUDGET.km = self.km
        return kc

    SandboxedExecute.start_new_kernel_client = start_client_timed

    cleanup = SandboxedExecute._cleanup_kernel

    def cleanup_timed(self):
        if self.km is not None:
            BUDGET.kernel_cpu_total.append(kernel_cpu_seconds(self.km))
        BUDGET.km = None
        with BUDGET.phase("kernel_stop"):
            return cleanup(self)

    cleanup_timed._budget = True
    SandboxedExecute._cleanup_kernel = cleanup_timed


def append(path: str, assignment: str, student: str, record: dict) -> None:
    line = json.dumps({"assignment": assignment, "student": student, **record})
    with open(path, "a", encoding="utf-8") as out:
        out.write(line + "\n")


def summarize(path: Path) -> str:
    """Mean seconds per notebook of each phase, wall and CPU, as a table."""
    records = [json.loads(line) for line in Path(path).read_text().splitlines() if line]
    if not records:
        return "no budget records"
    notebooks = len(records)

    def mean(kind: str, key: str) -> float:
        return sum(r.get(kind, {}).get(key, 0.0) for r in records) / notebooks

    lines = [
        f"time budget per notebook (mean of {notebooks}; own time of each phase, "
        "worker = the grading process)",
        f"  {'phase':<48} {'wall ms':>8} {'worker CPU ms':>14} {'kernel CPU ms':>14}",
    ]
    for key, label in PHASES:
        wall, cpu, kernel = mean("wall", key), mean("cpu", key), mean("kernel", key)
        if key == "kernel_start":
            kernel = statistics.mean(r["kernel_cpu_ready"] for r in records)
        if max(abs(wall), abs(cpu), abs(kernel)) < 0.0005:
            continue
        lines.append(f"  {label:<48} {wall * 1000:8.0f} {cpu * 1000:14.0f} {kernel * 1000:14.0f}")
    total_wall = sum(mean("wall", key) for key, _ in PHASES)
    total_cpu = sum(mean("cpu", key) for key, _ in PHASES)
    lines.append(f"  {'total':<48} {total_wall * 1000:8.0f} {total_cpu * 1000:14.0f}")
    ready = statistics.mean(r["kernel_cpu_ready"] for r in records)
    whole = statistics.mean(r["kernel_cpu_total"] for r in records)
    placed = sum(mean("kernel", key) for key, _ in PHASES if key != "kernel_start") + ready
    lines.append(
        f"  kernel's own CPU: {ready * 1000:.0f} ms until ready (python, cell runner), "
        f"{whole * 1000:.0f} ms in all ({(whole - placed) * 1000:.0f} ms outside the phases)"
    )
    lines.append(
        f"  CPU per notebook, worker + kernel: {(total_cpu + whole) * 1000:.0f} ms "
        f"(2 cores: at best {(total_cpu + whole) / 2:.2f} s per notebook)"
    )
    return "\n".join(lines)
