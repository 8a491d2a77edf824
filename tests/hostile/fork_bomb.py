"""A correct merge_heads whose cell then forks until the sandbox's process cap stops it.

The children keep their process slots (most sleep, one spins) and carry the
test's marker in their command line. The cap counts only this sandbox's uid,
so the kernel keeps answering and the notebook is graded in full; when its
kernel ends, the sandbox's pid namespace takes every child with it.
"""

FUNCTION = "merge_heads"
SOURCE = """
def merge_heads(heads_out):
    h, n, d_head = heads_out.shape
    return heads_out.transpose(1, 0, 2).reshape(n, h * d_head)


import os

children = 0
while children < 10_000:
    try:
        pid = os.fork()
    except OSError as error:
        print("fork 가 막혔습니다:", type(error).__name__, error)
        break
    if pid == 0:
        try:
            if children == 0:
                os.execv("/bin/sh", ["@MARKER@", "-c", "while :; do :; done"])
            os.execv("/bin/sleep", ["@MARKER@", "600"])
        finally:
            os._exit(0)
    children += 1
print("자식 프로세스", children, "개")
"""
ZERO = frozenset()
INCIDENT = None
RAN = r"fork 가 막혔습니다: BlockingIOError.*\s+자식 프로세스 [1-9]\d 개"
