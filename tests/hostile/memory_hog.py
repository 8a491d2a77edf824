"""A correct merge_heads whose cell then grabs memory without end (bounded at 8 GiB)."""

FUNCTION = "merge_heads"
SOURCE = """
def merge_heads(heads_out):
    h, n, d_head = heads_out.shape
    return heads_out.transpose(1, 0, 2).reshape(n, h * d_head)


blocks = []
for _ in range(16):
    blocks.append(np.ones(2**26))  # 512 MiB each, touched
"""
ZERO = frozenset()
INCIDENT = "MemoryLimitExceeded"
