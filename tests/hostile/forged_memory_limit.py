"""split_heads raises the learner's own MemoryError with the grader's Korean text.

The answer cell then asks numpy for 8 GiB, over the per-process cap (1536 MiB
of address space in the tests): a real MemoryError, of that process's own
cap, while the sandbox's memory cgroup never came near its cap. The grader
records MemoryLimitExceeded only from the cgroup's counts, never from an
exception's name: both are errors of their cells (the split_heads cells
score 0 as for any raising answer), and no incident is recorded.
"""

from tests.hostile import SPLIT_HEADS_LOSSES

FUNCTION = "split_heads"
SOURCE = """
MESSAGE = "이 칸이 커널 메모리 한도(1536 MiB)를 넘었습니다."


def split_heads(M, h):
    raise MemoryError(MESSAGE)


too_big = np.ones(2**30)  # 8 GiB
"""
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
RAN = r"Unable to allocate 8\.00 GiB[\s\S]*MemoryError: 이 칸이 커널 메모리 한도"
