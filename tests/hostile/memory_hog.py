"""A correct merge_heads whose cell then grabs more memory than the whole sandbox may hold.

Four forked processes each touch a block of 500 MiB, under the per-process
cap (1536 MiB of address space in the tests, the kernel's own ~850 MiB
included) but together over the sandbox's memory cgroup (the same 1536 MiB
over all its processes), each holding its block until every one has it or
was killed. The cgroup's out-of-memory killer ends some of them, the kernel
lives on, and the grader records MemoryLimitExceeded from the cgroup's own
counts. numpy pages each block in at once: the cap is met in about a second.
Without a memory cgroup (not root, no controller) nothing bounds the four
together, and no memory incident is inferred: that expectation is skipped.
"""

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
            block = np.ones(500 * 2**17)  # 500 MiB, touched
            os.write(done, b"1")
            signal.pause()  # held until the parent ends this child
        finally:
            os._exit(0)
    os.close(done)
    return pid, ready


children = [hold_a_block() for _ in range(4)]
held = [os.read(ready, 1) == b"1" for _, ready in children]  # b"" once a child was killed
for pid, ready in children:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(ready)
print(f"held {sum(held)} of 4 blocks of 500 MiB")
"""
ZERO = frozenset()
INCIDENT = "MemoryLimitExceeded"
INCIDENT_NEEDS_MEMORY_CGROUP = True
RAN = r"held [0-4] of 4 blocks of 500 MiB"
