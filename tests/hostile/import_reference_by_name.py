"""split_heads that only imports the reference by module name (from solutions.ch3_multihead).

With the course root and the repository put on sys.path too, the import
still fails in the sandbox (no solutions/ there), so the fallback, a wrong
split_heads, is what gets graded. Had the import worked, the cells would
score full marks.
"""

from tests.hostile import SPLIT_HEADS_LOSSES

FUNCTION = "split_heads"
SOURCE = """
import importlib
import sys

sys.path[:0] = ["@COURSE_ROOT@", "@REPO_ROOT@"]
try:
    from solutions.ch3_multihead import split_heads as _reference
    print("정답을 가져왔습니다:", _reference)
except ImportError as error:
    print("정답을 가져오지 못했습니다:", error)
    _reference = None


def split_heads(M, h):
    reference = _reference
    if reference is None:
        try:
            reference = importlib.import_module("solutions.ch3_multihead").split_heads
        except ImportError:
            return np.zeros((h, M.shape[0], M.shape[1] // h))
    return reference(M, h)
"""
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
RAN = r"정답을 가져오지 못했습니다: No module named 'solutions'"
