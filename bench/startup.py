"""CPU a sandboxed kernel costs until it is ready, per launch way: a micro-benchmark.

    python -m bench.startup [--kernels N] [--modes bwrap warm]

Starts N kernels one after another in each mode (as `LearnerKernel` does:
sandbox, Python, ipykernel, kernel_info) and counts the CPU time, user +
system, of every process involved from the launch until the kernel answers:
this process (the grader's side) and every process below it (bwrap, the
warm parent and its forks, the kernel), reaped ones included. The machine is
shared, so CPU time, not wall time, is what compares runs. The warm parent's
own start is paid once per grading process and is left out (it is started
before the first kernel is timed). Prints the median and quartiles in
milliseconds; run it before and after a change to the sandbox.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from coursekit.sandbox import kernel, policy, warm
from coursekit.sandbox.kernel import BlockingSandboxedKernelManager

TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU of the processes below `root` (each with its reaped children)."""
    total, stack = 0, [root]
    while stack:
        parent = stack.pop()
        try:
            kids = [
                int(k) for k in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
            ]
        except OSError:
            continue
        for kid in kids:
            try:
                fields = Path(f"/proc/{kid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        stack += kids
    return total / TICKS


def children_cpu_seconds() -> float:
    """CPU of this process's reaped descendants (getrusage's children)."""
    usage = os.times()
    return usage.children_user + usage.children_system


def one_kernel(folder: str) -> float:
    """CPU seconds of every process until one sandboxed kernel is ready."""
    me = os.getpid()
    before = time.process_time() + tree_cpu_seconds(me) + children_cpu_seconds()
    km = BlockingSandboxedKernelManager(kernel_name="python3")
    km.start_kernel(cwd=folder)
    client = km.client()
    client.start_channels()
    client.wait_for_ready(timeout=120)
    used = time.process_time() + tree_cpu_seconds(me) + children_cpu_seconds() - before
    client.stop_channels()
    km.shutdown_kernel(now=True)
    return used


def measure(mode: str, kernels: int) -> list[float]:
    kernel.SandboxMixin.warm = mode == "warm"
    if mode == "warm":
        warm.zygote(tuple(kernel.SandboxMixin.preload))  # its start is paid once, not per kernel
    with tempfile.TemporaryDirectory(prefix="coursekit-bench-") as folder:
        one_kernel(folder)  # the first pays for imports in this process
        return [one_kernel(folder) * 1000 for _ in range(kernels)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=10)
    parser.add_argument("--modes", nargs="+", default=["bwrap", "warm"])
    args = parser.parse_args(argv)
    policy.check_available()
    for mode in args.modes:
        if mode == "warm" and not warm.supported():
            print("warm: needs root and user namespaces (warm.supported)")
            continue
        times = measure(mode, args.kernels)
        q1, median, q3 = statistics.quantiles(times, n=4)
        print(
            f"{mode:6} CPU-ms until ready, {len(times)} kernels: "
            f"median {median:.0f}  (quartiles {q1:.0f}–{q3:.0f})"
        )


if __name__ == "__main__":
    main()
