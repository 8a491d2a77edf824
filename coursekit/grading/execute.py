"""nbgrader's Execute, made to survive hostile submissions.

Stock Execute fails the whole submission when the kernel dies (`os._exit`,
the OOM killer) or does not answer an interrupt (a loop that ignores SIGINT),
and it keeps every byte a flooding cell prints. Here:

- the kernel's address space is capped (`memory_limit_mb`), so a memory hog
  gets a MemoryError or dies instead of taking the grader down;
- a notebook has a wall-clock budget (`notebook_timeout`) on top of the stock
  per-cell `timeout`;
- a cell that prints more than `output_limit_kb` keeps only the first part;
- when the kernel dies or stays stuck after a timeout, the cell gets a Korean
  error output, every later cell is marked as not run (scored 0), and the
  notebook is still graded: earlier cells keep their credit.
"""

from __future__ import annotations

import os
import resource
import signal
import time

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync
from traitlets import Integer

from coursekit.grading import incidents
from coursekit.preprocessors import ExecuteSkippingDisplays


class GuardedExecute(ExecuteSkippingDisplays):
    memory_limit_mb = Integer(4096, help="address-space cap of each kernel (MiB); 0 for none").tag(
        config=True
    )
    notebook_timeout = Integer(
        300, help="wall-clock budget for executing one notebook (s); 0 for none"
    ).tag(config=True)
    output_limit_kb = Integer(1024, help="output kept per cell (KiB); the rest is dropped").tag(
        config=True
    )

    def preprocess(self, nb, resources=None, km=None):
        budget = self.notebook_timeout or None
        self._deadline = time.monotonic() + budget if budget else None
        self._stopped: str | None = None  # why later cells are not run
        return super().preprocess(nb, resources, km)

    async def async_start_new_kernel(self, **kwargs):
        await super().async_start_new_kernel(**kwargs)
        if self.memory_limit_mb:
            cap = self.memory_limit_mb * 2**20
            resource.prlimit(self._kernel_pid(), resource.RLIMIT_AS, (cap, cap))

    # nbclient binds the sync wrapper to its own coroutine; rebind it to ours.
    start_new_kernel = run_sync(async_start_new_kernel)

    def _kernel_pid(self) -> int:
        return self.km.provisioner.pid

    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        if self._deadline is None:
            return timeout
        left = max(1, int(self._deadline - time.monotonic()) + 1)
        return left if timeout is None else min(timeout, left)

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        size = len(str(content.get("text", ""))) + len(str(content.get("data", "")))
        self._cell_output += size
        if self._cell_output > self.output_limit_kb * 1024:
            self._flooded = True
            return None
        return super().output(outs, msg, display_id, cell_index)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or self.skip_tag in cell.metadata.get("tags", []):
            return cell, resources
        if self._stopped:
            cell.outputs = []
            incidents.add(cell, incidents.NOT_RUN, self._stopped)
            return cell, resources
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self._stop("노트북 전체 실행 시간 제한을 넘겨")
            cell.outputs = []
            incidents.add(cell, incidents.NOTEBOOK_TIME_LIMIT, self._time_limit_message())
            return cell, resources
        self._cell_output, self._flooded = 0, False
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            incidents.add(
                cell,
                incidents.KERNEL_DIED,
                "이 칸을 실행하다 커널이 멈췄습니다 (os._exit, 메모리 한도 초과 등). "
                "이 칸과 뒤의 칸은 0점입니다.",
            )
            self._stop("앞 칸에서 커널이 멈춰")
            return cell, resources
        except CellTimeoutError:
            # The interrupt did not bring the kernel back (e.g. SIGINT ignored).
            self._kill_kernel()
            incidents.add(
                cell,
                incidents.KERNEL_STUCK,
                f"이 칸이 시간 제한({self._get_timeout(cell)}초)을 넘겼고 중단 신호에도 "
                "멈추지 않아 커널을 끝냈습니다. 이 칸과 뒤의 칸은 0점입니다.",
            )
            self._stop("앞 칸에서 커널이 멈추지 않아")
            return cell, resources
        if any(out.get("ename") == "MemoryError" for out in cell.get("outputs", [])):
            incidents.add(
                cell,
                incidents.MEMORY_LIMIT,
                f"이 칸이 커널 메모리 한도({self.memory_limit_mb} MiB)를 넘었습니다.",
            )
        if self._flooded:
            incidents.add(
                cell,
                incidents.OUTPUT_LIMIT,
                f"이 칸의 출력이 {self.output_limit_kb} KiB 를 넘어 뒷부분을 버렸습니다.",
            )
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self._kill_kernel()
            incidents.add(cell, incidents.NOTEBOOK_TIME_LIMIT, self._time_limit_message())
            self._stop("노트북 전체 실행 시간 제한을 넘겨")
        return cell, resources

    def _time_limit_message(self) -> str:
        return (
            f"노트북 전체 실행 시간 제한({self.notebook_timeout}초)을 넘겼습니다. "
            "이 칸과 뒤의 칸은 0점입니다."
        )

    def _stop(self, why: str) -> None:
        self._stopped = f"{why} 이 칸은 실행하지 않았습니다 (0점)."

    def _kill_kernel(self) -> None:
        try:
            pid = self._kernel_pid()
            if os.getpgid(pid) == pid:  # its own process group: take its children too
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, AttributeError, TypeError):
            pass
