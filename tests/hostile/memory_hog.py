"""A correct merge_heads whose cell then grabs memory without end (blocks of 8 GiB, 16 of them).

Each block is larger than the sandbox's whole memory cap (4 GiB; 1536 MiB
in the tests), so the first one fails at once with MemoryError: the
incident does not hang on how fast the grading machine pages memory in
(blocks that fit, touched one by one, could outlast the cell's time limit
on a loaded machine and end as a timeout).
"""

FUNCTION = "merge_heads"
SOURCE = """
def merge_heads(heads_out):
    h, n, d_head = heads_out.shape
    return heads_out.transpose(1, 0, 2).reshape(n, h * d_head)


blocks = []
for _ in range(16):
    blocks.append(np.ones(2**30))  # 8 GiB each, touched
"""
ZERO = frozenset()
INCIDENT = "MemoryLimitExceeded"
