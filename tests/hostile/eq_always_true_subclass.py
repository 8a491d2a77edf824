"""Wrong split_heads returning an ndarray subclass that always claims equality (nbgrader #1379).

It fools the kernel's own run of the visible split_heads_seed; the grader's
run gets the value as plain data and fails it.
"""

from tests.hostile import SPLIT_HEADS_LOSSES

FUNCTION = "split_heads"
SOURCE = """
class Agreeable(np.ndarray):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __array_function__(self, func, types, args, kwargs):
        return True


def split_heads(M, h):
    return np.zeros((h, M.shape[0], M.shape[1] // h)).view(Agreeable)
"""
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = "TrustedCheckFailed"
