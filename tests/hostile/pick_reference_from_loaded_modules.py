"""split_heads that picks a split_heads other than its own out of the loaded modules.

At each call (at most twice a second) it scans sys.modules and the garbage
collector for any other function named split_heads (the grader's reference,
a helper stub of the bridge) and returns the first answer of the right
shape; the kernel holds no reference, so its wrong fallback is graded.
"""

from tests.hostile import SPLIT_HEADS_LOSSES

FUNCTION = "split_heads"
SOURCE = """
import gc
import sys
import time
import types


def _candidates(own):
    for module in list(sys.modules.values()):
        try:
            found = getattr(module, "split_heads", None)
        except Exception:
            continue
        if callable(found) and found is not own:
            yield found
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and obj.__name__ == "split_heads":
            if obj.__code__ is not own.__code__:
                yield obj


_scanned = [0.0, []]


def _fresh_candidates(own):
    if time.monotonic() - _scanned[0] > 0.5:  # scan again twice a second at most
        _scanned[:] = [time.monotonic(), list(_candidates(own))]
    return _scanned[1]


def split_heads(M, h):
    for candidate in _fresh_candidates(split_heads):
        try:
            got = candidate(M, h)
        except Exception:
            continue
        if getattr(got, "shape", None) == (h, M.shape[0], M.shape[1] // h):
            return got
    return np.zeros((h, M.shape[0], M.shape[1] // h))


print("다른 split_heads:", list(_candidates(split_heads)))
"""
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = None
RAN = r"다른 split_heads: \[\]"
