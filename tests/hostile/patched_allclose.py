"""Wrong split_heads, and np.allclose / np.array_equal patched to always agree.

The patch lives in the kernel only: the visible split_heads_seed passes there
and fails in the grader's run, whose numpy the learner cannot reach.
"""

from tests.hostile import SPLIT_HEADS_LOSSES, WRONG_SPLIT_HEADS

FUNCTION = "split_heads"
SOURCE = (
    """
import numpy as np

np.allclose = lambda *args, **kwargs: True
np.array_equal = lambda *args, **kwargs: True
"""
    + WRONG_SPLIT_HEADS
)
ZERO = SPLIT_HEADS_LOSSES
INCIDENT = "TrustedCheckFailed"
