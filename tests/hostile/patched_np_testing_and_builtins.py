"""Wrong split_heads that patches np.allclose, np.testing and a builtin during each call.

Every call patches the kernel again, so the kernel's own runs of the visible
split_heads_seed and mha_seed_example pass; the grader's runs, in a process
the patches never reach, fail both.
"""

from tests.hostile import SPLIT_HEADS_LOSSES

FUNCTION = "split_heads"
SOURCE = """
import builtins

import numpy as np

np.testing.assert_allclose = lambda *args, **kwargs: None


def split_heads(M, h):
    np.allclose = lambda *args, **kwargs: True
    builtins.print = lambda *args, **kwargs: None
    np.testing.assert_array_equal = lambda *args, **kwargs: None
    return np.zeros((h, M.shape[0], M.shape[1] // h))
"""
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = "TrustedCheckFailed"
