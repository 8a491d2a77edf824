"""A correct merge_heads, then cells of the learner's own that grab more memory than the whole
sandbox may hold.

Each of four forked processes writes a block of 500 MiB, under the
per-process cap (1536 MiB of address space in the tests, the kernel's own
~850 MiB included) but together over the sandbox's memory cgroup (the same
1536 MiB over all its processes). The answer cell starts the first one and
the learner's added cells one more each (one block per cell: 1.5 GiB of
fresh pages in one cell outlasted its 5 s on a loaded machine), every child
holding its block until the last added cell ends them all, before any test
cell runs. The blocks are bytes, not numpy arrays: numpy advises huge pages
for large arrays, and with this machine's THP defrag=madvise each 500 MiB
then took 2.7-4.4 s under load (direct compaction) against 0.5-0.8 s.

The cgroup's out-of-memory killer ends some of the children, the kernel
lives on, and the grader records MemoryLimitExceeded from the cgroup's own
counts, in the added cells (graded cells lose nothing). Without a memory
cgroup (not root, no controller) nothing bounds the four together, and no
memory incident is inferred: that expectation is skipped.
"""

import nbformat

FUNCTION = "merge_heads"
SOURCE = """
def merge_heads(heads_out):
    h, n, d_head = heads_out.shape
    return heads_out.transpose(1, 0, 2).reshape(n, h * d_head)


import os, signal


def hold_a_block():
    ready, done = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            block = b"x" * (500 << 20)  # 500 MiB, every page written (a memset)
            os.write(done, b"1")
            signal.pause()  # held until the last cell ends this child
        finally:
            os._exit(0)
    os.close(done)
    held.append(os.read(ready, 1) == b"1")  # b"" once the cap's killer ended it
    children.append((pid, ready))


children, held = [], []
hold_a_block()
"""
MORE_BLOCKS = "hold_a_block()"
END_ALL = """
for pid, ready in children:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(ready)
print(f"held {sum(held)} of 4 blocks of 500 MiB as they were made")
"""
ZERO = frozenset()
INCIDENT = "MemoryLimitExceeded"
INCIDENT_NEEDS_MEMORY_CGROUP = True
RAN = r"held [0-4] of 4 blocks of 500 MiB"


def tamper(nb, folder):
    answer = next(
        i
        for i, cell in enumerate(nb.cells)
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "merge_heads_answer"
    )
    added = [MORE_BLOCKS] * 3 + [END_ALL]
    nb.cells[answer + 1 : answer + 1] = [nbformat.v4.new_code_cell(s) for s in added]
