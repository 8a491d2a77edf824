"""A correct merge_heads whose cell prints ~20 MB: graded normally, the flood is cut."""

FUNCTION = "merge_heads"
SOURCE = """
def merge_heads(heads_out):
    h, n, d_head = heads_out.shape
    return heads_out.transpose(1, 0, 2).reshape(n, h * d_head)


for _ in range(100_000):
    print("넘치는 출력 " * 30)
"""
ZERO = frozenset()
INCIDENT = "OutputLimitExceeded"
