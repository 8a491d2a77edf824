"""nbgrader's Execute with the learner's kernel in a sandbox and verdicts from outside it.

Every code cell runs in the learner's kernel, which lives in a bubblewrap
sandbox (`coursekit.sandbox`): that run is what formgrader, feedback and the
TA see. By default that kernel is the lean cell runner (`cell_runner`:
IPython's InteractiveShell on one socket, `coursekit.sandbox.inside.cell_runner`,
driven by `lean_cells`); `cell_runner = "ipykernel"` runs a ZeroMQ ipykernel.
Test cells are also judged by the grader itself (`trusted`): after
the kernel has run what the learner was given of a test cell (its hidden
region stripped, so hidden tests never enter the sandbox), the grader runs
the whole cell in its own namespace and calls the learner's functions across
the bridge. A test cell keeps its points only if the trusted run passes (and,
for what the learner could see, the kernel's run too); the trusted run's
message and prints are written into the cell's outputs. A test cell the
kernel had to interrupt at its time limit is not run again by the grader:
it scores 0 either way, with a CallTimeLimit incident.

It also survives hostile submissions, as stock Execute does not:
- caps per kernel (memory, CPU, processes, file size, scratch space) come
  from the sandbox; a notebook has a wall-clock budget (`notebook_timeout`)
  on top of the per-cell `timeout`; a cell keeps at most `output_limit_kb`;
- a cell during which the sandbox's memory cgroup met its cap (the cgroup's
  own counts, read by the grader) gets MemoryLimitExceeded; without a cgroup,
  or from a MemoryError alone, none;
- when the kernel dies or stays stuck after a timeout, the cell gets a
  error output, later cells are marked as not run (scored 0), and the
  notebook is still graded: earlier cells keep their credit.
"""

from __future__ import annotations

import os
import signal
import time
from queue import Empty

import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import Execute
from traitlets import Bool, Enum, Integer, List, Unicode, default

from coursekit.autograde import shapes
from coursekit.autograde.lean_cells import LeanCells
from coursekit.autograde.trusted import TrustedNotebook
from coursekit.core import cells, incidents
from coursekit.core.course import CourseKit
from coursekit.core.messages import _, ngettext
from coursekit.sandbox import policy, runner_client, warm
from coursekit.sandbox.bridge import Bridge, BridgeBroken, CallTimedOut, Session
from coursekit.sandbox.kernel import SandboxedKernelManager

UNSAFE_WARNING = (
    "SandboxedExecute.unsafe_no_sandbox is set: learner code runs WITHOUT a sandbox, with "
    "the grader's rights over every file it can reach. Use this only for code you trust."
)


def start_warm_parent(config) -> warm.Zygote | None:
    """Start the warm-kernel parent in this process, so the workers it forks later share it.

    Only where kernels would be forked from it anyway (as root, warm kernels on,
    the sandbox on). It imports while the caller goes on; call its
    `wait_started()` before forking.
    """
    execute = SandboxedExecute(config=config)
    if execute.unsafe_no_sandbox or not execute.warm_kernels or not warm.supported():
        return None
    return warm.spawn(tuple(execute.preload_modules))


def _no_score_from_results(cell) -> None:
    """Show a test cell's execute_results as display_data: nbgrader would take the first
    one as the cell's score, and the kernel (a learner's hook) can publish one."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "execute_result":
            output.output_type = "display_data"
            output.pop("execution_count", None)


class SandboxedExecute(LeanCells, Execute):
    memory_limit_mb = Integer(4096, help="address-space cap of each sandboxed process (MiB)").tag(
        config=True
    )
    cpu_limit_seconds = Integer(300, help="CPU-time cap of each sandboxed process (s)").tag(
        config=True
    )
    process_limit = Integer(64, help="processes and threads one sandbox may run").tag(config=True)
    file_limit_mb = Integer(64, help="largest file a sandbox may write (MiB)").tag(config=True)
    scratch_limit_mb = Integer(256, help="size of a sandbox's home and of its /tmp (MiB)").tag(
        config=True
    )
    notebook_timeout = Integer(
        300, help="wall-clock budget for executing one notebook (s); 0 for none"
    ).tag(config=True)
    output_limit_kb = Integer(1024, help="output kept per cell (KiB); the rest is dropped").tag(
        config=True
    )
    warm_kernels = Bool(
        True,
        help="as root: fork each sandboxed kernel from a warm, pre-imported parent "
        "(its own namespaces, uid and limits, as bwrap gives) instead of starting one bwrap "
        "and Python per notebook",
    ).tag(config=True)
    preload_modules = List(
        Unicode(),
        ["numpy"],
        help="modules the warm parent imports once (what the notebooks import first)",
    ).tag(config=True)
    unsafe_no_sandbox = Bool(
        False, help="run learner code without bubblewrap (unsafe: only for trusted code)"
    ).tag(config=True)
    cell_runner = Enum(
        ["lean", "ipykernel"],
        "lean",
        help="what runs the cells in the sandbox: 'lean' (IPython's InteractiveShell over one "
        "socket, coursekit.sandbox.inside.cell_runner) or 'ipykernel' (a Jupyter kernel over "
        "ZeroMQ)",
    ).tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)

    @default("shutdown_kernel")
    def _kill_thrown_away_kernels(self):
        # Each kernel serves one notebook and is thrown away: no graceful wait.
        return "immediate"

    # ------------------------------------------------------------ notebook

    def preprocess(self, nb, resources=None, km=None):
        if self.unsafe_no_sandbox:
            self.log.warning(UNSAFE_WARNING)
        else:
            policy.check_available()
        budget = self.notebook_timeout or None
        self._deadline = time.monotonic() + budget if budget else None
        self._stopped: str | None = None  # why later cells are not run
        self._memory_before = None  # the sandbox's memory cgroup counts at the last look
        self._setup_sources = self._gradebook_setup_sources(resources)
        cells.forget_verdicts(nb)
        incidents.forget(nb)  # only the grader's own records count
        if shapes.record_cuts(nb):  # not a notebook: each test cell scores 0, nothing runs
            return nb, resources
        self._trusted = TrustedNotebook()
        self._bridge = Bridge()
        try:
            return super().preprocess(nb, resources, km)
        finally:
            self._bridge.close()

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        km.sandboxed = not self.unsafe_no_sandbox
        km.warm, km.preload = self.warm_kernels, tuple(self.preload_modules)
        km.bridge_socket = self._bridge.path
        km.runner = runner_client.SOURCE if self.cell_runner == "lean" else ""
        km.timezone = CourseKit(config=self.config).timezone
        km.limits = policy.Limits(
            memory_mb=self.memory_limit_mb,
            cpu_seconds=self.cpu_limit_seconds,
            processes=self.process_limit,
            file_mb=self.file_limit_mb,
            home_mb=self.scratch_limit_mb,
        )
        return km

    def _gradebook_setup_sources(self, resources) -> set[str]:
        """Sources of the locked, ungraded cells the gradebook knows for this notebook."""
        info = (resources or {}).get("nbgrader")
        if not info:
            return set()
        try:
            course_id = self.config.CourseDirectory.get("course_id", "default_course")
            with Gradebook(info["db_url"], course_id) as gb:
                notebook = gb.find_notebook(info["notebook"], info["assignment"])
                return {c.source for c in notebook.source_cells if c.locked}
        except MissingEntry:
            return set()

    # ------------------------------------------------------------ cells

    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        if self._deadline is None:
            return timeout
        left = max(1, int(self._deadline - time.monotonic()) + 1)
        return left if timeout is None else min(timeout, left)

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        size = len(str(content.get("text", ""))) + len(str(content.get("data", "")))
        if not self._count_output(size):
            return None
        return super().output(outs, msg, display_id, cell_index)

    def _count_output(self, size: int) -> bool:
        """Count `size` characters of output into the cell's; False once over its limit."""
        self._cell_output += size
        if self._cell_output > self.output_limit_kb * 1024:
            self._flooded = True
            return False
        return True

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or cells.is_skipped(cell):
            return cell, resources
        if self._stopped:
            cell.outputs = []
            incidents.add(cell, incidents.NOT_RUN, self._stopped)
            return cell, resources
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self._stop(_("Past the notebook's whole time limit: this cell was not run (0 points)."))
            cell.outputs = []
            incidents.add(cell, incidents.NOTEBOOK_TIME_LIMIT, self._time_limit_message())
            return cell, resources
        is_test = cells.is_test(cell)
        source = cell.source
        visible = cells.visible_source(cell, self.config) if is_test else source
        cell.source = visible  # the kernel gets what the learner was given, never hidden tests
        try:
            cell, resources = self._run_in_kernel(cell, resources, index)
        finally:
            cell.source = source
        if is_test:
            _no_score_from_results(cell)
        if self._stopped:
            return cell, resources
        if is_test:
            if self._cell_timed_out is not None:
                self._record_time_out(cell, self._cell_timed_out)
            else:
                self._judge(cell, hidden=visible != source)
            self._record_memory_limit(cell)  # the hidden checks' calls ran in the sandbox too
        elif cells.is_trusted_setup(cell, self._setup_sources):
            self._trusted.run_setup(source)
        return cell, resources

    def _run_in_kernel(self, cell, resources, index):
        self._cell_output, self._flooded = 0, False
        self._cell_timed_out: int | None = None  # the limit it went past, once interrupted
        if self._memory_before is None:  # the first look; each later one counts from the last
            self._memory_before = self._memory_events()
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._kernel_died(cell)
            return cell, resources
        except CellTimeoutError:
            # The interrupt did not bring the kernel back (e.g. SIGINT ignored).
            self._kernel_stuck(cell, self._get_timeout(cell))
            return cell, resources
        self._record_memory_limit(cell)
        if self._flooded:
            incidents.add(
                cell,
                incidents.OUTPUT_LIMIT,
                _("This cell's output went past {limit} KiB: the rest was dropped.").format(
                    limit=self.output_limit_kb
                ),
            )
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self._kill_kernel()
            incidents.add(cell, incidents.NOTEBOOK_TIME_LIMIT, self._time_limit_message())
            self._stop(_("Past the notebook's whole time limit: this cell was not run (0 points)."))
        return cell, resources

    async def _async_handle_timeout(self, timeout, cell=None):
        self._cell_timed_out = timeout  # the ipykernel runner's time-out: nbclient interrupts
        return await super()._async_handle_timeout(timeout, cell)

    # ------------------------------------------------------------ trusted verdicts

    def _record_time_out(self, cell, timeout: int) -> None:
        """A test cell interrupted at its time limit in the kernel scores 0 whatever the
        grader's own run would say, so that run (the same calls under the same limit, which
        would wait the limit out again) is not made; the time-out is the recorded reason."""
        incidents.add(
            cell,
            incidents.CALL_TIME_LIMIT,
            _(
                "This check did not finish within the time limit ({budget} s) and was "
                "stopped. Look for an endless loop or code that is too slow."
            ).format(budget=timeout),
        )

    def _judge(self, cell, hidden: bool) -> None:
        """Run the whole test cell on the grader's side and record its verdict in the cell."""
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "test")
        budget = self._get_timeout(cell) or self.timeout or 60
        path = policy.BRIDGE_SOCKET if not self.unsafe_no_sandbox else self._bridge.path
        self._bridge.admit_kernel(self.km)  # only this kernel's sandbox may connect
        session = Session(self._bridge, self.kc, time.monotonic() + budget, path)
        try:
            verdict = self._trusted.run_test(cell.source, grade_id, session)
        except CallTimedOut:
            if self._end_session(session, interrupt=True):
                incidents.add(
                    cell,
                    incidents.CALL_TIME_LIMIT,
                    _(
                        "The check in which the grader called the answer's functions did not "
                        "finish within the time limit ({budget} s). Look for an endless loop "
                        "or code that is too slow."
                    ).format(budget=budget),
                )
            else:
                self._kernel_stuck(cell, budget)
            return
        except (BridgeBroken, Exception) as error:  # whatever the kernel sent, grading goes on
            if self._end_session(session, interrupt=True):
                incidents.add(
                    cell,
                    incidents.BRIDGE_BROKEN,
                    _(
                        "What the answer's functions exchanged with the grader broke the "
                        "rules, so the check could not run ({error})."
                    ).format(error=error),
                )
            elif self.km is not None and not run_sync(self.km.is_alive)():
                self._kernel_died(cell)
            else:
                self._kernel_stuck(cell, budget)
            return
        if not self._end_session(session):
            self._kernel_stuck(cell, budget)
            return
        kernel_passed = cells.passed(cell)
        if hidden and verdict.stdout:
            cell.outputs.append(
                nbformat.v4.new_output("stream", name="stdout", text=verdict.stdout)
            )
        if verdict.passed or not kernel_passed:
            return
        if hidden:  # the hidden check's own diagnosis, as the learner's failure
            cell.outputs.append(incidents.error_output(verdict.ename, verdict.evalue))
            if verdict.record is not None:
                cells.store_verdict(cell, verdict.record)
        else:  # the kernel passed what the grader's run failed: tampering
            incidents.add(
                cell,
                incidents.TRUSTED_CHECK_FAILED,
                _(
                    "Passed in the notebook's kernel, but the same check run by the grader "
                    "outside the kernel failed: {ename}: {evalue}\n"
                    "A pass only inside the kernel does not count (code that changes numpy "
                    "or the checks, and the like)."
                ).format(ename=verdict.ename, evalue=verdict.evalue[:600]),
            )

    def _end_session(self, session: Session, interrupt: bool = False) -> bool:
        """Close the session; True when the kernel finished its request (is alive and idle)."""
        msg_id = session.close()
        if msg_id is None:
            return True
        if interrupt:
            # The kernel's half ends on "done" unless learner code holds it: interrupt only
            # then (an interrupt that lands just after the request ended can cost its reply).
            if run_sync(self._await_reply)(msg_id, 1) is not None:
                return True
            self._interrupt()
        return run_sync(self._await_reply)(msg_id, 5 if interrupt else 15) is not None

    async def _await_reply(self, msg_id: str, timeout: float):
        if self.lean:
            return self._lean_reply(msg_id, timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = await self.kc.shell_channel.get_msg(timeout=0.5)
            except Empty:
                if not await self.km.is_alive():
                    return None
                continue
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                return msg
        return None

    # ------------------------------------------------------------ failures

    def _kernel_died(self, cell) -> None:
        self._record_memory_limit(cell)
        incidents.add(
            cell,
            incidents.KERNEL_DIED,
            _(
                "The kernel died running this cell (os._exit, past the memory limit, and the "
                "like). This cell and the ones after it score 0."
            ),
        )
        self._stop(_("The kernel died in an earlier cell: this cell was not run (0 points)."))

    def _kernel_stuck(self, cell, timeout) -> None:
        self._record_memory_limit(cell)
        self._kill_kernel()
        incidents.add(
            cell,
            incidents.KERNEL_STUCK,
            _(
                "This cell went past its time limit ({timeout} s) and did not stop on the "
                "interrupt, so the kernel was ended. This cell and the ones after it score 0."
            ).format(timeout=timeout),
        )
        self._stop(
            _("The kernel did not stop in an earlier cell: this cell was not run (0 points).")
        )

    def _memory_events(self):
        events = getattr(self.km, "memory_events", None)  # a SandboxMixin kernel manager's
        return events() if events is not None else None

    def _record_memory_limit(self, cell) -> None:
        """MemoryLimitExceeded when the sandbox's memory cgroup met its cap since the last look.

        The grader's own evidence (`cgroup.MemoryEvents`), never an exception's name:
        a learner can raise MemoryError, and one from the per-process address-space
        cap is only that cell's error. Where there is no cgroup, no such incident.
        """
        before, self._memory_before = self._memory_before, self._memory_events()
        after = self._memory_before
        if before is None or after is None or not after.exceeded_since(before):
            return
        killed = after.oom_kills - before.oom_kills
        if killed:
            text = ngettext(
                "This cell went past the kernel's memory limit ({limit} MiB, all the processes "
                "the kernel started together): {killed} process was killed.",
                "This cell went past the kernel's memory limit ({limit} MiB, all the processes "
                "the kernel started together): {killed} processes were killed.",
                killed,
            )
        else:
            text = _(
                "This cell went past the kernel's memory limit ({limit} MiB, all the processes "
                "the kernel started together)."
            )
        text = text.format(limit=self.memory_limit_mb, killed=killed)
        incidents.add(cell, incidents.MEMORY_LIMIT, text)

    def _time_limit_message(self) -> str:
        return _(
            "Past the notebook's whole time limit ({timeout} s). This cell and the ones after "
            "it score 0."
        ).format(timeout=self.notebook_timeout)

    def _stop(self, message: str) -> None:
        """Later cells are not run; each gets `message`, a whole sentence saying why."""
        self._stopped = message

    def _kill_kernel(self) -> None:
        """Kill the sandbox: a warm kernel's PID 1, or bwrap's process group."""
        process = getattr(getattr(self.km, "provisioner", None), "process", None)
        if isinstance(process, warm.WarmKernelProcess):
            process.kill()  # through its pidfd; its PID namespace ends with it
            return
        try:
            pid = self.km.provisioner.pid
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, AttributeError, TypeError):
            pass
