"""nbclient's cell execution over the lean cell runner (`SandboxedExecute.cell_runner`).

With `cell_runner = "lean"` the sandbox runs `coursekit.sandbox.inside.cell_runner`
(IPython's InteractiveShell on one socket) instead of ipykernel, and this
mixin stands in for nbclient's kernel client: the runner's frames become
the messages nbclient's own `process_message` turns into outputs, so a cell
gets the outputs, execution count, display-id updates, hooks and timeout
behaviour nbclient gives it (consecutive stream frames of one name become one
output, as ipykernel's buffered streams do). Its guards are nbclient's
errors, raised the same way: the runner's end is DeadKernelError, no "done"
within the timeout is an interrupt (SIGINT) and then, after `iopub_timeout`,
CellTimeoutError. A frame that breaks the protocol ends the kernel and
scores the cell 0 with a BridgeBroken incident.
"""

from __future__ import annotations

import time

from nbclient.client import timestamp
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_hook, run_sync

from coursekit.core import incidents
from coursekit.core.messages import _
from coursekit.sandbox import runner_client
from coursekit.sandbox.runner_client import Dropped, RunnerBrokenError, RunnerEndedError

LANGUAGE_INFO_REQUEST = "kernel_info"
MAX_NAME = 200  # an error's name, as kept


class LeanCells:
    """Mixed into SandboxedExecute before nbgrader's Execute; inert unless `cell_runner` is lean."""

    @property
    def lean(self) -> bool:
        return self.cell_runner == "lean"

    # ------------------------------------------------------------ the kernel

    async def async_start_new_kernel_client(self):
        if not self.lean:
            return await super().async_start_new_kernel_client()
        deadline = time.monotonic() + (self.startup_timeout or 60)
        try:
            token = self.km.session.key.decode()
            self.kc = runner_client.connect(self._bridge, self.km, token, deadline)
        except (RunnerEndedError, RunnerBrokenError, OSError) as error:
            self.log.error("the cell runner did not start: %s", error)
            await self._async_cleanup_kernel()
            raise RuntimeError(f"the cell runner did not start: {error}") from None
        self._lean_count = 1
        await run_hook(self.on_notebook_start, notebook=self.nb)
        return self.kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    async def async_wait_for_reply(self, msg_id, cell=None):
        if self.lean and msg_id == LANGUAGE_INFO_REQUEST:  # nbconvert's first request
            return {"content": {"language_info": runner_client.language_info()}}
        return await super().async_wait_for_reply(msg_id, cell)

    wait_for_reply = run_sync(async_wait_for_reply)

    def _interrupt(self) -> None:
        if self.lean:
            self.kc.interrupt()
        else:
            run_sync(self.km.interrupt_kernel)()

    def _lean_reply(self, msg_id: str, timeout: float) -> dict | None:
        """The runner's "done" frame for `msg_id` within `timeout`, or None (ended, broken)."""
        deadline = time.monotonic() + timeout
        try:
            for frame in self.kc.frames(deadline):
                if isinstance(frame, dict) and frame["op"] == "done" and frame.get("id") == msg_id:
                    return frame
        except (RunnerEndedError, RunnerBrokenError):
            return None
        return None

    # ------------------------------------------------------------ cells

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if not self.lean:
            return await super().async_execute_cell(
                cell, cell_index, execution_count, store_history
            )
        await run_hook(self.on_cell_start, cell=cell, cell_index=cell_index)
        if cell.cell_type != "code" or not cell.source.strip():
            return cell
        if self.skip_cells_with_tag in cell.metadata.get("tags", []):
            return cell
        if self.record_timing:
            cell["metadata"]["execution"] = {}
        await run_hook(self.on_cell_execute, cell=cell, cell_index=cell_index)
        msg_id = self.kc.execute(cell.source)
        await run_hook(self.on_cell_complete, cell=cell, cell_index=cell_index)
        self.code_cells_executed += 1
        cell.outputs = []
        self.clear_before_next_output = False
        cell["execution_count"] = self._lean_count
        self._timing(cell, "iopub.status.busy", "iopub.execute_input")
        try:
            reply = self._lean_collect(msg_id, cell, cell_index)
        except RunnerBrokenError as error:
            self._kill_kernel()
            incidents.add(
                cell,
                incidents.BRIDGE_BROKEN,
                _(
                    "The kernel sent the grader something against the rules, so this cell "
                    "could not be graded ({error}). This cell and the ones after it score 0."
                ).format(error=error),
            )
            self._stop(
                _(
                    "The kernel sent something against the rules in an earlier cell: this "
                    "cell was not run (0 points)."
                )
            )
            return cell
        self._timing(cell, "shell.execute_reply", "iopub.status.idle")
        await run_hook(self.on_cell_executed, cell=cell, cell_index=cell_index, execute_reply=reply)
        await self._check_raise_for_error(cell, cell_index, reply)
        self.nb["cells"][cell_index] = cell
        return cell

    execute_cell = run_sync(async_execute_cell)

    def _timing(self, cell, *keys: str) -> None:
        if self.record_timing:
            now = timestamp()
            for key in keys:
                cell["metadata"]["execution"][key] = now

    def _lean_collect(self, msg_id: str, cell, cell_index: int) -> dict:
        """The cell's outputs into `cell`, until the runner's "done": nbclient's reply for it."""
        timeout = self._get_timeout(cell)
        deadline = None if timeout is None else time.monotonic() + timeout
        interrupted = False
        while True:
            try:
                for frame in self.kc.frames(deadline):
                    if isinstance(frame, Dropped):  # too long to parse: over the cell's limit
                        self._count_output(frame.size)
                        continue
                    if frame["op"] == "done":
                        if frame.get("id") != msg_id:
                            continue  # an earlier (silent) request's
                        if interrupted:
                            return {"content": {**self.error_on_timeout, "status": "error"}}
                        return self._done(frame, cell)
                    self._lean_output(runner_client.as_message(frame, msg_id), cell, cell_index)
            except RunnerEndedError:
                raise DeadKernelError("Kernel died") from None
            if interrupted or not self.interrupt_on_timeout:
                raise CellTimeoutError.error_from_timeout_and_cell(
                    "Timeout waiting for the cell runner", timeout, cell
                )
            self.log.error("Timeout waiting for execute reply (%is); interrupting", timeout)
            self._cell_timed_out = timeout
            self.kc.interrupt()
            interrupted = True
            deadline = time.monotonic() + self.iopub_timeout

    def _lean_output(self, msg: dict, cell, cell_index: int) -> None:
        """One message into the cell as nbclient would, consecutive streams of a name joined."""
        content, outs = msg["content"], cell.outputs
        if msg["msg_type"] == "error":  # nbclient counts no error: here they count too
            size = len(content["evalue"]) + sum(len(line) for line in content["traceback"])
            if not self._count_output(size):
                return
        if (
            msg["msg_type"] == "stream"
            and outs
            and not self.clear_before_next_output
            and outs[-1].get("output_type") == "stream"
            and outs[-1].get("name") == content["name"]
        ):
            if self._count_output(len(content["text"])):
                outs[-1]["text"] += content["text"]
            return
        self.process_message(msg, cell, cell_index)

    def _done(self, frame: dict, cell) -> dict:
        """nbclient's execute_reply from the runner's "done" (its fields checked)."""
        count = frame.get("count")
        if type(count) is int and count >= 0:
            cell["execution_count"] = count
            self._lean_count = count + 1
        if frame.get("status") != "error":
            return {"content": {"status": "ok", "execution_count": cell["execution_count"]}}
        traceback = frame.get("traceback")
        if type(traceback) is not list:
            traceback = []
        content = {
            "status": "error",
            "ename": str(frame.get("ename", "Error"))[:MAX_NAME],
            "evalue": str(frame.get("evalue", "")),
            "traceback": [str(line) for line in traceback],
        }
        return {"content": content}
