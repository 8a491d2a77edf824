"""MemoryLimitExceeded comes from the sandbox's memory cgroup, read by the grader, only.

SandboxedExecute runs a small notebook in each launch way: a cell that raises
MemoryError itself (named like the incident, the learner's own error), a cell
whose forked processes the cgroup's out-of-memory killer ends, a quiet cell,
and a cell in which the killer ends the kernel itself; the cell after it is
not run. The counts are read from v1's and v2's files alike.
"""

from __future__ import annotations

import nbformat
import pytest

from coursekit.autograde.execute import SandboxedExecute
from coursekit.core import incidents
from coursekit.sandbox import cgroup, warm

pytestmark = [pytest.mark.sandbox]

CAP_MB = 1536  # of address space per process too: the kernel alone holds ~850 MiB of it

FORGED = 'raise MemoryError("이 칸이 커널 메모리 한도(1536 MiB)를 넘었습니다.")'
# Forked processes that each hold a block (600 MiB × 3; 300 MiB × 3 and the kernel's own
# 650 MiB): over the cap together, each under the per-process cap.
HOLD = """
import os, signal

def hold(mib):
    ready, done = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            block = b"x" * (mib << 20)  # a memset (numpy's huge-page advice stalls here)
            os.write(done, b"1")
            signal.pause()
        finally:
            os._exit(0)
    os.close(done)
    return pid, ready
"""
CHILDREN_KILLED = """
children = [hold(600) for _ in range(3)]
held = [os.read(ready, 1) == b"1" for _, ready in children]
for pid, ready in children:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
print(sum(held), "of 3 held")
"""
KERNEL_KILLED = """
with open("/proc/self/oom_score_adj", "w") as own:
    own.write("1000")  # the killer's first choice
children = [hold(300) for _ in range(3)]
held = [os.read(ready, 1) == b"1" for _, ready in children]
block = b"x" * (650 << 20)
"""


@pytest.fixture(params=["bwrap", "warm"])
def warm_kernels(request):
    if request.param == "warm" and not warm.supported():
        pytest.skip("warm kernels need root and user namespaces (warm.supported)")
    return request.param == "warm"


def test_only_the_cgroups_counts_record_a_memory_incident(warm_kernels, tmp_path):
    if cgroup.unavailable():
        pytest.skip(f"no memory cgroup here: {cgroup.unavailable()}")
    sources = [FORGED, HOLD, CHILDREN_KILLED, "print('quiet')", KERNEL_KILLED, "print('after')"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    execute = SandboxedExecute(
        memory_limit_mb=CAP_MB, warm_kernels=warm_kernels, timeout=60, notebook_timeout=0
    )
    nb, _ = execute.preprocess(nb, {"metadata": {"path": str(tmp_path)}})  # the kernel's folder
    found = [[i.name for i in incidents.of_cell(cell)] for cell in nb.cells]
    assert found == [
        [],
        [],
        [incidents.MEMORY_LIMIT],
        [],
        [incidents.MEMORY_LIMIT, incidents.KERNEL_DIED],
        [incidents.NOT_RUN],
    ]
    assert nb.cells[0].outputs[0]["ename"] == "MemoryError"  # the learner's own error, shown
    assert f"{CAP_MB} MiB" in incidents.of_cell(nb.cells[2])[0].text


def test_without_a_memory_cgroup_no_memory_incident_is_inferred(monkeypatch, tmp_path):
    """No cgroup, no evidence: the forged MemoryError and the children (nothing bounds them
    together now) are the learner's own, whatever the cell's outputs say."""
    monkeypatch.setattr(cgroup, "_controller", lambda: "no memory cgroup (this test)")
    monkeypatch.setattr(cgroup, "warn_once", lambda: None)
    sources = [FORGED, HOLD, CHILDREN_KILLED]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    execute = SandboxedExecute(memory_limit_mb=CAP_MB, timeout=60, notebook_timeout=0)
    nb, _ = execute.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    assert [incidents.of_cell(cell) for cell in nb.cells] == [[], [], []]
    assert nb.cells[0].outputs[0]["ename"] == "MemoryError"
    assert "3 of 3 held" in nb.cells[2].outputs[0]["text"]


@pytest.mark.parametrize(
    ("version", "name", "text", "expected"),
    [
        ("v1", "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", (3, 0)),
        ("v1", "memory.oom_control", "oom_kill_disable 0\nunder_oom 1\n", (0, 0)),  # Linux < 4.13
        ("v2", "memory.events", "low 0\nhigh 0\nmax 41\noom 2\noom_kill 1\n", (1, 2)),
        ("v2", "memory.events", "low 0\nhigh 0\nmax 41\noom 0\noom_kill 0\n", (0, 0)),
    ],
)
def test_the_cgroups_counts_are_read_in_both_versions(tmp_path, version, name, text, expected):
    """The files' formats (this machine has v1 only); `max` (v1's failcnt) is not a count:
    it rises when the cap only made the kernel reclaim cache."""
    cap = object.__new__(cgroup.MemoryCap)  # its files, without making a cgroup
    cap.version, cap.folder = version, tmp_path
    (tmp_path / name).write_text(text)
    assert cap.events() == cgroup.MemoryEvents(*expected)
    assert cap.events().exceeded_since(cgroup.MemoryEvents(0, 0)) == (expected != (0, 0))
    (tmp_path / name).unlink()
    assert cap.events() is None  # the cgroup is gone: no evidence
