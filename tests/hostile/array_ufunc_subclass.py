"""Wrong split_heads returning an ndarray subclass whose ufuncs all answer True.

It fools the kernel's own run of the visible split_heads_seed (np.allclose
says True); the grader's run gets the value as plain data and fails it.
"""

from tests.hostile import SPLIT_HEADS_LOSSES

FUNCTION = "split_heads"
SOURCE = """
class Agreeable(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return np.True_

    def __array_function__(self, func, types, args, kwargs):
        return np.True_


def split_heads(M, h):
    return np.zeros((h, M.shape[0], M.shape[1] // h)).view(Agreeable)
"""
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = "TrustedCheckFailed"
