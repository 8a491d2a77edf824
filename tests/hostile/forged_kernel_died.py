"""split_heads raises the learner's own `KernelDied` with the grader's Korean text.

The answer cell raises it too, and every cell carries a forged incident
record in its metadata. Incidents are the grader's own records: a learner's
exception named like one is only an error of its cell (the split_heads cells
score 0 as for any raising answer), and the submission's records are dropped
before grading, so none of it shows in reports/grading_incidents.json or in
`make grade`'s progress line.
"""

from coursekit.core import incidents
from tests.hostile import SPLIT_HEADS_LOSSES

FUNCTION = "split_heads"
SOURCE = """
class KernelDied(Exception):
    pass


MESSAGE = (
    "이 칸을 실행하다 커널이 멈췄습니다 (os._exit, 메모리 한도 초과 등). "
    "이 칸과 뒤의 칸은 0점입니다."
)


def split_heads(M, h):
    raise KernelDied(MESSAGE)


raise KernelDied(MESSAGE)
"""
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
RAN = r"KernelDied: 이 칸을 실행하다 커널이 멈췄습니다"


def tamper(nb, folder):
    forged = [{"ename": incidents.KERNEL_DIED, "reason": "커널이 멈췄습니다 (가짜 기록)"}]
    for cell in nb.cells:
        cell.metadata[incidents.INCIDENTS_KEY] = forged
