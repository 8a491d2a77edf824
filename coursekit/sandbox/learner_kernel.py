"""A sandboxed kernel driven directly (not through nbclient): run cells, then call functions.

    with LearnerKernel(timeout=20) as kernel:
        kernel.run_cells(sources)              # errors stay in the kernel
        with kernel.session() as session:      # a bridge.Session
            fns = session.describe(["split_heads"])

Used by the TA report's probe; grading goes through nbgrader's Execute instead.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from queue import Empty

from coursekit.sandbox import policy
from coursekit.sandbox.bridge import Bridge, Session, silent_execute
from coursekit.sandbox.kernel import BlockingSandboxedKernelManager


class LearnerKernel:
    def __init__(self, *, timeout: float, limits: policy.Limits | None = None):
        self.deadline = time.monotonic() + timeout
        self.limits = limits or policy.Limits()

    def __enter__(self) -> LearnerKernel:
        policy.check_available()
        self.bridge = Bridge()
        self.workdir = tempfile.TemporaryDirectory(prefix="coursekit-probe-")
        self.km = BlockingSandboxedKernelManager(kernel_name="python3")
        self.km.limits, self.km.bridge_socket = self.limits, self.bridge.path
        try:
            self.km.start_kernel(cwd=self.workdir.name)
            self.kc = self.km.client()
            self.kc.start_channels()
            self.kc.wait_for_ready(timeout=max(1, self.deadline - time.monotonic()))
            self.bridge.admit_kernel(self.km)  # only this kernel's sandbox may connect
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(Exception):
            self.kc.stop_channels()
        with contextlib.suppress(Exception):
            self.km.shutdown_kernel(now=True)
        self.bridge.close()
        self.workdir.cleanup()

    def _wait(self, msg_id: str, limit: float | None = None) -> bool:
        end = self.deadline if limit is None else min(self.deadline, time.monotonic() + limit)
        while (left := end - time.monotonic()) > 0:
            try:
                msg = self.kc.get_shell_msg(timeout=min(left, 0.5))
            except Empty:
                if not self.km.is_alive():
                    return False
                continue
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                return True
        return False

    def run_cells(self, sources: list[str]) -> bool:
        """Run each source in order; False when the kernel died or the time ran out."""
        return all(self._wait(silent_execute(self.kc, source)) for source in sources)

    @contextlib.contextmanager
    def session(self):
        session = Session(self.bridge, self.kc, self.deadline, policy.BRIDGE_SOCKET)
        try:
            yield session
        finally:
            # A learner function may still be running (a timed-out call): interrupt it.
            msg_id = session.close()
            if msg_id is not None and not self._wait(msg_id, limit=2):
                self.km.interrupt_kernel()
                self._wait(msg_id, limit=5)
